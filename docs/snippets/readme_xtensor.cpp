// The README's code that uses xtensor (and docs/HTTP.md's), compiled and run as written: see
// readme_core.cpp. The HTTP section serves its arrays from nginx on 127.0.0.1, started here; it
// is skipped (said so) where nginx is not installed.
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>
#include <b2nd/containers.hpp>
#include <b2nd/storage/http.hpp>
#include <b2nd/store.hpp>
#include <b2nd/xtensor.hpp>

#include "snippet_dir.hpp"
#include "support/http_servers.hpp"

// README: "Records and text", the types
// clang-format off
#pragma pack(push, 1)
struct Vec { double x, y; };
struct Particle { std::int32_t id; Vec pos; bool flag; };
#pragma pack(pop)
template <> struct b2nd::record<Vec> {
    static auto fields() { return b2nd::fields(b2nd::field("x", &Vec::x), b2nd::field("y", &Vec::y)); }
};
template <> struct b2nd::record<Particle> {
    static auto fields() {
        return b2nd::fields(b2nd::field("id", &Particle::id), b2nd::field("pos", &Particle::pos),
                            b2nd::field("flag", &Particle::flag));
    }
};
// clang-format on
// end

namespace {

void check(bool ok, const char* what) {
    if (!ok) {
        throw std::runtime_error(std::string("snippet check failed: ") + what);
    }
}

std::vector<float> field_values(std::size_t n) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = static_cast<float>(static_cast<int>(i % 251) - 125);
    }
    return v;
}

void xtensor_views() {
    const b2nd::Shape shape{64, 128, 128};
    (void)b2nd::NDArray<float>::create_from("temperature.b2nd", shape,
                                            field_values(64 * 128 * 128));
    const auto u = b2nd::NDArray<float>::create_from("u.b2nd", shape, field_values(64 * 128 * 128));
    auto out = b2nd::create<float>("out.b2nd", shape);
    auto anomaly = b2nd::create<float>("anomaly.b2nd", shape);
    const auto climatology =
        b2nd::NDArray<float>::create_from("climatology.b2nd", {128, 128}, field_values(128 * 128));
    // README: "xtensor"
    // clang-format off
    auto t = b2nd::open<float>("temperature.b2nd");
    xt::xtensor<float, 2> day = b2nd::read(t, 7, xt::all(), xt::all());     // touched blocks only
    auto lazy = b2nd::view(t, xt::range(0, 32), xt::all(), 7);              // nothing decoded yet
    auto flat = b2nd::squeeze(b2nd::expand_dims(lazy, 0));                  // views of views, still lazy
    xt::xarray<float> c = b2nd::view(t) - b2nd::view(u) * 2.0f;              // slabs, in parallel
    xt::xarray<double> m = xt::mean(lazy, {0});                              // likewise
    b2nd::write(out, xt::range(0, 10), xt::all(), xt::all(), day * 2.0f);   // any expression, broadcast
    b2nd::evaluate(anomaly, [](const auto& x, const auto& clim) { return x - clim; }, t, climatology);
    xt::xarray<double> col = b2nd::mean(t, 0);                               // reductions of any size
    xt::xarray<float> k = b2nd::read(t, xt::keep(9, 2, -1), xt::drop(0), 5); // index lists, lazily too
    xt::xarray<float> hot = b2nd::filter(t, b2nd::view(t) > 30.0f);          // xt::filter, out of core
    b2nd::write_masked(out, b2nd::view(out) < -90.0f, 0.0f);                 // a[a < -90] = 0
    b2nd::where(out, b2nd::view(t) > 0.0f, t, 0.0f);                         // xt::where, chunk by chunk
    b2nd::ReduceOptions r;  r.axes = {1, 2};  r.keepdims = true;
    r.where = b2nd::mask_of(b2nd::view(t) > -999.0f, t.shape());             // NumPy's where=
    xt::xarray<double> sd = b2nd::std(t, r);                                 // shape (n0, 1, 1)
    // clang-format on
    // end
    check(day.shape()[0] == 128 && flat.shape().size() == 2 && c.size() == t.size(), "views");
    check(m.size() == 128 && col.size() == 128 * 128 && k.size() == 3 * 127 && hot.size() > 0,
          "reductions and selections");
    check(sd.shape() == std::vector<std::size_t>{64, 1, 1}, "keepdims");
}

