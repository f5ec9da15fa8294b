#include <b2nd/error.hpp>
#include <b2nd/grid.hpp>

namespace b2nd {

namespace {

constexpr std::int64_t kMaxChunkBytes = 0x7fffffff - 32;  // c-blosc2's BLOSC2_MAX_BUFFERSIZE

std::string num(std::int64_t v) {
    return std::to_string(v);
}

bool mul(std::int64_t a, std::int64_t b, std::int64_t& out) {
    return !__builtin_mul_overflow(a, b, &out);
}

}  // namespace

std::string to_string(const Shape& s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) {
        out += (i > 0 ? ", " : "") + num(s[i]);
    }
    return out + (s.size() == 1 ? ",)" : ")");
}

std::string Grid::check(const Shape& shape,
                        const Shape& chunkshape,
                        const Shape& blockshape,
                        std::int64_t itemsize) {
    const std::size_t n = shape.size();
    if (n > static_cast<std::size_t>(kMaxNdim)) {
        return "ndim " + num(static_cast<std::int64_t>(n)) + " exceeds " + num(kMaxNdim);
    }
    if (chunkshape.size() != n || blockshape.size() != n) {
        return "shape " + to_string(shape) + ", chunk shape " + to_string(chunkshape) +
               " and block shape " + to_string(blockshape) + " differ in ndim";
    }
    if (itemsize <= 0 || itemsize > 0x7fffffff) {
        return "item size " + num(itemsize) + " out of range";
    }
    std::int64_t size = 1, chunk_items = 1;
    for (std::size_t d = 0; d < n; ++d) {
        const std::string dim = " in dimension " + num(static_cast<std::int64_t>(d));
        if (shape[d] < 0 || chunkshape[d] < 0 || blockshape[d] < 0) {
            return "negative size" + dim + " (shape " + to_string(shape) + ", chunks " +
                   to_string(chunkshape) + ", blocks " + to_string(blockshape) + ")";
        }
        if ((chunkshape[d] == 0 && shape[d] != 0) || (blockshape[d] == 0 && chunkshape[d] != 0)) {
            return "zero chunk or block size" + dim + " (shape " + to_string(shape) + ", chunks " +
                   to_string(chunkshape) + ", blocks " + to_string(blockshape) + ")";
        }
        if (blockshape[d] > chunkshape[d]) {
            return "block shape " + to_string(blockshape) + " exceeds chunk shape " +
                   to_string(chunkshape) + dim;
        }
        if (!mul(size, shape[d], size)) {
            return "shape " + to_string(shape) + " overflows 64 bits";
        }
        const std::int64_t ext = chunkshape[d] == 0 ? 0
                                                    : (chunkshape[d] + blockshape[d] - 1) /
                                                          blockshape[d] * blockshape[d];
        if (!mul(chunk_items, ext, chunk_items) || chunk_items > kMaxChunkBytes) {
            return "chunk shape " + to_string(chunkshape) + " is too large";
        }
    }
    std::int64_t bytes = 0;
    if (!mul(size, itemsize, bytes)) {
        return "array of shape " + to_string(shape) + " overflows 64 bits in bytes";
    }
    if (!mul(chunk_items, itemsize, bytes) || bytes > kMaxChunkBytes) {
        return "chunks of shape " + to_string(chunkshape) + " with blocks " +
               to_string(blockshape) + " hold " +
               (bytes > 0 ? num(bytes) : std::string("too many")) + " bytes; the maximum is " +
               num(kMaxChunkBytes);
    }
    return {};
}

Grid::Grid(Shape shape, Shape chunkshape, Shape blockshape, std::int64_t itemsize)
    : shape_(std::move(shape)),
      chunkshape_(std::move(chunkshape)),
      blockshape_(std::move(blockshape)),
      itemsize_(itemsize) {
    const std::string why = check(shape_, chunkshape_, blockshape_, itemsize_);
    if (!why.empty()) {
        throw UsageError("invalid array geometry: " + why);
    }
    const std::size_t n = shape_.size();
    extchunkshape_.resize(n);
    chunks_in_.resize(n);
    blocks_in_.resize(n);
    for (std::size_t d = 0; d < n; ++d) {
        const std::int64_t c = chunkshape_[d], b = blockshape_[d];
        blocks_in_[d] = c == 0 ? 0 : (c + b - 1) / b;
        extchunkshape_[d] = blocks_in_[d] * b;
        chunks_in_[d] = shape_[d] == 0 ? 0 : (shape_[d] + c - 1) / c;
        size_ *= shape_[d];
        nchunks_ *= chunks_in_[d];
        nblocks_ *= blocks_in_[d];
        chunk_items_ *= extchunkshape_[d];
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
    const std::int64_t origin = coord * chunkshape_[u];
    const std::int64_t rest = shape_[u] - origin;
    return rest < chunkshape_[u] ? rest : chunkshape_[u];
}

Grid::Location Grid::locate(const std::int64_t* idx) const noexcept {
    Location l{0, 0, 0};
    for (std::size_t d = 0; d < shape_.size(); ++d) {
        const std::int64_t c = chunkshape_[d], b = blockshape_[d];
        const std::int64_t in_chunk = idx[d] % c;
        l.chunk = l.chunk * chunks_in_[d] + idx[d] / c;
        l.block = l.block * blocks_in_[d] + in_chunk / b;
        l.offset = l.offset * b + in_chunk % b;
    }
    return l;
}

}  // namespace b2nd
