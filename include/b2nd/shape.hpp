// Shapes, boxes and C-order index arithmetic: the vocabulary every layer above storage uses to
// talk about parts of an N-dimensional array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace b2nd {

/// Sizes or coordinates, one per dimension (ndim 0 to 16).
using Shape = std::vector<std::int64_t>;

/// Most dimensions a b2nd array may have (c-blosc2's B2ND_MAX_DIM).
inline constexpr int kMaxNdim = 16;

/// "(3, 4, 5)", "(7,)" or "()".
std::string to_string(const Shape& s);

/// Whether an array of shape `from` broadcasts to `to` by NumPy's rules: its dimensions align
/// with the last ones of `to`, and each equals the one it meets or is 1.
bool broadcasts_to(const Shape& from, const Shape& to) noexcept;

/// A strided box of an array: along dimension d, the count[d] elements start[d],
/// start[d] + step[d], ... (step may be negative, never 0).
struct Box {
    Shape start;  ///< the first element's coordinates
    Shape count;  ///< elements along each dimension
    Shape step;   ///< the stride along each dimension (negative: backwards; never 0)

    /// The whole of an array of this shape.
    static Box whole(const Shape& shape);
    /// A box with step 1.
    static Box region(Shape start, Shape count);
    /// The number of dimensions.
    int ndim() const noexcept { return static_cast<int>(start.size()); }
    /// Number of elements.
    std::int64_t size() const noexcept;
    /// "[0:10, 5:6, 7:1:-2]"
    std::string str() const;
};

/// Why `box` is not a valid box of an array of `shape`, or "".
std::string check_box(const Shape& shape, const Box& box);

/// C-order strides of an array of `extent` (n dimensions), in units of `unit` (1: elements,
/// itemsize: bytes), into out[0, n). The last dimension has stride `unit`.
template <class Extent, class Out>
void c_strides(const Extent* extent, std::size_t n, std::int64_t unit, Out* out) noexcept {
    std::int64_t s = unit;
    for (std::size_t d = n; d-- > 0;) {
        out[d] = static_cast<Out>(s);
        s *= static_cast<std::int64_t>(extent[d]);
    }
}

/// C-order strides of `shape` in units of `unit`.
inline Shape c_strides(const Shape& shape, std::int64_t unit = 1) {
    Shape out(shape.size());
    c_strides(shape.data(), shape.size(), unit, out.data());
    return out;
}

/// Steps the multi-index idx[0, n) to the next position of a C-order walk over `extent` (the
/// last dimension fastest). Returns false, with idx back at all zeros, after the last position.
template <class Index, class Extent>
bool next_index(Index* idx, const Extent* extent, std::size_t n) noexcept {
    for (std::size_t d = n; d-- > 0;) {
        if (++idx[d] < static_cast<Index>(extent[d])) {
            return true;
        }
        idx[d] = 0;
    }
    return false;
}

}  // namespace b2nd
