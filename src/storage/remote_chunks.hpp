// Internal: the chunks of a frame whose bytes are fetched (a remote source, ByteSource::remote()).
//
// Each chunk read so far has an image: a buffer of its stored size (cbytes) and the ranges of it
// fetched so far. A read names the blocks it will decode; then at most two batches of requests
// run, each with every range of every chunk in flight together (HttpClient merges near ranges):
//  1. the head of each chunk not seen yet: its header and block starts (and, for chunks that
//     turn out to need more to be decoded at all, nothing else: those are fetched whole);
//  2. the byte ranges of the wanted blocks that are not at hand (a block's bytes run from its
//     start to the next block's start), plus block 0 where DELTA needs it.
// Memcpyed blocks are located without block starts; special, VL-block and dictionary chunks,
// and chunks too small to split, are fetched whole. Images are kept within a byte budget (least
// recently used go first; a reader holding one keeps it alive).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <b2nd/storage/byte_source.hpp>

#include "../detail/cache_ledger.hpp"

namespace b2nd::storage::detail {

class RemoteChunks final : public b2nd::detail::CacheMember {
public:
    /// Where a chunk's bytes are: in `file` from `offset`, at most `room` bytes (to the end of
    /// the chunks section; UINT64_MAX for a chunk file of unknown length). `name`: how messages
    /// call the chunk.
    struct Place {
        std::shared_ptr<const ByteSource> file;
        std::uint64_t offset = 0;
        std::uint64_t room = 0;
        /// Bytes up to the next chunk in the file (0: unknown): a chunk wanted whole is asked
        /// for that many at once, its head and body in one request.
        std::uint64_t likely = 0;
    };
    /// Chunk `key` (an index entry: an offset, or a sparse frame's file number) is at.
    using Locate = std::function<Place(std::int64_t key)>;

    /// `nblocks_hint`: how many blocks a chunk usually has (the first request for a chunk asks
    /// for that many block starts); `budget`: bytes of images kept; `blocks`: fetch blocks
    /// apart (false: whole chunks, one request each where their length is known).
    /// `records`: the version of a checksum table whose chunks are each followed by a record of
    /// block digests (2 or 3, block_seals.hpp; 0: none), which is fetched with the chunk
    /// (whole, or with any of its blocks); `record_hint`: how long a record usually is (a chunk
    /// read in part asks for that many bytes at its end with its head).
    RemoteChunks(Locate locate,
                 std::int64_t nblocks_hint,
                 std::uint64_t budget,
                 bool blocks,
                 int records = 0,
                 std::uint64_t record_hint = 0);
    ~RemoteChunks() override;
    RemoteChunks(const RemoteChunks&) = delete;
    RemoteChunks& operator=(const RemoteChunks&) = delete;

    /// The process's cache budget (detail/cache_ledger.hpp): the stamp of the least recently
    /// used image that may go, and dropping such images.
    std::uint64_t oldest() const override;
    void drop_oldest(std::uint64_t before, std::size_t bytes) override;

    /// A chunk a read will use, and its blocks (empty: all of it).
    struct Want {
        std::int64_t key = 0;
        std::vector<std::int32_t> blocks;
        bool head_only = false;  ///< the header and block starts are enough (sizes, kinds)
    };
    /// Fetches what `wants` need and is not at hand, in two batches at most.
    /// \throws HttpError; FormatError for a chunk whose header does not fit its place
    void fetch(const std::vector<Want>& wants) const;
    /// Whether chunk `key`'s header is at hand.
    bool head_known(std::int64_t key) const;
    /// A chunk's stored bytes (cbytes of them, and its block digests after them with records),
    /// where they are in their file, and whether all of
    /// them were fetched.
    struct Chunk {
        SourceBytes bytes;
        std::uint64_t offset = 0;
        bool complete = false;
    };
    /// Chunk `key`'s stored bytes, of which the header, the block starts and `blocks` (null:
    /// every byte; empty: the header alone) are sure to be fetched; fetches what is missing.
    /// \throws as fetch()
    Chunk chunk(std::int64_t key, const std::vector<std::int32_t>* blocks) const;

    struct Image;

    /// The bytes that tell the version of the file being read (the end of the frame: its
    /// checksum stamp, or its index and trailer), as the frame was opened. Every batch of
    /// requests fetches them afresh with its ranges: a batch that finds them changed throws
    /// RemoteError::remote_changed(), so that bytes of two versions never meet in one handle
    /// even where the server's validators (size, ETag, Last-Modified) stay the same.
    struct Guard {
        std::shared_ptr<const ByteSource> file;
        std::uint64_t offset = 0;
        std::vector<std::uint8_t> expected;
    };
    void set_guard(Guard g) { guard_ = std::move(g); }
    const Guard& guard() const noexcept { return guard_; }

private:
    /// Images claimed for fetching into (one claim at a time per image; waiting in key order).
    /// Without a mutex per image: a batch may claim thousands.
    class Claim {
    public:
        Claim(const RemoteChunks& owner, const std::vector<std::shared_ptr<Image>>& images);
        ~Claim();
        Claim(const Claim&) = delete;
        Claim& operator=(const Claim&) = delete;

    private:
        const RemoteChunks& owner_;
        const std::vector<std::shared_ptr<Image>>& images_;
    };

    std::shared_ptr<Image> image(std::int64_t key) const;
    /// Round 1: the heads of images that are new (a chunk wanted whole: all of it, where its
    /// length is known).
    void fetch_heads(const std::vector<std::shared_ptr<Image>>& images,
                     const std::vector<const Want*>& wants) const;
    /// Round 2: the missing ranges of `wants` (images locked by the caller, heads known).
    void fetch_bodies(const std::vector<std::shared_ptr<Image>>& images,
                      const std::vector<const Want*>& wants) const;
    void trim() const;
    /// Drops least recently used images (not claimed, not the most recent) while `more()`,
    /// stopping at one stamped `before` or later once something went. Under mutex_.
    template <class More>
    void drop_unlocked(std::uint64_t before, More more) const;
    /// read_many of `batch` and the guard; \throws RemoteError (remote_changed) when it changed
    void read_guarded(std::vector<SourceRanges>& batch) const;

    Locate locate_;
    Guard guard_;
    std::int64_t nblocks_hint_;
    std::uint64_t budget_;
    bool blocks_;
    int records_;
    std::uint64_t record_hint_;
    mutable std::mutex mutex_;               // the map, the LRU list, the images' busy flags
    mutable std::condition_variable freed_;  // an image's claim ended
    struct Entry {
        std::shared_ptr<Image> image;
        std::list<std::int64_t>::iterator at;  // its place in lru_
        std::uint64_t stamp = 0;               // the cache ledger's clock at its last use
    };
    mutable std::unordered_map<std::int64_t, Entry> images_;
    mutable std::list<std::int64_t> lru_;  // keys, most recent at the front
    /// Bytes fetched into the images the map holds (Image::add keeps it, trim() drops from it).
    mutable std::atomic<std::uint64_t> held_{0};
};

}  // namespace b2nd::storage::detail
