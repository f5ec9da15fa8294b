// Internal: the checksums of the frames b2nd-cpp writes (docs/CHECKSUMS.md has the layout).
//
// A frame carries one table, in a vlmetalayer c-blosc2 and python-blosc2 ignore
// (`_b2nd_checksums`, a msgpack bin, so python reads it as bytes): XXH3-64 digests of the frame
// header's fields and metalayers, of the offsets index, of every other vlmetalayer's stored
// bytes and of every chunk's stored bytes. The trailer's fingerprint (16 bytes c-blosc2 writes
// as zeros and never reads) holds a stamp of the table: a writer that does not keep the table
// (c-blosc2, python-blosc2) rewrites the trailer with zeros, so its changes make the table stale
// rather than wrong, while a corrupted table, stamp or covered byte is an error.
//
// Frame::Impl keeps a Checks per snapshot: the state, the chunk digests and which chunks were
// already verified (each chunk is hashed the first time its bytes are used).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/storage/frame.hpp>

namespace b2nd::storage::detail {

/// The vlmetalayer holding the table.
inline constexpr const char* kChecksumsName = "_b2nd_checksums";
/// The trailer's fingerprint type for a stamp: 5 bits or more from c-blosc2's 0 to 3, so that
/// no flip of up to 4 bits turns a stamp into what c-blosc2 writes.
inline constexpr std::uint8_t kStampType = 0xF8;

/// The table, decoded.
struct ChecksumTable {
    std::uint64_t header = 0;  ///< header_digest()
    std::uint64_t index = 0;   ///< bytes_digest() of the offsets-index chunk as stored
    std::vector<std::pair<std::string, std::uint64_t>> vlmeta;  ///< other vlmetalayers
    std::vector<std::uint64_t> chunks;  ///< per chunk; 0 for index-only special chunks
    std::uint64_t self = 0;             ///< digest of the encoded table (set by encode/decode)
};

/// The vlmetalayer content (a msgpack bin of the binary table); sets t.self.
std::vector<std::uint8_t> encode_table(ChecksumTable& t);
/// \throws FormatError naming what is wrong (no path: the caller adds it)
ChecksumTable decode_table(ByteSpan content);
/// The trailer fingerprint that binds a trailer to its table: the digest of the table's
/// vlmetalayer as stored, and a marker.
std::array<std::uint8_t, 16> stamp(ByteSpan stored_table);

/// The header digest: of the header's bytes as stored (metalayers included) but for frame_len,
/// cbytes and has_vlmetalayers, which a commit writes after its table.
std::uint64_t header_digest(ByteSpan header);
/// XXH3-64: what the table holds for chunks, the offsets index (its stored chunk) and the
/// vlmetalayers (their stored content).
std::uint64_t bytes_digest(ByteSpan bytes);

/// A snapshot's checksums.
class Checks {
public:
    Checks() = default;
    Checks(Checks&&) noexcept = default;
    Checks& operator=(Checks&&) noexcept = default;

    /// Reads them from a parsed frame: its header and offsets index as stored (the index chunk's
    /// bytes; empty without chunks), its chunk count, its trailer (the table entry is taken out
    /// of trailer.vlmetalayers). Never throws for a bad table: the state says it, with the
    /// problems.
    static Checks read(ByteSpan header,
                       ByteSpan index,
                       std::size_t nchunks,
                       format::FrameTrailer& trailer,
                       bool enforce);
    /// After a commit: the table written (null for none).
    static Checks written(const ChecksumTable* t, bool enforce);

    ChecksumReport::State state() const noexcept { return state_; }
    const std::vector<std::string>& problems() const noexcept { return problems_; }
    /// Whether reads check chunks (a bound table, OpenOptions::verify_checksums).
    bool enforced() const noexcept { return enforce_ && state_ == ChecksumReport::State::covered; }
    /// Whether the next commit writes a table (a bound table is carried, whatever `enforce`).
    bool carried() const noexcept { return state_ == ChecksumReport::State::covered; }
    /// Chunk i's digest in the table (carried() only).
    std::uint64_t chunk_digest(std::size_t i) const { return chunks_.at(i); }
    std::size_t size() const noexcept { return chunks_.size(); }
    /// Checks chunk i's stored bytes once per snapshot (enforced() only). context() names the
    /// chunk as messages do (built only for a mismatch). \throws FormatError at `offset`
    template <typename Context>
    void verify(std::size_t i, ByteSpan bytes, std::uint64_t offset, Context&& context) const {
        if (!enforced() || i >= chunks_.size() ||
            verified_[i].load(std::memory_order_acquire) != 0) {
            return;
        }
        const std::string why = mismatch(i, bytes);
        if (!why.empty()) {
            fail(context(), why, offset);
        }
        verified_[i].store(1, std::memory_order_release);
    }
    /// What disagrees about chunk i's bytes (empty when they match or no table covers them).
    std::string mismatch(std::size_t i, ByteSpan bytes) const;

private:
    [[noreturn]] static void fail(const std::string& context,
                                  const std::string& why,
                                  std::uint64_t offset);

    ChecksumReport::State state_ = ChecksumReport::State::none;
    bool enforce_ = false;
    std::vector<std::string> problems_;
    std::vector<std::uint64_t> chunks_;
    std::unique_ptr<std::atomic<std::uint8_t>[]> verified_;
};

/// The trailer of a frame with this header and offsets index (as stored) and vlmetalayers: with
/// a table when `digests` (per chunk) is given, else without (the fingerprint c-blosc2 writes).
/// `table_out` receives the table written.
std::vector<std::uint8_t> trailer_with_checksums(ByteSpan header,
                                                 ByteSpan index,
                                                 const std::vector<format::Metalayer>& vlmeta,
                                                 const std::vector<std::uint64_t>* digests,
                                                 ChecksumTable* table_out = nullptr);

}  // namespace b2nd::storage::detail
