// Creating an array: the geometry (automatic chunk and block shapes when none are given), the
// metalayers, and a frame whose every chunk is the one initial chunk the fill asks for, built
// under a temporary name and renamed into place so that no one ever sees it half made.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <b2nd/error.hpp>

#include "../detail/strings.hpp"
#include "array_core.hpp"
#include "params_detail.hpp"
#include <unistd.h>

namespace b2nd::detail {

namespace {

/// The grid of a new array: the given shapes, or automatic ones.
Grid new_grid(const std::string& where,
              const Shape& shape,
              std::int64_t isz,
              const CreateOptions& o) {
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
    return Grid(shape, chunks, blocks, isz);
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

}  // namespace

bool process_gone(long pid) noexcept {
    return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

void sweep_stale_temporaries(const std::string& target) noexcept {
    namespace fs = std::filesystem;
    const fs::path t(target);
    const std::string prefix = t.filename().string() + ".b2nd-tmp-";
    fs::path dir = t.parent_path();
    if (dir.empty()) {
        dir = ".";
    }
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        // TARGET.b2nd-tmp-PID, and what a writer of that name left (TARGET.b2nd-tmp-PID.*).
        if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) {
            continue;
        }
        const std::size_t stop = name.find_first_not_of("0123456789", prefix.size());
        if (stop == prefix.size() || (stop != std::string::npos && name[stop] != '.')) {
            continue;
        }
        if (process_gone(std::strtol(name.c_str() + prefix.size(), nullptr, 10))) {
            std::error_code ignored;
            fs::remove_all(it->path(), ignored);
        }
    }
}

std::shared_ptr<ArrayCore> ArrayCore::create(const std::string& path,
                                             const DType& dtype,
                                             const Shape& shape,
                                             const CreateOptions& o) {
    const std::string where = quoted_path(path);
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
    if (o.overwrite) {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
        if (ec) {
            throw IoError(where + ": cannot remove the existing array", ec);
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
    sweep_stale_temporaries(target);
    const std::string tmp = target + ".b2nd-tmp-" + std::to_string(::getpid());
    try {
        // Private until renamed into place: no lock file for the temporary name.
        storage::Frame frame = storage::Frame::create(
            tmp, frame_params(o.compression, g, o.nthreads), o.sparse, metas, o.durable, false);
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
    auto core = std::make_shared<ArrayCore>(storage::Frame::open(target, frame_options(o)), dtype,
                                            o.nthreads, o.cache_bytes);
    core->options_.writable = true;
    core->options_.dtype = dtype;
    core->options_.nthreads = o.nthreads;
    core->options_.cache_bytes = o.cache_bytes;
    core->options_.durable = o.durable;
    core->options_.locking = o.locking;
    core->options_.auto_compact = o.auto_compact;
    return core;
}

}  // namespace b2nd::detail
