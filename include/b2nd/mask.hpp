// Boolean masks: a[mask] and a[mask] = v, with the mask in memory, in a bool array on disk, or
// computed region by region (an xtensor expression: see b2nd/xtensor/select.hpp).
//
//   auto m = b2nd::Mask::of(b2nd::AnyArray::open("valid.b2nd"));    // dtype bool, a's shape
//   std::vector<float> v = t.read_masked(m);        // the true elements, C order
//   t.write_masked(m, 0.0f);                        // one value to every true element
//   b2nd::compress_where(t, m, "valid_values.b2nd"); // a[mask] into a new 1-d array, out of core
//
//   std::vector<std::uint8_t> bytes(t.size());      // or any contiguous one-byte container
//   auto m2 = b2nd::Mask::of(bytes, t.shape());
//
// The mask is read in slabs of whole rows along the first axis (a few MiB of mask at a time) and
// never held whole. Selected elements are read block by block: a sparse slab reads its elements
// as points (each touched block decoded once), a dense one decodes the slab. A mask may be read
// more than once (counting, then selecting); its region function must give the same answer each
// time.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <b2nd/any_array.hpp>

namespace b2nd {

/// A boolean selection of an array's elements (a[mask]): bytes in memory, a bool array read in
/// slabs, or an xtensor expression; reads and writes stream it slab by slab.
struct Mask {
    /// The mask's shape (must be the array's).
    Shape shape;
    /// Writes the mask over `box` (steps of 1, inside shape) into out, C order, one byte per
    /// element, nonzero meaning true. Called from several threads at once.
    std::function<void(const Box& box, std::uint8_t* out)> region;

    /// A mask in memory (C order, one byte per element, nonzero is true); `data` must outlive
    /// the mask.
    static Mask of(const std::uint8_t* data, const Shape& shape);
    /// The same from the bytes of any contiguous container of one-byte elements
    /// (std::vector<std::uint8_t>, std::vector<char>, std::string, std::array<bool, N>, ...).
    /// A container given by name is referred to (it must outlive the mask); a temporary is
    /// moved into the mask. \throws UsageError when its size is not the shape's element count
    template <class C, class = std::enable_if_t<sizeof(*std::data(std::declval<C&>())) == 1>>
    static Mask of(C&& bytes, const Shape& shape) {
        using Plain = std::remove_cv_t<std::remove_reference_t<C>>;
        std::shared_ptr<const void> keep;
        const Plain* held = &bytes;
        if constexpr (!std::is_lvalue_reference_v<C>) {
            auto owned = std::make_shared<const Plain>(std::move(bytes));
            held = owned.get();
            keep = std::move(owned);
        }
        return of_bytes(static_cast<const void*>(std::data(*held)), std::size(*held), shape,
                        std::move(keep));
    }
    /// A mask stored in an array of dtype bool ('|b1').
    /// \throws UsageError naming the file when its dtype is not bool
    static Mask of(const AnyArray& bools);
    /// A mask stored in an array of dtype bool.
    static Mask of(AnyArray& bools) { return of(static_cast<const AnyArray&>(bools)); }

    /// The number of true elements (one pass over the mask, in parallel).
    std::uint64_t count(int nthreads = 0) const;

private:
    static Mask of_bytes(const void* data,
                         std::size_t size,
                         const Shape& shape,
                         std::shared_ptr<const void> keep);
};

/// Writes a[mask] (the true elements in C order) into a new 1-d array at `path`, chunk by chunk:
/// memory stays at a few chunks and slabs whatever the sizes. Returns the new array.
/// \throws UsageError for a mask of the wrong shape
AnyArray compress_where(const AnyArray& a,
                        const Mask& mask,
                        const std::string& path,
                        const CreateOptions& options = {});

/// Writes a[mask] into `out`, an existing writable 1-d array of a's dtype whose length is the
/// mask's count; one commit.
void select_into(AnyArray& out, const AnyArray& a, const Mask& mask);

}  // namespace b2nd
