// Internal: one-stream compression and decompression for every codec. Only compressors.cpp sees
// <lz4.h>, <zstd.h> and <zlib.h>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <b2nd/codec/ids.hpp>

namespace b2nd::codec::detail {

/// A chunk's dictionary, prepared once for all its streams.
class StreamDict {
public:
    StreamDict(const std::uint8_t* data, std::size_t size, CompFormat format);
    ~StreamDict();
    StreamDict(const StreamDict&) = delete;
    StreamDict& operator=(const StreamDict&) = delete;

    const std::uint8_t* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    /// The digested zstd dictionary (ZSTD_DDict*), or nullptr.
    void* zstd_ddict() const noexcept { return ddict_; }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    void* ddict_ = nullptr;
};

/// zlib's CRC-32 of n bytes at p, continuing `crc` (0 to start): what zip archives carry.
std::uint32_t crc32(std::uint32_t crc, const std::uint8_t* p, std::size_t n) noexcept;

/// Compresses src[0, n) into out[0, cap); returns the compressed size, or 0 when the result
/// would not fit (the caller then stores the stream raw).
/// \throws CodecError when the library fails for another reason.
std::size_t compress_stream(Codec c,
                            int clevel,
                            const std::uint8_t* src,
                            std::size_t n,
                            std::uint8_t* out,
                            std::size_t cap);

/// Decompresses a stream into exactly out_size bytes. Returns nullptr on success, otherwise a
/// static description of the failure (corrupt data or a size mismatch).
const char* decompress_stream(CompFormat f,
                              const std::uint8_t* src,
                              std::size_t n,
                              std::uint8_t* out,
                              std::size_t out_size,
                              const StreamDict* dict);

/// Whether decompress_stream_prefix can stop early for this format (LZ4 and BloscLZ; zstd and
/// zlib streams of a block decode as one piece).
bool stops_early(CompFormat f, const StreamDict* dict) noexcept;

/// Decompresses the first `want` bytes of a stream of out_size bytes into out (out_size bytes of
/// room; bytes past `want` may be written too). For formats that cannot stop early, the whole
/// stream. Returns nullptr on success, otherwise a static description of the failure.
const char* decompress_stream_prefix(CompFormat f,
                                     const std::uint8_t* src,
                                     std::size_t n,
                                     std::uint8_t* out,
                                     std::size_t want,
                                     std::size_t out_size,
                                     const StreamDict* dict);

/// Whole streams of other formats (Zarr's codecs), whose decoded size the stream itself says
/// or ends: a zstd frame, a zlib stream (RFC 1950), a gzip member (RFC 1952).
enum class WholeStream { zstd, zlib, gzip };

/// Decodes a whole stream into `out` (resized to the decoded size), refusing to produce more
/// than `limit` bytes. Returns nullptr on success, otherwise a static description of the
/// failure (corrupt data, trailing bytes, a stream cut short, more than `limit` bytes).
const char* decompress_whole(WholeStream f,
                             const std::uint8_t* src,
                             std::size_t n,
                             std::vector<std::uint8_t>& out,
                             std::size_t limit);

/// The decoded size a zstd frame's header declares, or SIZE_MAX when it declares none (or is
/// not a frame).
std::size_t zstd_frame_size(const std::uint8_t* src, std::size_t n) noexcept;

/// Compresses src[0, n) as a whole stream of format `f` at `level` (zstd: its levels; zlib and
/// gzip: 0-9) and returns it. \throws CodecError when the library fails
std::vector<std::uint8_t> compress_whole(WholeStream f,
                                         int level,
                                         const std::uint8_t* src,
                                         std::size_t n);

/// Decodes an LZF stream (liblzf's format) into out[0, cap); false when it is corrupt or does not
/// fit. `produced`: the decoded size.
bool lzf_decompress(const std::uint8_t* in,
                    std::size_t n,
                    std::uint8_t* out,
                    std::size_t cap,
                    std::size_t& produced) noexcept;

std::size_t blosclz_compress(
    int clevel, const std::uint8_t* in, std::size_t n, std::uint8_t* out, std::size_t cap);
/// Decodes a BloscLZ stream into exactly out_size bytes, or, with want < out_size, stops once at
/// least `want` bytes are out (writing at most out_size).
bool blosclz_decompress(const std::uint8_t* in,
                        std::size_t n,
                        std::uint8_t* out,
                        std::size_t out_size,
                        std::size_t want = SIZE_MAX);

}  // namespace b2nd::codec::detail
