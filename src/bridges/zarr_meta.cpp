// Zarr metadata, v2 and v3: the JSON of each version read into one ZarrMeta (zarr_meta.hpp).
#include "zarr_meta.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include <b2nd/error.hpp>
#include <b2nd/grid.hpp>

#include "../detail/text.hpp"

namespace b2nd::bridges {

namespace {

using detail::num;
using detail::printable;

/// The largest item of a raw type (r<bits>) read: one element is allocated, printed and filled
/// whole, and a 250-byte zarr.json may claim 2 GiB items.
constexpr long kMaxRawItemBytes = 1L << 20;

[[noreturn]] void bad(const std::string& where, const std::string& what) {
    throw FormatError(where + ": " + what);
}

const Value& need(const Value& m, const char* key, const std::string& where, const char* file) {
    const Value* v = m.find(key);
    if (v == nullptr) {
        bad(where, std::string(file) + " has no \"" + key + "\"");
    }
    return *v;
}

Value parse_json(const std::string& text, const std::string& where, const char* file) {
    try {
        Value v = Value::from_json(text);
        if (v.type() != Value::Type::map) {
            bad(where, std::string(file) + " is not a JSON object");
        }
        return v;
    } catch (const FormatError& e) {
        rethrow_with_context(e, where + ": " + file);
    } catch (const UsageError& e) {
        bad(where, std::string(file) + ": " + e.what());  // the JSON parser's own complaint
    }
}

std::int64_t integer(const Value& v, const std::string& where, const std::string& what) {
    if (v.type() != Value::Type::integer || v.is_negative()) {
        bad(where, what + " is not a non-negative integer");
    }
    try {
        return v.as<std::int64_t>();
    } catch (const UsageError&) {
        bad(where, what + " is out of range");
    }
}

std::string text(const Value& v, const std::string& where, const std::string& what) {
    if (v.type() != Value::Type::string) {
        bad(where, what + " is not a string");
    }
    return v.as<std::string>();
}

Shape shape_of(const Value& v, const std::string& where, const std::string& what) {
    if (v.type() != Value::Type::array) {
        bad(where, what + " is not a list");
    }
    if (v.size() > static_cast<std::size_t>(kMaxNdim)) {
        throw UnsupportedError(where + ": " + what + " has " +
                               num(static_cast<std::int64_t>(v.size())) +
                               " dimensions; arrays here have at most " + num(kMaxNdim));
    }
    Shape s;
    for (std::size_t i = 0; i < v.size(); ++i) {
        s.push_back(integer(v[i], where, what + "[" + num(static_cast<std::int64_t>(i)) + "]"));
    }
    return s;
}

// ---- codecs ---------------------------------------------------------------------------------

ZarrBytesCodec blosc_codec(const Value& c, const std::string& where, bool v3) {
    ZarrBytesCodec b;
    b.kind = ZarrBytesCodec::Kind::blosc;
    if (const Value* n = c.find("cname")) {
        b.cname = text(*n, where, "blosc cname");
    }
    if (const Value* l = c.find("clevel")) {
        b.level = static_cast<int>(integer(*l, where, "blosc clevel"));
    }
    if (const Value* s = c.find("shuffle")) {
        if (v3) {
            const std::string t = text(*s, where, "blosc shuffle");
            b.shuffle = t == "shuffle" ? 1 : t == "bitshuffle" ? 2 : 0;
        } else {
            b.shuffle =
                s->type() == Value::Type::integer ? static_cast<int>(s->as<std::int64_t>()) : 0;
        }
    }
    if (const Value* t = c.find("typesize")) {
        b.typesize =
            t->type() == Value::Type::integer ? static_cast<int>(t->as<std::int64_t>()) : 0;
    }
    if (const Value* s = c.find("blocksize")) {
        b.blocksize = s->type() == Value::Type::integer ? s->as<std::int64_t>() : 0;
    }
    return b;
}

/// v2's compressor object (numcodecs' configuration).
ZarrBytesCodec v2_compressor(const Value& c, const std::string& where) {
    const std::string id = text(need(c, "id", where, ".zarray compressor"), where, "compressor id");
    ZarrBytesCodec b;
    const Value* level = c.find("level");
    b.level = level != nullptr && level->type() == Value::Type::integer
                  ? static_cast<int>(level->as<std::int64_t>())
                  : 0;
    if (id == "blosc") {
        return blosc_codec(c, where, false);
    }
    if (id == "zstd") {
        b.kind = ZarrBytesCodec::Kind::zstd;
    } else if (id == "zlib") {
        b.kind = ZarrBytesCodec::Kind::zlib;
    } else if (id == "gzip") {
        b.kind = ZarrBytesCodec::Kind::gzip;
    } else if (id == "lz4") {
        b.kind = ZarrBytesCodec::Kind::lz4;
        if (const Value* a = c.find("acceleration")) {
            b.level =
                a->type() == Value::Type::integer ? static_cast<int>(a->as<std::int64_t>()) : 1;
        }
    } else {
        throw UnsupportedError(where + ": compressor \"" + id +
                               "\" is not one this library has (blosc, zstd, zlib, gzip, lz4)");
    }
    return b;
}

std::string list_form(const Value& fields, const std::string& where);

/// v2's dtype: a NumPy dtype string, or a structured dtype's list of [name, dtype, shape?].
DType v2_dtype(const Value& v, const std::string& where) {
    std::string s;
    if (v.type() == Value::Type::string) {
        s = v.as<std::string>();
    } else if (v.type() == Value::Type::array) {
        s = list_form(v, where);
    } else {
        bad(where, ".zarray's dtype is neither a string nor a list of fields");
    }
    if (s == "|O" || s == "O" || s == "<O" || s == ">O") {
        // zarr-python's object arrays (vlen-utf8, pickle, JSON object codecs): no fixed items.
        throw UnsupportedError(where + ": dtype \"" + s +
                               "\" holds Python objects (an object codec such as vlen-utf8 or "
                               "pickle encodes them), not items of a fixed size; arrays here "
                               "hold fixed-size items (zarr-python can convert it, e.g. to 'S' or "
                               "'U' strings)");
    }
    try {
        return DType::parse(s);
    } catch (const FormatError& e) {
        rethrow_with_context(e, where + ": dtype " + v.to_json());
    }
}

std::string list_form(const Value& fields, const std::string& where) {
    std::string s = "[";
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const Value& f = fields[i];
        if (f.type() != Value::Type::array || f.size() < 2 || f.size() > 3) {
            bad(where,
                "a field of the structured dtype is not [name, dtype] or [name, dtype, shape]");
        }
        s += (i != 0 ? ", (" : "(") + detail::python_repr(text(f[0], where, "field name"), "") +
             ", ";
        if (f[1].type() == Value::Type::array) {
            s += list_form(f[1], where);
        } else {
            s += detail::python_repr(text(f[1], where, "field dtype"), "");
        }
        if (f.size() == 3) {
            const Shape sub = shape_of(f[2], where, "field shape");
            s += ", (";
            for (const std::int64_t e : sub) {
                s += num(e) + ",";
            }
            s += ")";
        }
        s += ")";
    }
    return s + "]";
}

/// v3's data_type name as a dtype (little-endian).
DType v3_dtype(const Value& v, const std::string& where) {
    if (v.type() != Value::Type::string) {
        throw UnsupportedError(where + ": data_type " + v.to_json() +
                               " is an extension data type this library does not have");
    }
    const std::string t = v.as<std::string>();
    for (const ZarrV3Type& n : zarr_v3_types()) {
        if (t == n.name) {
            return DType::make(n.kind, n.size, n.size == 1 ? '|' : '<');
        }
    }
    if (t.size() > 1 && t[0] == 'r') {
        char* end = nullptr;
        const long bits = std::strtol(t.c_str() + 1, &end, 10);
        if (*end == '\0' && bits > 0 && bits % 8 == 0 && bits <= 8L * kMaxRawItemBytes) {
            return DType::raw(bits / 8);
        }
        if (*end == '\0' && bits > 8L * kMaxRawItemBytes) {
            throw UnsupportedError(where + ": data_type \"" + printable(t) +
                                   "\": items of more than " + std::to_string(kMaxRawItemBytes) +
                                   " bytes");
        }
    }
    throw UnsupportedError(where + ": data_type \"" + t +
                           "\" is not one this library has (bool, int8-64, uint8-64, "
                           "float16-64, complex64/128, r<bits>)");
}

const Value& configuration(const Value& codec) {
    static const Value empty = Value::map({});
    const Value* c = codec.find("configuration");
    return c != nullptr ? *c : empty;
}

/// v3's codec list (also a shard's inner codecs and index codecs) into `out`.
void v3_codecs(const Value& list, int ndim, ZarrCodecs& out, const std::string& where) {
    if (list.type() != Value::Type::array || list.size() == 0) {
        bad(where, "codecs is not a non-empty list");
    }
    bool have_array_to_bytes = false;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const Value& c = list[i];
        const std::string name = c.type() == Value::Type::string
                                     ? c.as<std::string>()
                                     : text(need(c, "name", where, "a codec"), where, "codec name");
        const Value& cfg = c.type() == Value::Type::map ? configuration(c) : Value::map({});
        const bool after = have_array_to_bytes;
        if (name == "transpose" && !after) {
            const Value& o = need(cfg, "order", where, "the transpose codec");
            if (o.type() != Value::Type::array || o.size() != static_cast<std::size_t>(ndim)) {
                bad(where, "the transpose codec's order is not a permutation of the axes");
            }
            std::vector<int> order;
            std::vector<bool> seen(static_cast<std::size_t>(ndim), false);
            for (std::size_t k = 0; k < o.size(); ++k) {
                const std::int64_t a = integer(o[k], where, "transpose order");
                if (a >= ndim || seen[static_cast<std::size_t>(a)]) {
                    bad(where, "the transpose codec's order is not a permutation of the axes");
                }
                seen[static_cast<std::size_t>(a)] = true;
                // Applied after an earlier transpose: compose.
                order.push_back(out.order.empty() ? static_cast<int>(a)
                                                  : out.order[static_cast<std::size_t>(a)]);
            }
            out.order = order;
        } else if (name == "bytes" && !after) {
            const Value* e = cfg.find("endian");
            out.big_endian =
                e != nullptr && e->type() == Value::Type::string && e->as<std::string>() == "big";
            have_array_to_bytes = true;
        } else if (name == "sharding_indexed" && !after) {
            auto s = std::make_shared<ZarrSharding>();
            s->inner = shape_of(need(cfg, "chunk_shape", where, "sharding_indexed"), where,
                                "the inner chunk_shape");
            if (s->inner.size() != static_cast<std::size_t>(ndim)) {
                bad(where, "the inner chunk_shape has another number of dimensions");
            }
            v3_codecs(need(cfg, "codecs", where, "sharding_indexed"), ndim, s->codecs, where);
            if (s->codecs.sharding) {
                throw UnsupportedError(where +
                                       ": nested sharding (its shards' inner chunks are shards "
                                       "themselves), which this library does not read");
            }
            const Value* ic = cfg.find("index_codecs");
            if (ic != nullptr) {
                v3_codecs(*ic, ndim + 1, s->index_codecs, where);
            } else {
                ZarrBytesCodec crc;
                crc.kind = ZarrBytesCodec::Kind::crc32c;
                s->index_codecs.bytes_codecs.push_back(crc);
            }
            for (const ZarrBytesCodec& b : s->index_codecs.bytes_codecs) {
                if (b.kind != ZarrBytesCodec::Kind::crc32c) {
                    throw UnsupportedError(where +
                                           ": a shard index compressed (index_codecs other "
                                           "than bytes and crc32c)");
                }
            }
            if (!s->index_codecs.order.empty() || s->index_codecs.sharding) {
                throw UnsupportedError(where + ": shard index codecs other than bytes and crc32c");
            }
            const Value* loc = cfg.find("index_location");
            s->index_at_end = loc == nullptr || text(*loc, where, "index_location") == "end";
            if (loc != nullptr && !s->index_at_end && loc->as<std::string>() != "start") {
                bad(where,
                    "index_location \"" + loc->as<std::string>() + "\" is neither start nor end");
            }
            out.sharding = std::move(s);
            have_array_to_bytes = true;
        } else if (name == "blosc" && after) {
            out.bytes_codecs.push_back(blosc_codec(cfg, where, true));
        } else if ((name == "zstd" || name == "gzip" || name == "crc32c") && after) {
            ZarrBytesCodec b;
            b.kind = name == "zstd"   ? ZarrBytesCodec::Kind::zstd
                     : name == "gzip" ? ZarrBytesCodec::Kind::gzip
                                      : ZarrBytesCodec::Kind::crc32c;
            const Value* l = cfg.find("level");
            b.level = l != nullptr && l->type() == Value::Type::integer
                          ? static_cast<int>(l->as<std::int64_t>())
                          : 0;
            out.bytes_codecs.push_back(b);
        } else if (name == "transpose" || name == "bytes" || name == "sharding_indexed" ||
                   name == "blosc" || name == "zstd" || name == "gzip" || name == "crc32c") {
            bad(where, "codec \"" + name + "\" is out of place in the codec list");
        } else {
            throw UnsupportedError(where + ": codec \"" + name +
                                   "\" is not one this library has (transpose, bytes, "
                                   "sharding_indexed, blosc, zstd, gzip, crc32c)");
        }
    }
    if (!have_array_to_bytes) {
        bad(where, "the codec list has no array-to-bytes codec (bytes or sharding_indexed)");
    }
}

