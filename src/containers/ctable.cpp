// python-blosc2's CTable, read (ctable.hpp).
#include <algorithm>
#include <set>

#include <b2nd/ctable.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

#include "../detail/text.hpp"
#include "containers_detail.hpp"

namespace b2nd {

using detail::num;

namespace {

/// python's split_field_path: dots separate segments, a backslash escapes the next character.
std::vector<std::string> split_field_path(const std::string& path) {
    std::vector<std::string> parts(1);
    bool escaped = false;
    for (char c : path) {
        if (escaped) {
            parts.back() += c;
            escaped = false;
        } else if (c == '\\') {
            escaped = true;
        } else if (c == '.') {
            parts.emplace_back();
        } else {
            parts.back() += c;
        }
    }
    if (escaped) {
        parts.back() += '\\';
    }
    return parts;
}

/// python's _encode_storage_segment.
std::string encode_segment(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '%':
                out += "%25";
                break;
            case '/':
                out += "%2F";
                break;
            case '.':
                out += "%2E";
                break;
            case '\\':
                out += "%5C";
                break;
            default:
                out += c;
        }
    }
    return out;
}

const std::set<std::string>& fixed_width_kinds() {
    static const std::set<std::string> k = {
        "int8",   "int16",  "int32",   "int64",     "uint8",     "uint16",
        "uint32", "uint64", "float32", "float64",   "complex64", "complex128",
        "bool",   "string", "bytes",   "timestamp", "ndarray"};
    return k;
}

std::string text_of(const Value& v) {
    return v.type() == Value::Type::string ? v.as<std::string>() : std::string();
}

}  // namespace

bool CTable::is_ctable(const Store& store, const std::string& prefix) {
    const std::string meta = (prefix == "/" ? "" : prefix) + "/_meta";
    if (store.find(meta) == nullptr) {
        return false;
    }
    try {
        const auto f = store.open_frame(meta);
        return text_of(detail::vlmeta_value(*f, "kind")) == "ctable";
    } catch (const Error&) {
        return false;
    }
}

CTable CTable::open(const std::string& path) {
    return open(Store::open(path), "/");
}

CTable CTable::open(const Store& store, const std::string& prefix) {
    CTable t;
    t.store_ = store;
    t.prefix_ = prefix == "/" ? "" : prefix;
    const std::string meta_key = t.prefix_ + "/_meta";
    const std::string where = store.path() + ":" + meta_key;
    if (store.find(meta_key) == nullptr) {
        throw FormatError(store.path() + ": not a CTable (no " + meta_key + ")");
    }
    const auto meta = store.open_frame(meta_key);
    const std::string kind = text_of(detail::vlmeta_value(*meta, "kind"));
    if (kind != "ctable") {
        throw FormatError(where + ": not a CTable's metadata (vlmeta kind is '" + kind +
                          "', not 'ctable')");
    }
    t.schema_json_ = text_of(detail::vlmeta_value(*meta, "schema"));
    try {
        t.schema_ = Value::from_json(t.schema_json_);
    } catch (const UsageError& e) {
        throw FormatError(where + ": the schema is not JSON: " + e.what());
    }
    const Value* cols = t.schema_.type() == Value::Type::map ? t.schema_.find("columns") : nullptr;
    if (cols == nullptr || cols->type() != Value::Type::array) {
        throw FormatError(where + ": the schema lists no columns");
    }
    for (const Value& c : cols->array()) {
        const Value* name = c.type() == Value::Type::map ? c.find("name") : nullptr;
        const Value* k = c.type() == Value::Type::map ? c.find("kind") : nullptr;
        if (name == nullptr || k == nullptr || name->type() != Value::Type::string ||
            k->type() != Value::Type::string) {
            throw FormatError(where +
                              ": a schema column without a name and a kind: " + c.to_json());
        }
        CTableColumn col;
        col.name = name->as<std::string>();
        col.kind = k->as<std::string>();
        col.schema = c;
        std::string rel;
        for (const std::string& seg : split_field_path(col.name)) {
            rel += (rel.empty() ? "" : "/") + encode_segment(seg);
        }
        col.key = t.prefix_ + "/_cols/" + rel;
        if (const Value* n = c.find("nullable");
            n != nullptr && n->type() == Value::Type::boolean && n->as<bool>()) {
            col.nullable = true;
            const Value* s = c.find("null_storage");
            const Value* code = c.find("null_code");
            col.null_storage =
                s != nullptr ? text_of(*s)
                : col.kind == "dictionary"
                    ? "code " + (code != nullptr ? code->to_json() : std::string("-1"))
                    : "sentinel";
        }
        if (fixed_width_kinds().count(col.kind) != 0 && store.find(col.key) != nullptr) {
            col.dtype = store.describe(col.key).dtype;
        }
        t.columns_.push_back(std::move(col));
    }
    if (const Value* computed = t.schema_.find("computed_columns");
        computed != nullptr && computed->type() == Value::Type::array) {
        for (const Value& c : computed->array()) {
            CTableColumn col;
            col.name = c.type() == Value::Type::map && c.find("name") != nullptr
                           ? text_of(*c.find("name"))
                           : "?";
            col.kind = "computed";
            col.schema = c;
            if (const Value* d = c.find("dtype"); d != nullptr) {
                col.dtype = text_of(*d);
            }
            t.columns_.push_back(std::move(col));
        }
    }
    return t;
}

