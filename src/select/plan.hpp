// Internal: the one description of a selection that the engine reads and writes (docs/DESIGN.md
// section 4): a selection is a value.
//
// Every kind of selection becomes a SelectionPlan before it reaches the engine: slices, steps and
// integers a strided box; index lists (NumPy's oindex) one list per dimension; point lists the
// points; masks a plan per slab (ops/mask.cpp); a field of a structured dtype any of these with
// an ElementPart. ArrayCore::read and ArrayCore::write take a plan and nothing else, so a new
// kind of selection is a new function that makes plans, here, and no change to the engine.
//
// A plan is a value planned against a shape; the engine checks it against the grid it holds
// when it runs (under its lock), so a plan made before a resize is refused, not misread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <b2nd/selection.hpp>
#include <b2nd/shape.hpp>

namespace b2nd::detail {

/// The bytes of each selected element a plan takes: the whole element (width 0), or bytes
/// [offset, offset + width) of it, width > 0 (a field of a structured dtype).
struct ElementPart {
    std::int64_t offset = 0;
    std::int64_t width = 0;  ///< 0: the whole element
    bool whole() const noexcept { return width == 0; }
};

class SelectionPlan {
public:
    enum class Kind {
        box,     ///< a strided box (negative steps walk backwards)
        lists,   ///< one index list per dimension, combined orthogonally (any order, repeats,
                 ///< negative indices from the end)
        points,  ///< n points of ndim coordinates each
    };

    /// A strided box.
    static SelectionPlan of_box(Box box);
    /// One index list per dimension, not copied: they must outlive the plan (the rvalue form
    /// keeps them).
    static SelectionPlan of_lists(const std::vector<std::vector<std::int64_t>>& lists);
    static SelectionPlan of_lists(std::vector<std::vector<std::int64_t>>&& lists);
    /// `n` points: point i at coords[i * ndim ...]. The coordinates are not copied: they must
    /// outlive the plan (or `owner` keeps them).
    static SelectionPlan of_points(const std::int64_t* coords,
                                   std::size_t n,
                                   int ndim,
                                   std::shared_ptr<const void> owner = {});
    /// What resolve() made of a Selection: its box, or its index lists (referred to; the
    /// rvalue form takes them).
    static SelectionPlan of(const Resolved& r);
    static SelectionPlan of(Resolved&& r);

    /// The same elements, taking only `part` of each. \throws UsageError when `part` does not lie
    /// within an element of `itemsize` bytes
    SelectionPlan with_part(ElementPart part, std::int64_t itemsize) const;

    Kind kind() const noexcept { return kind_; }
    const Box& box() const noexcept { return box_; }
    const std::vector<std::vector<std::int64_t>>& lists() const noexcept { return *lists_; }
    const std::int64_t* coords() const noexcept { return coords_; }
    std::size_t npoints() const noexcept { return npoints_; }
    const ElementPart& part() const noexcept { return part_; }

    /// The result's shape (C order): the box's counts, the lists' lengths, or {n}.
    Shape shape() const;
    /// Elements selected (unchecked product; the engine checks sizes against the grid).
    std::uint64_t size() const;
    /// Bytes of one result element: the part's width, or `itemsize`.
    std::int64_t element_bytes(std::int64_t itemsize) const noexcept {
        return part_.whole() ? itemsize : part_.width;
    }

private:
    Kind kind_ = Kind::box;
    Box box_;
    const std::vector<std::vector<std::int64_t>>* lists_ = nullptr;
    const std::int64_t* coords_ = nullptr;
    std::size_t npoints_ = 0;
    int ndim_ = 0;
    std::shared_ptr<const void> owner_;  // keeps lists or coordinates the plan was given
    ElementPart part_;
};

/// C-order byte strides over `shape` for elements of `element_bytes` bytes.
std::vector<std::int64_t> c_order_strides(const Shape& shape, std::int64_t element_bytes);

/// How a caller's buffer of a plan's result (shape `shape`, byte strides `strides`, null for C
/// order) is laid out: C order, one element for all (every stride 0), or other. Dimensions of
/// extent 1 never decide.
enum class Layout { c_order, one_element, strided };
Layout layout_of(const Shape& shape, const std::int64_t* strides, std::int64_t element_bytes);

}  // namespace b2nd::detail
