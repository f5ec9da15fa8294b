#include "selection_stream.hpp"

#include <algorithm>

#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>

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
        if (format::mul_overflows(count, static_cast<std::uint64_t>(s.shape[d]), &count) ||
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

SlabWalk::SlabWalk(const Resolved& r, const Shown& shown, int array_ndim, std::int64_t budget)
    : r_(r), shown_(shown), idx_(static_cast<std::size_t>(array_ndim)) {
    const std::size_t nd = shown.shape.size();
    done_ = shown.size() == 0;
    if (done_) {
        return;
    }
    boxed_ = !r.orthogonal();
    for (const std::int64_t c : shown.cut) {
        boxed_ = boxed_ && c < 0;
    }
    if (boxed_) {
        box_ = r.box;  // axes the selection drops keep their one index
    } else {
        for (std::size_t u = 0; u < idx_.size(); ++u) {
            idx_[u] = {r.orthogonal() ? r.lists[u][0] : r.box.start[u]};
        }
    }
    // The split axis: the outermost one such that the axes after it hold at most `budget`
    // elements together.
    budget = std::max<std::int64_t>(1, budget);
    k_ = nd == 0 ? 0 : nd - 1;
    while (k_ > 0 && shown.shape[k_] <= budget / inner_) {
        inner_ *= shown.shape[k_--];
    }
    rows_ = std::max<std::int64_t>(1, budget / inner_);
    for (std::size_t d = k_ + 1; d < nd; ++d) {
        select(d, 0, shown.shape[d]);
    }
    outer_.assign(k_, 0);
}

std::int64_t SlabWalk::array_index(std::size_t rd, std::int64_t k) const {
    const auto u = static_cast<std::size_t>(r_.dims[rd]);
    const bool tail = shown_.cut[rd] >= 0 && k >= shown_.cut[rd];
    const std::int64_t pos = tail ? r_.shape[rd] - shown_.shape[rd] + k : k;
    return r_.orthogonal() ? r_.lists[u][static_cast<std::size_t>(pos)]
                           : r_.box.start[u] + pos * r_.box.step[u];
}

void SlabWalk::select(std::size_t rd, std::int64_t a, std::int64_t b) {
    if (r_.dims[rd] < 0) {
        return;  // a new axis: no array axis
    }
    const auto u = static_cast<std::size_t>(r_.dims[rd]);
    if (boxed_) {
        box_.start[u] = array_index(rd, a);
        box_.count[u] = b - a;
        return;
    }
    auto& list = idx_[u];
    list.clear();
    for (std::int64_t i = a; i < b; ++i) {
        list.push_back(array_index(rd, i));
    }
}

std::int64_t SlabWalk::max_count() const noexcept {
    return shown_.shape.empty() ? 1 : std::min(rows_, shown_.shape[k_]) * inner_;
}

bool SlabWalk::next() {
    if (done_) {
        return false;
    }
    if (shown_.shape.empty()) {  // a scalar
        done_ = true;
        count_ = 1;
        return true;
    }
    if (at_ == 0) {
        for (std::size_t d = 0; d < k_; ++d) {
            select(d, outer_[d], outer_[d] + 1);
        }
    }
    const std::int64_t b = std::min(at_ + rows_, shown_.shape[k_]);
    select(k_, at_, b);
    count_ = (b - at_) * inner_;
    at_ = b;
    if (at_ == shown_.shape[k_]) {  // the next position along the axes before k
        at_ = 0;
        std::size_t d = k_;
        while (d > 0 && ++outer_[d - 1] == shown_.shape[d - 1]) {
            outer_[--d] = 0;
        }
        done_ = d == 0;
    }
    return true;
}

void SlabWalk::read(const AnyArray& arr, std::uint8_t* out) const {
    const auto bytes = static_cast<std::size_t>(count_ * arr.itemsize());
    if (boxed_) {
        arr.read(box_, out, bytes);
    } else {
        Resolved lists;
        lists.lists = idx_;
        arr.read(lists, out, bytes);
    }
}

void for_each_slab(const AnyArray& arr,
                   const Resolved& r,
                   const Shown& shown,
                   std::int64_t budget_bytes,
                   const std::function<void(const std::uint8_t* items, std::int64_t n)>& fn) {
    const std::int64_t isz = std::max<std::int64_t>(1, arr.itemsize());
    SlabWalk walk(r, shown, arr.ndim(), budget_bytes / isz);
    std::vector<std::uint8_t> buf(static_cast<std::size_t>(walk.max_count() * isz));
    while (walk.next()) {
        walk.read(arr, buf.data());
        fn(buf.data(), walk.count());
    }
}

}  // namespace b2nd::cli
