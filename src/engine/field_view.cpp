// Field views of structured arrays (AnyArray::field, write_field): one field as an array of its
// own. The view is an array whose blocks come from the parent's (a BlockOrigin reading the
// field's bytes of the parent's block: one decode, then a stride through the records), so every
// read of an array works on it (selections, elements, chunkwise visits, xtensor), and whose
// writes go to the parent as writes of part of each element: only the touched chunks are
// re-encoded and the other fields' bytes are kept.
#include <algorithm>
#include <cstring>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/byte_source.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "array_core.hpp"
#include "block_origin.hpp"
#include "engine_access.hpp"
#include "field_spec.hpp"

namespace b2nd {

namespace {

/// The view's blocks: the field's bytes of the parent's block, laid out as the parent's block
/// with elements of the field's width (a sub-array field's values follow each other).
class FieldOrigin final : public detail::BlockOrigin {
public:
    FieldOrigin(AnyArray parent, detail::FieldSpec f, Grid view)
        : parent_(std::move(parent)), f_(std::move(f)), view_(std::move(view)) {}

    const char* kind() const noexcept override { return "field view"; }
    bool computes() const noexcept override { return true; }
    void require(std::int64_t, std::int64_t) const override {}

    void make_block(std::int64_t ci, std::int64_t block, std::uint8_t* into) const override {
        const Grid& pg = parent_.grid();
        const int nd = pg.ndim();
        Box region = detail::block_region(view_, ci, block);
        region.start.resize(static_cast<std::size_t>(nd));
        region.count.resize(static_cast<std::size_t>(nd));
        region.step.resize(static_cast<std::size_t>(nd));
        const std::int64_t n = f_.width > 0 ? region.size() : 0;  // a field of no bytes
        const auto bytes = static_cast<std::size_t>(view_.block_nbytes());
        if (n != pg.block_items()) {
            std::memset(into, 0, bytes);
        }
        if (n == 0) {
            return;
        }
        const auto plan =
            detail::SelectionPlan::of_box(region).with_part({f_.offset, f_.width}, pg.itemsize());
        if (n == pg.block_items()) {
            EngineAccess::read(parent_, plan, into);  // the block's layout: the region's C order
            return;
        }
        // An edge block: the region's rows into the block's layout.
        // Leased: a parent that is itself a field view makes its blocks on this thread too.
        thread_local detail::LeasePool<detail::Scratch> pool;
        const std::shared_ptr<detail::Scratch> leased =
            detail::lease_bytes(pool, static_cast<std::size_t>(n * f_.width));
        std::uint8_t* const tmp = leased->data();
        EngineAccess::read(parent_, plan, tmp);
        detail::rows_into_block(tmp, region.count, pg.block_shape(), f_.width, into);
    }

private:
    AnyArray parent_;
    detail::FieldSpec f_;
    Grid view_;
};

/// `s` with a sub-array field's dimensions appended; for chunk and block shapes (`grid`), an
/// empty dimension of the sub-array counts 1 (a grid's extents are positive).
Shape with_sub(Shape s, const Shape& sub, bool grid = false) {
    for (const std::int64_t e : sub) {
        s.push_back(grid ? std::max<std::int64_t>(e, 1) : e);
    }
    return s;
}

}  // namespace

AnyArray AnyArray::field(const std::string& name) const {
    const detail::FieldSpec f = detail::field_spec(*this, name);
    const Grid& g = grid();
    const Shape shape = with_sub(g.shape(), f.sub);
    if (static_cast<int>(shape.size()) > kMaxNdim) {
        throw UsageError(detail::quoted_path(path()) + ": field '" + name + "' adds " +
                         detail::num(static_cast<std::int64_t>(f.sub.size())) +
                         " dimensions; a view may have at most " + detail::num(kMaxNdim));
    }
    CreateOptions co;
    co.chunk_shape = with_sub(g.chunk_shape(), f.sub, true);
    co.block_shape = with_sub(g.block_shape(), f.sub, true);
    OpenOptions o;
    o.cache_bytes = 0;  // blocks come from the parent, whose cache serves repeats
    o.nthreads = nthreads();
    AnyArray view = detail::computed_array(
        f.type, shape, co, {}, frame().name() + " field '" + name + "'", o,
        [&](const Grid& vg) { return std::make_shared<FieldOrigin>(*this, f, vg); });
    detail::ArrayCore& vc = EngineAccess::writable_core(view);
    vc.set_field_target({core_, {f.offset, f.width}, static_cast<int>(f.sub.size())});
    return view;
}

void AnyArray::write_field(const std::string& name, const Selection& sel, ByteSpan data) {
    field(name).write(sel, data);
}

}  // namespace b2nd