void check_geometry(const ZarrMeta& m) {
    if (m.chunks.size() != m.shape.size()) {
        bad(m.where, "chunks " + to_string(m.chunks) + " and shape " + to_string(m.shape) +
                         " differ in dimensions");
    }
    for (std::size_t d = 0; d < m.chunks.size(); ++d) {
        if (m.chunks[d] == 0 && m.shape[d] != 0) {
            bad(m.where, "chunk shape " + to_string(m.chunks) + " has a zero extent");
        }
    }
    if (const ZarrSharding* s = m.codecs.sharding.get()) {
        for (std::size_t d = 0; d < m.chunks.size(); ++d) {
            if (s->inner[d] == 0 || m.chunks[d] % s->inner[d] != 0) {
                bad(m.where, "the inner chunk shape " + to_string(s->inner) +
                                 " does not divide the shard shape " + to_string(m.chunks));
            }
        }
        // A shard's index holds 16 bytes per inner chunk: a count the index cannot hold is no
        // shard (and would overflow what is computed from it).
        std::int64_t inners = 1;
        for (std::size_t d = 0; d < m.chunks.size(); ++d) {
            const std::int64_t per = m.chunks[d] / s->inner[d];
            if (per != 0 && inners > (std::int64_t{1} << 32) / per) {
                bad(m.where, "shards of " + to_string(m.chunks) +
                                 " hold more than 2^32 inner chunks of " + to_string(s->inner));
            }
            inners *= per;
        }
    }
}

}  // namespace

