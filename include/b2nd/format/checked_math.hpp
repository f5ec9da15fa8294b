// Overflow-checked arithmetic for sizes taken from untrusted input.
//
// Advanced (b2nd::format, the byte layer): for tools that parse or write the format itself.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <cstdint>
#include <string>

#include <b2nd/error.hpp>

namespace b2nd::format {

/// *r = a + b; true when the exact result does not fit R (for callers that report their own
/// error). The checked operations below throw instead.
template <class A, class B, class R>
constexpr bool add_overflows(A a, B b, R* r) noexcept {
    return __builtin_add_overflow(a, b, r);
}

/// *r = a * b; true when the exact result does not fit R.
template <class A, class B, class R>
constexpr bool mul_overflows(A a, B b, R* r) noexcept {
    return __builtin_mul_overflow(a, b, r);
}

/// a + b, or FormatError(what) at `offset` when it overflows T.
template <class T>
T checked_add(T a, T b, const char* what, std::uint64_t offset = 0) {
    T r;
    if (add_overflows(a, b, &r)) {
        throw FormatError(std::string(what) + ": arithmetic overflow in addition", offset);
    }
    return r;
}

/// a * b, or FormatError(what) at `offset` when it overflows T.
template <class T>
T checked_mul(T a, T b, const char* what, std::uint64_t offset = 0) {
    T r;
    if (mul_overflows(a, b, &r)) {
        throw FormatError(std::string(what) + ": arithmetic overflow in multiplication", offset);
    }
    return r;
}

/// Converts between integer types, or FormatError(what) when the value does not fit.
template <class To, class From>
To checked_cast(From v, const char* what, std::uint64_t offset = 0) {
    To r;
    if (add_overflows(v, 0, &r)) {
        throw FormatError(std::string(what) + ": value " + std::to_string(v) + " out of range",
                          offset);
    }
    return r;
}

/// Ceiling division for non-negative integers; b must be positive.
template <class T>
constexpr T ceil_div(T a, T b) noexcept {
    return a / b + (a % b != 0 ? 1 : 0);
}

}  // namespace b2nd::format
