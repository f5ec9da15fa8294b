// The b2nd tool: numpy.isclose on two items, computed as NumPy 1.24 computes it, so that b2nd
// diff counts what NumPy counts. Used by diff.
#pragma once

#include <utility>

#include <b2nd/dtype.hpp>

namespace b2nd::cli {

/// numpy.isclose(a, b, rtol, atol, equal_nan) for items of dtypes `a` and `b` (both real: bool,
/// integers, floats; or both complex). As NumPy does it: b is cast to an inexact type
/// (result_type(b, 1.0): float64 for integers), |a - b| is computed in the type a and that
/// promote to, atol + rtol * |b| in b's inexact type, each operation rounded to its type (half
/// precision through float, as NumPy's float16 loops); pairs that are not both finite are
/// close when equal (the same infinity), and with `equal_nan` when both are NaN (complex ones
/// after NumPy's multiplication by 1 + 0j, which makes an infinite part's partner NaN).
class IsClose {
public:
    IsClose(const DType& a, const DType& b, double rtol, double atol, bool equal_nan);

    struct Result {
        bool close = true;
        double abs_diff = 0;    ///< |a - b| (infinite for pairs not both finite that differ)
        double rel_diff = 0;    ///< |a - b| / |b| (infinite when b is 0 and they differ)
        bool both_nan = false;  ///< both are NaN (not close unless equal_nan)
    };
    Result real(long double a, long double b) const;
    Result complex(std::pair<double, double> a, std::pair<double, double> b) const;

private:
    double in(double v, int width) const;  // v rounded to a float of `width` bytes

    int wide_ = 8;           // bytes of the float a - b is computed in (per part for complex)
    int b_ = 8;              // bytes of b's inexact type: atol + rtol * |b| is computed in it
    int a_own_ = 8;          // bytes of a's own float type (0: an integer or bool)
    bool integers_ = false;  // both integers (or bools): compared exactly
    double rtol_, atol_;
    bool equal_nan_;
};

}  // namespace b2nd::cli
