// The checksum table (checksums.hpp; the layout is docs/CHECKSUMS.md).
#include "checksums.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/byte_reader.hpp>
#include <b2nd/format/byte_writer.hpp>
#include <b2nd/format/endian.hpp>
#include <b2nd/format/msgpack.hpp>

#include "../codec/digest.hpp"
#include "../detail/text.hpp"
#include "block_seals.hpp"

namespace b2nd::storage::detail {

using b2nd::detail::num;

namespace {

constexpr std::array<std::uint8_t, 4> kMagic{'B', '2', 'C', 'K'};
constexpr std::uint8_t kAlgorithmXxh3 = 1;
constexpr std::array<std::uint8_t, 8> kStampMarker{'b', '2', 'n', 'd', 's', 'u', 'm', '1'};
constexpr std::size_t kFixedBytes = 40;  // magic .. chunk count

template <typename T>
void put_le(std::vector<std::uint8_t>& out, T v) {
    std::uint8_t b[sizeof(T)];
    format::store_le<T>(b, v);
    out.insert(out.end(), b, b + sizeof(T));
}

/// The table's bytes (without the msgpack bin marker), up to and excluding its own digest.
std::vector<std::uint8_t> table_body(const ChecksumTable& t) {
    std::vector<std::uint8_t> b;
    b.reserve(kFixedBytes + t.vlmeta.size() * 40 + t.chunks.size() * 8 + 8);
    b.insert(b.end(), kMagic.begin(), kMagic.end());
    b.push_back(static_cast<std::uint8_t>(t.version));
    b.push_back(kAlgorithmXxh3);
    put_le<std::uint16_t>(b, 0);
    put_le<std::uint64_t>(b, t.header);
    put_le<std::uint64_t>(b, t.index);
    put_le<std::uint32_t>(b, static_cast<std::uint32_t>(t.vlmeta.size()));
    put_le<std::uint32_t>(b, 0);
    put_le<std::uint64_t>(b, static_cast<std::uint64_t>(t.chunks.size()));
    for (const auto& [name, d] : t.vlmeta) {
        b.push_back(static_cast<std::uint8_t>(name.size()));
        b.insert(b.end(), name.begin(), name.end());
        put_le<std::uint64_t>(b, d);
    }
    for (std::uint64_t d : t.chunks) {
        put_le<std::uint64_t>(b, d);
    }
    return b;
}

int bit_distance(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
    int d = 0;
    for (std::size_t i = 0; i < n; ++i) {
        d += __builtin_popcount(static_cast<unsigned>(a[i] ^ b[i]));
    }
    return d;
}

/// Whether a trailer's fingerprint is a stamp, maybe a corrupted one: its type within 4 bits of
/// kStampType (c-blosc2's 0 to 3 are 5 or more away), or its marker within 16 bits of ours.
bool looks_stamped(const format::FrameTrailer& t) {
    return bit_distance(&t.fingerprint_type, &kStampType, 1) <= 4 ||
           bit_distance(t.fingerprint.data() + 8, kStampMarker.data(), 8) <= 16;
}

}  // namespace

std::uint64_t bytes_digest(ByteSpan bytes) {
    return codec::detail::digest64(bytes);
}

std::uint64_t header_digest(ByteSpan header) {
    // The fields a commit writes after its table (the lengths, has_vlmetalayers) read as zeros.
    std::vector<std::uint8_t> b(header.begin(), header.end());
    const auto clear = [&](std::size_t at, std::size_t n) {
        for (std::size_t k = at; k < at + n && k < b.size(); ++k) {
            b[k] = 0;
        }
    };
    clear(format::frame_offsets::kFrameLen, 8);
    clear(format::frame_offsets::kCbytes, 8);
    clear(format::frame_offsets::kHasVlMeta, 1);
    return bytes_digest({b.data(), b.size()});
}

std::vector<std::uint8_t> encode_table(ChecksumTable& t) {
    std::vector<std::uint8_t> body = table_body(t);
    t.self = bytes_digest({body.data(), body.size()});
    put_le<std::uint64_t>(body, t.self);
    std::vector<std::uint8_t> out;
    out.reserve(body.size() + 5);
    out.push_back(format::msgpack::kBin32);
    std::uint8_t len[4];
    format::store_be<std::uint32_t>(len, static_cast<std::uint32_t>(body.size()));
    out.insert(out.end(), len, len + 4);
    out.insert(out.end(), body.begin(), body.end());
    return out;
}

ChecksumTable decode_table(ByteSpan content) {
    format::ByteReader r(content);
    r.expect_marker(format::msgpack::kBin32, "checksum table (a msgpack bin 32)");
    const auto len = r.read_be<std::uint32_t>("checksum table length");
    if (len != r.remaining()) {
        r.fail("checksum table: its bin holds " + num(len) + " bytes, the vlmetalayer " +
                   num(static_cast<std::int64_t>(r.remaining())),
               1);
    }
    const ByteSpan body = content.subspan(5, content.size() - 5);
    if (body.size() < kFixedBytes + 8) {
        r.fail(
            "checksum table: truncated (" + num(static_cast<std::int64_t>(body.size())) + " bytes)",
            5);
    }
    ChecksumTable t;
    const ByteSpan covered = body.first(body.size() - 8);
    t.self = format::load_le<std::uint64_t>(body.data() + covered.size());
    if (bytes_digest(covered) != t.self) {
        r.fail("checksum table: its own digest does not match its bytes", 5 + covered.size());
    }
    format::ByteReader b(covered, 5);
    const ByteSpan magic = b.take(4, "checksum table magic");
    if (!std::equal(magic.begin(), magic.end(), kMagic.begin())) {
        b.fail("checksum table: bad magic", 0);
    }
    const std::uint8_t version = b.u8("checksum table version");
    const std::uint8_t algorithm = b.u8("checksum table algorithm");
    if (version < 1 || version > kTableVersion || algorithm != kAlgorithmXxh3) {
        throw UnsupportedError("checksum table version " + num(version) + ", algorithm " +
                               num(algorithm) + " (this build reads versions 1 to 3, XXH3-64)");
    }
    t.version = version;
    b.skip(2, "checksum table reserved");
    t.header = b.read_le<std::uint64_t>("checksum table header digest");
    t.index = b.read_le<std::uint64_t>("checksum table index digest");
    const auto nvl = b.read_le<std::uint32_t>("checksum table vlmetalayer count");
    b.skip(4, "checksum table reserved");
    const auto nchunks = b.read_le<std::uint64_t>("checksum table chunk count");
    if (nvl > format::kMaxVlMetalayers || nchunks > b.remaining() / 8) {
        b.fail("checksum table: " + num(nvl) + " vlmetalayers and " +
                   num(static_cast<std::int64_t>(std::min<std::uint64_t>(nchunks, INT64_MAX))) +
                   " chunks do not fit its " + num(static_cast<std::int64_t>(covered.size())) +
                   " bytes",
               24);
    }
    for (std::uint32_t k = 0; k < nvl; ++k) {
        const std::uint8_t n = b.u8("checksum table vlmetalayer name length");
        const ByteSpan name = b.take(n, "checksum table vlmetalayer name");
        t.vlmeta.emplace_back(std::string(name.begin(), name.end()),
                              b.read_le<std::uint64_t>("checksum table vlmetalayer digest"));
    }
    if (b.remaining() != nchunks * 8) {
        b.fail("checksum table: " + num(static_cast<std::int64_t>(nchunks)) + " chunk digests, " +
                   num(static_cast<std::int64_t>(b.remaining())) + " bytes left for them",
               b.position());
    }
    t.chunks.resize(static_cast<std::size_t>(nchunks));
    for (std::uint64_t& d : t.chunks) {
        d = b.read_le<std::uint64_t>("checksum table chunk digest");
    }
    return t;
}

std::array<std::uint8_t, 16> stamp(ByteSpan stored_table) {
    std::array<std::uint8_t, 16> s{};
    format::store_le<std::uint64_t>(s.data(), bytes_digest(stored_table));
    std::copy(kStampMarker.begin(), kStampMarker.end(), s.begin() + 8);
    return s;
}

// ---- Checks ---------------------------------------------------------------------------------

Checks Checks::read(ByteSpan header,
                    ByteSpan index,
                    std::size_t nchunks,
                    format::FrameTrailer& trailer,
                    bool enforce,
                    bool remember) {
    using State = ChecksumReport::State;
    Checks c;
    c.enforce_ = enforce;
    auto& vl = trailer.vlmetalayers;
    const auto it = std::find_if(
        vl.begin(), vl.end(), [](const format::Metalayer& m) { return m.name == kChecksumsName; });
    // c-blosc2 writes type 0 and zeros (some day, types 1 to 3 with an XXH3 fingerprint of its
    // own); anything near a stamp is one, corrupted or not: 4 flipped bits or a changed byte
    // can neither make a stamp look foreign nor a foreign fingerprint look like a stamp.
    const bool stamped = looks_stamped(trailer);
    if (it == vl.end()) {
        if (stamped) {
            c.state_ = State::broken;
            c.problems_.push_back("its trailer carries a checksum stamp but no '" +
                                  std::string(kChecksumsName) + "' vlmetalayer");
        }
        return c;
    }
    const format::Metalayer entry = std::move(*it);
    vl.erase(it);
    if (!stamped) {
        // A table another program carried along when it rewrote the trailer (c-blosc2 keeps
        // vlmetalayers, python copies them): the frame changed since it was written.
        c.state_ = State::stale;
        return c;
    }
    ChecksumTable t;
    try {
        const std::vector<std::uint8_t> content = codec::decode_chunk(
            entry.content, 1, static_cast<std::int64_t>(nchunks) * 8 + (std::int64_t{1} << 20));
        t = decode_table({content.data(), content.size()});
    } catch (const Error& e) {
        c.state_ = State::broken;
        c.problems_.push_back(std::string("its checksum table cannot be read: ") + e.what());
        return c;
    }
    if (trailer.fingerprint_type != kStampType ||
        trailer.fingerprint != stamp({entry.content.data(), entry.content.size()})) {
        c.state_ = State::broken;
        c.problems_.push_back("its trailer's checksum stamp does not match its checksum table");
        return c;
    }
    if (header_digest(header) != t.header) {
        c.problems_.push_back(
            "its header (sizes, flags or metalayers) does not match its checksum");
    }
    if (bytes_digest(index) != t.index || t.chunks.size() != nchunks) {
        c.problems_.push_back("its offsets index (" + num(static_cast<std::int64_t>(nchunks)) +
                              " entries) does not match its checksum (" +
                              num(static_cast<std::int64_t>(t.chunks.size())) + " chunks)");
    }
    for (const format::Metalayer& m : vl) {
        const auto d = std::find_if(t.vlmeta.begin(), t.vlmeta.end(),
                                    [&](const auto& x) { return x.first == m.name; });
        if (d == t.vlmeta.end()) {
            c.problems_.push_back("vlmetalayer '" + m.name + "' is not in its checksum table");
        } else if (bytes_digest({m.content.data(), m.content.size()}) != d->second) {
            c.problems_.push_back("vlmetalayer '" + m.name + "' does not match its checksum");
        }
    }
    for (const auto& listed : t.vlmeta) {
        const std::string& name = listed.first;
        if (std::none_of(vl.begin(), vl.end(),
                         [&](const format::Metalayer& m) { return m.name == name; })) {
            c.problems_.push_back("vlmetalayer '" + name + "' of its checksum table is missing");
        }
    }
    if (!c.problems_.empty()) {
        c.state_ = State::broken;
        return c;
    }
    c.start(std::move(t.chunks), t.version, remember);
    c.table_bytes_ = entry.content.size();
    return c;
}

Checks Checks::written(const ChecksumTable* t, bool enforce) {
    Checks c;
    c.enforce_ = enforce;
    if (t != nullptr) {
        c.start(t->chunks, t->version, true);
        c.table_bytes_ = t->stored;
    }
    return c;
}

/// What a snapshot verified: per chunk, version 1, whether its bytes matched (1); versions 2 and 3,
/// its ChunkSeal once head and record matched. Slots are allocated zeroed and untouched (calloc:
/// opening a frame of 10^6 chunks touches none of them).
class SealSet {
public:
    SealSet(std::size_t n, int version, bool remember)
        : version_(version), remember_(remember), n_(n) {
        slots_ = static_cast<std::atomic<std::uintptr_t>*>(
            std::calloc(std::max<std::size_t>(n, 1), sizeof(std::atomic<std::uintptr_t>)));
        if (slots_ == nullptr) {
            throw std::bad_alloc();
        }
    }
    ~SealSet() {
        for (std::size_t i = 0; version_ >= 2 && i < n_; ++i) {
            delete reinterpret_cast<ChunkSeal*>(slots_[i].load(std::memory_order_relaxed));
        }
        std::free(slots_);
    }
    SealSet(const SealSet&) = delete;
    SealSet& operator=(const SealSet&) = delete;