ZarrMeta parse_zarr_v2(const std::string& zarray,
                       const std::string& zattrs,
                       const std::string& where) {
    ZarrMeta m;
    m.version = 2;
    m.where = where;
    const Value a = parse_json(zarray, where, ".zarray");
    if (integer(need(a, "zarr_format", where, ".zarray"), where, "zarr_format") != 2) {
        throw UnsupportedError(where + ": .zarray's zarr_format is not 2");
    }
    m.shape = shape_of(need(a, "shape", where, ".zarray"), where, "shape");
    m.chunks = shape_of(need(a, "chunks", where, ".zarray"), where, "chunks");
    m.dtype = v2_dtype(need(a, "dtype", where, ".zarray"), where);
    m.fill = zarr_fill_bytes(need(a, "fill_value", where, ".zarray"), m.dtype, where);
    const std::string order = text(need(a, "order", where, ".zarray"), where, "order");
    if (order == "F" && m.shape.size() > 1) {
        for (int d = static_cast<int>(m.shape.size()) - 1; d >= 0; --d) {
            m.codecs.order.push_back(d);
        }
    } else if (order != "C" && order != "F") {
        bad(where, "order \"" + order + "\" is neither C nor F");
    }
    if (const Value* f = a.find("filters"); f != nullptr && !f->is_nil() && f->size() != 0) {
        std::string ids;
        for (std::size_t i = 0; i < f->size(); ++i) {
            const Value* id = (*f)[i].find("id");
            ids += (i != 0 ? ", " : "") + (id != nullptr ? id->to_json() : (*f)[i].to_json());
        }
        throw UnsupportedError(where + ": filters " + ids +
                               " are not ones this library has (it reads arrays without filters)");
    }
    if (const Value* c = a.find("compressor"); c != nullptr && !c->is_nil()) {
        m.codecs.bytes_codecs.push_back(v2_compressor(*c, where));
    }
    if (const Value* s = a.find("dimension_separator"); s != nullptr && !s->is_nil()) {
        const std::string sep = text(*s, where, "dimension_separator");
        if (sep != "." && sep != "/") {
            bad(where, "dimension_separator \"" + sep + "\" is neither '.' nor '/'");
        }
        m.separator = sep[0];
    } else {
        m.separator = '.';
    }
    if (!zattrs.empty()) {
        m.attributes = parse_json(zattrs, where, ".zattrs");
    }
    check_geometry(m);
    return m;
}

