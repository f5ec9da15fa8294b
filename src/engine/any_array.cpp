#include <filesystem>

#include <b2nd/any_array.hpp>
#include <b2nd/attrs.hpp>
#include <b2nd/codec/registry.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/frame.hpp>

#include "../detail/text.hpp"
#include "../storage/frame_internal.hpp"
#include "../values/params_detail.hpp"
#include "array_core.hpp"
#include "engine_access.hpp"

namespace b2nd {

using detail::num;

AnyArray AnyArray::create(const std::string& path,
                          const DType& dtype,
                          const Shape& shape,
                          const CreateOptions& options) {
    return AnyArray(detail::ArrayCore::create(path, dtype, shape, options));
}

namespace {

/// Checks that `data` holds the items of `shape`, and that the codec takes them (NaN under ZFP
/// is refused before anything is created).
void check_data(const std::string& where,
                const DType& dtype,
                const Shape& shape,
                ByteSpan data,
                const CreateOptions& options) {
    std::int64_t items = 1;
    for (std::int64_t v : shape) {
        if (v < 0 || format::mul_overflows(items, v, &items)) {
            throw UsageError(where + ": invalid shape " + to_string(shape));
        }
    }
    if (static_cast<std::int64_t>(data.size()) / std::max<std::int64_t>(dtype.itemsize(), 1) !=
            items ||
        data.size() % static_cast<std::size_t>(std::max<std::int64_t>(dtype.itemsize(), 1)) != 0) {
        throw UsageError(where + ": " + num(static_cast<std::int64_t>(data.size())) +
                         " bytes of data for " + num(items) + " items of '" + dtype.str() +
                         "' (shape " + to_string(shape) + ")");
    }
    const Codec c = options.compression.codec;
    if (const codec::CodecPlugin* p = codec::find_codec_plugin(static_cast<std::uint8_t>(c))) {
        if (p->check_data) {
            codec::BlockContext ctx;
            ctx.typesize = static_cast<int>(std::min<std::int64_t>(dtype.itemsize(), 255));
            ctx.meta = options.compression.codec_meta;
            std::string why;
            try {
                why = p->check_data(ctx, data);
            } catch (const codec::ItemError& e) {  // its position in the array
                Shape at(shape.size());
                std::int64_t flat = e.item();
                for (std::size_t d = shape.size(); d-- > 0;) {
                    at[d] = flat % shape[d];
                    flat /= shape[d];
                }
                throw UsageError(where + ": the element at " + to_string(at) + ": " + e.what());
            }
            if (!why.empty()) {
                throw UsageError(where + ": " + why);
            }
        }
    }
}

}  // namespace

AnyArray AnyArray::create_from(const std::string& path,
                               const DType& dtype,
                               const Shape& shape,
                               ByteSpan data,
                               const CreateOptions& options) {
    check_data(detail::quoted_path(path), dtype, shape, data, options);
    CreateOptions o = options;
    o.fill = Fill::uninit;  // every chunk is written before the array is published
    return AnyArray(detail::ArrayCore::create(path, dtype, shape, o,
                                              [&](const std::string& tmp, const OpenOptions& t) {
                                                  AnyArray a = open(tmp, t);
                                                  a.write(Box::whole(shape), data);
                                              }));
}

AnyArray AnyArray::create_in_memory_from(const DType& dtype,
                                         const Shape& shape,
                                         ByteSpan data,
                                         const CreateOptions& options) {
    check_data("<memory>", dtype, shape, data, options);
    CreateOptions o = options;
    o.fill = Fill::uninit;  // every chunk is written below; no one else sees the array
    AnyArray a = create_in_memory(dtype, shape, o);
    a.write(Box::whole(shape), data);
    return a;
}

detail::ArrayCore& AnyArray::core() const {
    if (!core_) {
        throw UsageError("use of an empty AnyArray");
    }
    return *core_;
}

AnyArray::Reading AnyArray::reading() const {
    detail::ArrayCore& c = core();
    const bool locked = c.options().lock_reads && !c.options().writable;
    Reading r{c,
              locked ? storage::FrameInternal::read_lock(c.frame()) : storage::Frame::ReadLock()};
    if ((c.follows() || locked) && c.stale()) {
        c.refresh();
    }
    return r;
}

void EngineAccess::read(const AnyArray& a, const detail::SelectionPlan& plan, std::uint8_t* out) {
    a.reading()->read(plan, out);
}

bool AnyArray::refresh() {
    return core().refresh();
}

bool AnyArray::follows() const {
    return core().follows();
}

AnyArray AnyArray::pinned() const {
    const detail::ArrayCore& c = core();
    // A writer sees its own commits; with lock_reads, other programs rewrite the file in place
    // and no older state survives them: both read the latest state.
    if (!c.follows() || c.options().writable || c.options().lock_reads) {
        return *this;
    }
    OpenOptions o = c.options();
    o.follow = false;
    return open(path(), o);
}

const std::string& AnyArray::path() const {
    return core().frame().path();
}
const std::string& AnyArray::name() const {
    return core().frame().name();
}
const DType& AnyArray::dtype() const {
    return core().dtype();
}
const std::string& AnyArray::dtype_note() const {
    return core().dtype_note();
}
const Grid& AnyArray::grid() const {
    return core().grid();
}
std::vector<std::string> AnyArray::salvaged() const {
    return core().salvaged();
}

std::int64_t AnyArray::cbytes() const {
    // What updates left behind is not the array's, nor are the checksums' block digests.
    return core().frame().chunk_bytes();
}
bool AnyArray::sparse() const {
    return core().frame().sparse();
}
bool AnyArray::writable() const {
    return core().frame().writable() && !core().plain();
}
bool AnyArray::legacy_caterva() const {
    return core().legacy_caterva();
}
CompressionParams AnyArray::compression() const {
    return core().compression();
}
const storage::Frame& AnyArray::frame() const {
    return core().frame();
}
int AnyArray::nthreads() const {
    return core().nthreads();
}
void AnyArray::set_nthreads(int n) {
    core().set_nthreads(n);
}

void AnyArray::resize(const Shape& shape) {
    core().resize(shape);
}

std::int64_t AnyArray::extent_of(int axis, std::size_t nbytes, const char* op) const {
    detail::ArrayCore& c = core();
    const Shape& s = c.grid().shape();
    if (axis < 0 || axis >= static_cast<int>(s.size())) {
        throw UsageError(c.where() + ": " + op + ": axis " + num(axis) +
                         " out of range for shape " + to_string(s));
    }
    const std::int64_t isz = c.grid().itemsize();
    std::int64_t slice = isz;
    std::string wanted = "(";  // the shape the data must have, with n along the axis
    for (std::size_t d = 0; d < s.size(); ++d) {
        wanted += (d > 0 ? ", " : "") + (static_cast<int>(d) == axis ? "n" : num(s[d]));
        if (static_cast<int>(d) != axis) {
            slice *= s[d];
        }
    }
    wanted += s.size() == 1 ? ",)" : ")";
    if (slice == 0 || nbytes % static_cast<std::size_t>(slice) != 0) {
        const std::string held = nbytes % static_cast<std::size_t>(isz) == 0
                                     ? num(static_cast<std::int64_t>(nbytes) / isz) +
                                           " elements of '" + c.dtype().str() + "'"
                                     : num(static_cast<std::int64_t>(nbytes)) +
                                           " bytes, not a whole number of '" + c.dtype().str() +
                                           "' elements";
        throw UsageError(c.where() + ": " + op + " along axis " + num(axis) + ": the data holds " +
                         held + "; it must have shape " + wanted + " for the array's shape " +
                         to_string(s) +
                         (slice == 0 ? "" : " (a multiple of " + num(slice / isz) + " elements)"));
    }
    return static_cast<std::int64_t>(nbytes) / slice;
}

void AnyArray::append(int axis, ByteSpan data) {
    const std::int64_t n = extent_of(axis, data.size(), "append");
    core().insert(axis, shape()[static_cast<std::size_t>(axis)], n, data.data());
}

void AnyArray::insert(int axis, std::int64_t pos, ByteSpan data) {
    const std::int64_t n = extent_of(axis, data.size(), "insert");
    core().insert(axis, pos, n, data.data());
}

void AnyArray::remove(int axis, std::int64_t pos, std::int64_t count) {
    core().remove(axis, pos, count);
}

void AnyArray::write_chunks(
    const std::vector<std::int64_t>& chunks,
    const std::function<void(std::int64_t, const Box&, std::uint8_t*)>& produce,
    int in_flight,
    const std::function<void(std::int64_t, std::int64_t)>& progress) {
    core().write_chunks(chunks, produce, in_flight, progress);
}

void AnyArray::write_chunk_raw(std::int64_t index, ByteSpan chunk) {
    core().write_chunk_raw(index, chunk);
}

void AnyArray::for_each_chunk(
    const std::vector<std::int64_t>& chunks,
    const std::function<void(std::int64_t, const Box&, const std::uint8_t*, const std::uint8_t*)>&
        visit,
    int in_flight) const {
    reading()->for_each_chunk(chunks, visit, in_flight);
}

std::vector<std::int64_t> AnyArray::all_chunks() const {
    std::vector<std::int64_t> ids(static_cast<std::size_t>(grid().nchunks()));
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids[i] = static_cast<std::int64_t>(i);
    }
    return ids;
}

