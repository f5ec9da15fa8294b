// Internal: what dtype.cpp (the type's forms) and dtype_parse.cpp (its parser) share.
#pragma once

#include <string>
#include <vector>

#include <b2nd/dtype.hpp>

namespace b2nd {

/// This machine's byte order character.
constexpr char kNative = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? '<' : '>';

// Helpers that need access to DType's private members are members of a befriended scope; we
// build dtypes through make() and adjust copies here.
struct DTypeAccess {
    static void set_unit(DType& d, const std::string& u);
    static void set_fields(DType& d, std::vector<DType::Field> f);
    static void set_aligned(DType& d, bool a) { d.aligned_ = a; }
};

}  // namespace b2nd
