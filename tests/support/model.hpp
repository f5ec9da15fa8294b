// A model of an array's content for property tests: a plain C-order byte array updated one
// element at a time by the same operations as the array under test (writes, resizes, inserts,
// removes), with no code shared with the library.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include <b2nd/selection.hpp>

#include "data.hpp"

namespace b2nd::test {

/// The expected content of an array, updated one element at a time.
struct Model {
    Shape shape;
    std::int64_t isz;
    std::vector<std::uint8_t> data;

    Model(Shape s, std::int64_t itemsize)
        : shape(std::move(s)),
          isz(itemsize),
          data(static_cast<std::size_t>(count_of(shape) * itemsize), 0) {}

    std::int64_t flat(const Shape& idx, const Shape& of) const {
        std::int64_t f = 0;
        for (std::size_t d = 0; d < of.size(); ++d) {
            f = f * of[d] + idx[d];
        }
        return f;
    }
    /// f(index, flat) for every index of `extent`, in C order (written out, not next_index,
    /// so that the model shares nothing with the library).
    template <class F>
    static void each(const Shape& extent, F&& f) {
        const std::int64_t n = count_of(extent);
        Shape k(extent.size(), 0);
        for (std::int64_t e = 0; e < n; ++e) {
            f(k, e);
            for (std::size_t d = extent.size(); d-- > 0;) {
                if (++k[d] < extent[d]) {
                    break;
                }
                k[d] = 0;
            }
        }
    }
    void write(const Box& b, const std::vector<std::uint8_t>& src) {
        each(b.count, [&](const Shape& k, std::int64_t e) {
            Shape idx(k.size());
            for (std::size_t d = 0; d < k.size(); ++d) {
                idx[d] = b.start[d] + k[d] * b.step[d];
            }
            std::memcpy(&data[static_cast<std::size_t>(flat(idx, shape) * isz)],
                        &src[static_cast<std::size_t>(e * isz)], static_cast<std::size_t>(isz));
        });
    }
    /// New content from old: element idx of the new shape comes from `from(idx)` (old
    /// coordinates, or -1 in the axis entry for the `extra` data, or nothing for zero).
    template <class F>
    void remap(const Shape& ns, F&& from) {
        std::vector<std::uint8_t> out(static_cast<std::size_t>(count_of(ns) * isz), 0);
        each(ns, [&](const Shape& idx, std::int64_t e) {
            const std::uint8_t* src = from(idx);
            if (src != nullptr) {
                std::memcpy(&out[static_cast<std::size_t>(e * isz)], src,
                            static_cast<std::size_t>(isz));
            }
        });
        shape = ns;
        data = std::move(out);
    }
    void resize(const Shape& ns) {
        const Shape old = shape;
        remap(ns, [&](const Shape& idx) -> const std::uint8_t* {
            for (std::size_t d = 0; d < idx.size(); ++d) {
                if (idx[d] >= old[d]) {
                    return nullptr;
                }
            }
            return &data[static_cast<std::size_t>(flat(idx, old) * isz)];
        });
    }
    void insert(std::size_t axis,
                std::int64_t pos,
                const std::vector<std::uint8_t>& extra,
                std::int64_t n) {
        const Shape old = shape;
        Shape ns = shape, es = shape;
        ns[axis] += n;
        es[axis] = n;
        remap(ns, [&](const Shape& idx) -> const std::uint8_t* {
            Shape o = idx;
            if (idx[axis] < pos) {
                return &data[static_cast<std::size_t>(flat(o, old) * isz)];
            }
            if (idx[axis] < pos + n) {
                o[axis] -= pos;
                return &extra[static_cast<std::size_t>(flat(o, es) * isz)];
            }
            o[axis] -= n;
            return &data[static_cast<std::size_t>(flat(o, old) * isz)];
        });
    }
    void remove(std::size_t axis, std::int64_t pos, std::int64_t n) {
        const Shape old = shape;
        Shape ns = shape;
        ns[axis] -= n;
        remap(ns, [&](const Shape& idx) -> const std::uint8_t* {
            Shape o = idx;
            if (idx[axis] >= pos) {
                o[axis] += n;
            }
            return &data[static_cast<std::size_t>(flat(o, old) * isz)];
        });
    }
};

}  // namespace b2nd::test