std::string CTable::where(const std::string& name) const {
    return store_.path() + ": column '" + name + "'";
}

const CTableColumn& CTable::column_info(const std::string& name) const {
    for (const CTableColumn& c : columns_) {
        if (c.name == name) {
            return c;
        }
    }
    std::string names;
    for (const CTableColumn& c : columns_) {
        names += (names.empty() ? "" : ", ") + c.name;
    }
    throw UsageError(where(name) + ": no such column (the table has " + names + ")");
}

const CTableColumn& CTable::stored(const std::string& name, const char* want) const {
    const CTableColumn& c = column_info(name);
    if (c.kind == "computed") {
        const Value* k = c.schema.find("kind");
        const bool python = k != nullptr && text_of(*k) == "dsl";
        throw UnsupportedError(
            where(name) + ": a computed column (" +
            (python ? std::string("Python code, never executed")
                    : "an expression over " + (c.schema.find("col_deps") != nullptr
                                                   ? c.schema.find("col_deps")->to_json()
                                                   : std::string("other columns"))) +
            "); it has no stored values");
    }
    const std::string k = c.kind;
    const bool fixed = fixed_width_kinds().count(k) != 0;
    const std::string w = want;
    const bool ok = w == "fixed"             ? (fixed || k == "dictionary")
                    : w == "variable-length" ? (!fixed && k != "dictionary" && k != "utf8")
                                             : k == w;
    if (!ok) {
        throw UsageError(where(name) + ": a " + k + " column, not " +
                         (want == std::string("fixed") ? "a fixed-width one"
                                                       : "a " + std::string(want) + " one"));
    }
    return c;
}

AnyArray CTable::column(const std::string& name) const {
    return store_.open_array(stored(name, "fixed").key);
}

UTF8Array CTable::utf8_column(const std::string& name) const {
    return UTF8Array::open(store_, stored(name, "utf8").key);
}

std::optional<AnyArray> CTable::notnull(const std::string& name) const {
    const CTableColumn& c = column_info(name);
    if (c.key.empty() || store_.find(c.key + ".notnull") == nullptr) {
        return std::nullopt;
    }
    return store_.open_array(c.key + ".notnull");
}

BatchArray CTable::dictionary_values(const std::string& name) const {
    return BatchArray::open(store_, stored(name, "dictionary").key + "_dict");
}

std::vector<Value> CTable::items(const std::string& name,
                                 std::int64_t start,
                                 std::int64_t stop) const {
    return container_items(store_.open_frame(stored(name, "variable-length").key), start, stop);
}

std::int64_t CTable::physical_rows() const {
    return store_.describe(prefix_ + "/_valid_rows").shape.at(0);
}

std::vector<bool> CTable::valid_rows() const {
    const AnyArray v = store_.open_array(prefix_ + "/_valid_rows");
    if (v.ndim() != 1 || v.itemsize() != 1) {
        throw FormatError(v.path() + ": _valid_rows must be a 1-d bool array, not " +
                          v.dtype().str());
    }
    const std::vector<std::uint8_t> raw = v.read();
    return std::vector<bool>(raw.begin(), raw.end());
}

std::int64_t CTable::nrows() const {
    const auto v = valid_rows();
    return static_cast<std::int64_t>(std::count(v.begin(), v.end(), true));
}

}  // namespace b2nd
