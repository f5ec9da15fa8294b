// NDCELL (filter 32), NDMEAN (33) and INT_TRUNC (36), as FORMAT-NOTES.md describes them.
//
// NDCELL and NDMEAN lay cells over the block: the side in dim d is min(meta, blockshape[d]), the
// grid ceil(blockshape[d] / side) per dim, cells past the edge clipped. Their output is the
// block's items cell after cell (C order of the grid), each cell's items in C order; NDMEAN
// writes every item of a cell as the cell's mean. Backward undoes the permutation only.
#include <algorithm>
#include <cstring>

#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>
#include <b2nd/format/endian.hpp>

#include "../../detail/text.hpp"
#include "plugins.hpp"

namespace b2nd::codec::plugins {

using b2nd::detail::num;

namespace {

constexpr int kMaxDims = 8;

/// The cells of one block: for every cell, its rows (runs along the last dim) in C order.
struct Cells {
    int nd = 0;
    std::int64_t shape[kMaxDims] = {};
    std::int64_t side[kMaxDims] = {};
    std::int64_t stride[kMaxDims] = {};  // in items

    Cells(const BlockContext& c, int meta) : nd(c.ndim) {
        std::int64_t s = 1;
        for (int d = nd - 1; d >= 0; --d) {
            shape[d] = c.blockshape[d];
            side[d] = std::max<std::int64_t>(1, std::min<std::int64_t>(meta, shape[d]));
            stride[d] = s;
            s *= shape[d];
        }
    }

