// Opening python-blosc2's object kinds (objects_detail.hpp): the origin each readable kind
// needs, and a refusal naming the others.
#include <b2nd/error.hpp>
#include <b2nd/objects.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/value.hpp>

#include "../detail/strings.hpp"
#include "../engine/array_core.hpp"
#include "objects_detail.hpp"

namespace b2nd {

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

Box block_region(const Grid& g, std::int64_t ci, std::int64_t block) {
    const int nd = g.ndim();
    std::int64_t cc[kMaxNdim] = {};
    g.chunk_coords(ci, cc);
    Box b = Box::region(Shape(static_cast<std::size_t>(nd)), Shape(static_cast<std::size_t>(nd)));
    std::int64_t rest = block;
    for (int d = nd - 1; d >= 0; --d) {
        const auto u = static_cast<std::size_t>(d);
        const std::int64_t bc = rest % g.blocks_in(d);
        rest /= g.blocks_in(d);
        b.start[u] = cc[d] * g.chunk_shape()[u] + bc * g.block_shape()[u];
        const std::int64_t chunk_end = std::min(g.shape()[u], (cc[d] + 1) * g.chunk_shape()[u]);
        b.count[u] =
            std::max<std::int64_t>(0, std::min(g.block_shape()[u], chunk_end - b.start[u]));
    }
    return b;
}

bool object_metadata(const std::string& name) {
    static const char* const names[] = {"b2o",
                                        "LazyArray",
                                        "_LazyArray",
                                        "proxy-source",
                                        "proxy-fetched",
                                        "proxy-fetched-blocks",
                                        "proxy-fetched-bpc",
                                        "proxy-stamp",
                                        "proxy-index",
                                        "_b2o_user_vlmeta"};
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
