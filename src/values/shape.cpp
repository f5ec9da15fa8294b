#include <b2nd/format/checked_math.hpp>
#include <b2nd/shape.hpp>

#include "../detail/text.hpp"

namespace b2nd {

using detail::num;

std::string to_string(const Shape& s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) {
        out += (i > 0 ? ", " : "") + num(s[i]);
    }
    return out + (s.size() == 1 ? ",)" : ")");
}

Box Box::whole(const Shape& shape) {
    return region(Shape(shape.size(), 0), shape);
}

Box Box::region(Shape start, Shape count) {
    Box b;
    b.step.assign(start.size(), 1);
    b.start = std::move(start);
    b.count = std::move(count);
    return b;
}

std::int64_t Box::size() const noexcept {
    std::int64_t n = 1;
    for (std::int64_t c : count) {
        n *= c;
    }
    return n;
}

std::string Box::str() const {
    std::string s = "[";
    for (std::size_t d = 0; d < start.size(); ++d) {
        s += d > 0 ? ", " : "";
        const std::int64_t last = start[d] + (count[d] - 1) * step[d];
        if (count[d] == 0) {
            s += num(start[d]) + ":" + num(start[d]);
        } else if (step[d] == 1) {
            s += num(start[d]) + ":" + num(last + 1);
        } else {
            s += num(start[d]) + ":" + (last + step[d] < 0 ? std::string() : num(last + step[d])) +
                 ":" + num(step[d]);
        }
    }
    return s + "]";
}

std::string check_box(const Shape& shape, const Box& box) {
    const std::size_t n = shape.size();
    if (box.start.size() != n || box.count.size() != n || box.step.size() != n) {
        return "a box of " + num(static_cast<std::int64_t>(box.start.size())) +
               " dimensions for an array of " + num(static_cast<std::int64_t>(n));
    }
    for (std::size_t d = 0; d < n; ++d) {
        const std::string where =
            " in dimension " + num(static_cast<std::int64_t>(d)) + " (size " + num(shape[d]) + ")";
        if (box.count[d] < 0) {
            return "negative count " + num(box.count[d]) + where;
        }
        if (box.step[d] == 0 || box.step[d] == INT64_MIN) {
            return "invalid step " + num(box.step[d]) + where;
        }
        if (box.count[d] == 0) {
            continue;
        }
        std::int64_t span = 0, last = 0;
        const bool overflow = format::mul_overflows(box.count[d] - 1, box.step[d], &span) ||
                              format::add_overflows(box.start[d], span, &last);
        if (box.start[d] < 0 || box.start[d] >= shape[d] || overflow || last < 0 ||
            last >= shape[d]) {
            return "elements " + num(box.start[d]) + " + k * " + num(box.step[d]) + " for k < " +
                   num(box.count[d]) + " are out of range" + where;
        }
    }
    return {};
}

bool broadcasts_to(const Shape& from, const Shape& to) noexcept {
    if (from.size() > to.size()) {
        return false;
    }
    const std::size_t off = to.size() - from.size();
    for (std::size_t k = 0; k < from.size(); ++k) {
        if (from[k] != to[off + k] && from[k] != 1) {
            return false;
        }
    }
    return true;
}

}  // namespace b2nd
