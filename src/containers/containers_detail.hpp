// Internal: what the variable-length containers (containers.hpp) and CTable share.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/params.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/value.hpp>

namespace b2nd::detail {

/// `count` int64 values of the 1-d int64 array `a` from `start`, in this machine's order.
std::vector<std::int64_t> read_int64s(const AnyArray& a,
                                      std::int64_t start,
                                      std::int64_t count,
                                      const char* what);
/// Makes values this machine holds little-endian (a no-op here, kept for the big-endian case).
void native_to_little(std::vector<std::int64_t>& v) noexcept;

/// A container's frame at `path`, read-only.
std::shared_ptr<const storage::Frame> open_container_frame(const std::string& path,
                                                           const OpenOptions& o);

/// A metalayer or vlmeta entry of `f` parsed as msgpack, or nil when absent.
Value metalayer_value(const storage::Frame& f, const std::string& name);
Value vlmeta_value(const storage::Frame& f, const std::string& name);

/// Chunk i of a container's frame decoded whole. \throws FormatError naming the file and chunk
std::vector<std::uint8_t> decode_container_chunk(const storage::Frame& f, std::int64_t i);

/// One chunk of a new container: its payload, encoded on its own (typesize 1, python's
/// compression) or as VL blocks.
std::vector<std::uint8_t> encode_item_chunk(const std::vector<std::uint8_t>& payload,
                                            const CompressionParams& c);
std::vector<std::uint8_t> encode_vlblocks_chunk(
    const std::vector<std::vector<std::uint8_t>>& blocks, const CompressionParams& c);

/// A new contiguous frame of variable-size chunks at `path` (written beside it and renamed):
/// typesize 1, `metalayers` and `vlmeta` (msgpack values), the chunks in order.
void write_container_frame(const std::string& path,
                           bool overwrite,
                           const CompressionParams& c,
                           const std::vector<std::pair<std::string, Value>>& metalayers,
                           const std::vector<std::pair<std::string, Value>>& vlmeta,
                           const std::vector<std::vector<std::uint8_t>>& chunks,
                           bool vl_blocks);

/// start..stop clamped to [0, n] (stop >= start).
std::pair<std::int64_t, std::int64_t> clamp_range(std::int64_t start,
                                                  std::int64_t stop,
                                                  std::int64_t n);

/// An item index (negative counts from the end) checked against n. \throws UsageError
std::int64_t item_index(std::int64_t i, std::int64_t n, const std::string& where);

}  // namespace b2nd::detail
