// b2nd diff A B: shape, dtype and values of two arrays compared, as h5diff does, slab by slab.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/selection.hpp>

#include "../detail/text.hpp"
#include "cli.hpp"
#include "isclose.hpp"
#include "item_format.hpp"
#include "selection_stream.hpp"

namespace b2nd::cli {

namespace {

const char* const kHelp =
    "usage: b2nd diff A B [--rtol R] [--atol T] [--equal-nan] [--slice EXPR] [--count N]\n"
    "                     [--nthreads N] [--max-seconds S]\n"
    "\n"
    "Compares two arrays as h5diff does: shape, dtype, then every value, chunk by chunk (any\n"
    "size takes little memory). Two numbers are equal as numpy.isclose(a, b, rtol, atol,\n"
    "equal_nan) says: |a - b| <= atol + rtol * |b|, computed in NumPy's types (float32 arrays\n"
    "in float32; integers as float64); infinities equal only the same infinity; NaN equals\n"
    "nothing, unless --equal-nan. The tolerances are 0 by default: exactly equal. Arrays of\n"
    "different numeric dtypes are compared as numbers; others need the same dtype and compare\n"
    "as bytes. Prints how many elements differ, the largest absolute and relative differences\n"
    "and where, and the first differences. After a lossy convert, this checks the error\n"
    "bound. A and B may be any arrays: b2nd files, store leaves, Zarr arrays, HDF5 datasets\n"
    "(FILE.h5:/path), https:// or s3:// URLs. NaN against NaN is said apart, with the option\n"
    "that counts it equal.\n"
    "\n"
    "  --rtol R       relative tolerance (default 0)\n"
    "  --atol T       absolute tolerance (default 0)\n"
    "  --equal-nan    NaN equals NaN (numpy.isclose's equal_nan)\n"
    "  --slice EXPR   compare only this selection of both, e.g. '0, :, 100:200'\n"
    "  --count N      differences listed (default 10)\n"
    "  --max-seconds S  stop after S seconds (the work follows the arrays' shapes, which a\n"
    "                 small file may make huge) and report on what was compared\n"
    "\n"
    "Exit codes: 0 equal (within the tolerance), 1 different (or unreadable), 2 bad arguments,\n"
    "4 stopped by --max-seconds with no difference found so far.\n"
    "\n"
    "example:\n"
    "  b2nd diff t.b2nd t_zfp.b2nd --atol 1e-3\n";

constexpr std::int64_t kSlabBytes = 8 << 20;  // of each array, read at a time
constexpr std::size_t kCacheBytes = 8 << 20;  // blocks kept between slabs, each array

double tolerance(const Args& a, const std::string& name) {
    const std::string t = a.get(name, "0");
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0' || !std::isfinite(v) || v < 0) {
        throw ArgError(name + ": \"" + t + "\" is not a number >= 0");
    }
    return v;
}

/// The array coordinates of the element at flat position `flat` of the selection's result.
std::string position(const Resolved& r, std::int64_t flat, int ndim) {
    std::vector<std::int64_t> at(static_cast<std::size_t>(ndim));
    for (std::size_t u = 0; u < at.size(); ++u) {
        at[u] = r.orthogonal() ? r.lists[u][0] : r.box.start[u];
    }
    for (std::size_t d = r.shape.size(); d-- > 0;) {
        const std::int64_t k = flat % r.shape[d];
        flat /= r.shape[d];
        if (r.dims[d] >= 0) {
            const auto u = static_cast<std::size_t>(r.dims[d]);
            at[u] = r.orthogonal() ? r.lists[u][static_cast<std::size_t>(k)]
                                   : r.box.start[u] + k * r.box.step[u];
        }
    }
    return to_string(Shape(at.begin(), at.end()));
}

std::string shortest(double d) {
    char buf[40];
    for (int prec = 1; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (std::strtod(buf, nullptr) == d) {
            break;
        }
    }
    return buf;
}

/// One item as diff shows it: the JSON token without quotes.
std::string text(const ItemFormat& f, const std::uint8_t* item) {
    std::string t;
    f.json(t, item);
    if (t.size() >= 2 && t.front() == '"' && t.back() == '"') {
        t = t.substr(1, t.size() - 2);
    }
    return t;
}

struct Tally {
    std::int64_t compared = 0, differ = 0;
    std::int64_t nan_pairs = 0;  // of `differ`: NaN against NaN (equal under --equal-nan)
    double max_abs = 0, max_rel = 0;
    std::int64_t max_abs_at = -1, max_rel_at = -1;
    std::vector<std::string> listed;
};

}  // namespace

