// Records and text (docs/records.md):
//  1. particles as a described C++ struct: written, read back checked field by field;
//  2. one field as a lazy view: read, reduced, and written (the other fields kept);
//  3. station names as fixed-width U strings and as a UTF8Array, observation times as dates;
//  4. an ObjectArray and a BatchArray of msgpack items, read back by index and range.
// Works in a temporary directory that it removes (or in the directory given as argument, kept,
// for python-blosc2 to read: blosc2.open("DIR/particles.b2nd")[:]['pos']).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>
#include <b2nd/containers.hpp>

#include "example_dir.hpp"

#pragma pack(push, 1)  // python's structured dtypes are packed
struct Vec {
    double x, y;
};
struct Particle {
    std::int32_t id;
    Vec pos;
    bool alive;
};
#pragma pack(pop)

template <>
struct b2nd::record<Vec> {
    static auto fields() {
        return b2nd::fields(b2nd::field("x", &Vec::x), b2nd::field("y", &Vec::y));
    }
};
template <>
struct b2nd::record<Particle> {
    static auto fields() {
        return b2nd::fields(b2nd::field("id", &Particle::id), b2nd::field("pos", &Particle::pos),
                            b2nd::field("alive", &Particle::alive));
    }
};

int main(int argc, char** argv) {
    const ExampleDir dir = argc > 1 ? ExampleDir(argv[1]) : ExampleDir();
    const std::string p = dir.path();

    // 1. 1000 particles; the dtype is python's: [('id', '<i4'), ('pos', [...]), ('alive', '?')].
    std::vector<Particle> v(1000);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = {static_cast<std::int32_t>(i), {0.1 * static_cast<double>(i), 1.0}, i % 7 != 0};
    }
    b2nd::CreateOptions o;
    o.overwrite = true;
    auto parts = b2nd::NDArray<Particle>::create_from(p + "/particles.b2nd", {1000}, v, o);
    std::printf("particles: %s\n", parts.dtype().str().c_str());
    const Particle third = b2nd::NDArray<Particle>::open(p + "/particles.b2nd")(3);
    std::printf("particle 3: id %d at (%.1f, %.1f)\n", third.id, third.pos.x, third.pos.y);

    // 2. One field as an array of its own; a write to it keeps the other fields.
    b2nd::NDArray<double> x = parts.field<double>("pos.x");
    const std::vector<double> some = x.read(b2nd::parse_selection("10:13"));
    std::printf("pos.x[10:13] = %.1f %.1f %.1f\n", some[0], some[1], some[2]);
    b2nd::NDArray<double> y = parts.field<double>("pos.y");
    y.write(b2nd::parse_selection("::2"), 2.0);
    std::printf("after writing pos.y: particle 4 is id %d at (%.1f, %.1f)\n", parts(4).id,
                parts(4).pos.x, parts(4).pos.y);

    // 3. Station names two ways, and observation times.
    const std::vector<std::string> names = {"Oslo", "Tromsø", "Zürich", "東京"};
    auto fixed =
        b2nd::AnyArray::create_from(p + "/stations.b2nd", b2nd::DType::parse("<U8"), {4},
                                    b2nd::encode_strings(b2nd::DType::parse("<U8"), names), o);
    std::printf("fixed U8: %s ... %s\n", b2nd::read_strings(fixed)[1].c_str(),
                b2nd::read_strings(fixed)[3].c_str());
    const auto vl = b2nd::UTF8Array::write(p + "/names.b2nd", names, {}, true);
    std::printf("UTF8Array of %lld strings: '%s'\n", static_cast<long long>(vl.size()),
                std::string(vl.read(2, 3)[0]).c_str());
    using Minutes = b2nd::Datetime<std::chrono::minutes>;
    const std::vector<Minutes> times = {
        Minutes(Minutes::time_point(std::chrono::minutes(29000000))), Minutes::nat()};
    auto t = b2nd::NDArray<Minutes>::create_from(p + "/times.b2nd", {2}, times, o);
    std::printf("times: %s, %s\n", b2nd::datetime_text(t(0).ticks(), "m").c_str(),
                t(1).is_nat() ? "NaT" : "?");

    // 4. Items of any shape: one per chunk, or batches in VL blocks.
    const std::vector<b2nd::Value> items = {
        b2nd::Value::map({{"station", "Oslo"}, {"temps", b2nd::Value::Array{-3.5, -1.0}}}),
        b2nd::Value::tuple({1, "two"}), b2nd::Value("text")};
    const auto objs = b2nd::ObjectArray::write(p + "/items.b2frame", items, {}, true);
    std::printf("ObjectArray item 0: %s\n", objs.item(0).to_python_json().c_str());
    const auto batches = b2nd::BatchArray::write(p + "/rows.b2b", {{1, 2, 3}, {4, 5}}, 2, {}, true);
    std::printf("BatchArray: %lld items in %lld batches; items 2..4: %s\n",
                static_cast<long long>(batches.size()), static_cast<long long>(batches.nbatches()),
                b2nd::Value(batches.items(2, 4)).to_json().c_str());
    return 0;
}
