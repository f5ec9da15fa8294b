// Internal: one field of a structured array, found by name (AnyArray::read_field and field views).
#pragma once

#include <cstdint>
#include <string>

#include <b2nd/any_array.hpp>
#include <b2nd/dtype.hpp>

namespace b2nd::detail {

struct FieldSpec {
    DType type;
    Shape sub;                ///< a sub-array field's shape
    std::int64_t offset = 0;  ///< in the record
    std::int64_t width = 0;   ///< bytes: the type's itemsize times the sub-array's size
};

/// Field `name` of a's dtype ("pos.x" nested). \throws UsageError naming the array, the field
/// and the fields there are (or that the dtype is not structured)
FieldSpec field_spec(const AnyArray& a, const std::string& name);

}  // namespace b2nd::detail
