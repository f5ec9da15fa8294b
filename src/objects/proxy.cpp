// Proxy caches opened as arrays (objects_detail.hpp): only what the bitmaps of the layout
// (proxy_layout.hpp) name is served; anything else is refused, naming the region and the source.
#include <algorithm>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/value.hpp>

#include "../detail/text.hpp"
#include "../engine/array_core.hpp"
#include "objects_detail.hpp"
#include "proxy_layout.hpp"

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

}  // namespace

std::shared_ptr<const BlockOrigin> proxy_origin(const ArrayCore& core) {
    const storage::Frame& f = core.frame();
    const Grid& g = core.grid();
    const std::string where = core.where();
    const format::Metalayer* m = f.metalayer(proxy_layout::kSource);
    const std::string source = proxy_layout::describe(
        Value::from_msgpack({m->content.data(), m->content.size()},
                            where + ": metalayer '" + proxy_layout::kSource + "'"));
    const std::int64_t bpc = std::max<std::int64_t>(g.nblocks(), 1);
    if (auto bits = proxy_layout::fetched(f, g.nchunks(), bpc, where)) {
        return std::make_shared<ProxyOrigin>(where, g, source, std::move(*bits), bpc);
    }
    // No bitmap that fits: what is not a special chunk was fetched (python's rule).
    const auto nchunks = static_cast<std::size_t>(g.nchunks());
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
    return std::make_shared<ProxyOrigin>(where, g, source, std::move(have), 1);
}

}  // namespace b2nd::detail