ZarrMeta parse_zarr_v3(const std::string& json, const std::string& where) {
    ZarrMeta m;
    m.version = 3;
    m.where = where;
    const Value a = parse_json(json, where, "zarr.json");
    if (integer(need(a, "zarr_format", where, "zarr.json"), where, "zarr_format") != 3) {
        throw UnsupportedError(where + ": zarr.json's zarr_format is not 3");
    }
    const std::string node = text(need(a, "node_type", where, "zarr.json"), where, "node_type");
    if (node == "group") {
        throw UsageError(where +
                         ": a Zarr group, not an array; name one of its arrays "
                         "(GROUP.zarr/path/to/array)");
    }
    if (node != "array") {
        bad(where, "node_type \"" + node + "\" is neither array nor group");
    }
    m.shape = shape_of(need(a, "shape", where, "zarr.json"), where, "shape");
    const Value& grid = need(a, "chunk_grid", where, "zarr.json");
    const std::string gname =
        text(need(grid, "name", where, "chunk_grid"), where, "chunk_grid name");
    if (gname != "regular") {
        throw UnsupportedError(where + ": chunk grid \"" + gname + "\" (only regular grids)");
    }
    m.chunks = shape_of(need(configuration(grid), "chunk_shape", where, "chunk_grid"), where,
                        "chunk_shape");
    m.dtype = v3_dtype(need(a, "data_type", where, "zarr.json"), where);
    m.fill = zarr_fill_bytes(need(a, "fill_value", where, "zarr.json"), m.dtype, where);
    const Value& keys = need(a, "chunk_key_encoding", where, "zarr.json");
    const std::string kname =
        text(need(keys, "name", where, "chunk_key_encoding"), where, "chunk_key_encoding name");
    if (kname != "default" && kname != "v2") {
        throw UnsupportedError(where + ": chunk key encoding \"" + kname + "\"");
    }
    m.key_prefix = kname == "default" ? "c" : "";
    m.separator = kname == "default" ? '/' : '.';
    if (const Value* s = configuration(keys).find("separator")) {
        const std::string sep = text(*s, where, "separator");
        if (sep != "." && sep != "/") {
            bad(where, "separator \"" + sep + "\" is neither '.' nor '/'");
        }
        m.separator = sep[0];
    }
    v3_codecs(need(a, "codecs", where, "zarr.json"), static_cast<int>(m.shape.size()), m.codecs,
              where);
    if (const Value* t = a.find("storage_transformers"); t != nullptr && t->size() != 0) {
        throw UnsupportedError(where + ": storage transformers " + t->to_json());
    }
    if (const Value* at = a.find("attributes"); at != nullptr && at->type() == Value::Type::map) {
        m.attributes = *at;
    }
    if (const Value* dn = a.find("dimension_names");
        dn != nullptr && dn->type() == Value::Type::array) {
        for (std::size_t i = 0; i < dn->size(); ++i) {
            const Value& n = (*dn)[i];
            m.dimension_names.push_back(n.is_nil()                        ? std::string()
                                        : n.type() == Value::Type::string ? n.as<std::string>()
                                                                          : n.to_json());
        }
    }
    check_geometry(m);
    return m;
}

}  // namespace b2nd::bridges
