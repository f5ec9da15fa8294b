// ArrayCore: opening an array (what its frame says about shape, chunks, blocks and dtype), the
// checks every operation shares, and metadata, sync and compact.
#include "array_core.hpp"

#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "../storage/frame_internal.hpp"
#include "../values/params_detail.hpp"

namespace b2nd::detail {

namespace {

/// The dtype a legacy caterva array (no dtype stored) reads as: unsigned integers of its size.
DType caterva_dtype(std::int64_t typesize) {
    switch (typesize) {
        case 1:
            return DType::parse("|u1");
        case 2:
        case 4:
        case 8:
            return native_dtype(DType::Kind::uint, typesize);
        default:
            return DType::raw(typesize);
    }
}

/// The grid of the array a frame holds: from its b2nd (or caterva) metalayer, parsed into
/// `meta`; for a plain frame (`plain` set), a 1-D array of its items, one block per chunk.
Grid grid_of(const storage::Frame& f, format::B2ndMeta& meta, bool& plain) {
    const std::string where = quoted_path(f.path());
    const format::FrameHeader& h = f.header();
    const std::int64_t typesize = h.typesize;  // positive: read_frame_header checks
    const format::Metalayer* ml = f.metalayer("b2nd");
    if (ml == nullptr) {
        ml = f.metalayer("caterva");
    }
    Shape shape, chunk_shape, block_shape;
    plain = ml == nullptr;
    if (!plain) {
        try {
            meta = format::read_b2nd_meta(ml->content);
        } catch (const FormatError& e) {
            rethrow_with_context(e, where + ": metalayer '" + ml->name + "'",
                                 f.base_offset() + ml->offset);
        }
        shape = meta.shape;
        chunk_shape.assign(meta.chunk_shape.begin(), meta.chunk_shape.end());
        block_shape.assign(meta.block_shape.begin(), meta.block_shape.end());
    } else {
        if (h.chunksize <= 0 || h.chunksize % typesize != 0 || h.nbytes % typesize != 0) {
            throw UnsupportedError(
                where +
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
        throw FormatError(where + ": the " +
                          (plain ? std::string("frame") : "'" + ml->name + "' metalayer") +
                          " describes an invalid array: " + why);
    }
    Grid g(shape, chunk_shape, block_shape, typesize);
    if (g.nchunks() != f.nchunks()) {
        throw FormatError(where + ": an array of shape " + to_string(shape) + " in chunks of " +
                          to_string(chunk_shape) + " needs " + num(g.nchunks()) +
                          " chunks, the frame holds " + num(f.nchunks()));
    }
    if (!plain && g.nchunks() > 0 && h.chunksize != g.chunk_nbytes()) {
        throw FormatError(where + ": the frame's chunk size " + num(h.chunksize) +
                          " differs from the " + num(g.chunk_nbytes()) +
                          " bytes of a chunk of shape " + to_string(g.ext_chunk_shape()));
    }
    return g;
}

}  // namespace

ArrayCore::ArrayCore(storage::Frame frame,
                     const std::optional<DType>& dtype_override,
                     int nthreads,
                     std::size_t cache_bytes) {
    set_nthreads(nthreads);
    bool plain = false;
    Grid g = grid_of(frame, meta_, plain);
    source_ = std::make_unique<ChunkSource>(std::move(frame), std::move(g), plain, cache_bytes);

    // The dtype items read as, and why it is not the stored one when it is not.
    const std::int64_t typesize = grid().itemsize();
    if (dtype_override) {
        if (dtype_override->itemsize() != typesize) {
            throw UsageError(where() + ": dtype '" + dtype_override->str() + "' has " +
                             num(dtype_override->itemsize()) + "-byte items; this array stores " +
                             num(typesize) + "-byte items");
        }
        dtype_ = *dtype_override;
    } else if (plain) {
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
}

std::shared_ptr<ArrayCore> ArrayCore::open(const std::string& path, const OpenOptions& o) {
    if (storage::is_url(path)) {
        if (o.writable) {
            throw UsageError("\"" + storage::redacted_url(path) + "\": arrays over " +
                             storage::driver_name(path) + " are read-only");
        }
        return over(storage::Frame::open_url(path, frame_options(o)), o);
    }
    return over(storage::Frame::open(path, frame_options(o)), o);
}

std::shared_ptr<ArrayCore> ArrayCore::over(storage::Frame frame, const OpenOptions& o) {
    auto core = std::make_shared<ArrayCore>(std::move(frame), o.dtype, o.nthreads, o.cache_bytes);
    if (core->source_->frame().remote() && !o.http_cache.empty()) {
        core->source_->set_remote_cache(
            RemoteCache::open(o.http_cache, *core->source_, o.http_cache_bytes));
    }
    core->options_ = o;
    core->source_->set_salvage(o.salvage);
    return core;
}

bool ArrayCore::refresh() {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    std::unique_lock<FairSharedMutex> lock(mutex_);
    storage::Frame& f = source_->frame();
    const std::vector<std::int64_t> before = storage::FrameInternal::index_entries(f);
    const std::uint64_t file_before = storage::FrameInternal::file_id(f);
    if (!f.refresh()) {
        return false;
    }

    format::B2ndMeta meta;
    bool plain = false;
    Grid g = grid_of(f, meta, plain);
    if (g == grid() && storage::FrameInternal::file_id(f) == file_before && !options_.lock_reads) {
        // Same grid, same file: only the chunks whose index entry changed are new (b2nd-cpp's
        // writers never rewrite bytes an entry names: offsets past the old data, fresh chunk
        // file numbers). Files read with lock_reads are rewritten in place: all blocks go.
        const std::vector<std::int64_t> after = storage::FrameInternal::index_entries(f);
        for (std::size_t i = 0; i < after.size() && i < before.size(); ++i) {
            if (after[i] != before[i]) {
                source_->forget(static_cast<std::int64_t>(i));
            }
        }
    } else {
        source_->set_grid(std::move(g));
    }
    meta_ = std::move(meta);
    if (f.remote() && source_->remote_cache() != nullptr) {
        // Another version of the remote file: its cache is checked (and emptied) anew.
        source_->set_remote_cache(nullptr);
        source_->set_remote_cache(
            RemoteCache::open(options_.http_cache, *source_, options_.http_cache_bytes));
    }
    return true;
}

void ArrayCore::set_nthreads(int n) noexcept {
    nthreads_ = resolve_nthreads(n);
}

CompressionParams ArrayCore::compression() const {
    return compression_of(frame().header());
}

// ---- checks ---------------------------------------------------------------------------------

void ArrayCore::require_box(const Box& box, const char* op) const {
    const std::string why = check_box(grid().shape(), box);
    if (!why.empty()) {
        throw UsageError(where() + ": cannot " + op + " " + box.str() + " of an array of shape " +
                         to_string(grid().shape()) + ": " + why);
    }
}

void ArrayCore::require_chunks(const std::vector<std::int64_t>& ids) const {
    for (std::int64_t ci : ids) {
        if (ci < 0 || ci >= grid().nchunks()) {
            throw UsageError(where() + ": chunk " + num(ci) + " out of range (" +
                             num(grid().nchunks()) + " chunks)");
        }
    }
}

void ArrayCore::require_writable(const char* op) const {
    if (plain()) {
        throw UsageError(where() + ": " + op +
                         ": a frame without a b2nd metalayer is read-only as an array");
    }
    require_open_for_writing(op);
    const std::string& why = source_->write_refusal();
    if (!why.empty()) {
        throw UnsupportedError(where() + ": " + op +
                               ": this array's compression cannot be "
                               "written: " +
                               why);
    }
}

// ---- metadata, durability -------------------------------------------------------------------

void ArrayCore::update_metalayer(const std::string& name, ByteSpan content) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    std::unique_lock<FairSharedMutex> lock(mutex_);
    if (name == "b2nd" || name == "caterva") {
        throw UsageError(where() + ": the '" + name + "' metalayer is managed by the array");
    }
    source_->frame().update_metalayer(name, content);
}

void ArrayCore::require_open_for_writing(const std::string& op) const {
    if (!frame().writable()) {
        throw UsageError(where() + ": " + op +
                         ": the array is open read-only (OpenOptions::writable opens it for "
                         "writing)");
    }
}

void ArrayCore::set_vlmeta(const std::string& name, ByteSpan content) {
    require_open_for_writing("cannot set attribute '" + name + "'");
    std::lock_guard<std::mutex> writer(writer_mutex_);
    std::unique_lock<FairSharedMutex> lock(mutex_);
    source_->frame().set_vlmeta(name, content);
}

void ArrayCore::set_vlmeta(
    const std::vector<std::pair<std::string, std::vector<std::uint8_t>>>& all) {
    if (all.empty()) {
        return;
    }
    require_open_for_writing("cannot set attributes");
    std::lock_guard<std::mutex> writer(writer_mutex_);
    std::unique_lock<FairSharedMutex> lock(mutex_);
    storage::Frame& f = source_->frame();
    storage::FrameEdit e = f.keep_all();
    for (const auto& [name, content] : all) {
        e.set_vlmeta(name, content);
    }
    f.apply(e);
}

bool ArrayCore::delete_vlmeta(const std::string& name) {
    require_open_for_writing("cannot delete attribute '" + name + "'");
    std::lock_guard<std::mutex> writer(writer_mutex_);
    std::unique_lock<FairSharedMutex> lock(mutex_);
    return source_->frame().delete_vlmeta(name);
}

void ArrayCore::sync() {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    std::unique_lock<FairSharedMutex> lock(mutex_);
    source_->frame().sync();
}

void ArrayCore::compact(const storage::CompactProgress& progress) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    std::unique_lock<FairSharedMutex> lock(mutex_);
    source_->frame().compact(progress);
    source_->cache().clear();
}

}  // namespace b2nd::detail
