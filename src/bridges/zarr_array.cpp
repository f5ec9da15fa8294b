// Zarr arrays read in place (bridges.hpp): an array whose blocks are Zarr chunks (or a shard's
// inner chunks), made by a BlockOrigin from the files under the array's directory or URL. The
// array itself is an empty frame of the same grid, so every read of an array works on it:
// selections, the block cache, parallel reads, chunkwise visits, xtensor, evaluate, copies.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include <b2nd/any_array.hpp>
#include <b2nd/attrs.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/sources.hpp>

#include "../detail/lru_map.hpp"
#include "../detail/text.hpp"
#include "../engine/array_core.hpp"
#include "../engine/block_origin.hpp"
#include "../engine/engine_access.hpp"
#include "bridges.hpp"
#include "zarr_files.hpp"
#include "zarr_meta.hpp"

namespace b2nd::bridges {

namespace {

namespace fs = std::filesystem;
using detail::num;

bool looks_like_zarr_url(const std::string& url) {
    std::string u = url;
    while (!u.empty() && u.back() == '/') {
        u.pop_back();
    }
    const std::size_t cut = u.find_first_of("?#");
    if (cut != std::string::npos) {
        u.erase(cut);
    }
    return u.size() >= 5 &&
           (u.compare(u.size() - 5, 5, ".zarr") == 0 || u.find(".zarr/") != std::string::npos);
}

/// A shard indexes at most this many bytes whole (checked against its crc32c); a larger index
/// is read by the entries reads need (a sparse shard file may claim 2^32 inner chunks).
constexpr std::uint64_t kWholeIndexBytes = std::uint64_t{1} << 20;

/// A shard opened (null source: no shard file), with its index: decoded whole, or read by
/// entries as reads ask (`entries`, under the origin's mutex).
struct Shard {
    std::shared_ptr<const storage::ByteSource> src;
    std::vector<std::uint64_t> index;  ///< (offset, nbytes) per inner chunk, when read whole
    std::uint64_t index_at = 0;        ///< where the index starts in the shard (read by entries)
    mutable std::map<std::int64_t, std::pair<std::uint64_t, std::uint64_t>> entries;
};

/// The unit a Zarr array decodes whole: a chunk, or a shard's inner chunk.
struct Unit {
    std::int64_t coords[kMaxNdim] = {};  ///< in the grid of units
    std::int64_t offset[kMaxNdim] = {};  ///< of the block's first element inside it
};

class ZarrOrigin final : public detail::BlockOrigin {
public:
    /// `blosc_blocks`: the carrier's blocks are the units' Blosc blocks (open_zarr read them
    /// from the first chunk's header).
    ZarrOrigin(ZarrMeta meta, ZarrFiles files, Grid carrier, bool blosc_blocks)
        : m_(std::move(meta)),
          files_(std::move(files)),
          g_(std::move(carrier)),
          blosc_blocks_(blosc_blocks) {
        const ZarrSharding* s = m_.codecs.sharding.get();
        unit_ = s != nullptr ? s->inner : m_.chunks;
        if (s != nullptr) {
            inner_per_shard_ = 1;
            for (std::size_t d = 0; d < m_.chunks.size(); ++d) {
                per_shard_[d] = m_.chunks[d] / s->inner[d];
                inner_per_shard_ *= per_shard_[d];
            }
        }
        split_ = g_.block_shape() != unit_;
        std::int64_t bytes = m_.dtype.itemsize();
        for (const std::int64_t e : unit_) {
            bytes *= e;
        }
        unit_bytes_ = static_cast<std::size_t>(bytes);
        units_kept_ = bytes <= (std::int64_t{512} << 20) ? 2 : 1;
    }

    const char* kind() const noexcept override {
        return m_.version == 2 ? "Zarr v2 array" : "Zarr v3 array";
    }
    bool computes() const noexcept override { return true; }
    /// Blosc blocks cost a block's decode (a read that touches one once need not keep it);
    /// whole units cost far more, and are kept from their first read.
    bool decodes() const noexcept override { return blosc_blocks_; }
    void require(std::int64_t, std::int64_t) const override {}

