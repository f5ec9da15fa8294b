// Persisted python-blosc2 expressions written by the tests: a carrier array tagged lazyexpr
// whose "b2o" attribute holds the recipe (objects.hpp), as python-blosc2 4.2 and later write it.
#pragma once

#include <string>

#include <b2nd/b2nd.hpp>
#include <b2nd/value.hpp>

namespace b2nd::test {

/// python-blosc2's recipe of a lazy expression.
inline b2nd::Value lazy_recipe(const std::string& expr, const b2nd::Value& operands) {
    return b2nd::Value::map(
        {{"kind", "lazyexpr"}, {"version", 1}, {"expression", expr}, {"operands", operands}});
}

/// A recipe's reference to an operand by path (relative to the carrier's directory).
inline b2nd::Value path_ref(const std::string& p) {
    return b2nd::Value::map({{"kind", "urlpath"}, {"version", 1}, {"urlpath", p}});
}

/// A float64 carrier of shape `shape` (chunks and blocks as `o` says) at `path`, tagged lazyexpr,
/// whose "b2o" attribute is `recipe`.
inline std::string write_carrier(const std::string& path,
                                 const b2nd::Value& recipe,
                                 const b2nd::Shape& shape = {4},
                                 b2nd::CreateOptions o = {}) {
    o.metalayers = {{"b2o", b2nd::Value::map({{"kind", "lazyexpr"}, {"version", 1}}).to_msgpack()}};
    auto a = b2nd::AnyArray::create(path, b2nd::dtype_of<double>(), shape, o);
    a.attrs().set("b2o", recipe);
    return path;
}

}  // namespace b2nd::test
