// Chunk images of a remote frame (remote_chunks.hpp).
#include "remote_chunks.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <map>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/ids.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/format/endian.hpp>

#include "../detail/text.hpp"
#include "block_seals.hpp"
#include "sources/http_source.hpp"

namespace b2nd::storage::detail {

using b2nd::detail::num;

namespace {

constexpr std::uint64_t kUnknownRoom = UINT64_MAX;

}  // namespace

struct RemoteChunks::Image {
    bool busy = false;  // claimed (RemoteChunks::claim): being fetched into, or read
    Place place;
    std::atomic<bool> head_known{false};
    format::ChunkHeader h;
    // What the image holds: the chunk's cbytes, and with records its block digests after them.
    std::atomic<std::uint64_t> cbytes{0};
    int records = 0;  // the checksum table's version when a record follows the chunk, else 0
    std::atomic<std::uint64_t> fetched{0};       // bytes of `have`
    std::atomic<std::uint64_t>* held = nullptr;  // the owner's sum of `fetched` over its images
    bool whole_only = false;  // fetched whole: nothing to take apart, or not worth it
    bool delta = false;       // blocks other than 0 need block 0
    std::unique_ptr<std::uint8_t[]> bytes;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> have;  // fetched [a, b), sorted, disjoint
    std::vector<std::pair<std::uint64_t, std::uint64_t>> extents;  // per block, once known

