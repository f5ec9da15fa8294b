// Zarr arrays read in place (bridges.hpp): an array whose blocks are Zarr chunks (or a shard's
// inner chunks), made by a BlockOrigin from the files under the array's directory or URL. The
// array itself is an empty frame of the same grid, so every read of an array works on it:
// selections, the block cache, parallel reads, chunkwise visits, xtensor, evaluate, copies.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

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
#include "zarr_meta.hpp"

namespace b2nd::bridges {

namespace {

namespace fs = std::filesystem;
using detail::num;

/// Metadata files are small; a larger one is not metadata.
constexpr std::uint64_t kMaxMetadataBytes = std::uint64_t{64} << 20;

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

std::string joined(const std::string& root, const std::string& key) {
    if (!root.empty() && root.back() == '/') {
        return root + key;
    }
    return root + "/" + key;
}

/// Where a Zarr array's files are: a local directory or a URL.
class ZarrFiles {
public:
    ZarrFiles(std::string root, storage::OpenOptions options)
        : root_(std::move(root)), url_(storage::is_url(root_)), options_(std::move(options)) {}

    /// The file `key` under the array, or null when there is none.
    std::shared_ptr<const storage::ByteSource> open(const std::string& key) const {
        const std::string path = joined(root_, key);
        try {
            if (!url_) {
                std::error_code ec;
                const fs::file_status st = fs::status(path, ec);
                if (ec || st.type() == fs::file_type::not_found) {
                    return nullptr;
                }
                if (st.type() != fs::file_type::regular) {
                    throw FormatError(detail::quoted_path(path) + ": not a regular file");
                }
                if (fs::file_size(path, ec) == 0 && !ec) {
                    return storage::memory_source({}, nullptr, path);
                }
            }
            return storage::open_source(path, options_);
        } catch (const RemoteError& e) {
            if (e.not_found()) {
                return nullptr;
            }
            throw;
        } catch (const IoError& e) {
            if (e.code() == std::errc::no_such_file_or_directory) {
                return nullptr;
            }
            throw;
        }
    }

    /// The whole text of a metadata file, or nothing when there is none.
    std::optional<std::string> text(const std::string& key) const {
        const auto src = open(key);
        if (!src) {
            return std::nullopt;
        }
        const std::uint64_t n = src->size();
        if (n > kMaxMetadataBytes) {
            throw FormatError(detail::quoted_path(joined(root_, key)) + ": " +
                              num(static_cast<std::int64_t>(n)) +
                              " bytes, too large for Zarr metadata");
        }
        const storage::SourceBytes b = src->read(0, n);
        return std::string(reinterpret_cast<const char*>(b.bytes.data()), b.bytes.size());
    }

    const std::string& root() const noexcept { return root_; }

private:
    std::string root_;
    bool url_;
    storage::OpenOptions options_;
};

/// A shard opened, with its index decoded (null source: no shard file).
struct Shard {
    std::shared_ptr<const storage::ByteSource> src;
    std::vector<std::uint64_t> index;  ///< (offset, nbytes) per inner chunk
};

class ZarrOrigin final : public detail::BlockOrigin {
public:
    ZarrOrigin(ZarrMeta meta, ZarrFiles files, Grid carrier)
        : m_(std::move(meta)), files_(std::move(files)), g_(std::move(carrier)) {
        if (const ZarrSharding* s = m_.codecs.sharding.get()) {
            inner_per_shard_ = 1;
            for (std::size_t d = 0; d < m_.chunks.size(); ++d) {
                per_shard_[d] = m_.chunks[d] / s->inner[d];
                inner_per_shard_ *= per_shard_[d];
            }
        }
    }

    const char* kind() const noexcept override {
        return m_.version == 2 ? "Zarr v2 array" : "Zarr v3 array";
    }
    bool computes() const noexcept override { return true; }
    void require(std::int64_t, std::int64_t) const override {}

    void make_block(std::int64_t ci, std::int64_t block, std::uint8_t* into) const override {
        const int nd = g_.ndim();
        std::int64_t cc[kMaxNdim] = {};
        g_.chunk_coords(ci, cc);
        std::int64_t gb[kMaxNdim] = {};  // the block's coordinates in the grid of blocks
        std::int64_t rest = block;
        for (int d = nd - 1; d >= 0; --d) {
            gb[d] = cc[d] * g_.blocks_in(d) + rest % g_.blocks_in(d);
            rest /= g_.blocks_in(d);
        }
        const Shape& bs = g_.block_shape();
        const auto bytes = static_cast<std::size_t>(g_.block_nbytes());
        bool filled = false;
        if (m_.codecs.sharding) {
            filled = !inner_chunk(gb, into);
        } else {
            const std::string key = chunk_key(m_, gb);
            const auto src = files_.open(key);
            if (src) {
                const storage::SourceBytes b = src->read(0, src->size());
                decode_zarr_chunk(m_.codecs, m_.dtype, bs, b.bytes.data(), b.bytes.size(), into,
                                  where(key));
            } else {
                filled = true;
            }
        }
        if (filled) {
            const std::size_t item = m_.fill.size();
            for (std::size_t k = 0; k < bytes; k += item) {
                std::memcpy(into + k, m_.fill.data(), item);
            }
        }
        zero_padding(ci, block, into);
    }

private:
    std::string where(const std::string& key) const {
        return detail::quoted_path(joined(files_.root(), key));
    }

