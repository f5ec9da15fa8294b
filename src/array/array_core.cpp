#include "array_core.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/error.hpp>

#include "../detail/memory.hpp"
#include "../detail/strings.hpp"
#include "../detail/thread_pool.hpp"
#include "params_detail.hpp"
#include "strided_copy.hpp"
#include <unistd.h>

namespace b2nd::detail {

using detail::num;

namespace {

/// Along one dimension: a run of selected elements (ascending positions first + j * step for j in
/// [j0, j0 + n)) that lie in one block of one chunk; `pos` is the first one's place in the block.
struct Seg {
    std::int64_t chunk, block, j0, n, pos;
};

struct DimPlan {
    std::int64_t first = 0, step = 1, count = 0;
    bool flip = false;              // the box walks this dimension backwards
    std::vector<Seg> segs;          // ascending
    std::vector<std::size_t> runs;  // segs of chunk r: [runs[r], runs[r + 1])
    std::size_t nruns() const noexcept { return runs.size() - 1; }
};

DimPlan plan_dim(const Grid& g, int d, std::int64_t start, std::int64_t count, std::int64_t step) {
    DimPlan p;
    p.count = count;
    p.flip = step < 0;
    p.step = p.flip ? -step : step;
    p.first = p.flip ? start + (count - 1) * step : start;
    const std::int64_t c = g.chunk_shape()[static_cast<std::size_t>(d)];
    const std::int64_t b = g.block_shape()[static_cast<std::size_t>(d)];
    for (std::int64_t j = 0; j < count;) {
        const std::int64_t i = p.first + j * p.step;
        const std::int64_t ch = i / c;
        const std::int64_t in_chunk = i - ch * c;
        const std::int64_t bl = in_chunk / b;
        const std::int64_t end = ch * c + std::min((bl + 1) * b, c);
        const std::int64_t n = std::min((end - 1 - i) / p.step + 1, count - j);
        if (p.segs.empty() || p.segs.back().chunk != ch) {
            p.runs.push_back(p.segs.size());
        }
        p.segs.push_back({ch, bl, j, n, in_chunk - bl * b});
        j += n;
    }
    p.runs.push_back(p.segs.size());
    return p;
}

/// A touched chunk of a plan: its index, the run it uses in each dimension, and its blocks.
struct ChunkTask {
    std::int64_t ci = 0;
    std::int64_t coords[kMaxNdim] = {};
    std::size_t run[kMaxNdim] = {};
    std::int64_t nblocks = 1;
    std::int64_t first_block_task = 0;
};

/// The per-dimension plans and the touched chunks of a box.
struct Plan {
    std::vector<DimPlan> dims;
    std::vector<ChunkTask> chunks;
    std::int64_t nblock_tasks = 0;

    Plan(const Grid& g, const Box& box) {
        const int nd = g.ndim();
        for (int d = 0; d < nd; ++d) {
            const auto u = static_cast<std::size_t>(d);
            dims.push_back(plan_dim(g, d, box.start[u], box.count[u], box.step[u]));
        }
        std::int64_t ntouched = 1;
        for (const DimPlan& p : dims) {
            ntouched *= static_cast<std::int64_t>(p.nruns());
        }
        chunks.resize(static_cast<std::size_t>(ntouched));
        for (std::int64_t t = 0; t < ntouched; ++t) {
            ChunkTask& ct = chunks[static_cast<std::size_t>(t)];
            std::int64_t rest = t;
            for (int d = nd - 1; d >= 0; --d) {
                const DimPlan& p = dims[static_cast<std::size_t>(d)];
                const auto r =
                    static_cast<std::size_t>(rest % static_cast<std::int64_t>(p.nruns()));
                rest /= static_cast<std::int64_t>(p.nruns());
                ct.run[d] = r;
                ct.coords[d] = p.segs[p.runs[r]].chunk;
                ct.nblocks *= static_cast<std::int64_t>(p.runs[r + 1] - p.runs[r]);
            }
            ct.ci = g.chunk_index(ct.coords);
            ct.first_block_task = nblock_tasks;
            nblock_tasks += ct.nblocks;
        }
    }

    /// The segment of each dimension for block `local` of chunk task ct.
    void segs_of(const ChunkTask& ct, std::int64_t local, const Seg** out) const {
        for (std::size_t d = dims.size(); d-- > 0;) {
            const DimPlan& p = dims[d];
            const auto len = static_cast<std::int64_t>(p.runs[ct.run[d] + 1] - p.runs[ct.run[d]]);
            out[d] = &p.segs[p.runs[ct.run[d]] + static_cast<std::size_t>(local % len)];
            local /= len;
        }
    }

    /// Byte strides of a caller's buffer in the plan's ascending walk (flipped dimensions walk
    /// backwards) and the offset of the walk's first element.
    std::int64_t walk_strides(const Shape& count,
                              std::int64_t itemsize,
                              const std::int64_t* strides,
                              std::int64_t* out) const {
        std::int64_t base = 0;
        std::int64_t c_stride = itemsize;
        for (std::size_t d = dims.size(); d-- > 0;) {
            const std::int64_t s = strides != nullptr ? strides[d] : c_stride;
            c_stride *= count[d];
            if (dims[d].flip) {
                base += (count[d] - 1) * s;
                out[d] = -s;
            } else {
                out[d] = s;
            }
        }
        return base;
    }
};

/// Block strides in elements (C order of the block shape).
void block_strides(const Grid& g, std::int64_t* out) {
    c_strides(g.block_shape().data(), g.block_shape().size(), 1, out);
}

thread_local Scratch tl_scratch;

/// Thread-local buffers are kept for reuse, unless they grew beyond 64 MiB.
void release_if_large(Scratch& v) {
    if (v.capacity() > (std::size_t{64} << 20)) {
        Scratch().swap(v);
    }
}

DType caterva_dtype(std::int64_t typesize) {
    switch (typesize) {
        case 1:
            return DType::parse("|u1");
        case 2:
        case 4:
        case 8:
            return detail::native_dtype(DType::Kind::uint, typesize);
        default:
            return DType::raw(typesize);
    }
}

}  // namespace

/// Copies the caller's elements of chunk task ct (walked with jstride from src0) into the padded
/// block layout of the chunk buffer buf.
void pack_blocks(const Grid& g,
                 const Plan& plan,
                 const ChunkTask& ct,
                 const std::uint8_t* src0,
                 const std::int64_t* jstride,
                 std::uint8_t* buf) {
    const int nd = g.ndim();
    const std::int64_t isz = g.itemsize();
    std::int64_t bstride[kMaxNdim];
    block_strides(g, bstride);
    const Seg* seg[kMaxNdim];
    for (std::int64_t l = 0; l < ct.nblocks; ++l) {
        plan.segs_of(ct, l, seg);
        StridedBox sb;
        sb.ndim = nd;
        std::int64_t block = 0, dst_off = 0;
        const std::uint8_t* s = src0;
        for (int d = 0; d < nd; ++d) {
            block = block * g.blocks_in(d) + seg[d]->block;
            dst_off += seg[d]->pos * bstride[d];
            s += seg[d]->j0 * jstride[d];
            sb.extent[d] = seg[d]->n;
            sb.src_stride[d] = jstride[d];
            sb.dst_stride[d] = plan.dims[static_cast<std::size_t>(d)].step * bstride[d] * isz;
        }
        copy_strided(sb, s, buf + block * g.block_nbytes() + dst_off * isz, isz);
    }
}

/// Fills n bytes with copies of one element.
void fill_pattern(std::uint8_t* dst,
                  std::size_t n,
                  const std::uint8_t* element,
                  std::int64_t itemsize) {
    StridedBox sb;
    sb.ndim = 1;
    sb.extent[0] = static_cast<std::int64_t>(n) / itemsize;
    sb.dst_stride[0] = itemsize;
    fill_strided(sb, dst, element, itemsize);
}

/// Byte offset (from src0) of the first element of chunk task ct in the caller's walk.
std::int64_t first_offset(const Plan& plan, const ChunkTask& ct, const std::int64_t* jstride) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < plan.dims.size(); ++d) {
        const DimPlan& p = plan.dims[d];
        off += p.segs[p.runs[ct.run[d]]].j0 * jstride[d];
    }
    return off;
}

