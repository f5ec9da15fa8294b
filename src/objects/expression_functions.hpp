// Internal: the functions of python-blosc2's expression language (numexpr's), by name: what
// the parser checks calls against and the evaluator runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace b2nd::detail {

enum class Fn : std::uint8_t {
    real1,    // a real function of one real
    real2,    // a real function of two reals
    abs,      // kind-preserving
    sign,     // kind-preserving
    square,   // kind-preserving
    maximum,  // promoted kind, NaN wins
    minimum,
    where,
};

struct Function {
    const char* name;
    int arity;
    Fn fn;
    double (*f1)(double) = nullptr;
    double (*f2)(double, double) = nullptr;
    float (*f1f)(float) = nullptr;  ///< the float32 form, where NumPy computes in float32
};

/// The function named `name`, as an index for function(); -1 when there is none.
int find_function(const std::string& name) noexcept;
const Function& function(int index) noexcept;

}  // namespace b2nd::detail
