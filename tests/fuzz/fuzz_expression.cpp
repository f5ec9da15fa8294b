// Fuzz target: parse arbitrary text as a python-blosc2 expression and, when it parses, evaluate
// it over small columns (reals, integers and booleans for its names). Only b2nd::Error may
// escape; no undefined behaviour (integer overflow wraps, NaN casts are defined).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <b2nd/error.hpp>

#include "objects/expression.hpp"

using namespace b2nd::detail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4096) {
        return 0;
    }
    try {
        const Expression e =
            Expression::parse(std::string(reinterpret_cast<const char*>(data), size));
        constexpr std::size_t n = 5;
        std::vector<Column> cols(e.names().size());
        std::vector<const Column*> ptrs;
        for (std::size_t i = 0; i < cols.size(); ++i) {
            Column& c = cols[i];
            c.kind = static_cast<VKind>(i % 3);
            c.scalar = i % 4 == 3;
            c.single = i % 5 == 1 && c.kind == VKind::real;
            const std::size_t m = c.scalar ? 1 : n;
            for (std::size_t k = 0; k < m; ++k) {
                const std::uint8_t b = size > 0 ? data[(i + k) % size] : 0;
                c.real.push_back(static_cast<double>(b) - 100.5);
                c.integer.push_back(c.kind == VKind::boolean
                                        ? b & 1
                                        : static_cast<std::int64_t>(b) * 0x0123456789abLL);
            }
            ptrs.push_back(&c);
        }
        ExprWork w;
        const Column& r = evaluate(e, ptrs, n, w);
        (void)r;
    } catch (const b2nd::Error&) {
        // expected for malformed input and refused operations
    }
    return 0;
}