struct ChunkState {
    enum class Kind { fill, raw, encoded } kind = Kind::fill;
    std::vector<std::uint8_t> pattern;  // fill: one element
    const std::uint8_t* raw = nullptr;  // memcpyed data
    std::optional<codec::ChunkDecoder> decoder;
    storage::StoredChunk stored;  // keeps the bytes mapped
    BlockCache::Buffer block0;    // DELTA reference block
};

struct ArrayCore::Piece {
    Shape start, count;  // region of the new array
    bool from_user = false;
    std::int64_t delta = 0;  // along the axis: old (or user) coordinate = new coordinate + delta
};

struct ArrayCore::NewChunk {
    std::int64_t keep = -1;  // an old chunk kept as it is
    bool zeros = false;
    std::vector<Piece> pieces;  // else: built from these over zeros
};

// ---- opening ----------------------------------------------------------------------------------

ArrayCore::ArrayCore(storage::Frame frame,
                     const std::optional<DType>& dtype_override,
                     int nthreads,
                     std::size_t cache_bytes)
    : frame_(std::move(frame)), cache_(cache_bytes) {
    set_nthreads(nthreads);
    const format::FrameHeader& h = frame_.header();
    const std::int64_t typesize = h.typesize;
    if (typesize <= 0) {
        throw FormatError(where() + ": frame header typesize " + num(typesize) +
                          " is not positive");
    }
    const format::Metalayer* ml = frame_.metalayer("b2nd");
    if (ml == nullptr) {
        ml = frame_.metalayer("caterva");
    }
    Shape shape, chunk_shape, block_shape;
    if (ml != nullptr) {
        try {
            meta_ = format::read_b2nd_meta(ml->content);
        } catch (const FormatError& e) {
            rethrow_with_context(e, where() + ": metalayer '" + ml->name + "'",
                                 frame_.base_offset() + ml->offset);
        }
        shape = meta_.shape;
        chunk_shape.assign(meta_.chunk_shape.begin(), meta_.chunk_shape.end());
        block_shape.assign(meta_.block_shape.begin(), meta_.block_shape.end());
    } else {
        // A plain frame: a 1-D array of typesize items, one "block" per chunk.
        plain_ = true;
        if (h.chunksize <= 0 || h.chunksize % typesize != 0 || h.nbytes % typesize != 0) {
            throw UnsupportedError(
                where() +
                ": a frame without a b2nd metalayer reads as an array only with fixed-size "
                "chunks of whole items (chunk size " +
                num(h.chunksize) + ", typesize " + num(typesize) + ")");
        }
        shape = {h.nbytes / typesize};
        chunk_shape = {h.chunksize / typesize};
        block_shape = chunk_shape;
    }
    const std::string why = Grid::check(shape, chunk_shape, block_shape, typesize);
    if (!why.empty()) {
        throw FormatError(where() + ": the " +
                          (ml != nullptr ? "'" + ml->name + "' metalayer" : std::string("frame")) +
                          " describes an invalid array: " + why);
    }
    grid_ = Grid(shape, chunk_shape, block_shape, typesize);
    if (grid_.nchunks() != frame_.nchunks()) {
        throw FormatError(where() + ": an array of shape " + to_string(shape) + " in chunks of " +
                          to_string(chunk_shape) + " needs " + num(grid_.nchunks()) +
                          " chunks, the frame holds " + num(frame_.nchunks()));
    }
    if (!plain_ && grid_.nchunks() > 0 && h.chunksize != grid_.chunk_nbytes()) {
        throw FormatError(where() + ": the frame's chunk size " + num(h.chunksize) +
                          " differs from the " + num(grid_.chunk_nbytes()) +
                          " bytes of a chunk of shape " + to_string(grid_.ext_chunk_shape()));
    }

    if (dtype_override) {
        if (dtype_override->itemsize() != typesize) {
            throw UsageError(where() + ": dtype '" + dtype_override->str() + "' has " +
                             num(dtype_override->itemsize()) + "-byte items; this array stores " +
                             num(typesize) + "-byte items");
        }
        dtype_ = *dtype_override;
    } else if (plain_) {
        dtype_ = typesize == 1 ? DType::parse("|u1") : DType::raw(typesize);
        dtype_note_ =
            "plain frame without a b2nd metalayer: a 1-D array of " + num(typesize) + "-byte items";
    } else if (!meta_.has_dtype) {
        dtype_ = caterva_dtype(typesize);
        dtype_note_ = "legacy caterva metalayer stores no dtype; '" + dtype_.str() +
                      "' inferred from the typesize";
    } else if (meta_.dtype_format != 0) {
        dtype_ = DType::raw(typesize);
        dtype_note_ =
            "dtype format " + num(meta_.dtype_format) + " is not NumPy's; items read as raw bytes";
    } else {
        try {
            dtype_ = DType::parse(meta_.dtype);
            if (dtype_.itemsize() != typesize) {
                dtype_note_ = "stored dtype '" + meta_.dtype + "' has " + num(dtype_.itemsize()) +
                              "-byte items but the chunks hold " + num(typesize) +
                              "-byte items; read as raw bytes (give OpenOptions::dtype)";
                dtype_ = DType::raw(typesize);
            }
        } catch (const FormatError& e) {
            dtype_ = DType::raw(typesize);
            dtype_note_ = "stored dtype not understood (" + std::string(e.what()) +
                          "); items read as raw bytes";
        }
    }

    encode_params_ = encode_params_of(h, grid_);
}