    bool holds(std::uint64_t a, std::uint64_t b) const {
        for (const auto& r : have) {
            if (r.first <= a && b <= r.second) {
                return true;
            }
        }
        return a >= b;
    }
    bool complete() const { return holds(0, cbytes.load()); }
    /// The parts of [a, b) not fetched yet.
    void missing(std::uint64_t a,
                 std::uint64_t b,
                 std::vector<std::pair<std::uint64_t, std::uint64_t>>& out) const {
        std::uint64_t at = a;
        for (const auto& r : have) {
            if (r.second <= at) {
                continue;
            }
            if (r.first >= b) {
                break;
            }
            if (r.first > at) {
                out.emplace_back(at, r.first);
            }
            at = std::max(at, r.second);
            if (at >= b) {
                return;
            }
        }
        if (at < b) {
            out.emplace_back(at, b);
        }
    }
    void add(std::uint64_t a, std::uint64_t b) {
        if (a >= b) {
            return;
        }
        have.emplace_back(a, b);
        std::sort(have.begin(), have.end());
        std::vector<std::pair<std::uint64_t, std::uint64_t>> merged;
        for (const auto& r : have) {
            if (!merged.empty() && r.first <= merged.back().second) {
                merged.back().second = std::max(merged.back().second, r.second);
            } else {
                merged.push_back(r);
            }
        }
        have = std::move(merged);
        std::uint64_t n = 0;
        for (const auto& r : have) {
            n += r.second - r.first;
        }
        const std::uint64_t grew = n - fetched.exchange(n);  // (have only grows)
        if (held != nullptr) {  // (null once dropped from the map: no longer counted)
            held->fetch_add(grew);
            b2nd::detail::CacheLedger::get().charge(static_cast<std::int64_t>(grew));
        }
    }
    /// Reads the header from the head fetched into `head` (got bytes); sets up the image.
    /// `ended`: the file ended after `got` bytes (a chunk file shorter than the head asked).
    void adopt_head(const std::uint8_t* head, std::uint64_t got, bool ended) {
        h = format::read_chunk_header(ByteSpan(head, static_cast<std::size_t>(got)), false);
        if (h.cbytes < h.header_size() || static_cast<std::uint64_t>(h.cbytes) > place.room ||
            (ended && static_cast<std::uint64_t>(h.cbytes) > got)) {
            throw FormatError("claims " + num(h.cbytes) + " bytes, but only " +
                                  num(static_cast<std::int64_t>(ended ? got : place.room)) +
                                  " remain",
                              12);
        }
        auto n = static_cast<std::uint64_t>(h.cbytes);
        if (records != 0) {
            // The record after the chunk, as far as the chunk's place has room for it (a short
            // one is a checksum mismatch, reported by the read).
            n = std::min(n + record_size(ByteSpan(head, static_cast<std::size_t>(got)), records),
                         ended ? std::max(got, n) : std::max(place.room, n));
        }
        bytes.reset(new std::uint8_t[n]);
        const std::uint64_t keep = std::min(n, got);
        std::memcpy(bytes.get(), head, static_cast<std::size_t>(keep));
        have.clear();
        add(0, keep);
        for (std::uint8_t f : h.filters) {
            delta = delta || f == static_cast<std::uint8_t>(codec::Filter::delta);
        }
        whole_only = h.special() != 0 || h.vl_blocks() || h.use_dict() || h.nbytes <= 0 ||
                     h.blocksize <= 0 || h.nblocks() <= 1;
        cbytes.store(n);
        head_known = true;
    }
    /// Where each block's bytes are, once the block starts are fetched (or without them for
    /// memcpyed chunks). A table that does not describe the chunk makes it whole_only (decoding
    /// then reports what is wrong, on all of its bytes).
    void locate_blocks() {
        if (whole_only || !extents.empty()) {
            return;
        }
        const auto hs = static_cast<std::uint64_t>(h.header_size());
        const std::int32_t nb = h.nblocks();
        const std::uint64_t n = cbytes.load();
        extents.resize(static_cast<std::size_t>(nb));
        if (h.memcpyed()) {
            for (std::int32_t b = 0; b < nb; ++b) {
                const std::uint64_t a =
                    hs + static_cast<std::uint64_t>(b) * static_cast<std::uint64_t>(h.blocksize);
                extents[static_cast<std::size_t>(b)] = {
                    std::min(a, n), std::min(a + static_cast<std::uint64_t>(h.blocksize), n)};
            }
            return;
        }
        const auto ext =
            codec::block_extents(ByteSpan(bytes.get(), static_cast<std::size_t>(table_end())), h);
        if (!ext) {
            whole_only = true;
            extents.clear();
            return;
        }
        for (std::size_t b = 0; b < ext->size(); ++b) {
            extents[b] = {(*ext)[b].first, (*ext)[b].second};
        }
    }
    /// The block starts' table end (what locate_blocks needs at hand).
    std::uint64_t table_end() const {
        if (whole_only || h.memcpyed()) {
            return static_cast<std::uint64_t>(h.header_size());
        }
        return static_cast<std::uint64_t>(h.header_size()) +
               4 * static_cast<std::uint64_t>(h.nblocks());
    }
};

RemoteChunks::RemoteChunks(Locate locate,
                           std::int64_t nblocks_hint,
                           std::uint64_t budget,
                           bool blocks,
                           int records,
                           std::uint64_t record_hint)
    : locate_(std::move(locate)),
      nblocks_hint_(std::clamp<std::int64_t>(nblocks_hint, 1, 1 << 16)),
      budget_(budget),
      blocks_(blocks),
      records_(records),
      record_hint_(record_hint) {
    b2nd::detail::CacheLedger::get().join(this);
}

RemoteChunks::~RemoteChunks() {
    b2nd::detail::CacheLedger::get().leave(this);
    b2nd::detail::CacheLedger::get().charge(-static_cast<std::int64_t>(held_.load()));
}
bool RemoteChunks::head_known(std::int64_t key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = images_.find(key);
    return it != images_.end() && it->second.image->head_known.load();
}

std::shared_ptr<RemoteChunks::Image> RemoteChunks::image(std::int64_t key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = images_.find(key);
    if (it != images_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second.at);  // the most recent
        it->second.stamp = b2nd::detail::CacheLedger::get().tick();
        return it->second.image;
    }
    auto img = std::make_shared<Image>();
    img->place = locate_(key);
    img->records = records_;
    img->held = &held_;
    lru_.push_front(key);
    images_.emplace(key, Entry{img, lru_.begin(), b2nd::detail::CacheLedger::get().tick()});
    return img;
}

void RemoteChunks::read_guarded(std::vector<SourceRanges>& batch) const {
    if (!guard_.file) {
        read_many(batch);
        return;
    }
    // A probe: from the server, not from the copy the source kept when the frame was opened.
    std::vector<std::uint8_t> now(guard_.expected.size());
    batch.push_back({guard_.file, {{guard_.offset, now.size(), now.data(), nullptr, true}}});
    read_many(batch);
    if (now != guard_.expected) {
        throw RemoteError("\"" + guard_.file->name() +
                              "\" changed on the server while it was read (the end of its "
                              "frame, bytes " +
                              std::to_string(guard_.offset) + " to " +
                              std::to_string(guard_.offset + now.size()) +
                              ", differs from when it was opened, although its size, ETag and "
                              "Last-Modified did not change)",
                          0, true);
    }
}

void RemoteChunks::trim() const {
    std::lock_guard<std::mutex> lock(mutex_);
    drop_unlocked(std::numeric_limits<std::uint64_t>::max(),
                  [&] { return held_.load() > budget_; });
}

