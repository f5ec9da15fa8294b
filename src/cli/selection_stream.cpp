#include "selection_stream.hpp"

#include <algorithm>

#include <b2nd/error.hpp>

namespace b2nd::cli {

Shown Shown::all(const Resolved& r) {
    return {r.shape, std::vector<std::int64_t>(r.shape.size(), -1)};
}

Shown Shown::summary(const Resolved& r, std::int64_t edge) {
    Shown s = all(r);
    std::uint64_t count = 1;
    for (std::size_t d = 0; d < r.shape.size(); ++d) {
        if (r.shape[d] > 2 * edge) {
            s.cut[d] = edge;
            s.shape[d] = 2 * edge;
        }
        if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(s.shape[d]), &count) ||
            count > static_cast<std::uint64_t>(INT64_MAX)) {
            throw UsageError("a summary with " + std::to_string(edge) +
                             " items at each edge shows too many elements");
        }
    }
    return s;
}

std::int64_t Shown::size() const noexcept {
    std::int64_t n = 1;
    for (const std::int64_t e : shape) {
        n *= e;
    }
    return n;
}

void for_each_slab(const AnyArray& arr,
                   const Resolved& r,
                   const Shown& shown,
                   std::int64_t budget_bytes,
                   const std::function<void(const std::uint8_t* items, std::int64_t n)>& fn) {
    const std::size_t nd = shown.shape.size();
    const std::int64_t total = shown.size();
    if (total == 0) {
        return;
    }
    // The array index of shown position k along result axis rd (an array axis of the result).
    const auto array_index = [&](std::size_t rd, std::int64_t k) {
        const auto u = static_cast<std::size_t>(r.dims[rd]);
        const bool tail = shown.cut[rd] >= 0 && k >= shown.cut[rd];
        const std::int64_t pos = tail ? r.shape[rd] - shown.shape[rd] + k : k;
        return r.orthogonal() ? r.lists[u][static_cast<std::size_t>(pos)]
                              : r.box.start[u] + pos * r.box.step[u];
    };
    // Array axes the selection drops keep their one index.
    std::vector<std::vector<std::int64_t>> idx(static_cast<std::size_t>(arr.ndim()));
    for (std::size_t u = 0; u < idx.size(); ++u) {
        idx[u] = {r.orthogonal() ? r.lists[u][0] : r.box.start[u]};
    }
    // The split axis k: the outermost one such that the axes after it hold at most `budget`
    // elements together (`inner`); it is read in slabs of `rows` positions.
    const std::int64_t isz = std::max<std::int64_t>(1, arr.itemsize());
    const std::int64_t budget = std::max<std::int64_t>(1, budget_bytes / isz);
    std::size_t k = nd == 0 ? 0 : nd - 1;
    std::int64_t inner = 1;
    while (k > 0 && shown.shape[k] <= budget / inner) {
        inner *= shown.shape[k--];
    }
    if (nd == 0) {
        std::vector<std::uint8_t> one(static_cast<std::size_t>(isz));
        arr.read_orthogonal(idx, one.data(), one.size());
        fn(one.data(), 1);
        return;
    }
    for (std::size_t d = k + 1; d < nd; ++d) {
        if (r.dims[d] >= 0) {
            auto& list = idx[static_cast<std::size_t>(r.dims[d])];
            list.clear();
            for (std::int64_t i = 0; i < shown.shape[d]; ++i) {
                list.push_back(array_index(d, i));
            }
        }
    }
    const std::int64_t rows = std::max<std::int64_t>(1, budget / inner);
    std::vector<std::uint8_t> buf(
        static_cast<std::size_t>(std::min(rows, shown.shape[k]) * inner * isz));
    std::vector<std::int64_t> outer(k, 0);  // position along the axes before k
    for (;;) {
        for (std::size_t d = 0; d < k; ++d) {
            if (r.dims[d] >= 0) {
                idx[static_cast<std::size_t>(r.dims[d])] = {array_index(d, outer[d])};
            }
        }
        for (std::int64_t a = 0; a < shown.shape[k]; a += rows) {
            const std::int64_t b = std::min(a + rows, shown.shape[k]);
            if (r.dims[k] >= 0) {
                auto& list = idx[static_cast<std::size_t>(r.dims[k])];
                list.clear();
                for (std::int64_t i = a; i < b; ++i) {
                    list.push_back(array_index(k, i));
                }
            }
            const std::int64_t n = (b - a) * inner;
            arr.read_orthogonal(idx, buf.data(), static_cast<std::size_t>(n * isz));
            fn(buf.data(), n);
        }
        std::size_t d = k;
        while (d > 0 && ++outer[d - 1] == shown.shape[d - 1]) {
            outer[--d] = 0;
        }
        if (d == 0) {
            return;
        }
    }
}

}  // namespace b2nd::cli