    void make_block(std::int64_t ci, std::int64_t block, std::uint8_t* into) const override {
        const int nd = g_.ndim();
        const Box region = detail::block_region(g_, ci, block);
        const auto bytes = static_cast<std::size_t>(g_.block_nbytes());
        if (region.size() == 0) {
            std::memset(into, 0, bytes);
            return;
        }
        Unit u;
        for (int d = 0; d < nd; ++d) {
            const auto k = static_cast<std::size_t>(d);
            u.coords[d] = region.start[k] / unit_[k];
            u.offset[d] = region.start[k] - u.coords[d] * unit_[k];
        }
        bool filled = false;
        if (blosc_blocks_ && blosc_block(u.coords, block, into, filled)) {
            // one Blosc block of the unit decoded (or the unit has none: fill)
        } else if (!split_) {
            filled = !decode_unit(u.coords, into);  // the block is the unit: decoded in place
        } else if (const auto whole = unit_at(u.coords)) {
            bridges::copy_box(whole->data(), unit_, Shape(u.offset, u.offset + nd), into,
                              g_.block_shape(), region.count,
                              static_cast<std::size_t>(g_.itemsize()));
        } else {
            filled = true;
        }
        if (filled) {
            const std::size_t item = m_.fill.size();
            for (std::size_t k = 0; k < bytes; k += item) {
                std::memcpy(into + k, m_.fill.data(), item);
            }
        }
        zero_outside(region, g_.block_shape(), static_cast<std::size_t>(g_.itemsize()), into);
    }

private:
    std::string where(const std::string& key) const {
        return detail::quoted_path(zarr_joined(files_.root(), key));
    }

    /// The stored bytes of the unit at `uc` (a chunk file, or a shard's inner chunk) and where
    /// they are, for messages; nothing when it has none (fill).
    struct Stored {
        storage::SourceBytes bytes;
        std::string where;
    };
    std::optional<Stored> stored_unit(const std::int64_t* uc) const {
        if (!m_.codecs.sharding) {
            const std::string key = chunk_key(m_, uc);
            const auto src = files_.open(key);
            if (!src) {
                return std::nullopt;
            }
            return Stored{src->read(0, src->size()), where(key)};
        }
        const int nd = g_.ndim();
        std::int64_t sc[kMaxNdim] = {};
        std::int64_t inner = 0;
        for (int d = 0; d < nd; ++d) {
            sc[d] = uc[d] / per_shard_[d];
            inner = inner * per_shard_[d] + uc[d] % per_shard_[d];
        }
        const std::string key = chunk_key(m_, sc);
        const std::shared_ptr<const Shard> shard = shard_at(key);
        if (!shard->src) {
            return std::nullopt;
        }
        const auto [off, n] = entry(*shard, inner, key);
        if (off == ~std::uint64_t{0} && n == ~std::uint64_t{0}) {
            return std::nullopt;
        }
        const std::uint64_t size = shard->src->size();
        if (off > size || n > size - off) {
            throw FormatError(where(key) + ": inner chunk " + num(inner) + " lies at bytes [" +
                              std::to_string(off) + ", +" + std::to_string(n) + ") of a shard of " +
                              std::to_string(size) + " bytes");
        }
        return Stored{shard->src->read(off, n), where(key) + " (inner chunk " + num(inner) + ")"};
    }

    /// Decodes Blosc block `block` of the unit at `uc` into `into`; `filled` when the unit has
    /// none (fill). False when the stored unit has other blocks than the grid's (decode it whole).
    bool blosc_block(const std::int64_t* uc,
                     std::int64_t block,
                     std::uint8_t* into,
                     bool& filled) const {
        const std::int64_t key = unit_key(uc);
        std::shared_ptr<const std::optional<Stored>> s;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (const auto* kept = stored_.find(key)) {
                s = *kept;
            }
        }
        if (!s) {
            s = std::make_shared<const std::optional<Stored>>(stored_unit(uc));
            std::lock_guard<std::mutex> lock(mutex_);
            stored_.put(key, s, kStoredKept);
        }
        if (!s->has_value()) {
            filled = true;
            return true;
        }
        const Stored& st = **s;
        return decode_blosc_block(st.bytes.bytes, block,
                                  static_cast<std::size_t>(g_.block_nbytes()), unit_bytes_, into,
                                  st.where);
    }