std::string ArrayCore::where() const {
    return detail::quoted_path(frame_.path());
}

void ArrayCore::set_nthreads(int n) noexcept {
    nthreads_ = resolve_nthreads(n);
}

std::shared_ptr<ArrayCore> ArrayCore::open(const std::string& path, const OpenOptions& o) {
    return std::make_shared<ArrayCore>(storage::Frame::open(path, frame_options(o)), o.dtype,
                                       o.nthreads, o.cache_bytes);
}

CompressionParams ArrayCore::compression() const {
    return compression_of(frame_.header());
}

[[noreturn]] void ArrayCore::corrupt(std::int64_t ci, const std::string& what) const {
    throw FormatError(where() + ": chunk " + num(ci) + ": " + what);
}

// ---- reading ----------------------------------------------------------------------------------

ChunkState ArrayCore::load_chunk(std::int64_t ci, bool need_block0, bool cache_inserts) const {
    ChunkState s;
    s.stored = frame_.chunk(ci);
    const std::int64_t isz = grid_.itemsize();
    std::int64_t expected = grid_.chunk_nbytes();
    if (plain_) {
        expected = grid_.chunk_extent(0, ci) * isz;
    }
    const std::string context = where() + ": chunk " + num(ci);
    if (s.stored.index_only()) {
        if (s.stored.nbytes != expected) {
            corrupt(ci, "special chunk of " + num(s.stored.nbytes) +
                            " bytes; this array's chunks hold " + num(expected));
        }
        s.kind = ChunkState::Kind::fill;
        s.pattern.assign(static_cast<std::size_t>(isz), 0);
        if (s.stored.special == codec::Special::nan) {
            try {
                const auto chunk = storage::materialize_special(
                    codec::Special::nan, static_cast<std::int32_t>(expected), chunk_typesize(isz),
                    static_cast<std::int32_t>(expected));
                codec::ChunkDecoder(chunk).decode_range(0, {s.pattern.data(), s.pattern.size()});
            } catch (const FormatError& e) {
                rethrow_with_context(e, context);
            }
        }
        return s;
    }
    try {
        s.decoder.emplace(s.stored.bytes);
        const codec::ChunkDecoder& dec = *s.decoder;
        if (dec.nbytes() != expected) {
            corrupt(ci, "holds " + num(dec.nbytes()) + " bytes; this array's chunks hold " +
                            num(expected));
        }
        // Memcpyed data is laid out in blocks too: its block size must be the grid's.
        if (dec.special() == codec::Special::none && !plain_ &&
            (dec.header().vl_blocks() || dec.blocksize() != grid_.block_nbytes())) {
            corrupt(ci, "has blocks of " + num(dec.blocksize()) + " bytes; blocks of shape " +
                            to_string(grid_.block_shape()) + " hold " + num(grid_.block_nbytes()));
        }
        if (dec.special() != codec::Special::none) {
            s.kind = ChunkState::Kind::fill;
            s.pattern.resize(static_cast<std::size_t>(isz));
            dec.decode_range(0, {s.pattern.data(), s.pattern.size()});
        } else if (dec.memcpyed()) {
            s.kind = ChunkState::Kind::raw;
            s.raw = dec.memcpyed_data().data();
        } else {
            s.kind = ChunkState::Kind::encoded;
            if (need_block0 && !plain_ && dec.needs_block0() && dec.nblocks() > 1) {
                const auto key = grid_.block_key(ci, 0);
                s.block0 = cache_.budget() > 0 ? cache_.find(key) : nullptr;
                if (!s.block0) {
                    auto buf = std::make_shared<std::vector<std::uint8_t>>(
                        static_cast<std::size_t>(grid_.block_nbytes()));
                    dec.decode_block(0, {buf->data(), buf->size()});
                    if (cache_inserts) {
                        cache_.insert(key, buf);
                    }
                    s.block0 = std::move(buf);
                }
            }
        }
    } catch (const FormatError& e) {
        if (e.detail().rfind(where(), 0) == 0) {
            throw;
        }
        rethrow_with_context(e, context);
    }
    return s;
}

void ArrayCore::require_chunks(const std::vector<std::int64_t>& ids) const {
    for (std::int64_t ci : ids) {
        if (ci < 0 || ci >= grid_.nchunks()) {
            throw UsageError(where() + ": chunk " + num(ci) + " out of range (" +
                             num(grid_.nchunks()) + " chunks)");
        }
    }
}

void ArrayCore::require_box(const Box& box, const char* op) const {
    const std::string why = check_box(grid_.shape(), box);
    if (!why.empty()) {
        throw UsageError(where() + ": cannot " + op + " " + box.str() + " of an array of shape " +
                         to_string(grid_.shape()) + ": " + why);
    }
}

void ArrayCore::read(const Box& box, std::uint8_t* out, const std::int64_t* out_strides) const {
    std::shared_lock<FairSharedMutex> lock(mutex_);
    require_box(box, "read");
    read_unlocked(box, out, out_strides, CacheUse::automatic);
}