int cmd_diff(const std::vector<std::string>& argv) {
    const Args a =
        Args::parse(argv, {"--rtol", "--atol", "--slice", "--count", "--nthreads", "--max-seconds"},
                    {"--equal-nan", "--help"});
    if (a.has("--help")) {
        std::cout << kHelp;
        return 0;
    }
    if (a.positional.size() != 2) {
        throw ArgError("expected A and B");
    }
    const double rtol = tolerance(a, "--rtol");
    const double atol = tolerance(a, "--atol");
    const auto count = static_cast<std::size_t>(a.get_int("--count", 10, 0, 1000000));
    const Deadline deadline(a);
    OpenOptions o = input_options(a);
    o.cache_bytes = kCacheBytes;
    const AnyArray A = open_input(a.positional[0], o);
    const AnyArray B = open_input(a.positional[1], o);
    Resolved ra, rb;
    try {
        const Selection sel = parse_selection(a.get("--slice"));
        ra = resolve(A.shape(), sel);
        rb = resolve(B.shape(), sel);
    } catch (const UsageError& e) {
        throw ArgError(std::string("--slice: ") + e.what());
    }
    const std::string qa = detail::quoted_path(a.positional[0]),
                      qb = detail::quoted_path(a.positional[1]);
    std::cout << "A: " << qa << " " << to_string(A.shape()) << " " << A.dtype().str() << "\n"
              << "B: " << qb << " " << to_string(B.shape()) << " " << B.dtype().str() << "\n";
    if (ra.shape != rb.shape) {
        std::cout << "differ: the shapes " << (a.has("--slice") ? "selected " : "")
                  << to_string(ra.shape) << " and " << to_string(rb.shape)
                  << " differ; no value compared\n";
        return 1;
    }
    const ItemFormat fa(A.dtype()), fb(B.dtype());
    const auto kind = fa.number() == fb.number() ? fa.number() : ItemFormat::Number::none;
    const bool same_dtype = A.dtype() == B.dtype();
    if (!same_dtype && kind == ItemFormat::Number::none) {
        std::cout << "differ: the dtypes differ and are not both real or both complex numbers; "
                     "no value compared\n";
        return 1;
    }
    if (kind == ItemFormat::Number::none && (rtol > 0 || atol > 0)) {
        throw ArgError("--rtol and --atol apply to numbers, not to '" + A.dtype().str() + "'");
    }
    if (!same_dtype) {
        std::cout << "note: the dtypes differ: values compared as numbers\n";
    }

    // Both arrays, the same slabs in turn.
    const Shown all = Shown::all(ra);
    const std::int64_t ia = A.itemsize(), ib = B.itemsize();
    SlabWalk walk(ra, all, A.ndim(), kSlabBytes / std::max(ia, ib));
    std::vector<std::uint8_t> bufa(static_cast<std::size_t>(walk.max_count() * ia));
    std::vector<std::uint8_t> bufb(static_cast<std::size_t>(walk.max_count() * ib));
    Tally t;
    const IsClose close(A.dtype(), B.dtype(), rtol, atol, a.has("--equal-nan"));
    const auto differs = [&](const std::uint8_t* pa, const std::uint8_t* pb, double& abs_diff,
                             double& rel_diff, bool& both_nan) {
        abs_diff = rel_diff = 0;
        both_nan = false;
        if (kind == ItemFormat::Number::none) {
            return std::memcmp(pa, pb, static_cast<std::size_t>(ia)) != 0;
        }
        const IsClose::Result r = kind == ItemFormat::Number::real
                                      ? close.real(fa.value(pa), fb.value(pb))
                                      : close.complex(fa.parts(pa), fb.parts(pb));
        abs_diff = r.abs_diff;
        rel_diff = r.rel_diff;
        both_nan = r.both_nan;
        return !r.close;
    };
    // Identical bytes are equal values, but for NaN (unless --equal-nan).
    const bool bytes_decide =
        same_dtype &&
        (kind == ItemFormat::Number::none || a.has("--equal-nan") ||
         A.dtype().kind() == DType::Kind::boolean || A.dtype().kind() == DType::Kind::int_ ||
         A.dtype().kind() == DType::Kind::uint);
    bool stopped = false;
    while (!(stopped = deadline.passed()) && walk.next()) {
        const std::int64_t n = walk.count();
        walk.read(A, bufa.data());
        walk.read(B, bufb.data());
        const std::int64_t first = t.compared;
        t.compared += n;
        if (bytes_decide &&
            std::memcmp(bufa.data(), bufb.data(), static_cast<std::size_t>(n * ia)) == 0) {
            continue;  // the same bytes: the same values
        }
        for (std::int64_t i = 0; i < n; ++i) {
            const std::uint8_t* pa = bufa.data() + i * ia;
            const std::uint8_t* pb = bufb.data() + i * ib;
            double abs_diff = 0, rel_diff = 0;
            bool both_nan = false;
            const bool bad = differs(pa, pb, abs_diff, rel_diff, both_nan);
            if (both_nan) {
                // No distance: NaN against NaN is counted apart, not as an infinite difference.
                t.nan_pairs += bad ? 1 : 0;
            } else if (abs_diff > t.max_abs || (t.max_abs_at < 0 && abs_diff > 0)) {
                t.max_abs = abs_diff;
                t.max_abs_at = first + i;
            }
            if (!both_nan && (rel_diff > t.max_rel || (t.max_rel_at < 0 && rel_diff > 0))) {
                t.max_rel = rel_diff;
                t.max_rel_at = first + i;
            }
            if (!bad) {
                continue;
            }
            ++t.differ;
            if (t.listed.size() < count) {
                std::string line = "  " + position(ra, first + i, A.ndim()) + ": " + text(fa, pa) +
                                   ", " + text(fb, pb);
                if (kind != ItemFormat::Number::none) {
                    line += ", " + (both_nan ? std::string("NaN against NaN") : shortest(abs_diff));
                }
                t.listed.push_back(line);
            }
        }
    }

    std::ostringstream out;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.3g%%",
                  t.compared > 0
                      ? 100.0 * static_cast<double>(t.differ) / static_cast<double>(t.compared)
                      : 0.0);
    const std::string tol = rtol > 0 || atol > 0 ? " (within |a - b| <= " + shortest(atol) + " + " +
                                                       shortest(rtol) + " * |b|)"
                                                 : "";
    const std::int64_t selected = ra.size();
    if (stopped) {
        out << deadline.reached() << t.compared << " of " << selected
            << " elements compared; the rest not\n";
    }
    if (t.differ == 0) {
        out << (stopped ? "equal so far: " : "equal: ") << t.compared << " elements" << tol << "\n";
    } else {
        out << "differ: " << t.differ << " of " << t.compared << " elements (" << pct << ")" << tol
            << "\n";
        if (t.nan_pairs > 0) {
            out << (t.nan_pairs == t.differ ? "all of them"
                                            : "of them, " + detail::num(t.nan_pairs))
                << " NaN against NaN, which NumPy's isclose counts as different; --equal-nan "
                   "counts NaN equal to NaN\n";
        }
    }
    if (kind != ItemFormat::Number::none && t.max_abs_at >= 0) {
        out << "largest absolute difference " << shortest(t.max_abs) << " at "
            << position(ra, t.max_abs_at, A.ndim()) << "\n";
        out << "largest relative difference " << shortest(t.max_rel) << " at "
            << position(ra, t.max_rel_at, A.ndim()) << "\n";
    }
    if (!t.listed.empty()) {
        out << "first differences (position: A, B"
            << (kind != ItemFormat::Number::none ? ", |A - B|" : "") << "):\n";
        for (const std::string& l : t.listed) {
            out << l << "\n";
        }
    }
    std::cout << out.str();
    return t.differ != 0 ? 1 : stopped ? kExitStopped : 0;
}

}  // namespace b2nd::cli
