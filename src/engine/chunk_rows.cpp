// An appender's rows (chunk_rows.hpp): padded, encoded in memory, committed.
#include "chunk_rows.hpp"

#include <algorithm>
#include <stdexcept>

#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>

#include "../detail/memory.hpp"
#include "../detail/thread_pool.hpp"
#include "../select/strided_copy.hpp"
#include "array_core.hpp"

namespace b2nd::detail {

Grid row_grid(const Grid& g, int axis, std::int64_t extent) {
    Shape shape = g.shape();
    shape[static_cast<std::size_t>(axis)] = extent;
    return Grid(shape, g.chunk_shape(), g.block_shape(), g.itemsize());
}

RowScatter::RowScatter(const Grid& full, int axis)
    : nd_(full.ndim()),
      axis_(axis),
      shape_(full.shape()),
      isz_(full.itemsize()),
      cbytes_(full.chunk_nbytes()),
      bbytes_(full.block_nbytes()) {
    std::int64_t c = 1, b = 1, e = 1;
    for (int d = nd_ - 1; d >= 0; --d) {
        const auto u = static_cast<std::size_t>(d);
        cshape_[d] = full.chunk_shape()[u];
        bshape_[d] = full.block_shape()[u];
        cstride_[d] = c;
        bstride_[d] = b;
        estride_[d] = e;
        c *= full.chunks_in(d);
        b *= (cshape_[d] + bshape_[d] - 1) / bshape_[d];
        e *= bshape_[d];
    }
    // The last dimension's runs over the row's whole extent along it (an axis that is the last
    // dimension: its chunk's extent).
    const int last = nd_ - 1;
    const std::int64_t extent =
        last == axis_ ? cshape_[last] : shape_[static_cast<std::size_t>(last)];
    for (std::int64_t i = 0; i < extent;) {
        const std::int64_t in_block = (i % cshape_[last]) % bshape_[last];
        const std::int64_t len =
            std::min({bshape_[last] - in_block, cshape_[last] - i % cshape_[last], extent - i});
        runs_.push_back({i, len, offset(last, i)});
        i += len;
    }
}

std::int64_t RowScatter::offset(int d, std::int64_t i) const noexcept {
    const std::int64_t r = i % cshape_[d];
    return (i / cshape_[d]) * cstride_[d] * cbytes_ + (r / bshape_[d]) * bstride_[d] * bbytes_ +
           (r % bshape_[d]) * estride_[d] * isz_;
}

void RowScatter::operator()(const std::uint8_t* data,
                            std::int64_t n,
                            std::int64_t from,
                            std::int64_t take,
                            std::int64_t at,
                            std::uint8_t* images,
                            bool stream) const {
    // Each dimension's range in the row, and the data's C-order strides.
    std::int64_t lo[kMaxNdim] = {}, hi[kMaxNdim] = {}, sstride[kMaxNdim] = {};
    std::int64_t s = isz_;
    for (int d = nd_ - 1; d >= 0; --d) {
        const bool ax = d == axis_;
        lo[d] = ax ? at : 0;
        hi[d] = ax ? at + take : shape_[static_cast<std::size_t>(d)];
        sstride[d] = s;
        s *= ax ? n : shape_[static_cast<std::size_t>(d)];
    }
    // The data's element at row coordinate i along the axis is its slab i - at + from.
    const std::int64_t shift = (from - at) * sstride[axis_];
    const int last = nd_ - 1;
    std::int64_t idx[kMaxNdim];
    for (int d = 0; d < last; ++d) {
        idx[d] = lo[d];
    }
    for (;;) {
        std::int64_t dst = 0, src = shift;
        for (int d = 0; d < last; ++d) {
            dst += offset(d, idx[d]);
            src += idx[d] * sstride[d];
        }
        for (const Run& r : runs_) {
            const std::int64_t a = std::max(r.start, lo[last]);
            const std::int64_t b = std::min(r.start + r.len, hi[last]);
            if (a < b) {
                copy_run(images + dst + r.off + (a - r.start) * isz_,
                         data + src + a * sstride[last], static_cast<std::size_t>((b - a) * isz_),
                         stream);
            }
        }
        int d = last - 1;
        for (; d >= 0; --d) {
            if (++idx[d] < hi[d]) {
                break;
            }
            idx[d] = lo[d];
        }
        if (d < 0) {
            return;
        }
    }
}

namespace {

/// Fills what lies beyond `valid` (per dimension, each at least 1) in the block at p of shape
/// `bshape` with `e`: a run of the last dimension at a time.
void pad_block(std::uint8_t* p,
               int nd,
               const std::int64_t* bshape,
               const std::int64_t* valid,
               const std::uint8_t* e,
               std::int64_t isz) {
    const std::int64_t last = bshape[nd - 1];
    const auto run = static_cast<std::size_t>(last * isz);
    std::int64_t rows = 1;
    for (int d = 0; d + 1 < nd; ++d) {
        rows *= bshape[d];
    }
    std::int64_t idx[kMaxNdim] = {};
    for (std::int64_t r = 0; r < rows; ++r) {
        bool outside = false;
        for (int d = 0; d + 1 < nd; ++d) {
            outside = outside || idx[d] >= valid[d];
        }
        std::uint8_t* row = p + static_cast<std::size_t>(r) * run;
        if (outside) {
            fill_elements(row, run, e, isz);
        } else if (valid[nd - 1] < last) {
            fill_elements(row + valid[nd - 1] * isz,
                          static_cast<std::size_t>((last - valid[nd - 1]) * isz), e, isz);
        }
        for (int d = nd - 2; d >= 0; --d) {
            if (++idx[d] < bshape[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
}

}  // namespace

void pad_row(const Grid& row, std::uint8_t* images) {
    const int nd = row.ndim();
    if (nd == 0) {
        return;
    }
    const std::int64_t isz = row.itemsize();
    const auto cbytes = static_cast<std::size_t>(row.chunk_nbytes());
    const auto bbytes = static_cast<std::size_t>(row.block_nbytes());
    std::int64_t cc[kMaxNdim], bshape[kMaxNdim], per[kMaxNdim], valid[kMaxNdim];
    for (int d = 0; d < nd; ++d) {
        const auto u = static_cast<std::size_t>(d);
        bshape[d] = row.block_shape()[u];
        per[d] = (row.chunk_shape()[u] + bshape[d] - 1) / bshape[d];
    }
    for (std::int64_t ci = 0; ci < row.nchunks(); ++ci) {
        if (!row.chunk_padded(ci)) {
            continue;
        }
        std::uint8_t* image = images + static_cast<std::size_t>(ci) * cbytes;
        row.chunk_coords(ci, cc);
        for (std::int64_t b = 0; b < row.nblocks(); ++b) {
            std::int64_t rest = b;
            bool empty = false, full = true;
            for (int d = nd - 1; d >= 0; --d) {
                const std::int64_t bc = rest % per[d];
                rest /= per[d];
                valid[d] = std::clamp<std::int64_t>(row.chunk_extent(d, cc[d]) - bc * bshape[d], 0,
                                                    bshape[d]);
                empty = empty || valid[d] == 0;
                full = full && valid[d] == bshape[d];
            }
            // The chunk's first element (block 0's first, never padding) is what padding repeats.
            std::uint8_t* block = image + static_cast<std::size_t>(b) * bbytes;
            if (empty) {
                fill_elements(block, bbytes, image, isz);
            } else if (!full) {
                pad_block(block, nd, bshape, valid, image, isz);
            }
        }
    }
}

void ArrayCore::encode_images(const Grid& row,
                              const std::uint8_t* images,
                              int threads,
                              const ImageSink& sink,
                              const std::function<MutableByteSpan(std::size_t)>& into) const {
    const ChunkSource& source = *source_;
    const auto n = static_cast<std::size_t>(row.nchunks());
    const auto cbytes = static_cast<std::size_t>(row.chunk_nbytes());
    const auto encode = [&](std::size_t k, int t) {
        source.make_chunk_of(
            row, images + k * cbytes, t,
            [&](ByteSpan c, const storage::detail::SealHint& hint) {
                sink(k, c, hint);
                return storage::StagedChunk{};
            },
            into ? into(k) : MutableByteSpan{});
    };
    if (n == 1) {
        encode(0, threads);
    } else {
        parallel_for(n, threads, [&](std::size_t k) { encode(k, 1); });
    }
}

void ArrayCore::encode_row(const Grid& row,
                           const std::uint8_t* images,
                           EncodedRow& out,
                           int threads) const {
    out.chunks.resize(static_cast<std::size_t>(row.nchunks()));
    const storage::Frame& frame = source_->frame();
    const std::size_t cap = codec::max_encoded_size(static_cast<std::size_t>(row.chunk_nbytes()));
    encode_images(
        row, images, threads > 0 ? threads : nthreads_,
        [&](std::size_t k, ByteSpan c, const storage::detail::SealHint& hint) {
            EncodedChunk& ec = out.chunks[k];
            ec.ahead = storage::FrameInternal::seal_ahead(frame, c, hint);
            if (c.data() != ec.bytes.data()) {
                copy_bytes(ec.bytes.data(), c.data(), c.size());  // a special chunk
            }
            ec.size = c.size();
        },
        [&](std::size_t k) {
            EncodedChunk& ec = out.chunks[k];
            if (ec.bytes.size() < cap) {
                ec.bytes = BigBuffer(cap);
            }
            return MutableByteSpan{ec.bytes.data(), ec.bytes.size()};
        });
}

void ArrayCore::stage_row(const EncodedRow& row, std::vector<storage::StagedChunk>& staged) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    require_writable("append");
    for (const EncodedChunk& ec : row.chunks) {
        staged.push_back(storage::FrameInternal::stage(source_->frame(), {ec.bytes.data(), ec.size},
                                                       ec.ahead.get()));
    }
}

void ArrayCore::commit_rows(int axis,
                            std::int64_t first,
                            std::int64_t length,
                            const std::vector<storage::StagedChunk>& staged) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    require_writable("append");
    const Grid& og = grid();
    const int nd = og.ndim();
    const auto ax = static_cast<std::size_t>(axis);
    const std::int64_t cs = og.chunk_shape()[ax];
    if (axis < 0 || axis >= nd || first % cs != 0 || length <= first || first > og.shape()[ax] ||
        first < og.shape()[ax] / cs * cs) {
        throw std::logic_error("commit_rows: not rows from the array's last chunk row on");
    }
    Shape shape = og.shape();
    shape[ax] = length;
    const Grid ng(shape, og.chunk_shape(), og.block_shape(), og.itemsize());
    require_chunk_count(ng);
    // The staged chunks, row after row, each row in the order of its row grid.
    const Grid rg = row_grid(og, axis, 1);
    const std::int64_t per_row = rg.nchunks();
    const std::int64_t rows = (length - first + cs - 1) / cs;
    if (static_cast<std::int64_t>(staged.size()) != rows * per_row) {
        throw std::logic_error("commit_rows: the staged chunks do not make the rows");
    }
    storage::FrameEdit e;
    std::int64_t c[kMaxNdim];
    for (std::int64_t i = 0; i < ng.nchunks(); ++i) {
        ng.chunk_coords(i, c);
        const std::int64_t r = c[axis] - first / cs;
        if (r < 0) {
            e.keep(og.chunk_index(c));
        } else {
            c[axis] = 0;
            e.add_staged(staged[static_cast<std::size_t>(r * per_row + rg.chunk_index(c))]);
        }
    }
    format::B2ndMeta meta = meta_;
    meta.shape = shape;
    e.set_metalayer(meta_.has_dtype ? "b2nd" : "caterva", format::write_b2nd_meta(meta));
    std::unique_lock<FairSharedMutex> lock(mutex_);
    apply_data_edit(e);
    source_->set_grid(ng);
    meta_ = std::move(meta);
}

}  // namespace b2nd::detail
