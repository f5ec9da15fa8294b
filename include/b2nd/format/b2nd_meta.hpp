// The "b2nd" metalayer (seeds/b2nd-metalayer.rst, c-blosc2 b2nd_serialize_meta) and the legacy
// "caterva" one, which has no dtype:
//
//   97 version ndim  9n {d3 shape:int64}*n  9n {d2 chunkshape:int32}*n  9n {d2 blockshape:int32}*n
//      dtype_format db len:int32 dtype-bytes
//   95 version ndim  ... the three arrays ...                                  (caterva)
//
// All integers are big-endian. ndim is at most 16; c-blosc2 writes the array markers as
// 0x90 + ndim, which for ndim 16 is 0xa0 (see CONFORMANCE.md).
//
// Advanced (b2nd::format, the byte layer): for tools that parse or write the format itself.
// Programs that read and write arrays need only <b2nd/b2nd.hpp>.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <b2nd/byte_span.hpp>

namespace b2nd::format {

inline constexpr int kMaxDim = 16;

/// The b2nd metalayer (or legacy caterva one): shape, chunk and block shapes, dtype.
struct B2ndMeta {
    std::uint8_t version = 0;               ///< the metalayer's version
    std::vector<std::int64_t> shape;        ///< the array's shape
    std::vector<std::int32_t> chunk_shape;  ///< the chunks' shape
    std::vector<std::int32_t> block_shape;  ///< the blocks' shape
    bool has_dtype = true;                  ///< false for the caterva layout
    std::uint8_t dtype_format = 0;          ///< 0: NumPy
    std::string dtype;                      ///< the dtype string (NumPy's, when dtype_format is 0)
};

/// Parses a b2nd (or caterva) metalayer. \throws FormatError naming the field and offset.
B2ndMeta read_b2nd_meta(ByteSpan bytes);
/// Serializes as c-blosc2 does (with the dtype when meta.has_dtype).
std::vector<std::uint8_t> write_b2nd_meta(const B2ndMeta& meta);

}  // namespace b2nd::format