    /// row(offset, n): n items from item `offset` of the block; end(count) after each cell.
    template <class Row, class End>
    void walk(Row&& row, End&& end) const {
        std::int64_t cell[kMaxDims] = {};
        for (;;) {
            std::int64_t ext[kMaxDims];
            std::int64_t origin = 0;
            std::int64_t rows = 1;
            for (int d = 0; d < nd; ++d) {
                ext[d] = std::min(side[d], shape[d] - cell[d] * side[d]);
                origin += cell[d] * side[d] * stride[d];
                if (d + 1 < nd) {
                    rows *= ext[d];
                }
            }
            std::int64_t k[kMaxDims] = {};
            for (std::int64_t r = 0; r < rows; ++r) {
                std::int64_t off = origin;
                for (int d = 0; d + 1 < nd; ++d) {
                    off += k[d] * stride[d];
                }
                row(off, ext[nd - 1]);
                for (int d = nd - 2; d >= 0; --d) {
                    if (++k[d] < ext[d]) {
                        break;
                    }
                    k[d] = 0;
                }
            }
            end(rows * ext[nd - 1]);
            int d = nd - 1;
            for (; d >= 0; --d) {
                if (++cell[d] * side[d] < shape[d]) {
                    break;
                }
                cell[d] = 0;
            }
            if (d < 0) {
                return;
            }
        }
    }
};

/// Moves items between the block order and the cell order.
void permute(const BlockContext& c, int meta, ByteSpan src, MutableByteSpan dst, bool to_cells) {
    const auto ts = static_cast<std::size_t>(c.typesize);
    std::size_t pos = 0;
    Cells(c, meta).walk(
        [&](std::int64_t off, std::int64_t n) {
            const std::size_t bytes = static_cast<std::size_t>(n) * ts;
            const std::size_t at = static_cast<std::size_t>(off) * ts;
            if (to_cells) {
                std::memcpy(dst.data() + pos, src.data() + at, bytes);
            } else {
                std::memcpy(dst.data() + at, src.data() + pos, bytes);
            }
            pos += bytes;
        },
        [](std::int64_t) {});
}

template <class T>
void cell_means(const BlockContext& c, ByteSpan src, MutableByteSpan dst) {
    T sum = 0;
    std::uint8_t* out = dst.data();
    Cells(c, c.meta).walk(
        [&](std::int64_t off, std::int64_t n) {
            for (std::int64_t i = 0; i < n; ++i) {
                T v;
                std::memcpy(&v, src.data() + static_cast<std::size_t>(off + i) * sizeof(T),
                            sizeof(T));
                sum += v;
            }
        },
        [&](std::int64_t count) {
            const T mean = sum / static_cast<T>(count);
            for (std::int64_t i = 0; i < count; ++i, out += sizeof(T)) {
                std::memcpy(out, &mean, sizeof(T));
            }
            sum = 0;
        });
}

/// Bits INT_TRUNC clears, or -1 when the parameters are invalid.
int truncated_bits(int typesize, std::uint8_t meta) {
    if (typesize != 1 && typesize != 2 && typesize != 4 && typesize != 8) {
        return -1;
    }
    const int p = static_cast<std::int8_t>(meta);
    const int z = p >= 0 ? 8 * typesize - p : -p;
    return z >= 0 && z < 8 * typesize ? z : -1;
}

template <class U>
void clear_low_bits(int z, ByteSpan src, MutableByteSpan dst) {
    const U mask = static_cast<U>(~((U{1} << z) - 1));  // z < bits of U
    const std::size_t n = src.size() / sizeof(U);
    for (std::size_t i = 0; i < n; ++i) {
        format::store_le<U>(dst.data() + i * sizeof(U),
                            static_cast<U>(format::load_le<U>(src.data() + i * sizeof(U)) & mask));
    }
    std::memcpy(dst.data() + n * sizeof(U), src.data() + n * sizeof(U), src.size() % sizeof(U));
}

}  // namespace

std::string check_geometry(const BlockContext& c, const char* who, int max_ndim) {
    if (!c.has_geometry()) {
        return std::string(who) +
               " needs the array's block shape (a b2nd metalayer; for a bare chunk, pass the "
               "block shape to the decoder)";
    }
    if (c.ndim > max_ndim) {
        return std::string(who) + " handles 1.." + num(max_ndim) + " dimensions, not " +
               num(c.ndim);
    }
    if (c.block_items() <= 0) {
        return std::string(who) + ": invalid block shape";
    }
    return {};
}

void require_block(const BlockContext& c, std::size_t n, const char* who) {
    const std::string why = check_geometry(c, who, kMaxDims);
    if (!why.empty()) {
        throw UnsupportedError(why);
    }
    const std::int64_t items = c.block_items();
    if (c.typesize <= 0 ||
        static_cast<std::uint64_t>(items) * static_cast<std::uint64_t>(c.typesize) != n) {
        throw FormatError(std::string(who) + ": a block of " + num(static_cast<std::int64_t>(n)) +
                          " bytes does not hold the " + num(items) + " items of typesize " +
                          num(c.typesize) + " its block shape says");
    }
}

namespace {

/// NDCELL's and NDMEAN's backward: the items back from cell order, cells of side `side`.
void from_cells(
    const BlockContext& c, ByteSpan src, MutableByteSpan dst, const char* who, int side) {
    require_block(c, src.size(), who);
    if (side < 1) {
        throw FormatError(std::string(who) + ": cell side " + num(side));
    }
    permute(c, side, src, dst, false);
}

}  // namespace

FilterPlugin ndcell() {
    FilterPlugin p;
    p.id = static_cast<std::uint8_t>(Filter::ndcell);
    p.name = "ndcell";
    p.needs_geometry = true;
    p.check = [](const BlockContext& c) -> std::string {
        std::string why = check_geometry(c, "ndcell", kMaxDims);
        if (!why.empty()) {
            return why;
        }
        if (c.meta == 0) {
            return "ndcell: the cell side must be 1..255, not 0";
        }
        std::int64_t cell = 1;
        for (int d = 0; d < c.ndim; ++d) {
            if (format::mul_overflows(cell, std::int64_t{c.meta}, &cell)) {
                cell = INT64_MAX;
                break;
            }
        }
        if (cell > c.block_items()) {
            return "ndcell: a cell of side " + num(c.meta) + " in " + num(c.ndim) + " dims (" +
                   num(cell) + " items) exceeds a block (" + num(c.block_items()) +
                   " items); c-blosc2 refuses it";
        }
        return {};
    };
    p.forward = [](const BlockContext& c, ByteSpan src, MutableByteSpan dst) {
        require_block(c, src.size(), "ndcell");
        permute(c, c.meta, src, dst, true);
    };
    p.backward = [](const BlockContext& c, ByteSpan src, MutableByteSpan dst) {
        from_cells(c, src, dst, "ndcell", c.meta);
    };
    return p;
}

FilterPlugin ndmean() {
    FilterPlugin p;
    p.id = static_cast<std::uint8_t>(Filter::ndmean);
    p.name = "ndmean";
    p.needs_geometry = true;
    p.lossy = true;
    p.on_values = true;
    p.float_items = true;
    p.check = [](const BlockContext& c) -> std::string {
        std::string why = check_geometry(c, "ndmean", kMaxDims);
        if (!why.empty()) {
            return why;
        }
        if (c.typesize != 4 && c.typesize != 8) {
            return "ndmean averages float32 or float64 items (typesize 4 or 8), not typesize " +
                   num(c.typesize);
        }
        const int side = static_cast<std::int8_t>(c.meta);
        if (side < 1) {
            return "ndmean: the cell side must be 1..127, not " + num(side);
        }
        for (int d = 1; d < c.ndim; ++d) {
            if (c.blockshape[0] < side && side < c.blockshape[d]) {
                return "ndmean: a cell side of " + num(side) + " lies between block dim 0 (" +
                       num(c.blockshape[0]) + ") and block dim " + num(d) + " (" +
                       num(c.blockshape[d]) +
                       "): c-blosc2 writes such chunks and cannot read them back";
            }
        }
        return {};
    };
    p.forward = [](const BlockContext& c, ByteSpan src, MutableByteSpan dst) {
        require_block(c, src.size(), "ndmean");
        if (c.typesize == 4) {
            cell_means<float>(c, src, dst);
        } else if (c.typesize == 8) {
            cell_means<double>(c, src, dst);
        } else {
            throw UsageError("ndmean: typesize " + num(c.typesize) + " (4 or 8 only)");
        }
    };
    p.backward = [](const BlockContext& c, ByteSpan src, MutableByteSpan dst) {
        from_cells(c, src, dst, "ndmean", static_cast<std::int8_t>(c.meta));
    };
    return p;
}

FilterPlugin int_trunc() {
    FilterPlugin p;
    p.id = static_cast<std::uint8_t>(Filter::int_trunc);
    p.name = "int_trunc";
    p.lossy = true;
    p.on_values = true;
    p.check = [](const BlockContext& c) -> std::string {
        if (truncated_bits(c.typesize, c.meta) < 0) {
            const int bits = 8 * c.typesize;
            return "int_trunc: " + num(static_cast<std::int8_t>(c.meta)) +
                   " is not a valid bit count for typesize " + num(c.typesize) +
                   " (typesize 1, 2, 4 or 8; bits to keep 1.." + num(bits) +
                   ", or bits to clear -1..-" + num(bits - 1) + ")";
        }
        return {};
    };
    p.forward = [](const BlockContext& c, ByteSpan src, MutableByteSpan dst) {
        const int z = truncated_bits(c.typesize, c.meta);
        switch (z < 0 ? 0 : c.typesize) {
            case 1:
                clear_low_bits<std::uint8_t>(z, src, dst);
                break;
            case 2:
                clear_low_bits<std::uint16_t>(z, src, dst);
                break;
            case 4:
                clear_low_bits<std::uint32_t>(z, src, dst);
                break;
            case 8:
                clear_low_bits<std::uint64_t>(z, src, dst);
                break;
            default:
                throw UsageError("int_trunc: invalid bit count " +
                                 num(static_cast<std::int8_t>(c.meta)) + " for typesize " +
                                 num(c.typesize));
        }
    };
    // Nothing to undo: the block reads back as stored.
    return p;
}

}  // namespace b2nd::codec::plugins
