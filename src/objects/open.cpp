// Opening arrays (AnyArray::open) and python-blosc2's object kinds (objects_detail.hpp): the
// origin each readable kind needs, and a refusal naming the others.
#include <b2nd/error.hpp>
#include <b2nd/objects.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/value.hpp>

#include "../bridges/bridges.hpp"
#include "../bridges/hdf5_gate.hpp"
#include "../detail/text.hpp"
#include "../engine/array_core.hpp"
#include "../values/params_detail.hpp"
#include "objects_detail.hpp"
#include "proxy_layout.hpp"

namespace b2nd {

// AnyArray's opens live here, above the engine: the object kind is dispatched at open.
AnyArray AnyArray::open(const std::string& path, const OpenOptions& options) {
    if (bridges::is_zarr(path)) {
        return bridges::open_zarr(path, options);
    }
    if (const auto at = bridges::hdf5_location(path)) {
        return bridges::open_hdf5(*at, options);
    }
    detail::check_object_before_writing(path, options);
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
    auto core = detail::ArrayCore::over(
        storage::Frame::open(std::move(source), detail::frame_options(options)), options);
    detail::open_object(*core, options);
    return AnyArray(std::move(core));
}

AnyArray open_blosc2_object(const Value& v, const OpenOptions& o) {
    if (!v.is_blosc2_object()) {
        throw UsageError(std::string("open_blosc2_object: the value is a ") + v.type_name() +
                         ", not a Blosc2 object (msgpack ext 42)");
    }
    auto bytes = std::make_shared<const Value::Bytes>(v.bytes());
    return AnyArray::open(
        storage::memory_source({bytes->data(), bytes->size()}, bytes, "msgpack ext 42 value"), o);
}

}  // namespace b2nd

namespace b2nd::detail {

bool object_metadata(const std::string& name) {
    if (proxy_layout::owns(name)) {
        return true;
    }
    static const char* const names[] = {"b2o", "LazyArray", "_LazyArray", "_b2o_user_vlmeta"};
    for (const char* n : names) {
        if (name == n) {
            return true;
        }
    }
    return false;
}

namespace {

/// Throws for a kind that cannot be opened as an array with `o` (read-only here when writable,
/// or never an array), naming it; nothing for the others.
void refuse_kind(ObjectKind k, const std::string& where, const OpenOptions& o) {
    if (k == ObjectKind::ndarray || k == ObjectKind::schunk) {
        return;
    }
    const std::string what = where + ": holds a python-blosc2 " + to_string(k);
    if (o.writable && readable_kind(k)) {
        throw UsageError(what +
                         ", which is read-only here (open it with raw_objects to change "
                         "the stored frame)");
    }
    switch (k) {
        case ObjectKind::lazyexpr:
        case ObjectKind::proxy:
            return;
        case ObjectKind::udf:
            throw UnsupportedError(what +
                                   ": a saved Python function, whose values only running "
                                   "its Python source gives; this library never executes "
                                   "Python");
        case ObjectKind::c2array:
            throw UnsupportedError(what +
                                   ": a reference to a remote Caterva2 array; this "
                                   "library does not fetch it");
        case ObjectKind::listarray:
        case ObjectKind::objectarray:
        case ObjectKind::batcharray:
            throw UnsupportedError(what +
                                   ": variable-length items, not an array; read them with "
                                   "b2nd::ObjectArray, BatchArray or ListArray "
                                   "(<b2nd/containers.hpp>) or 'b2nd show --json'");
        case ObjectKind::treestore:
        case ObjectKind::dictstore:
        case ObjectKind::embedstore:
            throw UnsupportedError(what +
                                   " (a store's embedded values); open the store with "
                                   "b2nd::Store::open");
        default:
            throw UnsupportedError(what +
                                   " of a kind this library does not know (metalayer "
                                   "'b2o')");
    }
}

}  // namespace

void check_object_before_writing(const std::string& path, const OpenOptions& o) {
    if (!o.writable || o.raw_objects) {
        return;
    }
    ObjectKind k = ObjectKind::ndarray;
    std::string where;
    try {
        storage::OpenOptions look;
        look.locking = false;  // makes no lock file
        look.verify_checksums = false;
        const storage::Frame f = storage::Frame::open(path, look);
        k = object_kind(f);
        where = quoted_path(f.name());
    } catch (const Error&) {
        return;  // the open for writing says what is wrong
    }
    refuse_kind(k, where, o);
}

void open_object(ArrayCore& core, const OpenOptions& o) {
    if (o.raw_objects) {
        return;
    }
    const ObjectKind k = object_kind(core.frame());
    refuse_kind(k, core.where(), o);
    switch (k) {
        case ObjectKind::lazyexpr:
            core.set_origin(lazy_origin(core, o));
            return;
        case ObjectKind::proxy:
            core.set_origin(proxy_origin(core));
            return;
        default:
            return;
    }
}

}  // namespace b2nd::detail
