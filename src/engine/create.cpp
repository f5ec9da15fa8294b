// Creating an array: the geometry (automatic chunk and block shapes when none are given), the
// metalayers, and a frame whose every chunk is the one initial chunk the fill asks for, then
// whatever the caller writes into it, all under a temporary name and moved into place in one
// step (publish.hpp) so that no one ever sees it half made.
#include <algorithm>
#include <cstring>

#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "../storage/publish.hpp"
#include "../values/params_detail.hpp"
#include "array_core.hpp"

namespace b2nd::detail {

namespace {

/// The grid of a new array: the given shapes, or automatic ones.
Grid new_grid(const std::string& where,
              const Shape& shape,
              std::int64_t isz,
              const CreateOptions& o) {
    Shape chunks = o.chunk_shape, blocks = o.block_shape;
    if (!chunks.empty() && chunks.size() != shape.size()) {
        throw UsageError(where + ": the chunk shape " + to_string(chunks) + " has " +
                         num(static_cast<std::int64_t>(chunks.size())) +
                         " dimensions; the array's shape " + to_string(shape) + " has " +
                         num(static_cast<std::int64_t>(shape.size())));
    }
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
    Grid g(shape, chunks, blocks, isz);
    if (g.nchunks() > o.max_chunks) {
        // Refused now, not at the next open: 4e6 x 4e6 doubles in automatic chunks would take
        // seconds and gigabytes to write an index no default open reads.
        throw UsageError(where + ": the shape " + to_string(shape) + " in chunks of " +
                         to_string(chunks) + " makes " + num(g.nchunks()) +
                         " chunks, more than CreateOptions::max_chunks (" + num(o.max_chunks) +
                         ") lets an open read; give larger chunks, or raise both limits");
    }
    return g;
}

/// The chunk every position of a new array starts with: a special chunk (zeros, uninitialized,
/// NaN, a repeated value), or for values of more than 255 bytes an encoded chunk of them.
std::vector<std::uint8_t> initial_chunk(const std::string& where,
                                        const DType& dtype,
                                        const Grid& g,
                                        const CreateOptions& o) {
    const std::int64_t isz = g.itemsize();
    const auto cn = static_cast<std::int32_t>(g.chunk_nbytes());
    const auto bn = static_cast<std::int32_t>(g.block_nbytes());
    const int ts = chunk_typesize(isz);
    switch (o.fill) {
        case Fill::zeros:
            break;
        case Fill::uninit:
            return codec::make_uninit_chunk(cn, ts, bn);
        case Fill::nan:
            if (dtype.kind() != DType::Kind::float_ || (isz != 4 && isz != 8)) {
                throw UsageError(where + ": Fill::nan needs a float32 or float64 dtype, not '" +
                                 dtype.str() + "'");
            }
            return codec::make_nans_chunk(cn, ts, bn);
        case Fill::value: {
            if (static_cast<std::int64_t>(o.fill_value.size()) != isz) {
                throw UsageError(where + ": fill_value has " +
                                 num(static_cast<std::int64_t>(o.fill_value.size())) +
                                 " bytes; one '" + dtype.str() + "' item has " + num(isz));
            }
            const bool zero = std::all_of(o.fill_value.begin(), o.fill_value.end(),
                                          [](std::uint8_t b) { return b == 0; });
            if (zero) {
                break;
            }
            if (isz <= 255) {
                return codec::make_repeated_chunk(cn, {o.fill_value.data(), o.fill_value.size()},
                                                  bn);
            }
            std::vector<std::uint8_t> buf(static_cast<std::size_t>(cn));
            for (std::int64_t off = 0; off < cn; off += isz) {
                std::memcpy(buf.data() + off, o.fill_value.data(), static_cast<std::size_t>(isz));
            }
            return codec::encode_chunk({buf.data(), buf.size()}, encode_params(o.compression, g));
        }
    }
    return codec::make_zeros_chunk(cn, ts, bn);
}

/// python-blosc2's default filters for str (U) arrays: SHUFFLE by 4-byte units (UCS-4 code
/// units, filters_meta 4) rather than by item, when the compression is left at its defaults.
CreateOptions with_dtype_defaults(const CreateOptions& o, const DType& dtype) {
    const CompressionParams d;
    const CompressionParams& c = o.compression;
    const bool defaults = c.codec == d.codec && c.clevel == d.clevel && c.filters.size() == 1 &&
                          c.filters[0].id == Filter::shuffle && c.filters[0].meta == 0 &&
                          c.splitmode == d.splitmode && c.codec_meta == d.codec_meta;
    CreateOptions out = o;
    if (defaults && dtype.kind() == DType::Kind::unicode) {
        out.compression.filters = {{Filter::shuffle, 4}};
    }
    return out;
}

}  // namespace

std::shared_ptr<ArrayCore> ArrayCore::create(const std::string& path,
                                             const DType& dtype,
                                             const Shape& shape,
                                             const CreateOptions& options,
                                             const Build& build) {
    const std::string where = quoted_path(path);
    const CreateOptions o = with_dtype_defaults(options, dtype);
    if (dtype.itemsize() <= 0) {
        throw UsageError(where + ": dtype '" + dtype.str() + "' has no size");
    }
    const Grid g = new_grid(where, shape, dtype.itemsize(), o);
    std::string bad = check_compression(o.compression, g);
    if (bad.empty()) {
        bad = check_values(o.compression, dtype);
    }
    if (!bad.empty()) {
        throw UsageError(where + ": " + bad);
    }

    format::B2ndMeta meta;
    meta.shape = shape;
    meta.chunk_shape.assign(g.chunk_shape().begin(), g.chunk_shape().end());
    meta.block_shape.assign(g.block_shape().begin(), g.block_shape().end());
    meta.dtype = dtype.str();
    std::vector<format::Metalayer> metas;
    metas.push_back({"b2nd", format::write_b2nd_meta(meta)});
    for (const auto& [name, content] : o.metalayers) {
        if (name == "b2nd" || name == "caterva") {
            throw UsageError(where + ": metalayer name '" + name + "' is reserved");
        }
        metas.push_back({name, content});
    }
    const std::vector<std::uint8_t> initial = initial_chunk(where, dtype, g, o);

    // Built under a temporary name (private: no lock file), filled by `build`, then moved into
    // place in one step: no one ever sees a frame without its chunks or its data.
    Publication pub(path, o.overwrite, where, OutputKind::array, o.lock_wait_ms, frame_options(o));
    try {
        storage::FrameParams fp = frame_params(o.compression, g, o.nthreads);
        fp.checksums = o.checksums;
        // Built without fsyncs (no one sees it before it is published); made durable once, at
        // the end, with `durable`.
        (void)storage::Frame::create(pub.temporary(), fp, o.sparse, metas, false, false);
        if (g.nchunks() > 0) {
            // Private until published: each commit writes over the last one's index and
            // trailer, so that what is published holds no dead space.
            storage::OpenOptions so;
            so.writable = true;
            so.locking = false;
            so.exclusive = true;
            so.auto_compact = false;
            so.durable = false;
            storage::Frame frame = storage::Frame::open(pub.temporary(), so);
            {
                storage::FrameEdit e;
                for (std::int64_t i = 0; i < g.nchunks(); ++i) {
                    e.add_new(initial);
                }
                frame.apply(e);
            }
        }
        if (build) {
            OpenOptions t;
            t.writable = true;
            t.locking = false;
            t.auto_compact = false;
            t.dtype = dtype;
            t.nthreads = o.nthreads;
            t.cache_bytes = 0;
            t.durable = false;
            t.flush_behind = o.durable;  // the sync below then waits for little
            t.exclusive = true;
            build(pub.temporary(), t);
        }
        if (o.durable) {
            storage::OpenOptions so;
            so.writable = true;
            so.locking = false;
            so.auto_compact = false;
            storage::Frame::open(pub.temporary(), so).sync();
        }
        pub.publish(o.durable);
    } catch (...) {
        pub.rethrow();
    }
    OpenOptions opened = opened_options(o);
    opened.dtype = dtype;
    if (storage::is_url(pub.target())) {
        opened.writable = false;  // objects are not changed in place: the handle reads
        return over(storage::Frame::open_url(pub.target(), frame_options(opened)), opened);
    }
    return over(storage::Frame::open(pub.target(), frame_options(o)), opened);
}

}  // namespace b2nd::detail