namespace b2nd::detail {

void rows_into_block(const std::uint8_t* rows,
                     const Shape& count,
                     const Shape& block_shape,
                     std::int64_t item,
                     std::uint8_t* into) {
    const int nd = static_cast<int>(count.size());
    std::int64_t n = 1;
    for (const std::int64_t c : count) {
        n *= c;
    }
    if (n == 0) {
        return;
    }
    const std::int64_t row = count[static_cast<std::size_t>(nd - 1)];
    std::int64_t idx[kMaxNdim] = {};
    for (std::int64_t k = 0; k < n; k += row) {
        std::int64_t off = 0;
        for (int d = 0; d < nd; ++d) {
            off = off * block_shape[static_cast<std::size_t>(d)] + idx[d];
        }
        std::memcpy(into + off * item, rows + k * item, static_cast<std::size_t>(row * item));
        for (int d = nd - 2; d >= 0; --d) {
            if (++idx[d] < count[static_cast<std::size_t>(d)]) {
                break;
            }
            idx[d] = 0;
        }
    }
}

Box block_region(const Grid& g, std::int64_t ci, std::int64_t block) {
    const int nd = g.ndim();
    std::int64_t cc[kMaxNdim] = {};
    g.chunk_coords(ci, cc);
    Box b = Box::region(Shape(static_cast<std::size_t>(nd)), Shape(static_cast<std::size_t>(nd)));
    std::int64_t rest = block;
    for (int d = nd - 1; d >= 0; --d) {
        const auto u = static_cast<std::size_t>(d);
        const std::int64_t bc = rest % g.blocks_in(d);
        rest /= g.blocks_in(d);
        b.start[u] = cc[d] * g.chunk_shape()[u] + bc * g.block_shape()[u];
        const std::int64_t chunk_end = std::min(g.shape()[u], (cc[d] + 1) * g.chunk_shape()[u]);
        b.count[u] =
            std::max<std::int64_t>(0, std::min(g.block_shape()[u], chunk_end - b.start[u]));
    }
    return b;
}

void ArrayCore::write_to_parent(const SelectionPlan& plan,
                                const std::uint8_t* src,
                                const std::int64_t* src_strides) {
    const FieldTarget& t = *field_target_;
    ElementPart part = t.part;
    if (!plan.part().whole()) {  // a field of this field
        part = {t.part.offset + plan.part().offset, plan.part().width};
    }
    const std::int64_t pisz = t.parent->grid().itemsize();
    if (t.sub_ndim == 0) {
        SelectionPlan p = plan;
        t.parent->write(p.with_part(part, pisz), src, src_strides);
        return;
    }
    // A sub-array field: whole sub-arrays only, a box in the parent's dimensions.
    const int nd = t.parent->grid().ndim();
    const Shape& sub = grid().shape();
    bool whole = plan.kind() == SelectionPlan::Kind::box && plan.part().whole();
    if (whole) {
        const Box& b = plan.box();
        for (int d = nd; d < b.ndim(); ++d) {
            const auto u = static_cast<std::size_t>(d);
            whole = whole && b.start[u] == 0 && b.step[u] == 1 && b.count[u] == sub[u];
        }
    }
    if (!whole) {
        throw UsageError(where() +
                         ": a sub-array field is written by whole sub-arrays (a box covering "
                         "its last " +
                         num(t.sub_ndim) + " dimensions)");
    }
    Box b = plan.box();
    b.start.resize(static_cast<std::size_t>(nd));
    b.count.resize(static_cast<std::size_t>(nd));
    b.step.resize(static_cast<std::size_t>(nd));
    std::vector<std::int64_t> strides;
    if (src_strides != nullptr) {
        // Each element's sub-array must lie in C order in the source, as the field holds it.
        const std::int64_t item = grid().itemsize();
        const Shape inner(sub.end() - t.sub_ndim, sub.end());
        const std::vector<std::int64_t> c = c_order_strides(inner, item);
        for (int k = 0; k < t.sub_ndim; ++k) {
            if (inner[static_cast<std::size_t>(k)] > 1 &&
                src_strides[nd + k] != c[static_cast<std::size_t>(k)]) {
                throw UsageError(where() +
                                 ": a sub-array field is written from data whose "
                                 "sub-arrays are in C order");
            }
        }
        strides.assign(src_strides, src_strides + nd);
    }
    t.parent->write(SelectionPlan::of_box(std::move(b)).with_part(part, pisz), src,
                    src_strides != nullptr ? strides.data() : nullptr);
}

}  // namespace b2nd::detail
