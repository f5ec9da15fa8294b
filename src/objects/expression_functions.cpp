// The functions of the expression language (expression_functions.hpp): NumPy's math functions
// in double, and in float where NumPy computes them in float32.
#include "expression_functions.hpp"

#include <cmath>

namespace b2nd::detail {

namespace {

double d_sin(double x) {
    return std::sin(x);
}
double d_cos(double x) {
    return std::cos(x);
}
double d_tan(double x) {
    return std::tan(x);
}
double d_asin(double x) {
    return std::asin(x);
}
double d_acos(double x) {
    return std::acos(x);
}
double d_atan(double x) {
    return std::atan(x);
}
double d_sinh(double x) {
    return std::sinh(x);
}
double d_cosh(double x) {
    return std::cosh(x);
}
double d_tanh(double x) {
    return std::tanh(x);
}
double d_asinh(double x) {
    return std::asinh(x);
}
double d_acosh(double x) {
    return std::acosh(x);
}
double d_atanh(double x) {
    return std::atanh(x);
}
double d_exp(double x) {
    return std::exp(x);
}
double d_expm1(double x) {
    return std::expm1(x);
}
double d_log(double x) {
    return std::log(x);
}
double d_log10(double x) {
    return std::log10(x);
}
double d_log1p(double x) {
    return std::log1p(x);
}
double d_log2(double x) {
    return std::log2(x);
}
double d_sqrt(double x) {
    return std::sqrt(x);
}
double d_floor(double x) {
    return std::floor(x);
}
double d_ceil(double x) {
    return std::ceil(x);
}
double d_trunc(double x) {
    return std::trunc(x);
}
double d_rint(double x) {
    return std::nearbyint(x);
}
float f_sin(float x) {
    return std::sin(x);
}
float f_cos(float x) {
    return std::cos(x);
}
float f_tan(float x) {
    return std::tan(x);
}
float f_exp(float x) {
    return std::exp(x);
}
float f_log(float x) {
    return std::log(x);
}
float f_log10(float x) {
    return std::log10(x);
}
float f_sqrt(float x) {
    return std::sqrt(x);
}
float f_tanh(float x) {
    return std::tanh(x);
}
double d_atan2(double y, double x) {
    return std::atan2(y, x);
}
double d_hypot(double x, double y) {
    return std::hypot(x, y);
}
double d_pow(double x, double y) {
    return std::pow(x, y);
}
/// NumPy's fmod: the sign of the dividend.
double d_fmod(double x, double y) {
    return std::fmod(x, y);
}

constexpr Function kFunctions[] = {
    {"sin", 1, Fn::real1, d_sin, nullptr, f_sin},
    {"cos", 1, Fn::real1, d_cos, nullptr, f_cos},
    {"tan", 1, Fn::real1, d_tan, nullptr, f_tan},
    {"arcsin", 1, Fn::real1, d_asin},
    {"arccos", 1, Fn::real1, d_acos},
    {"arctan", 1, Fn::real1, d_atan},
    {"sinh", 1, Fn::real1, d_sinh},
    {"cosh", 1, Fn::real1, d_cosh},
    {"tanh", 1, Fn::real1, d_tanh, nullptr, f_tanh},
    {"arcsinh", 1, Fn::real1, d_asinh},
    {"arccosh", 1, Fn::real1, d_acosh},
    {"arctanh", 1, Fn::real1, d_atanh},
    {"exp", 1, Fn::real1, d_exp, nullptr, f_exp},
    {"expm1", 1, Fn::real1, d_expm1},
    {"log", 1, Fn::real1, d_log, nullptr, f_log},
    {"log10", 1, Fn::real1, d_log10, nullptr, f_log10},
    {"log1p", 1, Fn::real1, d_log1p},
    {"log2", 1, Fn::real1, d_log2},
    {"sqrt", 1, Fn::real1, d_sqrt, nullptr, f_sqrt},
    {"floor", 1, Fn::real1, d_floor},
    {"ceil", 1, Fn::real1, d_ceil},
    {"trunc", 1, Fn::real1, d_trunc},
    {"rint", 1, Fn::real1, d_rint},
    {"arctan2", 2, Fn::real2, nullptr, d_atan2},
    {"hypot", 2, Fn::real2, nullptr, d_hypot},
    {"power", 2, Fn::real2, nullptr, d_pow},
    {"fmod", 2, Fn::real2, nullptr, d_fmod},
    {"abs", 1, Fn::abs},
    {"absolute", 1, Fn::abs},
    {"sign", 1, Fn::sign},
    {"square", 1, Fn::square},
    {"maximum", 2, Fn::maximum},
    {"minimum", 2, Fn::minimum},
    {"where", 3, Fn::where},
};

}  // namespace

int find_function(const std::string& name) noexcept {
    const std::size_t n = sizeof(kFunctions) / sizeof(kFunctions[0]);
    for (std::size_t f = 0; f < n; ++f) {
        if (name == kFunctions[f].name) {
            return static_cast<int>(f);
        }
    }
    return -1;
}

const Function& function(int index) noexcept {
    return kFunctions[static_cast<std::size_t>(index)];
}

}  // namespace b2nd::detail