    bool remember() const noexcept { return remember_; }
    std::uintptr_t get(std::size_t i) const noexcept {
        return remember_ ? slots_[i].load(std::memory_order_acquire) : 0;
    }
    void mark(std::size_t i) const noexcept {
        if (remember_) {
            slots_[i].store(1, std::memory_order_release);
        }
    }
    /// Keeps `s` as chunk i's seal, or the one another thread kept first.
    const ChunkSeal* keep(std::size_t i, std::unique_ptr<ChunkSeal> s) const noexcept {
        std::uintptr_t expected = 0;
        const auto mine = reinterpret_cast<std::uintptr_t>(s.get());
        if (slots_[i].compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) {
            return s.release();
        }
        return reinterpret_cast<const ChunkSeal*>(expected);
    }

private:
    int version_;
    bool remember_;
    std::size_t n_;
    std::atomic<std::uintptr_t>* slots_ = nullptr;
};

namespace {

/// A chunk's block check, bound to the bytes of one use of it.
class BoundSeal final : public codec::BlockCheck {
public:
    BoundSeal(std::shared_ptr<const SealSet> set,
              std::unique_ptr<ChunkSeal> own,
              const ChunkSeal* seal,
              ByteSpan chunk)
        : set_(std::move(set)), own_(std::move(own)), seal_(seal), chunk_(chunk) {}
    void check_block(std::int32_t i) const override {
        const auto b = static_cast<std::size_t>(i);
        if (b >= seal_->nblocks()) {
            throw FormatError("block " + num(i) + " has no digest (the chunk holds " +
                                  num(static_cast<std::int64_t>(seal_->nblocks())) + ")",
                              0);
        }
        if (!seal_->check(b, chunk_)) {
            throw FormatError(block_mismatch(b, seal_->block_bytes(b)), seal_->begin(b));
        }
    }
    std::size_t prefix_end(std::int32_t i, std::size_t need) const override {
        return seal_->prefix_end(static_cast<std::size_t>(i), need);
    }
    void check_prefix(std::int32_t i, const std::uint8_t* decoded, std::size_t end) const override {
        const auto b = static_cast<std::size_t>(i);
        if (!seal_->check_prefix(b, decoded, end)) {
            throw FormatError(prefix_mismatch(b, end), b < seal_->nblocks() ? seal_->begin(b) : 0);
        }
    }

private:
    std::shared_ptr<const SealSet> set_;  // keeps seal_ alive
    std::unique_ptr<ChunkSeal> own_;      // a seal not remembered
    const ChunkSeal* seal_;
    ByteSpan chunk_;
};

/// What the first block of `chunk` that does not match its digest is told ("" when all match).
std::string first_bad_block(const ChunkSeal& seal, ByteSpan chunk) {
    for (std::size_t k = 0; k < seal.nblocks(); ++k) {
        if (!seal.check(k, chunk)) {
            return block_mismatch(k, seal.block_bytes(k)) + " (at byte " +
                   num(static_cast<std::int64_t>(seal.begin(k))) + " of the chunk)";
        }
    }
    return {};
}

}  // namespace

void Checks::start(std::vector<std::uint64_t> chunks, int version, bool remember) {
    state_ = ChecksumReport::State::covered;
    version_ = version;
    chunks_ = std::move(chunks);
    seals_ = std::make_shared<SealSet>(chunks_.size(), version, remember);
}

bool Checks::verify_whole(std::size_t i, ByteSpan bytes, ByteSpan record, std::string& why) const {
    if (version_ == 1) {
        if (seals_->get(i) != 0) {
            return true;
        }
        why = mismatch(i, bytes, record);
        if (!why.empty()) {
            return false;
        }
        seals_->mark(i);
        return true;
    }
    std::unique_ptr<ChunkSeal> own;
    const ChunkSeal* seal = seal_of(i, bytes, record, own, why);
    if (seal != nullptr) {
        why = first_bad_block(*seal, bytes);
    }
    return seal != nullptr && why.empty();
}

const ChunkSeal* Checks::seal_of(std::size_t i,
                                 ByteSpan bytes,
                                 ByteSpan record,
                                 std::unique_ptr<ChunkSeal>& own,
                                 std::string& why) const {
    if (const std::uintptr_t kept = seals_->get(i)) {
        return reinterpret_cast<const ChunkSeal*>(kept);
    }
    own = ChunkSeal::open(bytes, record, version_, chunks_[i], seals_->remember(), why);
    if (!own || !seals_->remember()) {
        return own.get();
    }
    return seals_->keep(i, std::move(own));
}

std::shared_ptr<const codec::BlockCheck> Checks::bind_blocks(std::size_t i,
                                                             ByteSpan bytes,
                                                             ByteSpan record,
                                                             std::string& why) const {
    std::unique_ptr<ChunkSeal> own;
    const ChunkSeal* seal = seal_of(i, bytes, record, own, why);
    if (seal == nullptr || seal->nblocks() == 0) {
        return nullptr;  // a mismatch, or a chunk checked whole (its head is all of it)
    }
    return std::make_shared<BoundSeal>(own ? nullptr : seals_, std::move(own), seal, bytes);
}

std::string Checks::mismatch(std::size_t i, ByteSpan bytes, ByteSpan record) const {
    if (state_ != ChecksumReport::State::covered || i >= chunks_.size()) {
        return {};
    }
    if (version_ >= 2 && !bytes.empty()) {
        std::string why;
        const std::unique_ptr<ChunkSeal> s =
            ChunkSeal::open(bytes, record, version_, chunks_[i], false, why);
        return s ? first_bad_block(*s, bytes) : why;
    }
    const std::uint64_t d = bytes.empty() ? 0 : bytes_digest(bytes);
    if (d == chunks_[i]) {
        return {};
    }
    return "its " + num(static_cast<std::int64_t>(bytes.size())) +
           " stored bytes do not match their checksum (the file is corrupted, or another "
           "program changed it in place)";
}

void Checks::fail(const std::string& context, const std::string& why, std::uint64_t offset) {
    throw FormatError(context + ": " + why, offset);
}

std::vector<std::uint8_t> trailer_with_checksums(ByteSpan header,
                                                 ByteSpan index,
                                                 const std::vector<format::Metalayer>& vlmeta,
                                                 const std::vector<std::uint64_t>* digests,
                                                 int version,
                                                 ChecksumTable* table_out) {
    if (digests == nullptr) {
        return format::write_frame_trailer(vlmeta);
    }
    ChecksumTable t;
    t.version = version;
    t.header = header_digest(header);
    t.index = bytes_digest(index);
    t.chunks = *digests;
    for (const format::Metalayer& m : vlmeta) {
        t.vlmeta.emplace_back(m.name, bytes_digest({m.content.data(), m.content.size()}));
    }
    const std::vector<std::uint8_t> content = encode_table(t);
    // Stored as c-blosc2 stores vlmetalayer contents: a Blosc2 chunk (memcpyed: digests do not
    // compress).
    codec::EncodeParams p;
    p.codec = codec::Codec::blosclz;
    p.clevel = 0;
    p.typesize = 1;
    std::vector<format::Metalayer> all = vlmeta;
    all.push_back({kChecksumsName, codec::encode_chunk({content.data(), content.size()}, p), 0});
    const ByteSpan stored{all.back().content.data(), all.back().content.size()};
    std::vector<std::uint8_t> trailer = format::write_frame_trailer(all, kStampType, stamp(stored));
    if (table_out != nullptr) {
        t.stored = stored.size();
        *table_out = std::move(t);
    }
    return trailer;
}

}  // namespace b2nd::storage::detail
