// Arrays without xtensor: create, read slices, attributes, copy with other compression,
// concatenate, in-memory arrays and their frames. (docs/arrays.md.)
#include <cstdio>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>

#include "example_dir.hpp"

int main() {
    const ExampleDir dir;  // removed, with the arrays, when main returns
    std::vector<float> data(100 * 200);
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<float>(i % 200) * 0.5f;
    }
    auto t = b2nd::NDArray<float>::create_from(dir / "t.b2nd", {100, 200}, data);
    const float x = t(3, 10);                                               // one element
    const std::vector<float> col = t.read(b2nd::parse_selection(":, 10"));  // a column

    t.any().attrs()["units"] = "K";  // python-blosc2's attributes (vlmeta, msgpack)
    t.any().attrs()["calib"] = b2nd::Value::map({{"offset", -273.15}, {"factor", 0.01}});
    const double offset = t.any().attrs().get("calib")["offset"].as<double>();

    b2nd::CopyOptions o;  // everything not set stays as in the source
    o.compression = b2nd::CompressionParams{b2nd::Codec::lz4, 5};
    o.sparse = true;
    const auto lz4 = b2nd::copy(t.any(), dir / "t_lz4.b2frame", o);
    b2nd::CopyStats st;
    b2nd::CopyOptions counted;
    counted.stats = &st;
    const auto two = b2nd::concatenate({t.any(), t.any()}, 0, dir / "two.b2nd", counted);

    auto m = b2nd::NDArray<float>::create_in_memory({10, 10});  // no file of its own
    m.write(b2nd::Box::region({0, 0}, {1, 10}), std::vector<float>(10, 1.0f));
    const std::vector<std::uint8_t> frame = m.to_cframe();  // python-blosc2's to_cframe
    const auto back = b2nd::NDArray<float>::open_buffer({frame.data(), frame.size()});
    m.save(dir / "m.b2nd");

    std::printf("t(3, 10) = %.1f, column of %zu, calib offset %.2f\n", static_cast<double>(x),
                col.size(), offset);
    std::printf("copy: %s, %s; concatenate: shape (%lld, %lld), %lld of %lld chunks as stored\n",
                std::string(b2nd::codec::codec_name(lz4.compression().codec)).c_str(),
                lz4.sparse() ? "sparse" : "contiguous", static_cast<long long>(two.shape()[0]),
                static_cast<long long>(two.shape()[1]), static_cast<long long>(st.copied),
                static_cast<long long>(st.chunks));
    std::printf("in memory: a frame of %zu bytes; back(0, 9) = %.1f\n", frame.size(),
                static_cast<double>(back(0, 9)));
    const bool ok = x == 5.0f && col.size() == 100 && offset == -273.15 &&
                    lz4.read() == t.any().read() && two.shape()[0] == 200 &&
                    st.copied == st.chunks && back(0, 9) == 1.0f && back(1, 0) == 0.0f;
    return ok ? 0 : 1;
}
