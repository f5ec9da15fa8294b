// Boolean masks: a[mask] and a[mask] = v, with the mask in memory, in a bool array on disk, or
// computed region by region (an xtensor expression: see b2nd/xtensor/select.hpp).
//
//   auto m = b2nd::Mask::of(b2nd::AnyArray::open("valid.b2nd"));    // dtype bool, a's shape
//   std::vector<float> v = t.read_masked(m);        // the true elements, C order
//   t.write_masked(m, 0.0f);                        // one value to every true element
//   b2nd::compress_where(t, m, "valid_values.b2nd"); // a[mask] into a new 1-d array, out of core
//
// The mask is read in slabs of whole rows along the first axis (a few MiB of mask at a time) and
// never held whole. Selected elements are read block by block: a sparse slab reads its elements
// as points (each touched block decoded once), a dense one decodes the slab. A mask may be read
// more than once (counting, then selecting); its region function must give the same answer each
// time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <b2nd/any_array.hpp>

namespace b2nd {

struct Mask {
    /// The mask's shape (must be the array's).
    Shape shape;
    /// Writes the mask over `box` (steps of 1, inside shape) into out, C order, one byte per
    /// element, nonzero meaning true. Called from several threads at once.
    std::function<void(const Box& box, std::uint8_t* out)> region;

    /// A mask in memory (C order, one byte per element, nonzero is true); `data` must outlive
    /// the mask.
    static Mask of(const std::uint8_t* data, const Shape& shape);
    /// A mask stored in an array of dtype bool ('|b1').
    /// \throws UsageError naming the file when its dtype is not bool
    static Mask of(const AnyArray& bools);

    /// The number of true elements (one pass over the mask, in parallel).
    std::uint64_t count(int nthreads = 0) const;
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