template <class More>
void RemoteChunks::drop_unlocked(std::uint64_t before, More more) const {
    // What images hold is what was fetched into them (the rest of a buffer is never touched, so
    // never resident). A claimed image (being fetched into) stays, and so does the most recent;
    // a dropped one stops counting (its readers keep it alive; only claims write `held`, and
    // claims wait on this mutex).
    std::uint64_t freed = 0;
    for (auto at = lru_.end(); more() && at != lru_.begin();) {
        --at;
        auto it = images_.find(*at);
        if (it->second.image->busy || at == lru_.begin()) {
            continue;
        }
        if (it->second.stamp >= before && freed > 0) {
            break;
        }
        const std::uint64_t n = it->second.image->fetched.load();
        held_.fetch_sub(n);
        freed += n;
        it->second.image->held = nullptr;
        images_.erase(it);
        at = lru_.erase(at);
    }
    b2nd::detail::CacheLedger::get().charge(-static_cast<std::int64_t>(freed));
}

std::uint64_t RemoteChunks::oldest() const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto at = lru_.rbegin(); at != lru_.rend(); ++at) {
        const Entry& e = images_.at(*at);
        if (!e.image->busy && std::next(at) != lru_.rend() && e.image->fetched.load() > 0) {
            return e.stamp;
        }
    }
    return std::numeric_limits<std::uint64_t>::max();
}

void RemoteChunks::drop_oldest(std::uint64_t before, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uint64_t start = held_.load();
    drop_unlocked(before, [&] { return start - std::min(start, held_.load()) < bytes; });
}

void RemoteChunks::fetch_heads(const std::vector<std::shared_ptr<Image>>& images,
                               const std::vector<const Want*>& wants) const {
    std::vector<std::vector<std::uint8_t>> heads;
    // With records: a chunk read in part asks for its record with its head, at the end of its
    // likely bytes (up to the next chunk, where the record lies), not in a third round trip.
    std::vector<std::vector<std::uint8_t>> tails;
    std::vector<std::uint64_t> got(images.size(), 0);
    std::vector<SourceRanges> batch;
    std::vector<Image*> asked;
    heads.reserve(images.size());
    tails.reserve(images.size());
    for (std::size_t k = 0; k < images.size(); ++k) {
        Image& img = *images[k];
        if (img.head_known) {
            continue;
        }
        std::uint64_t want = static_cast<std::uint64_t>(format::kChunkExtendedHeaderSize) +
                             4 * static_cast<std::uint64_t>(nblocks_hint_) + 64;
        if (wants[k]->blocks.empty() && !wants[k]->head_only && img.place.likely > 0) {
            want = std::max(want, img.place.likely);  // a whole chunk: head and body at once
        }
        const std::uint64_t n = std::min(want, img.place.room);
        heads.emplace_back(static_cast<std::size_t>(n));
        asked.push_back(&img);
        RangeInto r{img.place.offset, n, heads.back().data(),
                    img.place.room == kUnknownRoom ? &got[asked.size() - 1] : nullptr};
        batch.push_back({img.place.file, {r}});
        if (r.got == nullptr) {
            got[asked.size() - 1] = n;
        }
        tails.emplace_back();
        const std::uint64_t likely = img.place.likely;
        if (records_ != 0 && !wants[k]->blocks.empty() && likely > n && likely <= img.place.room) {
            const std::uint64_t t = std::min(likely - n, record_hint_);
            tails.back().resize(static_cast<std::size_t>(t));
            batch.back().ranges.push_back(
                {img.place.offset + likely - t, t, tails.back().data(), nullptr});
        }
    }
    if (asked.empty()) {
        return;
    }
    read_guarded(batch);
    for (std::size_t k = 0; k < asked.size(); ++k) {
        Image& img = *asked[k];
        img.adopt_head(heads[k].data(), got[k], got[k] < heads[k].size());
        const std::uint64_t t = tails[k].size();
        const std::uint64_t from = img.place.likely - t;  // where the tail starts in the chunk
        const auto rec = static_cast<std::uint64_t>(img.h.cbytes);
        if (t > 0 && rec >= from && img.cbytes.load() <= img.place.likely) {
            std::memcpy(img.bytes.get() + rec, tails[k].data() + (rec - from),
                        static_cast<std::size_t>(img.cbytes.load() - rec));
            img.add(rec, img.cbytes.load());
        }
    }
}