    /// The unit at `uc` as one number (for the kept units).
    std::int64_t unit_key(const std::int64_t* uc) const {
        std::int64_t key = 0;
        for (int d = 0; d < g_.ndim(); ++d) {
            const auto k = static_cast<std::size_t>(d);
            key = key * ((g_.shape()[k] + unit_[k] - 1) / std::max<std::int64_t>(unit_[k], 1)) +
                  uc[d];
        }
        return key;
    }

    /// Decodes `s` (a whole unit) into `out`.
    void decode(const Stored& s, std::uint8_t* out) const {
        const ZarrCodecs& c = m_.codecs.sharding ? m_.codecs.sharding->codecs : m_.codecs;
        decode_zarr_chunk(c, m_.dtype, unit_, s.bytes.bytes.data(), s.bytes.bytes.size(), out,
                          s.where);
    }

    /// Decodes the unit at `uc` into `out` (a whole unit); false when it has none (fill).
    bool decode_unit(const std::int64_t* uc, std::uint8_t* out) const {
        const std::optional<Stored> s = stored_unit(uc);
        if (s) {
            decode(*s, out);
        }
        return s.has_value();
    }

    /// The unit at `uc` decoded whole, kept for the blocks that follow (a unit larger than a
    /// block is read in several); null when it has none (nothing allocated for it then).
    std::shared_ptr<const std::vector<std::uint8_t>> unit_at(const std::int64_t* uc) const {
        const std::int64_t key = unit_key(uc);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (const auto* kept = units_.find(key)) {
                return *kept;
            }
        }
        const std::optional<Stored> s = stored_unit(uc);
        if (!s) {
            return nullptr;
        }
        std::int64_t n = m_.dtype.itemsize();
        for (const std::int64_t e : unit_) {
            n *= e;
        }
        auto whole = std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(n));
        decode(*s, whole->data());
        std::lock_guard<std::mutex> lock(mutex_);
        units_.put(key, whole, units_kept_);
        return whole;
    }

    /// Inner chunk `inner`'s (offset, nbytes) in `shard`: from the index read whole, or read
    /// alone (16 bytes) and kept.
    std::pair<std::uint64_t, std::uint64_t> entry(const Shard& shard,
                                                  std::int64_t inner,
                                                  const std::string& key) const {
        if (!shard.index.empty()) {
            const auto i = static_cast<std::size_t>(2 * inner);
            return {shard.index[i], shard.index[i + 1]};
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            const auto it = shard.entries.find(inner);
            if (it != shard.entries.end()) {
                return it->second;
            }
        }
        const storage::SourceBytes b =
            shard.src->read(shard.index_at + 16 * static_cast<std::uint64_t>(inner), 16);
        if (b.bytes.size() != 16) {
            throw FormatError(where(key) + ": the shard index entry of inner chunk " + num(inner) +
                              " is cut short");
        }
        std::uint64_t v[2] = {};
        for (int k = 0; k < 2; ++k) {
            for (int byte = 0; byte < 8; ++byte) {
                const std::uint8_t x = b.bytes.data()[8 * k + byte];
                v[k] |=
                    std::uint64_t{x}
                    << (m_.codecs.sharding->index_codecs.big_endian ? 8 * (7 - byte) : 8 * byte);
            }
        }
        std::lock_guard<std::mutex> lock(mutex_);
        return shard.entries.emplace(inner, std::make_pair(v[0], v[1])).first->second;
    }

    std::shared_ptr<const Shard> shard_at(const std::string& key) const {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (const auto* kept = shards_.find(key)) {
                return *kept;
            }
        }
        auto shard = std::make_shared<Shard>();
        shard->src = files_.open(key);
        if (shard->src) {
            const ZarrSharding& s = *m_.codecs.sharding;
            const std::uint64_t n = shard_index_nbytes(s, inner_per_shard_);
            const std::uint64_t size = shard->src->size();
            if (size < n) {
                throw FormatError(where(key) + ": a shard of " + std::to_string(size) +
                                  " bytes cannot hold its index of " + std::to_string(n) +
                                  " bytes");
            }
            shard->index_at = s.index_at_end ? size - n : 0;
            if (n <= kWholeIndexBytes) {
                const storage::SourceBytes b = shard->src->read(shard->index_at, n);
                shard->index = decode_shard_index(s, inner_per_shard_, b.bytes.data(),
                                                  b.bytes.size(), where(key));
            }
        }
        std::lock_guard<std::mutex> lock(mutex_);
        shards_.put(key, shard, kShardsKept);
        return shard;
    }

    static constexpr std::size_t kShardsKept = 256;
    /// Stored units kept for the Blosc blocks that follow (views of mapped files, or fetched).
    static constexpr std::size_t kStoredKept = 32;

    ZarrMeta m_;
    ZarrFiles files_;
    Grid g_;
    Shape unit_;          // what the codecs decode whole: a chunk, or a shard's inner chunk
    bool split_ = false;  // blocks are parts of units (units larger than kMaxBridgedBlockBytes)
    std::size_t units_kept_ = 2;
    std::size_t unit_bytes_ = 0;
    bool blosc_blocks_;  // blocks are the units' Blosc blocks, decoded one by one
    std::int64_t per_shard_[kMaxNdim] = {};
    std::int64_t inner_per_shard_ = 1;
    mutable std::mutex mutex_;
    mutable detail::LruMap<std::string, std::shared_ptr<const Shard>> shards_;
    mutable detail::LruMap<std::int64_t, std::shared_ptr<const std::vector<std::uint8_t>>> units_;
    mutable detail::LruMap<std::int64_t, std::shared_ptr<const std::optional<Stored>>> stored_;
};

