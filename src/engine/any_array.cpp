#include <filesystem>

#include <b2nd/any_array.hpp>
#include <b2nd/attrs.hpp>
#include <b2nd/codec/registry.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/frame.hpp>

#include "../detail/strings.hpp"
#include "../objects/objects_detail.hpp"
#include "../select/box_plan.hpp"
#include "../select/strided_copy.hpp"
#include "../values/params_detail.hpp"
#include "array_core.hpp"
#include "engine_access.hpp"
#include "field_spec.hpp"
#include <unistd.h>

namespace b2nd {

using detail::num;

AnyArray AnyArray::open(const std::string& path, const OpenOptions& options) {
    auto core = detail::ArrayCore::open(path, options);
    detail::open_object(*core, options);
    return AnyArray(std::move(core));
}

AnyArray AnyArray::open_buffer(ByteSpan frame, const OpenOptions& options) {
    if (options.writable) {
        throw UsageError("an array in a memory buffer is read-only");
    }
    return open(storage::memory_source(frame), options);
}

AnyArray AnyArray::open(std::shared_ptr<const storage::ByteSource> source,
                        const OpenOptions& options) {
    if (options.writable) {
        throw UsageError("an array in a byte source is read-only");
    }
    auto core = std::make_shared<detail::ArrayCore>(
        storage::Frame::open(std::move(source), detail::frame_options(options)), options.dtype,
        options.nthreads, options.cache_bytes);
    detail::open_object(*core, options);
    return AnyArray(std::move(core));
}

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
            const std::string why = p->check_data(ctx, data);
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
                                                  if (o.durable) {
                                                      a.sync();
                                                  }
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

struct AnyArray::Reading {
    detail::ArrayCore& core;
    storage::Frame::ReadLock lock;
    detail::ArrayCore* operator->() const noexcept { return &core; }
};

AnyArray::Reading AnyArray::reading() const {
    detail::ArrayCore& c = core();
    const bool locked = c.options().lock_reads && !c.options().writable;
    Reading r{c, locked ? c.frame().read_lock() : storage::Frame::ReadLock()};
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
const DType& AnyArray::dtype() const {
    return core().dtype();
}
const std::string& AnyArray::dtype_note() const {
    return core().dtype_note();
}
const Grid& AnyArray::grid() const {
    return core().grid();
}
std::int64_t AnyArray::cbytes() const {
    const storage::Frame& f = core().frame();
    return f.header().cbytes - f.dead_bytes();  // what updates left behind is not the array's
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

void detail::require_box(const AnyArray& a, const Box& box, const char* op) {
    a.core().require_box(box, op);
}

void detail::require_memory(const AnyArray& a, std::uint64_t elements, const char* op) {
    const auto isz = static_cast<std::uint64_t>(a.itemsize());
    std::uint64_t bytes = 0;
    const bool overflow = format::mul_overflows(elements, isz, &bytes);
    const auto pages = static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES));
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t ram = pages * page;
    if (overflow || bytes > ram) {
        throw UsageError(a.core().where() + ": cannot " + op + " a selection of " +
                         std::to_string(elements) + " elements into memory (" +
                         (overflow ? std::string("more than 2^64") : std::to_string(bytes)) +
                         " bytes; this machine has " + std::to_string(ram) + ")");
    }
}

void AnyArray::read(const Box& box, void* out, std::size_t out_bytes) const {
    const Reading r = reading();
    detail::ArrayCore& c = r.core;
    c.require_box(box, "read");
    const auto need =
        static_cast<std::uint64_t>(box.size()) * static_cast<std::uint64_t>(c.grid().itemsize());
    if (out_bytes != need) {
        throw UsageError(c.where() + ": reading " + box.str() + " needs a buffer of " +
                         std::to_string(need) + " bytes, not " + std::to_string(out_bytes));
    }
    c.read(detail::SelectionPlan::of_box(box), static_cast<std::uint8_t*>(out));
}

std::vector<std::uint8_t> AnyArray::read(const Box& box) const {
    const Reading r = reading();
    detail::ArrayCore& c = r.core;
    c.require_box(box, "read");
    std::vector<std::uint8_t> out(static_cast<std::size_t>(box.size() * c.grid().itemsize()));
    c.read(detail::SelectionPlan::of_box(box), out.data());
    return out;
}

std::vector<std::uint8_t> AnyArray::read(const Selection& sel) const {
    std::vector<std::uint8_t> out;
    read_selection(sel, [&](const Resolved& r) {
        detail::require_memory(*this, static_cast<std::uint64_t>(r.size()), "read");
        out.resize(static_cast<std::size_t>(r.size() * itemsize()));
        return static_cast<void*>(out.data());
    });
    return out;
}

detail::FieldSpec detail::field_spec(const AnyArray& a, const std::string& name) {
    const auto f = a.dtype().field(name);
    if (!f) {
        std::string names;
        for (const DType::Field& x : a.dtype().fields()) {
            names += (names.empty() ? "'" : ", '") + x.name + "'";
        }
        throw UsageError(
            detail::quoted_path(a.path()) + ": no field '" + name + "' in dtype " +
            a.dtype().str() +
            (names.empty() ? " (not a structured dtype)" : " (fields: " + names + ")"));
    }
    FieldSpec s{*f->type, f->shape, f->offset, f->type->itemsize()};
    for (const std::int64_t e : s.sub) {
        s.width *= e;
    }
    return s;
}

std::vector<std::uint8_t> AnyArray::read_field(const std::string& field,
                                               const Selection& sel,
                                               DType* field_dtype,
                                               Shape* result_shape) const {
    const detail::FieldSpec f = detail::field_spec(*this, field);
    const Reading r = reading();
    Resolved res = resolve(r.core.grid().shape(), sel);
    Shape shape = res.shape;
    shape.insert(shape.end(), f.sub.begin(), f.sub.end());
    std::uint64_t bytes = 0;
    if (format::mul_overflows(static_cast<std::uint64_t>(res.size()),
                              static_cast<std::uint64_t>(f.width), &bytes)) {
        bytes = UINT64_MAX;
    }
    const auto isz = static_cast<std::uint64_t>(itemsize());
    detail::require_memory(*this, bytes / isz + (bytes % isz != 0 ? 1 : 0), "read");
    std::vector<std::uint8_t> out(static_cast<std::size_t>(res.size() * f.width));
    if (f.width > 0 && res.size() > 0) {
        r.core.read(
            detail::SelectionPlan::of(std::move(res)).with_part({f.offset, f.width}, itemsize()),
            out.data());
    }
    if (field_dtype != nullptr) {
        *field_dtype = f.type;
    }
    if (result_shape != nullptr) {
        *result_shape = std::move(shape);
    }
    return out;
}

namespace {

/// Index lists (one per dimension) into out, C order; the lists and the buffer's size checked.
void read_index_lists(const detail::ArrayCore& c,
                      const std::vector<std::vector<std::int64_t>>& lists,
                      void* out,
                      std::size_t out_bytes) {
    const std::uint64_t n = detail::OrthoPlan::count(lists, c.grid(), c.where());
    const std::uint64_t need = n * static_cast<std::uint64_t>(c.grid().itemsize());
    if (out_bytes != need) {
        throw UsageError(c.where() + ": an orthogonal selection of " + std::to_string(n) +
                         " elements needs a buffer of " + std::to_string(need) + " bytes, not " +
                         std::to_string(out_bytes));
    }
    c.read(detail::SelectionPlan::of_lists(lists), static_cast<std::uint8_t*>(out));
}

/// Index lists written from data (C order, or one element for all).
void write_index_lists(detail::ArrayCore& c,
                       const std::vector<std::vector<std::int64_t>>& lists,
                       ByteSpan data) {
    const auto isz = static_cast<std::uint64_t>(c.grid().itemsize());
    const std::uint64_t n = detail::OrthoPlan::count(lists, c.grid(), c.where());
    if (data.size() != n * isz && data.size() != isz) {
        throw UsageError(c.where() + ": writing an orthogonal selection of " + std::to_string(n) +
                         " elements needs " + std::to_string(n * isz) + " bytes of data (or " +
                         std::to_string(isz) + " for one value), not " +
                         std::to_string(data.size()));
    }
    const std::vector<std::int64_t> one(lists.size(), 0);  // one element for all
    c.write(detail::SelectionPlan::of_lists(lists), data.data(),
            data.size() == isz && n != 1 ? one.data() : nullptr);
}

}  // namespace

void AnyArray::read(const Resolved& sel, void* out, std::size_t out_bytes) const {
    if (sel.orthogonal()) {
        read_index_lists(reading().core, sel.lists, out, out_bytes);
    } else {
        read(sel.box, out, out_bytes);
    }
}

void AnyArray::write(const Resolved& sel, ByteSpan data) {
    if (sel.orthogonal()) {
        write_index_lists(core(), sel.lists, data);
    } else {
        write(sel.box, data);
    }
}

void AnyArray::read_selection(const Selection& sel,
                              const std::function<void*(const Resolved&)>& destination) const {
    reading()->read_selection(sel, destination);
}

void AnyArray::read_strided(const Box& box, void* out, const std::int64_t* strides) const {
    reading()->read(detail::SelectionPlan::of_box(box), static_cast<std::uint8_t*>(out), strides);
}

void AnyArray::read_element(const std::int64_t* idx, void* out) const {
    reading()->read_element(idx, static_cast<std::uint8_t*>(out));
}

void AnyArray::read_points(const std::int64_t* coords, std::size_t n, void* out) const {
    const Reading r = reading();
    r.core.read(detail::SelectionPlan::of_points(coords, n, r.core.grid().ndim()),
                static_cast<std::uint8_t*>(out));
}

void AnyArray::read_orthogonal(const std::vector<std::vector<std::int64_t>>& indices,
                               void* out,
                               std::size_t out_bytes) const {
    read_index_lists(reading().core, indices, out, out_bytes);
}

std::vector<std::uint8_t> AnyArray::read_orthogonal(
    const std::vector<std::vector<std::int64_t>>& indices) const {
    const detail::ArrayCore& c = core();
    const std::uint64_t n = detail::OrthoPlan::count(indices, c.grid(), c.where());
    detail::require_memory(*this, n, "read");
    std::vector<std::uint8_t> out(
        static_cast<std::size_t>(n * static_cast<std::uint64_t>(c.grid().itemsize())));
    read_index_lists(reading().core, indices, out.data(), out.size());
    return out;
}

void AnyArray::write_points(const std::int64_t* coords, std::size_t n, ByteSpan data) {
    detail::ArrayCore& c = core();
    const auto isz = static_cast<std::uint64_t>(c.grid().itemsize());
    if (data.size() != n * isz && data.size() != isz) {
        throw UsageError(c.where() + ": writing " + std::to_string(n) + " points needs " +
                         std::to_string(n * isz) + " bytes of data (or " + std::to_string(isz) +
                         " for one value), not " + std::to_string(data.size()));
    }
    const std::int64_t one = 0;  // one element for every point
    c.write(detail::SelectionPlan::of_points(coords, n, c.grid().ndim()), data.data(),
            data.size() == isz && n != 1 ? &one : nullptr);
}

void AnyArray::write_orthogonal(const std::vector<std::vector<std::int64_t>>& indices,
                                ByteSpan data) {
    write_index_lists(core(), indices, data);
}

void AnyArray::write(const Box& box, ByteSpan data) {
    detail::ArrayCore& c = core();
    c.require_box(box, "write");
    const auto need =
        static_cast<std::uint64_t>(box.size()) * static_cast<std::uint64_t>(c.grid().itemsize());
    if (data.size() != need) {
        throw UsageError(c.where() + ": writing " + box.str() + " needs " + std::to_string(need) +
                         " bytes of data, not " + std::to_string(data.size()));
    }
    c.write(detail::SelectionPlan::of_box(box), data.data());
}

void AnyArray::write(const Selection& sel, ByteSpan data, const std::optional<Shape>& data_shape) {
    detail::ArrayCore& c = core();
    const Resolved r = resolve(c.grid().shape(), sel);
    const std::int64_t isz = c.grid().itemsize();
    const std::int64_t n = r.size();
    Shape ds;
    if (data_shape) {
        ds = *data_shape;
    } else if (data.size() == static_cast<std::uint64_t>(isz) && n != 1) {
        ds = {};  // one value for every element
    } else {
        ds = r.shape;
    }
    std::int64_t dn = 1;
    for (std::int64_t e : ds) {
        if (e < 0 || format::mul_overflows(dn, e, &dn)) {
            throw UsageError(c.where() + ": data of shape " + to_string(ds) + " is not valid");
        }
    }
    if (data.size() != static_cast<std::uint64_t>(dn) * static_cast<std::uint64_t>(isz)) {
        throw UsageError(
            c.where() + ": writing a selection of shape " + to_string(r.shape) + " needs " +
            std::to_string(static_cast<std::uint64_t>(dn) * static_cast<std::uint64_t>(isz)) +
            " bytes of data of shape " + to_string(ds) + (data_shape ? "" : " (or one element)") +
            ", not " + std::to_string(data.size()));
    }
    // NumPy's broadcasting: the data's dimensions align with the selection's last ones; each is
    // equal or 1. The byte stride of the data along each result dimension (0: broadcast).
    if (ds.size() > r.shape.size()) {
        throw UsageError(c.where() + ": data of shape " + to_string(ds) +
                         " does not broadcast to the selection's shape " + to_string(r.shape));
    }
    std::vector<std::int64_t> stride(r.shape.size(), 0);
    std::int64_t st = isz;
    for (std::size_t k = ds.size(); k-- > 0;) {
        const std::size_t rk = r.shape.size() - ds.size() + k;
        if (ds[k] != r.shape[rk] && ds[k] != 1) {
            throw UsageError(c.where() + ": data of shape " + to_string(ds) +
                             " does not broadcast to the selection's shape " + to_string(r.shape) +
                             " (dimension " + num(static_cast<int>(rk)) + ")");
        }
        stride[rk] = ds[k] == 1 ? 0 : st;
        st *= ds[k];
    }
    if (n == 0) {
        return;
    }
    // The plan's data strides, one per array dimension: the result's, where a result
    // dimension walks one (integer-selected dimensions and new axes have extent 1).
    std::vector<std::int64_t> plan_stride(c.grid().shape().size(), 0);
    for (std::size_t k = 0; k < r.dims.size(); ++k) {
        if (r.dims[k] >= 0) {
            plan_stride[static_cast<std::size_t>(r.dims[k])] = stride[k];
        }
    }
    // A box walks the data with these strides (broadcasting costs no copy); index lists gather
    // broadcast data into C order first.
    c.write(detail::SelectionPlan::of(r), data.data(), plan_stride.data());
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
    return core().frame().vlmeta_names();
}
std::optional<std::vector<std::uint8_t>> AnyArray::vlmeta(const std::string& name) const {
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
