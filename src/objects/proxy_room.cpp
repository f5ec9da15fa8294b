// Making room in persistent remote caches (proxy_room.hpp), and the cache files a directory's
// ledger may name (cache_directory.hpp: own_cache_file, shed_idle_cache).
#include "proxy_room.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/value.hpp>

#include "../detail/text.hpp"
#include "cache_directory.hpp"
#include "proxy_layout.hpp"

namespace b2nd::detail {

using proxy_layout::kBlockBits;
using proxy_layout::kBlocksPerChunk;
using proxy_layout::kSource;
using proxy_layout::packed;
using proxy_layout::vlmeta_value;

std::vector<std::size_t> plan_drops(const std::vector<std::size_t>& order,
                                    const std::vector<std::uint64_t>& sizes,
                                    std::uint64_t bytes,
                                    const std::vector<std::uint8_t>& zeros,
                                    std::int64_t bpc,
                                    storage::FrameEdit& e,
                                    std::vector<bool>& bits) {
    std::vector<std::size_t> dropped;
    std::uint64_t planned = 0;
    for (const std::size_t k : order) {
        if (planned >= bytes) {
            break;
        }
        e.replace(static_cast<std::int64_t>(k), {zeros.data(), zeros.size()});
        for (std::int64_t b = 0; b < bpc; ++b) {
            const auto at = k * static_cast<std::size_t>(bpc) + static_cast<std::size_t>(b);
            if (at < bits.size()) {
                bits[at] = false;
            }
        }
        planned += sizes[k];
        dropped.push_back(k);
    }
    return dropped;
}

/// Bytes the chunks `dropped` gave up, their sizes in `sizes` set to what they take now.
std::uint64_t freed_by(const storage::Frame& f,
                       const std::vector<std::size_t>& dropped,
                       std::vector<std::uint64_t>& sizes) {
    std::uint64_t freed = 0;
    for (const std::size_t k : dropped) {
        const std::uint64_t now = f.chunk_unchecked(static_cast<std::int64_t>(k)).bytes.size();
        freed += sizes[k] - std::min(now, sizes[k]);
        sizes[k] = now;
    }
    return freed;
}

bool own_cache_file(const std::string& path) {
    if (!own_file(path) || !std::filesystem::exists(path)) {
        return false;
    }
    try {
        storage::OpenOptions look;
        look.locking = false;  // looked at only: nothing made beside it
        return storage::Frame::open(path, look).metalayer(kSource) != nullptr;
    } catch (const Error&) {
        return false;
    }
}

std::optional<std::uint64_t> shed_idle_cache(const std::string& path, std::uint64_t bytes) {
    if (!own_cache_file(path)) {
        return std::nullopt;  // a file the ledger should not name: never opened for writing
    }
    try {
        storage::OpenOptions o;
        o.writable = true;
        storage::Frame f = storage::Frame::open(path, o);  // LockError: a process writes it
        if (f.metalayer(kSource) == nullptr) {
            return std::nullopt;  // no cache (any more): never touched
        }
        const format::FrameHeader& h = f.header();
        const auto nchunks = static_cast<std::size_t>(f.nchunks());
        const auto bpc_value = vlmeta_value(f, kBlocksPerChunk);
        const std::int64_t bpc = bpc_value && bpc_value->type() == Value::Type::integer &&
                                         bpc_value->as<std::int64_t>() > 0
                                     ? bpc_value->as<std::int64_t>()
                                     : 1;
        std::vector<bool> bits =
            proxy_layout::fetched(f, static_cast<std::int64_t>(nchunks), bpc, quoted_path(path))
                .value_or(std::vector<bool>(nchunks * static_cast<std::size_t>(bpc), false));
        const std::vector<std::uint8_t> zeros =
            codec::make_zeros_chunk(h.chunksize, h.typesize, h.blocksize);
        std::vector<std::uint64_t> sizes(nchunks);
        std::vector<std::size_t> order;  // largest first: no use is known of another process's
        for (std::size_t k = 0; k < nchunks; ++k) {
            sizes[k] = f.chunk_unchecked(static_cast<std::int64_t>(k)).bytes.size();
            if (sizes[k] > zeros.size()) {
                order.push_back(k);
            }
        }
        std::sort(order.begin(), order.end(),
                  [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
        storage::FrameEdit e = f.keep_all();
        const auto dropped = plan_drops(order, sizes, bytes, zeros, bpc, e, bits);
        if (dropped.empty()) {
            return 0;
        }
        e.set_vlmeta(kBlockBits, packed(Value::binary(proxy_layout::pack(bits))));
        f.apply(e);
        return freed_by(f, dropped, sizes);
    } catch (const Error&) {
        return std::nullopt;  // held, broken or gone: left as it is
    }
}

}  // namespace b2nd::detail
