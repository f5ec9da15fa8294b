// Object kinds: python-blosc2's reading of a frame's metalayers (objects.hpp).
#include <b2nd/error.hpp>
#include <b2nd/objects.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/value.hpp>

#include "../detail/text.hpp"
#include "proxy_layout.hpp"

namespace b2nd {

const char* to_string(ObjectKind k) noexcept {
    switch (k) {
        case ObjectKind::ndarray:
            return "ndarray";
        case ObjectKind::schunk:
            return "schunk";
        case ObjectKind::proxy:
            return "proxy";
        case ObjectKind::lazyexpr:
            return "lazyexpr";
        case ObjectKind::udf:
            return "udf";
        case ObjectKind::c2array:
            return "c2array";
        case ObjectKind::b2object:
            return "b2object";
        case ObjectKind::listarray:
            return "listarray";
        case ObjectKind::objectarray:
            return "objectarray";
        case ObjectKind::batcharray:
            return "batcharray";
        case ObjectKind::treestore:
            return "treestore";
        case ObjectKind::dictstore:
            return "dictstore";
        case ObjectKind::embedstore:
            return "embedstore";
    }
    return "?";
}

bool readable_kind(ObjectKind k) noexcept {
    return k == ObjectKind::ndarray || k == ObjectKind::schunk || k == ObjectKind::lazyexpr ||
           k == ObjectKind::proxy;
}

ObjectKind object_kind(const storage::Frame& frame) {
    const auto meta = [&](const char* name) -> const format::Metalayer* {
        return frame.metalayer(name);
    };
    const auto decoded = [&](const format::Metalayer& m) {
        return Value::from_msgpack(
            {m.content.data(), m.content.size()},
            detail::quoted_path(frame.name()) + ": metalayer '" + m.name + "'");
    };
    if (meta(detail::proxy_layout::kSource) != nullptr) {
        return ObjectKind::proxy;
    }
    if (const format::Metalayer* m = meta("b2o")) {
        const Value marker = decoded(*m);
        const Value* kind = marker.find("kind");
        const std::string k =
            kind != nullptr && kind->type() == Value::Type::string ? kind->as<std::string>() : "";
        if (k == "lazyexpr") {
            return ObjectKind::lazyexpr;
        }
        if (k == "lazyudf") {
            return ObjectKind::udf;
        }
        if (k == "c2array") {
            return ObjectKind::c2array;
        }
        return ObjectKind::b2object;
    }
    if (meta("listarray") != nullptr) {
        return ObjectKind::listarray;
    }
    if (meta("vlarray") != nullptr) {
        return ObjectKind::objectarray;
    }
    if (meta("batcharray") != nullptr) {
        return ObjectKind::batcharray;
    }
    const bool array = meta("b2nd") != nullptr || meta("caterva") != nullptr;
    if (const format::Metalayer* m = meta("LazyArray"); m != nullptr && array) {
        // python: 0 an expression, 1 a function, anything else refused.
        const Value v = decoded(*m);
        const std::int64_t form =
            v.type() == Value::Type::integer && !v.is_negative() ? v.as<std::int64_t>() : -1;
        return form == 0   ? ObjectKind::lazyexpr
               : form == 1 ? ObjectKind::udf
                           : ObjectKind::b2object;
    }
    if (meta("b2tree") != nullptr) {
        return ObjectKind::treestore;
    }
    if (meta("b2dict") != nullptr) {
        return ObjectKind::dictstore;
    }
    if (meta("b2embed") != nullptr) {
        return ObjectKind::embedstore;
    }
    return array ? ObjectKind::ndarray : ObjectKind::schunk;
}

}  // namespace b2nd