void ArrayCore::read_unlocked(const Box& box,
                              std::uint8_t* out,
                              const std::int64_t* out_strides,
                              CacheUse use) const {
    if (box.size() == 0) {
        return;
    }
    const Plan plan(grid_, box);
    const int nd = grid_.ndim();
    const std::int64_t isz = grid_.itemsize();
    const std::int64_t bn = grid_.block_nbytes();
    std::int64_t jstride[kMaxNdim];
    std::uint8_t* const out0 = out + plan.walk_strides(box.count, isz, out_strides, jstride);
    std::int64_t bstride[kMaxNdim];
    block_strides(grid_, bstride);
    const bool lookups = cache_.budget() > 0;
    const bool inserts = lookups && use != CacheUse::never &&
                         (use == CacheUse::always || static_cast<std::uint64_t>(plan.nblock_tasks) *
                                                             static_cast<std::uint64_t>(bn) <=
                                                         cache_.budget() / 4);

    std::vector<ChunkState> states(plan.chunks.size());
    parallel_for(plan.chunks.size(), nthreads_, [&](std::size_t t) {
        // DELTA chunks need block 0 to decode any other block.
        const ChunkTask& ct = plan.chunks[t];
        bool only_block0 = ct.nblocks == 1;
        for (int d = 0; d < nd && only_block0; ++d) {
            const DimPlan& p = plan.dims[static_cast<std::size_t>(d)];
            only_block0 = p.segs[p.runs[ct.run[d]]].block == 0;
        }
        states[t] = load_chunk(ct.ci, !only_block0, inserts);
    });

    parallel_for(static_cast<std::size_t>(plan.nblock_tasks), nthreads_, [&](std::size_t task) {
        const auto it = std::upper_bound(
            plan.chunks.begin(), plan.chunks.end(), static_cast<std::int64_t>(task),
            [](std::int64_t v, const ChunkTask& c) { return v < c.first_block_task; });
        const auto slot = static_cast<std::size_t>(it - plan.chunks.begin()) - 1;
        const ChunkTask& ct = plan.chunks[slot];
        const ChunkState& cs = states[slot];
        const Seg* seg[kMaxNdim];
        plan.segs_of(ct, static_cast<std::int64_t>(task) - ct.first_block_task, seg);

        StridedBox sb;
        sb.ndim = nd;
        std::int64_t block = 0, src_off = 0;
        std::uint8_t* dst = out0;
        bool whole = true;
        for (int d = 0; d < nd; ++d) {
            const auto u = static_cast<std::size_t>(d);
            const DimPlan& p = plan.dims[u];
            block = block * grid_.blocks_in(d) + seg[d]->block;
            src_off += seg[d]->pos * bstride[d];
            dst += seg[d]->j0 * jstride[d];
            sb.extent[d] = seg[d]->n;
            sb.src_stride[d] = p.step * bstride[d] * isz;
            sb.dst_stride[d] = jstride[d];
            const std::int64_t bs = grid_.block_shape()[u];
            whole = whole && seg[d]->n == bs &&
                    (bs == 1 || (p.step == 1 && jstride[d] == bstride[d] * isz));
        }
        switch (cs.kind) {
            case ChunkState::Kind::fill:
                fill_strided(sb, dst, cs.pattern.data(), isz);
                return;
            case ChunkState::Kind::raw:
                copy_strided(sb, cs.raw + block * bn + src_off * isz, dst, isz);
                return;
            case ChunkState::Kind::encoded:
                break;
        }
        const auto key = grid_.block_key(ct.ci, block);
        BlockCache::Buffer hold =
            block == 0 && cs.block0 ? cs.block0 : (lookups ? cache_.find(key) : nullptr);
        if (!hold && !inserts && whole && !plain_) {
            decode_block_into(cs, ct.ci, block, dst);  // the block lands contiguously
            return;
        }
        const std::uint8_t* src = block_data(cs, ct.ci, block, inserts, hold);
        copy_strided(sb, src + src_off * isz, dst, isz);
    });
}

void ArrayCore::decode_block_into(const ChunkState& cs,
                                  std::int64_t ci,
                                  std::int64_t block,
                                  std::uint8_t* into) const {
    const codec::ChunkDecoder& dec = *cs.decoder;
    try {
        if (plain_) {
            dec.decode({into, static_cast<std::size_t>(dec.nbytes())}, 1);
        } else {
            dec.decode_block(static_cast<std::int32_t>(block),
                             {into, static_cast<std::size_t>(grid_.block_nbytes())},
                             cs.block0 ? cs.block0->data() : nullptr);
        }
    } catch (const FormatError& e) {
        rethrow_with_context(e, where() + ": chunk " + num(ci));
    }
}

const std::uint8_t* ArrayCore::block_data(const ChunkState& cs,
                                          std::int64_t ci,
                                          std::int64_t block,
                                          bool inserts,
                                          BlockCache::Buffer& hold) const {
    if (hold) {
        return hold->data();
    }
    const auto size =
        static_cast<std::size_t>(plain_ ? cs.decoder->nbytes() : grid_.block_nbytes());
    if (inserts) {
        auto buf = std::make_shared<std::vector<std::uint8_t>>(size);
        decode_block_into(cs, ci, block, buf->data());
        hold = buf;
        cache_.insert(grid_.block_key(ci, block), std::move(buf));
        return hold->data();
    }
    std::uint8_t* scratch = scratch_bytes(tl_scratch, size);
    decode_block_into(cs, ci, block, scratch);
    return scratch;
}

void ArrayCore::read_points(const std::int64_t* coords, std::size_t n, std::uint8_t* out) const {
    std::shared_lock<FairSharedMutex> lock(mutex_);
    const int nd = grid_.ndim();
    const auto und = static_cast<std::size_t>(nd);
    const std::int64_t isz = grid_.itemsize();
    struct Point {
        std::int64_t chunk, block, offset;
        std::size_t index;
    };
    std::vector<Point> pts(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t* idx = coords + i * und;
        for (int d = 0; d < nd; ++d) {
            if (idx[d] < 0 || idx[d] >= grid_.shape()[static_cast<std::size_t>(d)]) {
                throw UsageError(where() + ": point " + std::to_string(i) + " " +
                                 to_string(Shape(idx, idx + nd)) + " is out of range for shape " +
                                 to_string(grid_.shape()));
            }
        }
        const Grid::Location l = grid_.locate(idx);
        pts[i] = {l.chunk, l.block, l.offset, i};
    }
    // Points grouped by block: each block is decoded once, blocks in parallel.
    std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) {
        return a.chunk != b.chunk ? a.chunk < b.chunk : a.block < b.block;
    });
    std::vector<std::size_t> groups;  // first point of each block
    std::vector<std::size_t> chunk_of_group;
    std::vector<std::int64_t> chunks;
    for (std::size_t i = 0; i < n; ++i) {
        if (i == 0 || pts[i].chunk != pts[i - 1].chunk || pts[i].block != pts[i - 1].block) {
            if (chunks.empty() || chunks.back() != pts[i].chunk) {
                chunks.push_back(pts[i].chunk);
            }
            groups.push_back(i);
            chunk_of_group.push_back(chunks.size() - 1);
        }
    }
    groups.push_back(n);
    const bool lookups = cache_.budget() > 0;
    const bool inserts = lookups && static_cast<std::uint64_t>(groups.size() - 1) *
                                            static_cast<std::uint64_t>(grid_.block_nbytes()) <=
                                        cache_.budget() / 4;
    std::vector<ChunkState> states(chunks.size());
    parallel_for(chunks.size(), nthreads_,
                 [&](std::size_t c) { states[c] = load_chunk(chunks[c], true, inserts); });
    parallel_for(groups.size() - 1, nthreads_, [&](std::size_t g) {
        const ChunkState& cs = states[chunk_of_group[g]];
        const std::int64_t ci = pts[groups[g]].chunk;
        const std::int64_t block = pts[groups[g]].block;
        const std::uint8_t* base = nullptr;
        BlockCache::Buffer hold;
        switch (cs.kind) {
            case ChunkState::Kind::fill:
                for (std::size_t i = groups[g]; i < groups[g + 1]; ++i) {
                    std::memcpy(out + static_cast<std::int64_t>(pts[i].index) * isz,
                                cs.pattern.data(), static_cast<std::size_t>(isz));
                }
                return;
            case ChunkState::Kind::raw:
                base = cs.raw + block * grid_.block_nbytes();
                break;
            case ChunkState::Kind::encoded: {
                const auto key = grid_.block_key(ci, block);
                hold = block == 0 && cs.block0 ? cs.block0 : (lookups ? cache_.find(key) : nullptr);
                base = block_data(cs, ci, block, inserts, hold);
                break;
            }
        }
        for (std::size_t i = groups[g]; i < groups[g + 1]; ++i) {
            std::memcpy(out + static_cast<std::int64_t>(pts[i].index) * isz,
                        base + pts[i].offset * isz, static_cast<std::size_t>(isz));
        }
    });
}