ZarrMeta read_meta(const ZarrFiles& files, const std::string& where) {
    if (auto v3 = files.text("zarr.json")) {
        return parse_zarr_v3(*v3, where);
    }
    if (auto v2 = files.text(".zarray")) {
        return parse_zarr_v2(*v2, files.text(".zattrs").value_or(""), where);
    }
    if (files.text(".zgroup")) {
        throw UsageError(where +
                         ": a Zarr v2 group, not an array; name one of its arrays "
                         "(GROUP.zarr/path/to/array)");
    }
    throw UsageError(where + ": no Zarr array here (neither zarr.json nor .zarray)");
}

}  // namespace

std::string zarr_root(const std::string& path) {
    if (storage::is_url(path)) {
        return path;
    }
    const fs::path p(path);
    const std::string name = p.filename().string();
    std::error_code ec;
    for (const char* meta : {"zarr.json", ".zarray", ".zgroup", ".zattrs"}) {
        if (name == meta && fs::is_regular_file(p, ec)) {
            const std::string parent = p.parent_path().string();
            return parent.empty() ? "." : parent;
        }
    }
    return path;
}

bool is_zarr(const std::string& given) {
    if (storage::is_url(given)) {
        return looks_like_zarr_url(given);
    }
    const std::string path = zarr_root(given);
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
        return false;
    }
    for (const char* f : {"zarr.json", ".zarray", ".zgroup"}) {
        if (fs::exists(fs::path(path) / f, ec)) {
            return true;
        }
    }
    return false;
}

