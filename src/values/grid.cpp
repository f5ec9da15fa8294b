#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>
#include <b2nd/grid.hpp>

#include "../detail/text.hpp"

namespace b2nd {

using detail::num;

namespace {

constexpr std::int64_t kMaxChunkBytes = 0x7fffffff - 32;  // c-blosc2's BLOSC2_MAX_BUFFERSIZE

bool mul(std::int64_t a, std::int64_t b, std::int64_t& out) {
    return !format::mul_overflows(a, b, &out);
}

}  // namespace

std::string Grid::check(const Shape& shape,
                        const Shape& chunk_shape,
                        const Shape& block_shape,
                        std::int64_t itemsize) {
    const std::size_t n = shape.size();
    if (n > static_cast<std::size_t>(kMaxNdim)) {
        return "ndim " + num(static_cast<std::int64_t>(n)) + " exceeds " + num(kMaxNdim);
    }
    if (chunk_shape.size() != n || block_shape.size() != n) {
        return "shape " + to_string(shape) + ", chunk shape " + to_string(chunk_shape) +
               " and block shape " + to_string(block_shape) + " differ in ndim";
    }
    if (itemsize <= 0 || itemsize > 0x7fffffff) {
        return "item size " + num(itemsize) + " out of range";
    }
    std::int64_t size = 1, chunk_items = 1;
    for (std::size_t d = 0; d < n; ++d) {
        const std::string dim = " in dimension " + num(static_cast<std::int64_t>(d));
        if (shape[d] < 0 || chunk_shape[d] < 0 || block_shape[d] < 0) {
            return "negative size" + dim + " (shape " + to_string(shape) + ", chunks " +
                   to_string(chunk_shape) + ", blocks " + to_string(block_shape) + ")";
        }
        if ((chunk_shape[d] == 0 && shape[d] != 0) ||
            (block_shape[d] == 0 && chunk_shape[d] != 0)) {
            return "zero chunk or block size" + dim + " (shape " + to_string(shape) + ", chunks " +
                   to_string(chunk_shape) + ", blocks " + to_string(block_shape) + ")";
        }
        if (block_shape[d] > chunk_shape[d]) {
            return "block shape " + to_string(block_shape) + " exceeds chunk shape " +
                   to_string(chunk_shape) + dim;
        }
        if (!mul(size, shape[d], size)) {
            return "shape " + to_string(shape) + " overflows 64 bits";
        }
        const std::int64_t ext = chunk_shape[d] == 0 ? 0
                                                     : (chunk_shape[d] + block_shape[d] - 1) /
                                                           block_shape[d] * block_shape[d];
        if (!mul(chunk_items, ext, chunk_items) || chunk_items > kMaxChunkBytes) {
            return "chunk shape " + to_string(chunk_shape) + " is too large";
        }
    }
    std::int64_t bytes = 0;
    if (!mul(size, itemsize, bytes)) {
        return "array of shape " + to_string(shape) + " overflows 64 bits in bytes";
    }
    if (!mul(chunk_items, itemsize, bytes) || bytes > kMaxChunkBytes) {
        return "chunks of shape " + to_string(chunk_shape) + " with blocks " +
               to_string(block_shape) + " hold " +
               (bytes > 0 ? num(bytes) : std::string("too many")) + " bytes; the maximum is " +
               num(kMaxChunkBytes);
    }
    return {};
}

Grid::Grid(Shape shape, Shape chunk_shape, Shape block_shape, std::int64_t itemsize)
    : shape_(std::move(shape)),
      chunk_shape_(std::move(chunk_shape)),
      block_shape_(std::move(block_shape)),
      itemsize_(itemsize) {
    const std::string why = check(shape_, chunk_shape_, block_shape_, itemsize_);
    if (!why.empty()) {
        throw UsageError("invalid array geometry: " + why);
    }
    const std::size_t n = shape_.size();
    ext_chunk_shape_.resize(n);
    chunks_in_.resize(n);
    blocks_in_.resize(n);
    for (std::size_t d = 0; d < n; ++d) {
        const std::int64_t c = chunk_shape_[d], b = block_shape_[d];
        blocks_in_[d] = c == 0 ? 0 : (c + b - 1) / b;
        ext_chunk_shape_[d] = blocks_in_[d] * b;
        chunks_in_[d] = shape_[d] == 0 ? 0 : (shape_[d] + c - 1) / c;
        size_ *= shape_[d];
        nchunks_ *= chunks_in_[d];
        nblocks_ *= blocks_in_[d];
        chunk_items_ *= ext_chunk_shape_[d];
        block_items_ *= b;
    }
}

std::int64_t Grid::chunk_index(const std::int64_t* coords) const noexcept {
    std::int64_t k = 0;
    for (std::size_t d = 0; d < shape_.size(); ++d) {
        k = k * chunks_in_[d] + coords[d];
    }
    return k;
}

void Grid::chunk_coords(std::int64_t index, std::int64_t* coords) const noexcept {
    for (std::size_t d = shape_.size(); d-- > 0;) {
        coords[d] = index % chunks_in_[d];
        index /= chunks_in_[d];
    }
}

std::int64_t Grid::chunk_extent(int d, std::int64_t coord) const noexcept {
    const auto u = static_cast<std::size_t>(d);
    const std::int64_t origin = coord * chunk_shape_[u];
    const std::int64_t rest = shape_[u] - origin;
    return rest < chunk_shape_[u] ? rest : chunk_shape_[u];
}

Box Grid::chunk_box(std::int64_t index) const {
    Box b;
    b.start.resize(shape_.size());
    b.count.resize(shape_.size());
    b.step.assign(shape_.size(), 1);
    chunk_coords(index, b.start.data());
    for (std::size_t d = 0; d < shape_.size(); ++d) {
        b.count[d] = chunk_extent(static_cast<int>(d), b.start[d]);
        b.start[d] *= chunk_shape_[d];
    }
    return b;
}

bool Grid::chunk_padded(std::int64_t index) const noexcept {
    for (std::size_t d = shape_.size(); d-- > 0;) {
        const std::int64_t coord = index % chunks_in_[d];
        index /= chunks_in_[d];
        if (chunk_extent(static_cast<int>(d), coord) != ext_chunk_shape_[d]) {
            return true;
        }
    }
    return false;
}

Grid::Location Grid::locate(const std::int64_t* idx) const noexcept {
    Location l{0, 0, 0};
    for (std::size_t d = 0; d < shape_.size(); ++d) {
        const std::int64_t c = chunk_shape_[d], b = block_shape_[d];
        const std::int64_t in_chunk = idx[d] % c;
        l.chunk = l.chunk * chunks_in_[d] + idx[d] / c;
        l.block = l.block * blocks_in_[d] + in_chunk / b;
        l.offset = l.offset * b + in_chunk % b;
    }
    return l;
}

Shape Grid::position(const Location& at) const {
    Shape idx(shape_.size());
    std::int64_t chunk = at.chunk, block = at.block, offset = at.offset;
    for (std::size_t d = shape_.size(); d-- > 0;) {
        const std::int64_t c = chunk_shape_[d], b = block_shape_[d];
        idx[d] = (chunk % chunks_in_[d]) * c + (block % blocks_in_[d]) * b + offset % b;
        chunk /= chunks_in_[d];
        block /= blocks_in_[d];
        offset /= b;
    }
    return idx;
}

}  // namespace b2nd