void ArrayCore::read_element(const std::int64_t* idx, std::uint8_t* out) const {
    std::shared_lock<FairSharedMutex> lock(mutex_);
    const int nd = grid_.ndim();
    for (int d = 0; d < nd; ++d) {
        if (idx[d] < 0 || idx[d] >= grid_.shape()[static_cast<std::size_t>(d)]) {
            Shape i(idx, idx + nd);
            throw UsageError(where() + ": index " + to_string(i) + " is out of range for shape " +
                             to_string(grid_.shape()));
        }
    }
    const std::int64_t isz = grid_.itemsize();
    if (cache_.budget() > 0) {
        const Grid::Location loc = grid_.locate(idx);
        const auto key = grid_.block_key(loc.chunk, loc.block);
        if (cache_.copy_from(key, static_cast<std::size_t>(loc.offset * isz),
                             static_cast<std::size_t>(isz), out)) {
            return;
        }
    }
    Box b = Box::region(Shape(idx, idx + nd), Shape(static_cast<std::size_t>(nd), 1));
    read_unlocked(b, out, nullptr, CacheUse::always);
}

// ---- writing ----------------------------------------------------------------------------------

void ArrayCore::require_writable(const char* op) const {
    if (plain_) {
        throw UsageError(where() + ": " + op +
                         ": a frame without a b2nd metalayer is read-only as an array");
    }
    if (!frame_.writable()) {
        throw UsageError(where() + ": " + op +
                         " needs the array opened for writing (OpenOptions::writable)");
    }
    if (!codec::codec_from_code(frame_.header().compcode())) {
        throw UnsupportedError(where() + ": " + op + ": chunks are compressed with plugin codec " +
                               num(frame_.header().compcode()) + ", which b2nd-cpp cannot write");
    }
}

void ArrayCore::decode_chunk_into(std::int64_t ci, std::uint8_t* buf, int threads) const {
    const ChunkState s = load_chunk(ci, false, false);
    const std::int64_t n = grid_.chunk_nbytes();
    switch (s.kind) {
        case ChunkState::Kind::fill: {
            StridedBox sb;
            sb.ndim = 1;
            sb.extent[0] = grid_.chunk_items();
            sb.dst_stride[0] = grid_.itemsize();
            fill_strided(sb, buf, s.pattern.data(), grid_.itemsize());
            return;
        }
        case ChunkState::Kind::raw:
            copy_bytes(buf, s.raw, static_cast<std::size_t>(n));
            return;
        case ChunkState::Kind::encoded:
            try {
                s.decoder->decode({buf, static_cast<std::size_t>(n)}, threads);
            } catch (const FormatError& e) {
                rethrow_with_context(e, where() + ": chunk " + num(ci));
            }
            return;
    }
}

storage::StagedChunk ArrayCore::encode_and_stage(const std::uint8_t* buf, int threads) {
    const std::int64_t n = grid_.chunk_nbytes();
    const std::int64_t isz = grid_.itemsize();
    if (isz <= 255 && n >= isz) {
        bool uniform = true;
        for (std::int64_t off = isz; off < n && uniform; off += isz) {
            uniform = std::memcmp(buf + off, buf, static_cast<std::size_t>(isz)) == 0;
        }
        bool zero = true;
        for (std::int64_t i = 0; i < isz; ++i) {
            zero = zero && buf[i] == 0;
        }
        if (uniform && !zero) {
            const auto chunk = codec::make_repeated_chunk(
                static_cast<std::int32_t>(n), {buf, static_cast<std::size_t>(isz)},
                static_cast<std::int32_t>(grid_.block_nbytes()));
            return frame_.stage(chunk);
        }
    }
    codec::EncodeParams p = encode_params_;
    p.nthreads = threads;
    // Encoded into reused scratch: fresh chunk-sized buffers would cost page faults per chunk.
    thread_local Scratch out;
    const auto cap = codec::max_encoded_size(static_cast<std::size_t>(n));
    const std::size_t used =
        codec::encode_chunk({buf, static_cast<std::size_t>(n)}, p, {scratch_bytes(out, cap), cap});
    const storage::StagedChunk staged = frame_.stage({out.data(), used});
    release_if_large(out);
    return staged;
}

void ArrayCore::write(const Box& box, const std::uint8_t* src, const std::int64_t* src_strides) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    require_writable("write");
    require_box(box, "write");
    if (box.size() == 0) {
        return;
    }
    const Plan plan(grid_, box);
    const int nd = grid_.ndim();
    std::int64_t jstride[kMaxNdim];
    const std::uint8_t* const src0 =
        src + plan.walk_strides(box.count, grid_.itemsize(), src_strides, jstride);

    // Each chunk is rebuilt, encoded and staged (written after the live data) by the thread
    // that built it, so memory stays at a chunk or two per thread; one commit at the end.
    // Readers go on meanwhile: they see the array as it was until the commit.
    const std::int64_t cn = grid_.chunk_nbytes();
    const int inner = plan.chunks.size() == 1 ? nthreads_ : 1;
    std::vector<storage::StagedChunk> staged(plan.chunks.size());
    std::vector<std::int64_t> ids(plan.chunks.size());
    parallel_for(plan.chunks.size(), nthreads_, [&](std::size_t k) {
        const ChunkTask& ct = plan.chunks[k];
        bool full = true;
        for (int d = 0; d < nd; ++d) {
            const DimPlan& p = plan.dims[static_cast<std::size_t>(d)];
            std::int64_t covered = 0;
            for (std::size_t s = p.runs[ct.run[d]]; s < p.runs[ct.run[d] + 1]; ++s) {
                covered += p.segs[s].n;
            }
            full = full && p.step == 1 && covered == grid_.chunk_extent(d, ct.coords[d]);
        }
        thread_local Scratch buf;
        buf.resize(static_cast<std::size_t>(cn));
        if (full) {
            // The padding of edge chunks repeats the first element, so that a chunk whose valid
            // elements are all equal is recognized as uniform.
            fill_pattern(buf.data(), buf.size(), src0 + first_offset(plan, ct, jstride),
                         grid_.itemsize());
        } else {
            decode_chunk_into(ct.ci, buf.data(), inner);
        }
        pack_blocks(grid_, plan, ct, src0, jstride, buf.data());
        staged[k] = encode_and_stage(buf.data(), inner);
        ids[k] = ct.ci;
        release_if_large(buf);
    });
    commit_staged(ids, std::move(staged));
}

