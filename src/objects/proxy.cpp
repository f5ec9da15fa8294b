// Proxy caches (objects_detail.hpp): python-blosc2's Proxy keeps the chunks (or blocks) it has
// fetched from its source in a local array whose other chunks are zeros or uninitialized, and
// records which in bitmaps in the vlmeta (proxy.py): `proxy-fetched-blocks` (one bit per block,
// chunk-major, least significant bit first; `proxy-fetched-bpc` blocks per chunk) or
// `proxy-fetched` (one bit per chunk). A cache with neither holds every chunk that is not a
// special chunk (python's reading of caches written before the bitmaps). Only what the bitmaps
// name is served; anything else is refused, naming the region and the source.
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/value.hpp>

#include "../detail/text.hpp"
#include "../engine/array_core.hpp"
#include "objects_detail.hpp"

namespace b2nd::detail {

namespace {

class ProxyOrigin : public BlockOrigin {
public:
    ProxyOrigin(std::string where,
                Grid grid,
                std::string source,
                std::vector<bool> fetched,
                std::int64_t bpc)
        : where_(std::move(where)),
          grid_(std::move(grid)),
          source_(std::move(source)),
          fetched_(std::move(fetched)),
          bpc_(bpc) {}

    const char* kind() const noexcept override { return "proxy"; }
    void make_block(std::int64_t, std::int64_t, std::uint8_t*) const override {}

    void require(std::int64_t ci, std::int64_t block) const override {
        if (bpc_ == 1) {
            if (!fetched_[static_cast<std::size_t>(ci)]) {
                refuse("chunk " + num(ci) + " (elements " + grid_.chunk_box(ci).str() + ")");
            }
            return;
        }
        const auto first = static_cast<std::size_t>(ci * bpc_);
        if (block >= 0) {
            if (!fetched_[first + static_cast<std::size_t>(block)]) {
                refuse("block " + num(block) + " of chunk " + num(ci) + " (elements " +
                       block_region(grid_, ci, block).str() + ")");
            }
            return;
        }
        std::int64_t have = 0;
        for (std::int64_t b = 0; b < bpc_; ++b) {
            have += fetched_[first + static_cast<std::size_t>(b)] ? 1 : 0;
        }
        if ((block == kWholeChunk && have < bpc_) || (block == kAnyBlock && have == 0)) {
            refuse((have == 0 ? "chunk " : "part of chunk ") + num(ci) + " (elements " +
                   grid_.chunk_box(ci).str() + ")");
        }
    }

private:
    [[noreturn]] void refuse(const std::string& what) const {
        throw UnsupportedError(where_ + ": a python-blosc2 proxy cache of " + source_ + ": " +
                               what +
                               " was never fetched into it (its bitmap says so); read that "
                               "region from the source, or fetch it with python-blosc2");
    }

    std::string where_;
    Grid grid_;
    std::string source_;
    std::vector<bool> fetched_;
    std::int64_t bpc_;
};

/// The source a proxy-source metalayer names, for messages (never the auth token).
std::string describe_source(const Value& src) {
    if (const Value* p = src.find("local_abspath"); p != nullptr && !p->is_nil()) {
        return p->type() == Value::Type::string ? "'" + p->as<std::string>() + "'" : p->to_json();
    }
    if (const Value* u = src.find("urlpath"); u != nullptr && u->type() == Value::Type::array) {
        const Value::Array& a = u->array();
        const std::size_t skip = !a.empty() && a[0].type() == Value::Type::string &&
                                         a[0].as<std::string>() == "__tuple__"
                                     ? 1
                                     : 0;
        std::string s;
        for (std::size_t i = skip; i < a.size() && i < skip + 2; ++i) {
            s += (s.empty() ? "" : " at ") +
                 (a[i].type() == Value::Type::string ? a[i].as<std::string>() : a[i].to_json());
        }
        return "the remote array " + s;
    }
    return "an unnamed source";
}

std::vector<bool> bits(const std::vector<std::uint8_t>& bytes, std::size_t n) {
    std::vector<bool> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = ((bytes[i / 8] >> (i % 8)) & 1) != 0;
    }
    return out;
}

}  // namespace

std::shared_ptr<const BlockOrigin> proxy_origin(const ArrayCore& core) {
    const storage::Frame& f = core.frame();
    const Grid& g = core.grid();
    const std::string where = core.where();
    const format::Metalayer* m = f.metalayer("proxy-source");
    const Value src = Value::from_msgpack({m->content.data(), m->content.size()},
                                          where + ": metalayer 'proxy-source'");
    const auto nchunks = static_cast<std::size_t>(g.nchunks());
    const auto vl = [&](const char* name) -> std::optional<Value> {
        const auto raw = f.vlmeta(name);
        if (!raw) {
            return std::nullopt;
        }
        return Value::from_msgpack({raw->data(), raw->size()}, where + ": vlmeta '" + name + "'");
    };
    const std::int64_t bpc = g.nblocks();
    if (const auto blocks = vl("proxy-fetched-blocks");
        blocks && blocks->type() == Value::Type::binary && bpc > 1) {
        if (const auto stored = vl("proxy-fetched-bpc");
            stored && (stored->type() != Value::Type::integer || stored->is_negative() ||
                       stored->as<std::int64_t>() != bpc)) {
            throw FormatError(where + ": proxy cache: vlmeta 'proxy-fetched-bpc' is " +
                              stored->to_json() + ", but its chunks hold " + num(bpc) + " blocks");
        }
        const std::size_t n = nchunks * static_cast<std::size_t>(bpc);
        if (blocks->bytes().size() == (n + 7) / 8) {
            return std::make_shared<ProxyOrigin>(where, g, describe_source(src),
                                                 bits(blocks->bytes(), n), bpc);
        }
    }
    if (const auto chunks = vl("proxy-fetched"); chunks && chunks->type() == Value::Type::binary &&
                                                 chunks->bytes().size() == (nchunks + 7) / 8) {
        return std::make_shared<ProxyOrigin>(where, g, describe_source(src),
                                             bits(chunks->bytes(), nchunks), 1);
    }
    // No bitmap that fits: what is not a special chunk was fetched (python's rule).
    std::vector<bool> have(nchunks);
    for (std::size_t ci = 0; ci < nchunks; ++ci) {
        // Its header only: whether it is special (the read checks its bytes).
        const storage::StoredChunk c = f.chunk_unchecked(static_cast<std::int64_t>(ci));
        if (c.index_only()) {
            continue;
        }
        try {
            have[ci] =
                codec::ChunkDecoder(c.bytes, g.block_shape()).special() == codec::Special::none;
        } catch (const FormatError&) {
            have[ci] = true;  // served, and the read reports the damage
        }
    }
    return std::make_shared<ProxyOrigin>(where, g, describe_source(src), std::move(have), 1);
}

}  // namespace b2nd::detail