    /// Decodes the inner chunk at block coordinates gb into `into`; false when it has none.
    bool inner_chunk(const std::int64_t* gb, std::uint8_t* into) const {
        const int nd = g_.ndim();
        std::int64_t sc[kMaxNdim] = {};
        std::int64_t inner = 0;
        for (int d = 0; d < nd; ++d) {
            sc[d] = gb[d] / per_shard_[d];
            inner = inner * per_shard_[d] + gb[d] % per_shard_[d];
        }
        const std::string key = chunk_key(m_, sc);
        const std::shared_ptr<const Shard> shard = shard_at(key);
        if (!shard->src) {
            return false;
        }
        const std::uint64_t off = shard->index[static_cast<std::size_t>(2 * inner)];
        const std::uint64_t n = shard->index[static_cast<std::size_t>(2 * inner + 1)];
        if (off == ~std::uint64_t{0} && n == ~std::uint64_t{0}) {
            return false;
        }
        const std::uint64_t size = shard->src->size();
        if (off > size || n > size - off) {
            throw FormatError(where(key) + ": inner chunk " + num(inner) + " lies at bytes [" +
                              std::to_string(off) + ", +" + std::to_string(n) + ") of a shard of " +
                              std::to_string(size) + " bytes");
        }
        const storage::SourceBytes b = shard->src->read(off, n);
        decode_zarr_chunk(m_.codecs.sharding->codecs, m_.dtype, m_.codecs.sharding->inner,
                          b.bytes.data(), b.bytes.size(), into,
                          where(key) + " (inner chunk " + num(inner) + ")");
        return true;
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
            const storage::SourceBytes b = shard->src->read(s.index_at_end ? size - n : 0, n);
            shard->index =
                decode_shard_index(s, inner_per_shard_, b.bytes.data(), b.bytes.size(), where(key));
        }
        std::lock_guard<std::mutex> lock(mutex_);
        shards_.put(key, shard, kShardsKept);
        return shard;
    }

    /// Zeros over the part of the block outside the array.
    void zero_padding(std::int64_t ci, std::int64_t block, std::uint8_t* into) const {
        const Box region = detail::block_region(g_, ci, block);
        const int nd = g_.ndim();
        const Shape& bs = g_.block_shape();
        bool whole = true;
        for (int d = 0; d < nd; ++d) {
            whole = whole &&
                    region.count[static_cast<std::size_t>(d)] == bs[static_cast<std::size_t>(d)];
        }
        if (whole) {
            return;
        }
        const auto item = static_cast<std::size_t>(g_.itemsize());
        const std::int64_t n = g_.block_items();
        std::int64_t idx[kMaxNdim] = {};
        for (std::int64_t k = 0; k < n; ++k) {
            bool inside = true;
            for (int d = 0; d < nd; ++d) {
                inside = inside && idx[d] < region.count[static_cast<std::size_t>(d)];
            }
            if (!inside) {
                std::memset(into + static_cast<std::size_t>(k) * item, 0, item);
            }
            for (int d = nd - 1; d >= 0; --d) {
                if (++idx[d] < bs[static_cast<std::size_t>(d)]) {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    static constexpr std::size_t kShardsKept = 256;

    ZarrMeta m_;
    ZarrFiles files_;
    Grid g_;
    std::int64_t per_shard_[kMaxNdim] = {};
    std::int64_t inner_per_shard_ = 1;
    mutable std::mutex mutex_;
    mutable detail::LruMap<std::string, std::shared_ptr<const Shard>> shards_;
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

bool is_zarr(const std::string& path) {
    if (storage::is_url(path)) {
        return looks_like_zarr_url(path);
    }
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

AnyArray open_zarr(const std::string& path, const OpenOptions& options) {
    const std::string where = detail::quoted_path(path);
    if (options.writable) {
        throw UsageError(where +
                         ": Zarr arrays are read-only here; 'b2nd import' makes a b2nd "
                         "array of one");
    }
    ZarrFiles files(path, options);
    ZarrMeta m = read_meta(files, where);

    // The carrier's grid: blocks are Zarr's chunks (a shard's inner chunks), chunks are shards
    // when they fit a frame's chunk, else one block each.
    const Shape block = m.codecs.sharding ? m.codecs.sharding->inner : m.chunks;
    Shape chunk = m.chunks;
    if (!Grid::check(m.shape, chunk, block, m.dtype.itemsize()).empty()) {
        chunk = block;
    }
    if (const std::string why = Grid::check(m.shape, chunk, block, m.dtype.itemsize());
        !why.empty()) {
        throw UnsupportedError(where + ": chunks of " + to_string(block) + " " + m.dtype.str() +
                               " items: " + why);
    }
    CreateOptions co;
    co.chunk_shape = chunk;
    co.block_shape = block;
    AnyArray carrier = AnyArray::create_in_memory(m.dtype, m.shape, co);
    {
        Attrs attrs = carrier.attrs();
        for (const auto& [k, v] : m.attributes.entries()) {
            if (k.type() == Value::Type::string) {
                attrs.set(k.as<std::string>(), v);
            }
        }
    }
    auto bytes = std::make_shared<std::vector<std::uint8_t>>(carrier.to_cframe());
    OpenOptions o = options;
    AnyArray a =
        AnyArray::open(storage::memory_source({bytes->data(), bytes->size()}, bytes, path), o);
    detail::ArrayCore& core = EngineAccess::writable_core(a);
    core.set_origin(std::make_shared<ZarrOrigin>(std::move(m), std::move(files), a.grid()));
    return a;
}

Value zarr_summary(const std::string& path, const OpenOptions& options) {
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
    out.emplace_back("codecs", codecs_text(m.codecs));
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