void ArrayCore::commit_staged(const std::vector<std::int64_t>& ids,
                              std::vector<storage::StagedChunk> staged) {
    if (ids.empty()) {
        return;  // nothing changed: no new index to write
    }
    std::unique_lock<FairSharedMutex> lock(mutex_);
    storage::FrameEdit e = frame_.keep_all();
    for (std::size_t k = 0; k < ids.size(); ++k) {
        e.replace(ids[k], staged[k]);
    }
    frame_.apply(e);
    for (std::int64_t ci : ids) {
        cache_.erase_range(grid_.block_key(ci, 0), static_cast<std::uint64_t>(grid_.nblocks()));
    }
}

void ArrayCore::write_chunks(const std::vector<std::int64_t>& ids,
                             const ChunkProducer& produce,
                             int in_flight,
                             const Progress& progress) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    require_writable("write_chunks");
    require_chunks(ids);
    const int threads = in_flight > 0 ? std::min(in_flight, nthreads_) : nthreads_;
    const std::int64_t isz = grid_.itemsize();
    std::vector<storage::StagedChunk> staged(ids.size());
    std::mutex progress_mutex;
    std::int64_t done = 0;
    parallel_for(ids.size(), threads, [&](std::size_t k) {
        const Box region = grid_.chunk_box(ids[k]);
        thread_local Scratch values;
        values.resize(static_cast<std::size_t>(region.size() * isz));
        produce(ids[k], region, values.data());
        const Plan plan(grid_, region);
        std::int64_t jstride[kMaxNdim];
        const std::uint8_t* src0 =
            values.data() + plan.walk_strides(region.count, isz, nullptr, jstride);
        thread_local Scratch buf;
        buf.resize(static_cast<std::size_t>(grid_.chunk_nbytes()));
        fill_pattern(buf.data(), buf.size(), values.data(), isz);  // padding: see write()
        pack_blocks(grid_, plan, plan.chunks.front(), src0, jstride, buf.data());
        staged[k] = encode_and_stage(buf.data(), 1);
        release_if_large(buf);
        release_if_large(values);
        if (progress) {
            std::lock_guard<std::mutex> g(progress_mutex);
            progress(++done, static_cast<std::int64_t>(ids.size()));
        }
    });
    commit_staged(ids, std::move(staged));
}

void ArrayCore::for_each_chunk(const std::vector<std::int64_t>& ids,
                               const ChunkVisitor& visit,
                               int in_flight) const {
    std::shared_lock<FairSharedMutex> lock(mutex_);
    require_chunks(ids);
    const int threads = in_flight > 0 ? std::min(in_flight, nthreads_) : nthreads_;
    const std::int64_t isz = grid_.itemsize();
    parallel_for(ids.size(), threads, [&](std::size_t k) {
        const Box region = grid_.chunk_box(ids[k]);
        if (plain_) {
            thread_local Scratch values;
            values.resize(static_cast<std::size_t>(region.size() * isz));
            read_unlocked(region, values.data(), nullptr, CacheUse::never);
            visit(ids[k], region, values.data(), nullptr);
            return;
        }
        const ChunkState cs = load_chunk(ids[k], false, false);
        if (cs.kind == ChunkState::Kind::fill) {
            visit(ids[k], region, nullptr, cs.pattern.data());  // uniform: nothing decoded
            return;
        }
        thread_local Scratch values;
        values.resize(static_cast<std::size_t>(region.size() * isz));
        read_unlocked(region, values.data(), nullptr, CacheUse::never);
        visit(ids[k], region, values.data(), nullptr);
        release_if_large(values);
    });
}

// ---- resize, insert, remove -------------------------------------------------------------------

std::vector<std::uint8_t> ArrayCore::meta_bytes(const Shape& shape) const {
    format::B2ndMeta m = meta_;
    m.shape = shape;
    return format::write_b2nd_meta(m);
}

void ArrayCore::rebuild(const Grid& ng,
                        const std::function<NewChunk(const std::int64_t*)>& plan_of,
                        const std::uint8_t* user,
                        int axis,
                        std::int64_t user_extent) {
    const int nd = ng.ndim();
    const std::int64_t isz = ng.itemsize();
    const std::int64_t n_new = ng.nchunks();
    std::vector<NewChunk> plans(static_cast<std::size_t>(n_new));
    std::vector<std::pair<std::int64_t, NewChunk>> computed;
    std::int64_t c[kMaxNdim];
    for (std::int64_t k = 0; k < n_new; ++k) {
        ng.chunk_coords(k, c);
        NewChunk& nc = plans[static_cast<std::size_t>(k)];
        nc = plan_of(c);
        if (nc.keep < 0 && !nc.zeros) {
            computed.emplace_back(k, std::move(nc));
        }
    }
    // The caller's data has the new shape with its own extent along `axis`: C-order strides.
    Shape user_shape = ng.shape();
    std::int64_t ustride[kMaxNdim];
    if (user != nullptr) {
        user_shape[static_cast<std::size_t>(axis)] = user_extent;
    }
    c_strides(user_shape.data(), user_shape.size(), isz, ustride);
    std::int64_t bstride[kMaxNdim];
    block_strides(ng, bstride);

    std::vector<storage::StagedChunk> staged(computed.size());
    parallel_for(computed.size(), nthreads_, [&](std::size_t i) {
        const auto& [k, nc] = computed[i];
        std::int64_t coords[kMaxNdim];
        ng.chunk_coords(k, coords);
        thread_local Scratch buf;
        buf.assign(static_cast<std::size_t>(ng.chunk_nbytes()), 0);
        Scratch tmp;
        for (const Piece& p : nc.pieces) {
            const std::uint8_t* src;
            std::int64_t sstride[kMaxNdim];
            if (p.from_user) {
                src = user;
                for (int d = 0; d < nd; ++d) {
                    const auto u = static_cast<std::size_t>(d);
                    src += (p.start[u] + (d == axis ? p.delta : 0)) * ustride[d];
                    sstride[d] = ustride[d];
                }
            } else {
                Box ob = Box::region(p.start, p.count);
                if (p.delta != 0) {
                    ob.start[static_cast<std::size_t>(axis)] += p.delta;
                }
                tmp.resize(static_cast<std::size_t>(ob.size() * isz));
                read_unlocked(ob, tmp.data(), nullptr, CacheUse::never);  // replaced next
                src = tmp.data();
                c_strides(p.count.data(), p.count.size(), isz, sstride);
            }
            // Patch the region into the chunk, block by block.
            std::int64_t lo[kMaxNdim], hi[kMaxNdim], bl[kMaxNdim], bl0[kMaxNdim], bl1[kMaxNdim];
            for (int d = 0; d < nd; ++d) {
                const auto u = static_cast<std::size_t>(d);
                lo[d] = p.start[u] - coords[d] * ng.chunk_shape()[u];
                hi[d] = lo[d] + p.count[u];
                bl0[d] = lo[d] / ng.block_shape()[u];
                bl1[d] = (hi[d] - 1) / ng.block_shape()[u];
                bl[d] = bl0[d];
            }
            for (;;) {
                StridedBox sb;
                sb.ndim = nd;
                std::int64_t block = 0, dst_off = 0;
                const std::uint8_t* sp = src;
                for (int d = 0; d < nd; ++d) {
                    const std::int64_t bs = ng.block_shape()[static_cast<std::size_t>(d)];
                    const std::int64_t a = std::max(lo[d], bl[d] * bs);
                    const std::int64_t b = std::min(hi[d], (bl[d] + 1) * bs);
                    block = block * ng.blocks_in(d) + bl[d];
                    dst_off += (a - bl[d] * bs) * bstride[d];
                    sp += (a - lo[d]) * sstride[d];
                    sb.extent[d] = b - a;
                    sb.src_stride[d] = sstride[d];
                    sb.dst_stride[d] = bstride[d] * isz;
                }
                copy_strided(sb, sp, buf.data() + block * ng.block_nbytes() + dst_off * isz, isz);
                int d = nd - 1;
                for (; d >= 0; --d) {
                    if (++bl[d] <= bl1[d]) {
                        break;
                    }
                    bl[d] = bl0[d];
                }
                if (d < 0) {
                    break;
                }
            }
        }
        staged[i] = encode_and_stage(buf.data(), 1);  // same chunk and block shapes as grid_
        release_if_large(buf);
    });
    const std::vector<std::uint8_t> zero_chunk =
        codec::make_zeros_chunk(static_cast<std::int32_t>(ng.chunk_nbytes()), chunk_typesize(isz),
                                static_cast<std::int32_t>(ng.block_nbytes()));
    storage::FrameEdit e;
    std::size_t next_staged = 0;  // computed chunks are in chunk order
    for (const NewChunk& nc : plans) {
        if (nc.keep >= 0) {
            e.keep(nc.keep);
        } else if (nc.zeros) {
            e.add_new(zero_chunk);
        } else {
            e.add_staged(staged[next_staged++]);
        }
    }
    e.set_metalayer(meta_.has_dtype ? "b2nd" : "caterva", meta_bytes(ng.shape()));
    std::unique_lock<FairSharedMutex> lock(mutex_);
    frame_.apply(e);
    grid_ = ng;
    meta_.shape = ng.shape();
    cache_.clear();
}

