// Boolean masks (include/b2nd/mask.hpp), read and written slab by slab as select/mask_plan.hpp
// plans them: a slab's true elements are read as points, or, where most are true, its box is read
// and the true elements kept.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>

#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>
#include <b2nd/mask.hpp>
#include <b2nd/parallel.hpp>

#include "../detail/text.hpp"
#include "../select/mask_plan.hpp"
#include "../select/strided_copy.hpp"

namespace b2nd {

namespace {

using detail::append_true_coords;
using detail::count_true;
using detail::row_slabs;
using detail::Slab;
using detail::slab_box;

/// A slab whose share of true elements is at least 1 / kDenseRatio is decoded whole; a sparser
/// one reads its elements as points.
constexpr std::int64_t kDenseRatio = 16;

void require_mask(const AnyArray& a, const Mask& m) {
    if (m.shape != a.shape()) {
        throw UsageError(detail::quoted_path(a.name()) + ": a mask of shape " + to_string(m.shape) +
                         " for an array of shape " + to_string(a.shape()));
    }
    if (!m.region) {
        throw UsageError(detail::quoted_path(a.name()) + ": a mask without a region function");
    }
}

/// Copies one element of `isz` bytes (fixed-size copies for the usual sizes).
inline void copy_element(std::uint8_t* dst, const std::uint8_t* src, std::int64_t isz) {
    switch (isz) {
        case 1:
            *dst = *src;
            break;
        case 2:
            std::memcpy(dst, src, 2);
            break;
        case 4:
            std::memcpy(dst, src, 4);
            break;
        case 8:
            std::memcpy(dst, src, 8);
            break;
        default:
            std::memcpy(dst, src, static_cast<std::size_t>(isz));
    }
}

/// Copies the `ntrue` elements of `a` in `box` whose mask bytes `mb` are true to out, in order.
void gather(const AnyArray& a,
            const Box& box,
            const std::uint8_t* mb,
            std::int64_t ntrue,
            std::uint8_t* out) {
    if (ntrue == 0) {
        return;
    }
    const std::int64_t n = box.size();
    const std::int64_t isz = a.itemsize();
    const auto nd = static_cast<std::size_t>(box.ndim());
    if (ntrue * kDenseRatio >= n) {
        std::vector<std::uint8_t> values(static_cast<std::size_t>(n * isz));
        a.read(box, values.data(), values.size());
        std::uint8_t* o = out;
        for (std::int64_t i = 0; i < n; ++i) {
            if (mb[i] != 0) {
                copy_element(o, values.data() + i * isz, isz);
                o += isz;
            }
        }
        return;
    }
    std::vector<std::int64_t> coords;
    coords.reserve(static_cast<std::size_t>(ntrue) * nd);
    append_true_coords(box, mb, coords);
    a.read_points(coords.data(), static_cast<std::size_t>(ntrue), out);
}

/// The true elements of each slab, in order, as sink(bytes, count). Slabs are gathered a few
/// at a time in parallel (one per thread), then handed to the sink in order.
void for_each_masked(const AnyArray& a,
                     const Mask& m,
                     const std::function<void(const std::uint8_t*, std::int64_t)>& sink) {
    require_mask(a, m);
    const std::vector<Slab> slabs = row_slabs(a.grid());
    const auto batch = static_cast<std::size_t>(std::max(1, a.nthreads()));
    struct Gathered {
        std::vector<std::uint8_t> values;
        std::int64_t n = 0;
    };
    std::vector<Gathered> got(batch);
    for (std::size_t first = 0; first < slabs.size(); first += batch) {
        const std::size_t count = std::min(batch, slabs.size() - first);
        parallel_for(count, a.nthreads(), [&](std::size_t k) {
            const Box box = slab_box(a.shape(), slabs[first + k]);
            std::vector<std::uint8_t> mb(static_cast<std::size_t>(box.size()));
            m.region(box, mb.data());
            Gathered& g = got[k];
            g.n = count_true(mb.data(), box.size());
            g.values.resize(static_cast<std::size_t>(g.n * a.itemsize()));
            gather(a, box, mb.data(), g.n, g.values.data());
        });
        for (std::size_t k = 0; k < count; ++k) {
            if (got[k].n > 0) {
                sink(got[k].values.data(), got[k].n);
            }
        }
    }
}

}  // namespace

Mask Mask::of(const std::uint8_t* data, const Shape& shape) {
    return of_bytes(data, static_cast<std::size_t>(-1), shape, nullptr);
}

Mask Mask::of_bytes(const void* bytes,
                    std::size_t size,
                    const Shape& shape,
                    std::shared_ptr<const void> keep) {
    std::int64_t n = 1;
    for (const std::int64_t e : shape) {
        if (e < 0 || format::mul_overflows(n, e, &n)) {
            throw UsageError("a mask of shape " + to_string(shape) + ": invalid shape");
        }
    }
    if (size != static_cast<std::size_t>(-1) && size != static_cast<std::size_t>(n)) {
        throw UsageError("a mask of " + std::to_string(size) + " bytes for shape " +
                         to_string(shape) + ", which has " + std::to_string(n) + " elements");
    }
    const auto* data = static_cast<const std::uint8_t*>(bytes);
    Mask m;
    m.shape = shape;
    m.region = [data, shape, keep = std::move(keep)](const Box& box, std::uint8_t* out) {
        detail::StridedBox b;
        b.ndim = box.ndim();
        std::int64_t src = 1, dst = 1;
        std::int64_t offset = 0;
        for (int d = b.ndim - 1; d >= 0; --d) {
            const auto u = static_cast<std::size_t>(d);
            b.extent[d] = box.count[u];
            b.src_stride[d] = src;
            b.dst_stride[d] = dst;
            offset += box.start[u] * src;
            src *= shape[u];
            dst *= box.count[u];
        }
        detail::copy_strided(b, data + offset, out, 1);
    };
    return m;
}

Mask Mask::of(const AnyArray& bools) {
    if (bools.dtype().kind() != DType::Kind::boolean || bools.itemsize() != 1) {
        throw UsageError(detail::quoted_path(bools.name()) +
                         ": a mask needs dtype bool ('|b1'), not '" + bools.dtype().str() + "'");
    }
    Mask m;
    m.shape = bools.shape();
    m.region = [bools](const Box& box, std::uint8_t* out) {
        bools.read(box, out, static_cast<std::size_t>(box.size()));
    };
    return m;
}

std::uint64_t Mask::count(int nthreads) const {
    const std::vector<Slab> slabs = row_slabs(shape, 1, 1);
    std::atomic<std::uint64_t> total{0};
    parallel_for(slabs.size(), nthreads, [&](std::size_t k) {
        const Box box = slab_box(shape, slabs[k]);
        std::vector<std::uint8_t> mb(static_cast<std::size_t>(box.size()));
        region(box, mb.data());
        total += static_cast<std::uint64_t>(count_true(mb.data(), box.size()));
    });
    return total.load();
}

std::vector<std::uint8_t> AnyArray::read_masked(const Mask& mask) const {
    std::vector<std::uint8_t> out;
    for_each_masked(*this, mask, [&](const std::uint8_t* p, std::int64_t n) {
        out.insert(out.end(), p, p + n * itemsize());
    });
    return out;
}

void AnyArray::read_masked(
    const Mask& mask, const std::function<void(const std::uint8_t*, std::int64_t)>& sink) const {
    for_each_masked(*this, mask, sink);
}

void AnyArray::write_masked(const Mask& mask, ByteSpan data) {
    require_mask(*this, mask);
    const std::int64_t isz = itemsize();
    if (data.size() == static_cast<std::size_t>(isz)) {
        // One value: every chunk holding a true element is rebuilt, in parallel; memory stays
        // at a chunk and its mask per thread.
        const Grid& g = grid();
        std::vector<char> touched(static_cast<std::size_t>(g.nchunks()));
        parallel_for(touched.size(), nthreads(), [&](std::size_t c) {
            const Box box = g.chunk_box(static_cast<std::int64_t>(c));
            std::vector<std::uint8_t> mb(static_cast<std::size_t>(box.size()));
            mask.region(box, mb.data());
            touched[c] = count_true(mb.data(), box.size()) > 0 ? 1 : 0;
        });
        std::vector<std::int64_t> ids;
        for (std::size_t c = 0; c < touched.size(); ++c) {
            if (touched[c] != 0) {
                ids.push_back(static_cast<std::int64_t>(c));
            }
        }
        const std::vector<std::uint8_t> value(data.begin(), data.end());
        write_chunks(ids, [&](std::int64_t, const Box& region, std::uint8_t* out) {
            read(region, out, static_cast<std::size_t>(region.size() * isz));
            std::vector<std::uint8_t> mb(static_cast<std::size_t>(region.size()));
            mask.region(region, mb.data());
            for (std::int64_t i = 0; i < region.size(); ++i) {
                if (mb[static_cast<std::size_t>(i)] != 0) {
                    std::memcpy(out + i * isz, value.data(), static_cast<std::size_t>(isz));
                }
            }
        });
        return;
    }
    // Data for each true element, in C order: the points, then one point write. The mask is
    // read slab by slab, and no further once it has more true elements than the data.
    const std::uint64_t given = data.size() / static_cast<std::uint64_t>(isz);
    std::uint64_t n = 0;
    std::vector<std::int64_t> coords;
    std::vector<std::uint8_t> mb;
    for (const Slab& s : row_slabs(grid())) {
        if (n > given) {
            break;
        }
        const Box box = slab_box(shape(), s);
        mb.resize(static_cast<std::size_t>(box.size()));
        mask.region(box, mb.data());
        n += static_cast<std::uint64_t>(count_true(mb.data(), box.size()));
        append_true_coords(box, mb.data(), coords);
    }
    if (n != given || data.size() % static_cast<std::uint64_t>(isz) != 0) {
        throw UsageError(detail::quoted_path(path()) + ": a masked write of " +
                         (n > given ? "more than " + std::to_string(given) : std::to_string(n)) +
                         " elements needs data of that many elements (or one), not " +
                         std::to_string(data.size()) + " bytes");
    }
    write_points(coords.data(), static_cast<std::size_t>(n), data);
}

void select_into(AnyArray& out, const AnyArray& a, const Mask& mask) {
    require_mask(a, mask);
    if (out.ndim() != 1 || out.dtype() != a.dtype()) {
        throw UsageError(detail::quoted_path(out.name()) +
                         ": select_into needs a 1-d array of dtype '" + a.dtype().str() +
                         "', not shape " + to_string(out.shape()) + " of dtype '" +
                         out.dtype().str() + "'");
    }
    // The true elements before each slab.
    const std::vector<Slab> slabs = row_slabs(a.grid());
    std::vector<std::int64_t> before(slabs.size() + 1, 0);
    parallel_for(slabs.size(), a.nthreads(), [&](std::size_t k) {
        const Box box = slab_box(a.shape(), slabs[k]);
        std::vector<std::uint8_t> mb(static_cast<std::size_t>(box.size()));
        mask.region(box, mb.data());
        before[k + 1] = count_true(mb.data(), box.size());
    });
    for (std::size_t k = 0; k < slabs.size(); ++k) {
        before[k + 1] += before[k];
    }
    if (before.back() != out.shape()[0]) {
        throw UsageError(detail::quoted_path(out.name()) +
                         ": select_into needs an array of length " + std::to_string(before.back()) +
                         " (the mask's true elements), not " + std::to_string(out.shape()[0]));
    }
    // Each slab's true elements are gathered once, by the first output chunk that needs them,
    // and dropped when the output chunks have taken all of them: memory stays at the slabs in
    // flight.
    const std::int64_t isz = a.itemsize();
    std::vector<std::mutex> locks(slabs.size());
    std::vector<std::shared_ptr<const std::vector<std::uint8_t>>> gathered(slabs.size());
    std::vector<std::int64_t> taken(slabs.size(), 0);
    auto values_of = [&](std::size_t k) {
        std::lock_guard<std::mutex> g(locks[k]);
        if (!gathered[k]) {
            const Box box = slab_box(a.shape(), slabs[k]);
            std::vector<std::uint8_t> mb(static_cast<std::size_t>(box.size()));
            mask.region(box, mb.data());
            const std::int64_t ntrue = before[k + 1] - before[k];
            auto v =
                std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(ntrue * isz));
            if (count_true(mb.data(), box.size()) != ntrue) {
                throw Error(detail::quoted_path(a.name()) +
                            ": the mask gave a different count of true "
                            "elements on its second reading");
            }
            gather(a, box, mb.data(), ntrue, v->data());
            gathered[k] = std::move(v);
        }
        return gathered[k];
    };
    out.write_chunks(out.all_chunks(), [&](std::int64_t, const Box& region, std::uint8_t* dst) {
        const std::int64_t o0 = region.start[0];
        const std::int64_t o1 = o0 + region.count[0];
        // The slabs whose true elements overlap [o0, o1).
        auto k = static_cast<std::size_t>(std::upper_bound(before.begin(), before.end(), o0) -
                                          before.begin() - 1);
        for (; k < slabs.size() && before[k] < o1; ++k) {
            const std::int64_t lo = std::max(o0, before[k]) - before[k];
            const std::int64_t hi = std::min(o1, before[k + 1]) - before[k];
            if (hi <= lo) {
                continue;
            }
            const auto v = values_of(k);
            std::memcpy(dst + (before[k] + lo - o0) * isz, v->data() + lo * isz,
                        static_cast<std::size_t>((hi - lo) * isz));
            std::lock_guard<std::mutex> g(locks[k]);
            taken[k] += hi - lo;
            if (taken[k] == before[k + 1] - before[k]) {
                gathered[k].reset();
            }
        }
    });
}

AnyArray compress_where(const AnyArray& a,
                        const Mask& mask,
                        const std::string& path,
                        const CreateOptions& options) {
    require_mask(a, mask);
    const auto n = static_cast<std::int64_t>(mask.count(a.nthreads()));
    AnyArray out = AnyArray::create(path, a.dtype(), {n}, options);
    select_into(out, a, mask);
    return out;
}

}  // namespace b2nd
