// Internal: a Zarr array's metadata (v2 `.zarray` + `.zattrs`, v3 `zarr.json`), described once
// for both versions, and its codec chain. Readers (zarr_array.cpp) and writers (zarr_write.cpp)
// share it; the JSON each version spells is parsed and written here only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/dtype.hpp>
#include <b2nd/shape.hpp>
#include <b2nd/value.hpp>

namespace b2nd::bridges {

/// One bytes-to-bytes codec: v2's compressor, or one of v3's after the array-to-bytes codec.
struct ZarrBytesCodec {
    enum class Kind { blosc, zstd, zlib, gzip, lz4, crc32c };
    Kind kind = Kind::zstd;
    int level = 0;               ///< zstd, zlib, gzip, lz4 acceleration; Blosc's clevel
    std::string cname;           ///< Blosc: its compressor's name
    int shuffle = 0;             ///< Blosc: 0 none, 1 byte, 2 bit
    int typesize = 0;            ///< Blosc (v3)
    std::int64_t blocksize = 0;  ///< Blosc
};

struct ZarrSharding;

/// A chunk's codecs, from the array to the stored bytes.
struct ZarrCodecs {
    /// Array-to-array transposition: axis i of the encoded chunk is axis order[i] of the
    /// array's chunk (v3's transpose codec; v2's order "F" as the reversed axes). Empty: none.
    std::vector<int> order;
    /// The bytes codec's endian (v3); v2's byte order is the dtype's own.
    bool big_endian = false;
    /// Array-to-bytes is sharding_indexed: the chunk is a shard of inner chunks.
    std::shared_ptr<const ZarrSharding> sharding;
    /// Bytes-to-bytes codecs, in encoding order.
    std::vector<ZarrBytesCodec> bytes_codecs;
};

/// sharding_indexed's configuration.
struct ZarrSharding {
    Shape inner;              ///< the inner chunks' shape
    ZarrCodecs codecs;        ///< the inner chunks' codecs
    ZarrCodecs index_codecs;  ///< the index's (bytes, crc32c only: an index has a fixed size)
    bool index_at_end = true;
};

/// What an array's metadata says, whichever version wrote it.
struct ZarrMeta {
    int version = 3;
    std::string where;  ///< the array, for messages
    Shape shape;
    Shape chunks;  ///< v2's chunks, v3's regular chunk grid (a shard's shape when sharded)
    /// The items' dtype as arrays here present them: v2's own (its byte order), v3's data
    /// type in little-endian order (the bytes codec says how chunks store it).
    DType dtype;
    std::vector<std::uint8_t> fill;  ///< one item, in dtype's byte order
    std::string key_prefix;          ///< "c" for v3's default key encoding, else ""
    char separator = '/';
    ZarrCodecs codecs;
    Value attributes = Value::map({});
    std::vector<std::string> dimension_names;  ///< v3's, when given
};

/// Parses v2 metadata: `.zarray`'s text and `.zattrs`' (empty when absent). \throws FormatError
/// naming `where` and the key at fault; UnsupportedError naming a codec, filter or dtype we do
/// not have.
ZarrMeta parse_zarr_v2(const std::string& zarray,
                       const std::string& zattrs,
                       const std::string& where);
/// Parses v3 `zarr.json` of an array. \throws as parse_zarr_v2; UsageError for a group.
ZarrMeta parse_zarr_v3(const std::string& json, const std::string& where);

/// One of v3's core data types and the dtype it is here (little-endian).
struct ZarrV3Type {
    const char* name;
    DType::Kind kind;
    int size;
};
/// v3's core data types: bool, int8-64, uint8-64, float16-64, complex64/128 (r<bits> aside).
const std::vector<ZarrV3Type>& zarr_v3_types();

/// One item of `dtype` holding a metadata fill value (v2: a number, "NaN", "Infinity",
/// "-Infinity", base64 of the bytes, a string for U; v3: also "0x..." of the bits, [re, im],
/// lists of bytes), in dtype's byte order; zeros for null. \throws FormatError naming `where`
/// Adds to `attrs` (a Zarr array's attributes) what an import keeps beside them, as for an HDF5
/// dataset (bridges.hpp): its fill value when not zero (_FillValue; integers, float32 and
/// float64), v3's dimension_names when every dimension has one (_ARRAY_DIMENSIONS); each only
/// where `attrs` has no entry of that name.
void carry_structure(const ZarrMeta& m, Value::Map& attrs);

std::vector<std::uint8_t> zarr_fill_bytes(const Value& v,
                                          const DType& dtype,
                                          const std::string& where);

/// The codecs as text, in encoding order: "transpose(1,0) bytes blosc(lz4:5,shuffle) crc32c".
std::string codecs_text(const ZarrCodecs& c);

/// The store key of the chunk at grid coordinates `coords` (ndim of them).
std::string chunk_key(const ZarrMeta& m, const std::int64_t* coords);

/// Decodes one stored chunk of `chunk` shape into `out` (its items in C order, dtype's byte
/// order: `chunk`'s item count times dtype's itemsize). \throws FormatError naming `where` for
/// a corrupted, short or long chunk, or a checksum that does not match.
void decode_zarr_chunk(const ZarrCodecs& c,
                       const DType& dtype,
                       const Shape& chunk,
                       const std::uint8_t* stored,
                       std::size_t n,
                       std::uint8_t* out,
                       const std::string& where);

/// Where a unit's Blosc blocks can be decoded one by one (their bytes are the unit's items in C
/// order, in the array's byte order: Blosc is the only bytes codec, no transposition, no byte
/// swap): the shape of those blocks as boxes of the unit, (1, ..., 1, k, unit[d + 1], ...), from
/// `head`, the first 16 bytes of a stored unit. Nothing when the codecs do not allow it, the
/// header is not one of a unit's Blosc chunk, or its blocks are not such boxes or not smaller.
std::optional<Shape> blosc_block_shape(const ZarrCodecs& c,
                                       const DType& dtype,
                                       const Shape& unit,
                                       ByteSpan head);

/// Decodes Blosc block `block` of the stored unit `stored` into `into` (`block_bytes` bytes),
/// when the unit's header says blocks of `block_bytes` in a unit of `unit_bytes`; false when it
/// says another geometry (a unit written with other parameters: decode it whole instead).
/// \throws FormatError naming `where` for a corrupted unit
bool decode_blosc_block(ByteSpan stored,
                        std::int64_t block,
                        std::size_t block_bytes,
                        std::size_t unit_bytes,
                        std::uint8_t* into,
                        const std::string& where);

/// The bytes a shard's index takes, stored: 16 per inner chunk, 4 per crc32c.
std::uint64_t shard_index_nbytes(const ZarrSharding& s, std::int64_t inner_chunks);
/// Decodes a shard's stored index (`n` bytes) into (offset, nbytes) pairs, one per inner chunk
/// in C order; both all ones for an empty one. \throws FormatError naming `where` when its
/// checksum does not match.
std::vector<std::uint64_t> decode_shard_index(const ZarrSharding& s,
                                              std::int64_t inner_chunks,
                                              const std::uint8_t* stored,
                                              std::size_t n,
                                              const std::string& where);

}  // namespace b2nd::bridges