void records() {
    {
        std::vector<Particle> ps(2000);
        for (std::size_t i = 0; i < ps.size(); ++i) {
            const auto d = static_cast<double>(i);
            ps[i] = Particle{static_cast<std::int32_t>(i), Vec{d * 0.5, d * 0.25}, i % 2 == 0};
        }
        (void)b2nd::NDArray<Particle>::create_from("particles.b2nd", {2000}, ps);
        std::vector<std::string> names(2000);
        for (std::size_t i = 0; i < names.size(); ++i) {
            names[i] = "particle " + std::to_string(i);
        }
        (void)b2nd::UTF8Array::write("names.b2nd", names);
    }
    // README: "Records and text", reading them
    // clang-format off
    auto parts = b2nd::NDArray<Particle>::open("particles.b2nd");  // checked field by field
    double x3 = parts(3).pos.x;
    b2nd::NDArray<double> y = parts.field<double>("pos.y");       // a lazy view of one field
    double top = b2nd::amax(y);                                    // <b2nd/xtensor.hpp>
    auto names = b2nd::UTF8Array::open("names.b2nd");              // + names.utf8.b2nd
    b2nd::Strings some = names.read(1000, 1010);
    // clang-format on
    // end
    check(x3 == 1.5 && top == 1999 * 0.25 && some.size() == 10 &&
              std::string(some[0]) == "particle 1000",
          "records and strings");
}

/// Returns false when it cannot run here (no nginx, or a build without libcurl).
bool http() {
    if (!b2nd::storage::http_available()) {
        return false;
    }
    (void)b2nd::NDArray<float>::create_from("t.b2nd", {16, 32, 32}, field_values(16 * 32 * 32));
    {
        auto w = b2nd::StoreWriter::create("run7.b2z");
        w.put("/t", b2nd::AnyArray::open("t.b2nd"));
        w.commit();
    }
    const auto server = b2nd::test::ServerProcess::nginx(std::filesystem::current_path());
    if (!server) {
        return false;
    }
    const std::string url = server->url("");  // the README's "https://data.example.org/run7/"
    // README: "Arrays over HTTP"
    // clang-format off
    auto t = b2nd::open<float>(url + "t.b2nd");                 // 2 requests
    auto day = b2nd::read(t, 7, xt::all(), xt::all());          // the touched blocks' bytes only
    b2nd::OpenOptions o;
    o.http_cache = "t.cache.b2nd";                              // kept across processes
    auto tc = b2nd::open<float>(url + "t.b2nd", o);
    auto s = b2nd::Store::open(url + "run7.b2z");               // .b2z leaves
    // clang-format on
    // end
    check(day.size() == 32 * 32 && tc.shape() == t.shape() && s.entries().size() == 1, "http");
    return true;
}

// clang-format off
void tour() {
    // README: "A tour"
    std::vector<float> field(64 * 128 * 128, 1.5f);                 // C order, as in NumPy
    auto t = b2nd::NDArray<float>::create_from("t.b2nd", {64, 128, 128}, field);

    auto a = b2nd::open<float>("t.b2nd");                     // maps it; reads header and index
    float x = a(12, 40, 7);                                   // decodes one block
    std::vector<float> plane = a.read({7, b2nd::Slice::all(), b2nd::Slice::all()});
    std::vector<float> odd = a.read(b2nd::parse_selection("::2, 5, -10:"));  // NumPy's text

    auto lazy = b2nd::view(a, xt::range(0, 32), xt::all(), 7);  // an xtensor expression
    xt::xarray<double> m = xt::mean(lazy, {0});                 // decodes the touched blocks

    auto out = b2nd::create<float>("anomaly.b2nd", a.shape());  // all zeros, nothing stored
    b2nd::evaluate(out, [](const auto& v) { return v - 1.5f; }, a);  // out of core, in parallel

    auto w = b2nd::StoreWriter::create("run.b2z");            // a python-blosc2 store
    w.put("/fields/t", a.any());
    w.commit();
    auto back = b2nd::Store::open("run.b2z").open<float>("/fields/t");
    // end
    check(x == 1.5f && plane.size() == 128 * 128 && odd.size() == 32 * 10, "reads");
    check(m.size() == 128 && m(5) == 1.5, "the mean of a view");
    check(out(3, 4, 5) == 0.0f && back.shape() == t.shape(), "evaluated, stored");
}
// clang-format on

}  // namespace

int main() {
    const SnippetDir dir;
    try {
        dir.section("tour", tour);
        dir.section("xtensor", xtensor_views);
        dir.section("records", records);
        dir.section("http", [] {
            if (!http()) {
                std::printf("B2ND-SKIP: the HTTP snippet needs nginx and libcurl\n");
            }
        });
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    std::printf("README snippets (xtensor): all ran\n");
    return 0;
}
