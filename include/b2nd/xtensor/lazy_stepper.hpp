// The stepper of a lazy view (lazy.hpp): how xtensor walks a LazyView element by element, a
// decoded slab of rows at a time. Part of the xtensor expression protocol; included by lazy.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <b2nd/memory.hpp>
#include <b2nd/xtensor/xtensor_includes.hpp>

namespace b2nd {

template <class T>
class LazyView;

namespace xtensor_detail {

/// Rows [first, first + rows) of a view (along its first dimension), decoded, C order.
struct Slab {
    std::int64_t first = 0;
    std::int64_t rows = 0;
    tracked_vector<std::uint8_t> bytes;
};

}  // namespace xtensor_detail

/// \cond XTENSOR_PROTOCOL
/// Steps through a LazyView in any order xtensor asks for; keeps the slab it is in alive.
///
/// Positioning is lazy: moves only update the index, and the slab is looked up (and decoded)
/// when an element is read. xtensor builds steppers inside noexcept functions, so a decode error
/// must surface from operator*, where it propagates as a b2nd::Error, and not from construction.
template <class T>
class LazyViewStepper {
public:
    using view_type = LazyView<T>;
    using value_type = T;
    using reference = T;
    using pointer = const T*;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using shape_type = typename view_type::shape_type;

    LazyViewStepper() = default;
    LazyViewStepper(const view_type* v, size_type offset, bool end)
        : p_(v), offset_(offset), index_(v->dimension(), 0) {
        if (end) {
            to_end(xt::layout_type::row_major);
        }
    }

    reference operator*() const {
        if (stale_) {
            locate();
        }
        T v;
        std::memcpy(&v, base_ + pos_ * static_cast<std::ptrdiff_t>(sizeof(T)), sizeof(T));
        return v;
    }

    void step(size_type dim, size_type n = 1) { move(dim, static_cast<std::ptrdiff_t>(n)); }
    void step_back(size_type dim, size_type n = 1) { move(dim, -static_cast<std::ptrdiff_t>(n)); }
    void reset(size_type dim) {
        if (dim >= offset_) {
            move(dim, -static_cast<std::ptrdiff_t>(index_[dim - offset_]));
        }
    }
    void reset_back(size_type dim) {
        if (dim >= offset_) {
            const size_type d = dim - offset_;
            move(dim, static_cast<std::ptrdiff_t>(p_->shape()[d]) - 1 -
                          static_cast<std::ptrdiff_t>(index_[d]));
        }
    }
    void to_begin() {
        std::fill(index_.begin(), index_.end(), 0);
        stale_ = true;
    }
    /// One step past the last element along the last dimension, as xtensor's steppers do, so
    /// that stepping back from the end lands on the last element.
    void to_end(xt::layout_type) {
        const auto& shape = p_->shape();
        for (std::size_t d = 0; d < index_.size(); ++d) {
            index_[d] = shape[d] > 0 ? shape[d] - 1 : 0;
        }
        if (!index_.empty() && shape.back() != 1) {
            ++index_.back();
        }
        stale_ = true;
    }

private:
    void move(size_type dim, std::ptrdiff_t n) {
        if (dim < offset_ || n == 0) {
            return;
        }
        const size_type d = dim - offset_;
        if (p_->shape()[d] == 1) {
            return;  // broadcast along this dimension (xtensor steps it with the result's)
        }
        index_[d] = static_cast<size_type>(static_cast<std::ptrdiff_t>(index_[d]) + n);
        if (d == 0) {
            stale_ = true;  // maybe another slab: found on the next read
        } else {
            pos_ += n * p_->stride(d);
        }
    }
    /// Finds the slab of the current row (decoding it if needed) and the position in it.
    void locate() const {
        const auto row = index_.empty() ? std::int64_t{0} : static_cast<std::int64_t>(index_[0]);
        if (!slab_ || row < slab_->first || row >= slab_->first + slab_->rows) {
            slab_ = p_->slab(row);
        }
        base_ = slab_->bytes.data();
        pos_ = 0;
        for (std::size_t d = 0; d < index_.size(); ++d) {
            pos_ += (d == 0 ? row - slab_->first : static_cast<std::ptrdiff_t>(index_[d])) *
                    p_->stride(d);
        }
        stale_ = false;
    }

    const view_type* p_ = nullptr;
    size_type offset_ = 0;
    std::vector<size_type> index_;
    mutable std::shared_ptr<const xtensor_detail::Slab> slab_;
    mutable const std::uint8_t* base_ = nullptr;
    mutable std::ptrdiff_t pos_ = 0;  // elements from base_ (meaningful when !stale_)
    mutable bool stale_ = true;
};
/// \endcond

}  // namespace b2nd