void ArrayCore::resize(const Shape& shape) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    require_writable("resize");
    if (shape.size() != grid_.shape().size()) {
        throw UsageError(where() + ": resize to " + to_string(shape) +
                         " changes the number of dimensions of " + to_string(grid_.shape()));
    }
    if (shape == grid_.shape()) {
        return;
    }
    const std::string why =
        Grid::check(shape, grid_.chunk_shape(), grid_.block_shape(), grid_.itemsize());
    if (!why.empty()) {
        throw UsageError(where() + ": cannot resize to " + to_string(shape) + ": " + why);
    }
    const Grid ng(shape, grid_.chunk_shape(), grid_.block_shape(), grid_.itemsize());
    const Grid& og = grid_;
    const int nd = og.ndim();
    rebuild(
        ng,
        [&](const std::int64_t* c) {
            NewChunk nc;
            bool exposes = false;
            for (int d = 0; d < nd; ++d) {
                const auto u = static_cast<std::size_t>(d);
                if (c[d] >= og.chunks_in(d)) {
                    nc.zeros = true;
                    return nc;
                }
                exposes = exposes || (shape[u] > og.shape()[u] && c[d] == og.chunks_in(d) - 1 &&
                                      og.shape()[u] % og.chunk_shape()[u] != 0);
            }
            if (!exposes) {
                nc.keep = og.chunk_index(c);
                return nc;
            }
            // An old edge chunk whose padding becomes visible: keep its data, zero the rest.
            Piece p;
            for (int d = 0; d < nd; ++d) {
                const auto u = static_cast<std::size_t>(d);
                const std::int64_t a = c[d] * og.chunk_shape()[u];
                p.start.push_back(a);
                p.count.push_back(std::min({og.chunk_shape()[u], og.shape()[u] - a, shape[u] - a}));
            }
            nc.pieces.push_back(std::move(p));
            return nc;
        },
        nullptr, 0, 0);
}

void ArrayCore::insert(int axis, std::int64_t pos, std::int64_t n, const std::uint8_t* data) {
    splice(axis, pos, 0, n, data);
}

void ArrayCore::remove(int axis, std::int64_t pos, std::int64_t n) {
    splice(axis, pos, n, 0, nullptr);
}

void ArrayCore::splice(int axis,
                       std::int64_t pos,
                       std::int64_t removed,
                       std::int64_t inserted,
                       const std::uint8_t* data) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    const char* op = inserted > 0 ? "insert" : "remove";
    require_writable(op);
    const int nd = grid_.ndim();
    if (axis < 0 || axis >= nd) {
        throw UsageError(where() + ": " + op + ": axis " + num(axis) + " out of range for " +
                         num(nd) + " dimensions");
    }
    const auto ax = static_cast<std::size_t>(axis);
    const std::int64_t len = grid_.shape()[ax];
    if (pos < 0 || pos > len || removed < 0 || removed > len - pos || inserted < 0 ||
        inserted > INT64_MAX - len) {
        throw UsageError(where() + ": cannot " + op + " " + num(removed + inserted) +
                         " slices at " + num(pos) + " along axis " + num(axis) + " of length " +
                         num(len));
    }
    if (removed == 0 && inserted == 0) {
        return;
    }
    Shape shape = grid_.shape();
    shape[ax] += inserted - removed;
    const std::string why =
        Grid::check(shape, grid_.chunk_shape(), grid_.block_shape(), grid_.itemsize());
    if (!why.empty()) {
        throw UsageError(where() + ": cannot change the shape to " + to_string(shape) + ": " + why);
    }
    const Grid ng(shape, grid_.chunk_shape(), grid_.block_shape(), grid_.itemsize());
    const Grid& og = grid_;
    const std::int64_t cs = og.chunk_shape()[ax];
    // Whole chunks moving by whole chunks are kept as they are.
    const bool aligned = pos % cs == 0 && removed % cs == 0 && inserted % cs == 0;
    const std::int64_t delta = removed - inserted;  // old coordinate = new + delta after the gap
    rebuild(
        ng,
        [&](const std::int64_t* c) {
            NewChunk nc;
            const std::int64_t a = c[axis] * cs;
            const std::int64_t b = std::min(a + cs, shape[ax]);
            std::int64_t oc[kMaxNdim];
            std::copy(c, c + nd, oc);
            if (b <= pos) {
                nc.keep = og.chunk_index(oc);
                return nc;
            }
            if (aligned && a >= pos + inserted) {
                oc[axis] += delta / cs;
                nc.keep = og.chunk_index(oc);
                return nc;
            }
            const Box w = ng.chunk_box(ng.chunk_index(c));
            auto add = [&](std::int64_t lo, std::int64_t hi, bool user, std::int64_t shift) {
                if (lo < hi) {
                    Piece p{w.start, w.count, user, shift};
                    p.start[ax] = lo;
                    p.count[ax] = hi - lo;
                    nc.pieces.push_back(std::move(p));
                }
            };
            add(a, std::min(b, pos), false, 0);
            add(std::max(a, pos), std::min(b, pos + inserted), true, -pos);
            add(std::max(a, pos + inserted), b, false, delta);
            return nc;
        },
        data, axis, inserted);
}