std::vector<std::string> AnyArray::metalayer_names() const {
    std::vector<std::string> names;
    for (const auto& m : core().frame().metalayers()) {
        names.push_back(m.name);
    }
    return names;
}

std::optional<std::vector<std::uint8_t>> AnyArray::metalayer(const std::string& name) const {
    const auto* m = core().frame().metalayer(name);
    if (m == nullptr) {
        return std::nullopt;
    }
    return m->content;
}

void AnyArray::update_metalayer(const std::string& name, ByteSpan content) {
    core().update_metalayer(name, content);
}
std::vector<std::string> AnyArray::vlmeta_names() const {
    if (const auto* held = core().held_attributes()) {
        return held->names;
    }
    return core().frame().vlmeta_names();
}
std::optional<std::vector<std::uint8_t>> AnyArray::vlmeta(const std::string& name) const {
    if (const auto* held = core().held_attributes()) {
        const auto it = held->values.find(name);
        return it == held->values.end() ? std::nullopt
                                        : std::optional<std::vector<std::uint8_t>>(it->second);
    }
    return core().frame().vlmeta(name);
}
void AnyArray::set_vlmeta(const std::string& name, ByteSpan content) {
    core().set_vlmeta(name, content);
}
bool AnyArray::delete_vlmeta(const std::string& name) {
    return core().delete_vlmeta(name);
}

CacheStats AnyArray::cache_stats() const {
    const auto& cache = core().cache();
    return {cache.budget(), cache.size_bytes(), cache.hits(), cache.misses()};
}
void AnyArray::set_cache_bytes(std::size_t bytes) {
    core().cache().set_budget(bytes);
}
void AnyArray::clear_cache() {
    core().cache().clear();
}
void AnyArray::sync() {
    core().sync();
}
Attrs AnyArray::attrs() const {
    return Attrs(*this);
}

void AnyArray::compact(const std::function<void(std::int64_t, std::int64_t)>& progress) {
    core().compact(progress);
}

}  // namespace b2nd
