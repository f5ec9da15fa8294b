#include "isclose.hpp"

#include <cmath>

#include "item_format.hpp"

namespace b2nd::cli {

namespace {

/// Bytes of the float NumPy computes a dtype's items in: its own for floats (per part for
/// complex), 0 for booleans and integers.
int float_bytes(const DType& d) {
    switch (d.kind()) {
        case DType::Kind::float_:
            return static_cast<int>(d.itemsize());
        case DType::Kind::complex_:
            return static_cast<int>(d.itemsize() / 2);
        default:
            return 0;
    }
}

/// The smallest float an integer dtype promotes to together with a float (NumPy's
/// result_type: int8 and float16 give float16, int16 float32, wider ones float64).
int promoted_bytes(const DType& d) {
    if (d.kind() == DType::Kind::boolean) {
        return 2;
    }
    return d.itemsize() <= 1 ? 2 : d.itemsize() <= 2 ? 4 : 8;
}

}  // namespace

IsClose::IsClose(const DType& a, const DType& b, double rtol, double atol, bool equal_nan)
    : rtol_(rtol), atol_(atol), equal_nan_(equal_nan) {
    b_ = float_bytes(b) != 0 ? float_bytes(b) : 8;  // result_type(b, 1.0)
    a_own_ = float_bytes(a);
    wide_ = std::max(a_own_ != 0 ? a_own_ : promoted_bytes(a), b_);
    integers_ = a_own_ == 0 && float_bytes(b) == 0;
}

double IsClose::in(double v, int width) const {
    switch (width) {
        case 2:
            return round_to_half(static_cast<double>(static_cast<float>(v)));
        case 4:
            return static_cast<double>(static_cast<float>(v));
        default:
            return v;
    }
}

IsClose::Result IsClose::real(long double a, long double b) const {
    Result r;
    if (integers_) {
        // Exactly (long double holds every 64-bit integer): NumPy's float64 would call
        // 2^60 + 1 and 2^60 equal. Below 2^53 the two agree.
        const long double diff = std::fabs(a - b), mag = std::fabs(b);
        r.close = diff <= static_cast<long double>(atol_) + static_cast<long double>(rtol_) * mag;
        r.abs_diff = static_cast<double>(diff);
        r.rel_diff = diff == 0 ? 0 : mag != 0 ? static_cast<double>(diff / mag) : HUGE_VAL;
        return r;
    }
    // Operands as NumPy holds them: a in its own type (integers exactly, as long double), b
    // cast to its inexact type.
    const double y = in(static_cast<double>(b), b_);
    const double x = in(static_cast<double>(a), wide_);
    if (!std::isfinite(x) || !std::isfinite(y)) {
        r.both_nan = std::isnan(x) && std::isnan(y);
        r.close = x == y || (equal_nan_ && r.both_nan);
        r.abs_diff = r.rel_diff = r.close ? 0 : HUGE_VAL;
        return r;
    }
    const double diff = std::fabs(in(x - y, wide_));
    const double bound = in(in(atol_, b_) + in(in(rtol_, b_) * std::fabs(y), b_), b_);
    r.close = diff <= bound;
    r.abs_diff = diff;
    r.rel_diff = diff == 0 ? 0 : y != 0 ? diff / std::fabs(y) : HUGE_VAL;
    return r;
}

IsClose::Result IsClose::complex(std::pair<double, double> a, std::pair<double, double> b) const {
    Result r;
    const double yr = in(b.first, b_), yi = in(b.second, b_);
    const double xr = in(a.first, wide_), xi = in(a.second, wide_);
    const bool finite =
        std::isfinite(xr) && std::isfinite(xi) && std::isfinite(yr) && std::isfinite(yi);
    if (!finite) {
        // NumPy multiplies both by (1 + 0j) first (x * ones_like(cond)), which turns an
        // infinite part into NaN in the other part: (re - im * 0, re * 0 + im).
        const auto times_one = [](double re, double im) {
            return std::make_pair(re - im * 0.0, re * 0.0 + im);
        };
        const auto [ar, ai] = times_one(xr, xi);
        const auto [br, bi] = times_one(yr, yi);
        const bool nan_x = std::isnan(ar) || std::isnan(ai);
        const bool nan_y = std::isnan(br) || std::isnan(bi);
        r.both_nan = nan_x && nan_y;
        r.close = (ar == br && ai == bi) || (equal_nan_ && r.both_nan);
        r.abs_diff = r.rel_diff = r.close ? 0 : HUGE_VAL;
        return r;
    }
    // |z| as NumPy's complex abs: hypot in the parts' type.
    const auto magnitude = [](double re, double im, int width) {
        return width == 4
                   ? static_cast<double>(std::hypot(static_cast<float>(re), static_cast<float>(im)))
                   : std::hypot(re, im);
    };
    const double diff = magnitude(in(xr - yr, wide_), in(xi - yi, wide_), wide_);
    const double mag = magnitude(yr, yi, b_);
    const double bound = in(in(atol_, b_) + in(in(rtol_, b_) * mag, b_), b_);
    r.close = diff <= bound;
    r.abs_diff = diff;
    r.rel_diff = diff == 0 ? 0 : mag != 0 ? diff / mag : HUGE_VAL;
    return r;
}

}  // namespace b2nd::cli
