// Regridded views (AnyArray::rechunked): an array's items under other chunk and block shapes,
// read-only. Each block of the view is a box of the array, read as any box is (its blocks
// decoded once, through the array's cache): what an export writing other chunks, or a chunkwise
// pass that wants other chunks, iterates over.
#include <cstring>

#include <b2nd/any_array.hpp>
#include <b2nd/attrs.hpp>
#include <b2nd/error.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "array_core.hpp"
#include "block_origin.hpp"
#include "engine_access.hpp"

namespace b2nd {

namespace {

class RegridOrigin final : public detail::BlockOrigin {
public:
    RegridOrigin(AnyArray source, Grid view) : source_(std::move(source)), view_(std::move(view)) {}

    const char* kind() const noexcept override { return "regridded view"; }
    bool computes() const noexcept override { return true; }
    void require(std::int64_t, std::int64_t) const override {}

    void make_block(std::int64_t ci, std::int64_t block, std::uint8_t* into) const override {
        const Box region = detail::block_region(view_, ci, block);
        const std::int64_t n = region.size();
        if (n != view_.block_items()) {
            std::memset(into, 0, static_cast<std::size_t>(view_.block_nbytes()));
        }
        if (n == 0) {
            return;
        }
        const auto plan = detail::SelectionPlan::of_box(region);
        if (n == view_.block_items()) {
            EngineAccess::read(source_, plan, into);  // the block's layout: the region's C order
            return;
        }
        // An edge block: the region's rows into the block's layout (leased: a source that is a
        // view makes its blocks on this thread too).
        thread_local detail::LeasePool<detail::Scratch> pool;
        const std::int64_t item = view_.itemsize();
        const std::shared_ptr<detail::Scratch> leased =
            detail::lease_bytes(pool, static_cast<std::size_t>(n * item));
        EngineAccess::read(source_, plan, leased->data());
        detail::rows_into_block(leased->data(), region.count, view_.block_shape(), item, into);
    }

private:
    AnyArray source_;
    Grid view_;
};

}  // namespace

AnyArray AnyArray::rechunked(const Shape& chunks, const Shape& blocks) const {
    const std::string where = detail::quoted_path(name());
    const auto rank = static_cast<std::size_t>(ndim());
    for (const Shape* s : {&chunks, &blocks}) {
        if (!s->empty() && s->size() != rank) {
            throw UsageError(where + ": " + (s == &chunks ? "chunks " : "blocks ") + to_string(*s) +
                             " for an array of " + detail::num(ndim()) + " dimensions");
        }
    }
    CreateOptions co;
    co.chunk_shape = chunks.empty() ? chunk_shape() : chunks;
    // Blocks: as said; else this array's when its chunks are kept, or chosen for new chunks.
    co.block_shape = !blocks.empty() ? blocks : chunks.empty() ? block_shape() : Shape{};
    if (!co.block_shape.empty()) {
        if (const std::string why =
                Grid::check(shape(), co.chunk_shape, co.block_shape, itemsize());
            !why.empty()) {
            throw UsageError(where + ": chunks " + to_string(co.chunk_shape) + " and blocks " +
                             to_string(co.block_shape) + ": " + why);
        }
    }
    Value::Map attrs;
    const Attrs a = this->attrs();
    for (const std::string& n : a.names()) {
        attrs.emplace_back(n, a.get(n));
    }
    OpenOptions o;
    o.cache_bytes = 0;  // blocks come from this array, whose cache serves repeats
    o.nthreads = nthreads();
    return detail::computed_array(dtype(), shape(), co, attrs, name(), o, [&](const Grid& g) {
        return std::make_shared<RegridOrigin>(*this, g);
    });
}

}  // namespace b2nd