// ---- metadata, durability ----------------------------------------------------------------------

void ArrayCore::update_metalayer(const std::string& name, ByteSpan content) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    std::unique_lock<FairSharedMutex> lock(mutex_);
    if (name == "b2nd" || name == "caterva") {
        throw UsageError(where() + ": the '" + name + "' metalayer is managed by the array");
    }
    frame_.update_metalayer(name, content);
}

void ArrayCore::set_vlmeta(const std::string& name, ByteSpan content) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    std::unique_lock<FairSharedMutex> lock(mutex_);
    frame_.set_vlmeta(name, content);
}

bool ArrayCore::delete_vlmeta(const std::string& name) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    std::unique_lock<FairSharedMutex> lock(mutex_);
    return frame_.delete_vlmeta(name);
}

void ArrayCore::sync() {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    std::unique_lock<FairSharedMutex> lock(mutex_);
    frame_.sync();
}

void ArrayCore::compact() {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    std::unique_lock<FairSharedMutex> lock(mutex_);
    frame_.compact();
    cache_.clear();
}

// ---- creating ----------------------------------------------------------------------------------

std::shared_ptr<ArrayCore> ArrayCore::create(const std::string& path,
                                             const DType& dtype,
                                             const Shape& shape,
                                             const CreateOptions& o) {
    const std::string where = detail::quoted_path(path);
    const std::int64_t isz = dtype.itemsize();
    if (isz <= 0) {
        throw UsageError(where + ": dtype '" + dtype.str() + "' has no size");
    }
    Shape chunks = o.chunk_shape, blocks = o.block_shape;
    if (chunks.empty() && !shape.empty()) {
        if (!blocks.empty()) {
            throw UsageError(where + ": a block shape needs a chunk shape");
        }
        std::tie(chunks, blocks) = auto_chunk_block_shapes(shape, isz);
    } else if (blocks.empty() && !shape.empty()) {
        blocks = auto_chunk_block_shapes(chunks, isz).second;
    }
    const std::string why = Grid::check(shape, chunks, blocks, isz);
    if (!why.empty()) {
        throw UsageError(where + ": " + why);
    }
    const Grid g(shape, chunks, blocks, isz);
    const CompressionParams& cp = o.compression;
    const std::string bad = check_compression(cp);
    if (!bad.empty()) {
        throw UsageError(where + ": " + bad);
    }
    const storage::FrameParams fp = frame_params(cp, g, o.nthreads);

    format::B2ndMeta meta;
    meta.shape = shape;
    meta.chunk_shape.assign(chunks.begin(), chunks.end());
    meta.block_shape.assign(blocks.begin(), blocks.end());
    meta.dtype = dtype.str();
    std::vector<format::Metalayer> metas;
    metas.push_back({"b2nd", format::write_b2nd_meta(meta)});
    for (const auto& [name, content] : o.metalayers) {
        if (name == "b2nd" || name == "caterva") {
            throw UsageError(where + ": metalayer name '" + name + "' is reserved");
        }
        metas.push_back({name, content});
    }
    if (o.overwrite) {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
        if (ec) {
            throw IoError(where + ": cannot remove the existing array", ec);
        }
    }

    // The initial content: one special (or small) chunk, used at every position.
    std::vector<std::uint8_t> initial;
    const auto cn = static_cast<std::int32_t>(g.chunk_nbytes());
    const auto bn = static_cast<std::int32_t>(g.block_nbytes());
    const int ts = chunk_typesize(isz);
    switch (o.fill) {
        case Fill::zeros:
            initial = codec::make_zeros_chunk(cn, ts, bn);
            break;
        case Fill::uninit:
            initial = codec::make_uninit_chunk(cn, ts, bn);
            break;
        case Fill::nan:
            if (dtype.kind() != DType::Kind::float_ || (isz != 4 && isz != 8)) {
                throw UsageError(where + ": Fill::nan needs a float32 or float64 dtype, not '" +
                                 dtype.str() + "'");
            }
            initial = codec::make_nans_chunk(cn, ts, bn);
            break;
        case Fill::value: {
            if (static_cast<std::int64_t>(o.fill_value.size()) != isz) {
                throw UsageError(where + ": fill_value has " +
                                 num(static_cast<std::int64_t>(o.fill_value.size())) +
                                 " bytes; one '" + dtype.str() + "' item has " + num(isz));
            }
            const bool zero = std::all_of(o.fill_value.begin(), o.fill_value.end(),
                                          [](std::uint8_t b) { return b == 0; });
            if (zero) {
                initial = codec::make_zeros_chunk(cn, ts, bn);
            } else if (isz <= 255) {
                initial =
                    codec::make_repeated_chunk(cn, {o.fill_value.data(), o.fill_value.size()}, bn);
            } else {
                std::vector<std::uint8_t> buf(static_cast<std::size_t>(cn));
                for (std::int64_t off = 0; off < cn; off += isz) {
                    std::memcpy(buf.data() + off, o.fill_value.data(),
                                static_cast<std::size_t>(isz));
                }
                initial = codec::encode_chunk({buf.data(), buf.size()}, encode_params(cp, g));
            }
            break;
        }
    }
    // Built under a temporary name and renamed: no one ever sees a frame without its chunks.
    std::string target = path;
    while (target.size() > 1 && target.back() == '/') {
        target.pop_back();
    }
    if (std::filesystem::exists(target)) {
        throw UsageError(where + ": already exists (CreateOptions::overwrite replaces it)");
    }
    const std::string tmp = target + ".b2nd-tmp-" + std::to_string(::getpid());
    try {
        storage::Frame frame = storage::Frame::create(tmp, fp, o.sparse, metas, o.durable);
        if (g.nchunks() > 0) {
            storage::FrameEdit e;
            for (std::int64_t i = 0; i < g.nchunks(); ++i) {
                e.add_new(initial);
            }
            frame.apply(e);
        }
    } catch (...) {
        std::error_code ignored;
        std::filesystem::remove_all(tmp, ignored);
        throw;
    }
    std::error_code ec;
    std::filesystem::rename(tmp, target, ec);
    if (ec) {
        std::error_code ignored;
        std::filesystem::remove_all(tmp, ignored);
        throw IoError(where + ": cannot move the new array into place", ec);
    }
    return std::make_shared<ArrayCore>(storage::Frame::open(target, frame_options(o)), dtype,
                                       o.nthreads, o.cache_bytes);
}

}  // namespace b2nd::detail