AnyArray open_zarr(const std::string& given, const OpenOptions& options) {
    const std::string path = zarr_root(given);
    const std::string where = detail::quoted_path(path);
    if (options.writable) {
        throw UsageError(where +
                         ": Zarr arrays are read-only here; 'b2nd import' makes a b2nd "
                         "array of one");
    }
    ZarrFiles files(path, options);
    ZarrMeta m = read_meta(files, where);

    // The carrier's grid: blocks are Zarr's chunks (a shard's inner chunks: the units the codecs
    // decode whole), or parts of them of at most kMaxBridgedBlockBytes; chunks are shards when
    // they fit a frame's chunk and blocks are whole units, else one unit each.
    const Shape unit = m.codecs.sharding ? m.codecs.sharding->inner : m.chunks;
    Shape block = bounded_block(unit, m.dtype.itemsize());
    bool blosc_blocks = false;
    // Units whose only codec is Blosc have blocks of their own, decoded one by one: those are the
    // carrier's blocks when they are boxes of the unit (the header of the first chunk says).
    if (const auto first = files.open(chunk_key(m, Shape(m.shape.size(), 0).data()))) {
        const storage::SourceBytes head =
            first->read(0, std::min<std::uint64_t>(16, first->size()));
        const auto b = blosc_block_shape(m.codecs, m.dtype, unit, head.bytes);
        if (b && Grid(*b, *b, *b, m.dtype.itemsize()).block_nbytes() <= kMaxBridgedBlockBytes) {
            block = *b;
            blosc_blocks = true;
        }
    }
    Shape chunk = m.chunks;
    if (block != unit || !Grid::check(m.shape, chunk, block, m.dtype.itemsize()).empty()) {
        chunk = unit;
    }
    if (const std::string why = Grid::check(m.shape, chunk, block, m.dtype.itemsize());
        !why.empty()) {
        throw UnsupportedError(where + ": chunks of " + to_string(unit) + " " + m.dtype.str() +
                               " items: " + why);
    }
    CreateOptions co;
    co.chunk_shape = chunk;
    co.block_shape = block;
    Value::Map attrs = m.attributes.entries();
    carry_structure(m, attrs);
    return detail::computed_array(m.dtype, m.shape, co, attrs, path, options, [&](const Grid& g) {
        return std::make_shared<ZarrOrigin>(std::move(m), std::move(files), g, blosc_blocks);
    });
}

Value zarr_summary(const std::string& given, const OpenOptions& options) {
    const std::string path = zarr_root(given);
    const ZarrFiles files(path, options);
    const ZarrMeta m = read_meta(files, detail::quoted_path(path));
    const auto list = [](const Shape& s) {
        Value::Array a;
        for (const std::int64_t e : s) {
            a.emplace_back(e);
        }
        return Value(std::move(a));
    };
    Value::Map out;
    out.emplace_back("format", m.version == 2 ? "Zarr v2" : "Zarr v3");
    out.emplace_back("shape", list(m.shape));
    out.emplace_back("dtype", m.dtype.str());
    out.emplace_back("chunks", list(m.chunks));
    if (m.codecs.sharding) {
        out.emplace_back("inner_chunks", list(m.codecs.sharding->inner));
    }
    if (m.version == 2) {
        // As the .zarray says them (the v3 pipeline they make is the library's business).
        const Value z = Value::from_json(files.text(".zarray").value_or("{}"));
        const auto said = [&](const char* key) {
            const Value* v = z.find(key);
            return v == nullptr || v->is_nil()        ? std::string("none")
                   : v->type() == Value::Type::string ? v->as<std::string>()
                                                      : v->to_json();
        };
        out.emplace_back("order", said("order"));
        out.emplace_back("compressor", said("compressor"));
        out.emplace_back("filters", said("filters"));
    } else {
        out.emplace_back("codecs", codecs_text(m.codecs));
    }
    out.emplace_back("fill_value", Value::binary(m.fill));
    out.emplace_back("attributes", m.attributes);
    Value::Array names;
    for (const std::string& n : m.dimension_names) {
        names.emplace_back(n);
    }
    out.emplace_back("dimension_names", Value(std::move(names)));
    return Value::map(std::move(out));
}

}  // namespace b2nd::bridges