void RemoteChunks::fetch_bodies(const std::vector<std::shared_ptr<Image>>& images,
                                const std::vector<const Want*>& wants) const {
    // First the block tables that the heads did not hold (chunks of more blocks than hinted).
    std::vector<SourceRanges> batch;
    std::vector<std::tuple<Image*, std::uint64_t, std::uint64_t>> adding;
    const auto ask = [&](Image& img, std::uint64_t a, std::uint64_t b) {
        std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps;
        img.missing(a, b, gaps);
        for (const auto& [x, y] : gaps) {
            SourceRanges* s = nullptr;
            for (SourceRanges& have : batch) {
                if (have.file == img.place.file) {
                    s = &have;
                }
            }
            if (s == nullptr) {
                batch.push_back({img.place.file, {}});
                s = &batch.back();
            }
            s->ranges.push_back({img.place.offset + x, y - x, img.bytes.get() + x, nullptr});
            adding.emplace_back(&img, x, y);
        }
    };
    const auto run = [&] {
        if (!batch.empty()) {
            read_guarded(batch);
            for (const auto& [img, a, b] : adding) {
                img->add(a, b);
            }
        }
        batch.clear();
        adding.clear();
    };
    for (const auto& img : images) {
        if (!img->whole_only && img->extents.empty()) {
            ask(*img, 0, img->table_end());
        }
    }
    run();
    for (std::size_t k = 0; k < images.size(); ++k) {
        Image& img = *images[k];
        img.locate_blocks();
        const Want& w = *wants[k];
        if (w.head_only) {
            continue;
        }
        if (img.whole_only || w.blocks.empty()) {
            ask(img, 0, img.cbytes.load());
            continue;
        }
        const auto block = [&](std::int32_t b) {
            if (b >= 0 && static_cast<std::size_t>(b) < img.extents.size()) {
                ask(img, img.extents[static_cast<std::size_t>(b)].first,
                    img.extents[static_cast<std::size_t>(b)].second);
            }
        };
        if (img.delta) {
            block(0);
        }
        for (std::int32_t b : w.blocks) {
            block(b);
        }
        ask(img, static_cast<std::uint64_t>(img.h.cbytes), img.cbytes.load());  // the record
    }
    run();
}

void RemoteChunks::fetch(const std::vector<Want>& wants) const {
    // One want per chunk (blocks merged; a whole chunk wins), in key order: images are locked
    // in that order, so two batches never wait for each other.
    std::map<std::int64_t, Want> merged;
    for (const Want& w : wants) {
        auto [it, fresh] = merged.emplace(w.key, w);
        if (!fresh && !it->second.blocks.empty()) {
            if (w.blocks.empty()) {
                it->second.blocks.clear();
            } else {
                it->second.blocks.insert(it->second.blocks.end(), w.blocks.begin(), w.blocks.end());
            }
        }
    }
    std::vector<std::shared_ptr<Image>> images;
    std::vector<const Want*> order;
    for (auto& [key, w] : merged) {
        if (!blocks_) {
            w.blocks.clear();  // whole chunks
        }
        images.push_back(image(key));
        order.push_back(&w);
    }
    {
        const Claim claim(*this, images);
        fetch_heads(images, order);
        fetch_bodies(images, order);
    }
    trim();
}

RemoteChunks::Claim::Claim(const RemoteChunks& owner,
                           const std::vector<std::shared_ptr<Image>>& images)
    : owner_(owner), images_(images) {
    // In key order (the callers' order), each once free: two claims never wait for each other.
    std::unique_lock<std::mutex> lock(owner_.mutex_);
    for (const auto& img : images_) {
        owner_.freed_.wait(lock, [&] { return !img->busy; });
        img->busy = true;
    }
}

RemoteChunks::Claim::~Claim() {
    {
        std::lock_guard<std::mutex> lock(owner_.mutex_);
        for (const auto& img : images_) {
            img->busy = false;
        }
    }
    owner_.freed_.notify_all();
}

RemoteChunks::Chunk RemoteChunks::chunk(std::int64_t key,
                                        const std::vector<std::int32_t>* blocks) const {
    bool complete = false;
    const bool head_only = blocks != nullptr && blocks->empty();
    const Want w{key, blocks != nullptr && blocks_ ? *blocks : std::vector<std::int32_t>{}};
    const std::shared_ptr<Image> img = image(key);
    std::vector<std::shared_ptr<Image>> one{img};
    std::vector<const Want*> order{&w};
    {
        const Claim claim(*this, one);
        fetch_heads(one, order);
        if (!head_only) {  // no blocks: the head is enough
            fetch_bodies(one, order);
        }
        complete = img->complete();
    }
    trim();
    const std::shared_ptr<const void> owner(img, img->bytes.get());
    return {{ByteSpan(img->bytes.get(), static_cast<std::size_t>(img->cbytes.load())), owner},
            img->place.offset + img->place.file->offset_in_file(),
            complete};
}

}  // namespace b2nd::storage::detail
