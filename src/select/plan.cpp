// SelectionPlan (plan.hpp): the selection kinds made into the one value the engine takes.
#include "plan.hpp"

#include <b2nd/error.hpp>

#include "../detail/text.hpp"

namespace b2nd::detail {

SelectionPlan SelectionPlan::of_box(Box box) {
    SelectionPlan p;
    p.kind_ = Kind::box;
    p.box_ = std::move(box);
    return p;
}

SelectionPlan SelectionPlan::of_lists(const std::vector<std::vector<std::int64_t>>& lists) {
    SelectionPlan p;
    p.kind_ = Kind::lists;
    p.lists_ = &lists;
    return p;
}

SelectionPlan SelectionPlan::of_lists(std::vector<std::vector<std::int64_t>>&& lists) {
    auto owned = std::make_shared<const std::vector<std::vector<std::int64_t>>>(std::move(lists));
    SelectionPlan p = of_lists(*owned);
    p.owner_ = std::move(owned);
    return p;
}

SelectionPlan SelectionPlan::of_points(const std::int64_t* coords,
                                       std::size_t n,
                                       int ndim,
                                       std::shared_ptr<const void> owner) {
    SelectionPlan p;
    p.kind_ = Kind::points;
    p.coords_ = coords;
    p.npoints_ = n;
    p.ndim_ = ndim;
    p.owner_ = std::move(owner);
    return p;
}

SelectionPlan SelectionPlan::of(const Resolved& r) {
    return r.orthogonal() ? of_lists(r.lists) : of_box(r.box);
}

SelectionPlan SelectionPlan::of(Resolved&& r) {
    return r.orthogonal() ? of_lists(std::move(r.lists)) : of_box(std::move(r.box));
}

SelectionPlan SelectionPlan::with_part(ElementPart part, std::int64_t itemsize) const {
    if (part.offset < 0 || part.width <= 0 || part.offset >= itemsize ||
        part.width > itemsize - part.offset) {
        throw UsageError("bytes [" + num(part.offset) + ", " + num(part.offset + part.width) +
                         ") are not part of an element of " + num(itemsize) + " bytes");
    }
    SelectionPlan p = *this;
    // The whole element, said explicitly, is the whole element.
    p.part_ = part.offset == 0 && part.width == itemsize ? ElementPart{} : part;
    return p;
}

Shape SelectionPlan::shape() const {
    switch (kind_) {
        case Kind::box:
            return box_.count;
        case Kind::lists: {
            Shape s;
            s.reserve(lists_->size());
            for (const auto& l : *lists_) {
                s.push_back(static_cast<std::int64_t>(l.size()));
            }
            return s;
        }
        case Kind::points:
            break;
    }
    return {static_cast<std::int64_t>(npoints_)};
}

std::uint64_t SelectionPlan::size() const {
    std::uint64_t n = 1;
    for (std::int64_t e : shape()) {
        n *= static_cast<std::uint64_t>(e);
    }
    return n;
}

std::vector<std::int64_t> c_order_strides(const Shape& shape, std::int64_t element_bytes) {
    std::vector<std::int64_t> s(shape.size());
    std::int64_t st = element_bytes;
    for (std::size_t d = shape.size(); d-- > 0;) {
        s[d] = st;
        st *= shape[d];
    }
    return s;
}

Layout layout_of(const Shape& shape, const std::int64_t* strides, std::int64_t element_bytes) {
    if (strides == nullptr) {
        return Layout::c_order;
    }
    bool c = true, zero = true;
    std::int64_t st = element_bytes;
    for (std::size_t d = shape.size(); d-- > 0;) {
        if (shape[d] != 1) {
            c = c && strides[d] == st;
            zero = zero && strides[d] == 0;
        }
        st *= shape[d];
    }
    return c ? Layout::c_order : zero ? Layout::one_element : Layout::strided;
}

}  // namespace b2nd::detail
