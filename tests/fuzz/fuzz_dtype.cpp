// Fuzz target: arbitrary text as a NumPy dtype string (python's str(dtype): list and dict
// literals, nested, with sub-array shapes and offsets). Only b2nd::Error may escape; what parses
// must print back to a string that parses to the same dtype, give a .npy descr, find each of
// its fields, match its own layout, and (datetimes) print any value as text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <b2nd/datetime.hpp>
#include <b2nd/dtype.hpp>
#include <b2nd/error.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4096) {
        return 0;
    }
    const std::string text(reinterpret_cast<const char*>(data), size);
    b2nd::DType d;
    try {
        d = b2nd::DType::parse(text);
    } catch (const b2nd::Error&) {
        return 0;  // expected for malformed input
    }
    try {
        const b2nd::DType again = b2nd::DType::parse(d.str());
        if (again.str() != d.str() || again.itemsize() != d.itemsize() ||
            !d.layout_difference(again).empty()) {
            std::abort();  // str() must round-trip
        }
        (void)d.npy_descr();
        for (const auto& f : d.fields()) {
            if (!d.field(f.name)) {
                std::abort();
            }
        }
        if (d.kind() == b2nd::DType::Kind::datetime) {
            for (std::int64_t t :
                 {std::int64_t{0}, std::int64_t{-1}, INT64_MAX, INT64_MIN + 1, b2nd::kNaT}) {
                (void)b2nd::datetime_text(t, d.unit());
            }
        }
    } catch (const b2nd::Error&) {
        // a unit datetime_text does not know, a descr numpy cannot write
    }
    return 0;
}
