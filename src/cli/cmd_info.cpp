// b2nd info PATH [--json]
#include <algorithm>
#include <iostream>
#include <optional>
#include <sstream>

#include <b2nd/any_array.hpp>
#include <b2nd/attrs.hpp>
#include <b2nd/codec/ids.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/objects.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/value.hpp>

#include "../bridges/bridges.hpp"
#include "../bridges/hdf5_gate.hpp"
#include "../detail/text.hpp"
#include "cli.hpp"
#include "item_format.hpp"

namespace b2nd::cli {

namespace {

const char* const kHelp =
    "usage: b2nd info PATH... [--json]\n"
    "\n"
    "Prints what a b2nd array (.b2nd file or .b2frame directory) holds: shape, dtype, chunk and\n"
    "block shapes, codec and filters, uncompressed and stored sizes, the kinds of its chunks,\n"
    "metalayers and vlmetalayers (python-blosc2's attributes), decoded from msgpack (shown\n"
    "as hex where they are not msgpack). Plain Blosc2 frames are described as frames.\n"
    "\n"
    "PATH may also be a store's leaf (STORE.b2z:/KEY), an https:// or s3:// URL, a Zarr array\n"
    "(its shape, dtype, chunks or shards, codecs or v2 compressor and filters, fill value,\n"
    "attributes) or an HDF5 dataset (FILE.h5:/path, or a file's only dataset: the dataset\n"
    "read, shape and maximum shape, layout and chunks, filters, fill value, stored size).\n"
    "\n"
    "Several paths are described one after the other (a blank line between; with --json, a\n"
    "JSON array); a file that cannot be read is named on stderr and the exit code is 1, as\n"
    "for a file whose chunks cannot all be read (a missing chunk file: each is named).\n"
    "\n"
    "  --json   one JSON object instead of text\n"
    "\n"
    "example:\n"
    "  b2nd info t.b2nd --json\n"
    "  b2nd info ocean.nc:/temperature\n";

struct ChunkKinds {
    std::int64_t zeros = 0, nan = 0, uninit = 0, value = 0, memcpyed = 0, compressed = 0;
    std::vector<std::string> unreadable;  ///< why, for each chunk whose header cannot be read
};

ChunkKinds count_kinds(const storage::Frame& f) {
    ChunkKinds k;
    for (std::int64_t i = 0; i < f.nchunks(); ++i) {
        codec::Special s = codec::Special::none;
        bool memcpyed = false;
        try {
            const storage::StoredChunk c = f.chunk_unchecked(i);  // headers only: no full pass
            s = c.special;
            if (!c.index_only()) {
                const format::ChunkHeader h = format::read_chunk_header(c.bytes);
                s = static_cast<codec::Special>(h.special());
                memcpyed = h.memcpyed();
            }
        } catch (const Error& e) {  // a missing chunk file: the rest is still described
            k.unreadable.emplace_back(e.what());
            continue;
        }
        switch (s) {
            case codec::Special::zeros:
                ++k.zeros;
                break;
            case codec::Special::nan:
                ++k.nan;
                break;
            case codec::Special::uninit:
                ++k.uninit;
                break;
            case codec::Special::value:
                ++k.value;
                break;
            case codec::Special::none:
                ++(memcpyed ? k.memcpyed : k.compressed);
                break;
        }
    }
    return k;
}

std::string filters_text(const format::FrameHeader& h) {
    std::string s;
    for (std::size_t i = 0; i < h.filters.size(); ++i) {
        if (h.filters[i] != 0) {
            s += (s.empty() ? "" : ",") + codec::filter_name(h.filters[i]);
            if (h.filters[i] == static_cast<std::uint8_t>(codec::Filter::trunc_prec) ||
                (h.filters_meta[i] != 0 &&
                 h.filters[i] != static_cast<std::uint8_t>(codec::Filter::bytedelta))) {
                s += ":" +
                     std::to_string(static_cast<int>(static_cast<std::int8_t>(h.filters_meta[i])));
            }
        }
    }
    return s.empty() ? "none" : s;
}

/// A plugin codec's parameter as its users write it (signed for ZFP accuracy).
int codec_param(const format::FrameHeader& h) {
    return h.compcode() == static_cast<std::uint8_t>(codec::Codec::zfp_accuracy)
               ? static_cast<std::int8_t>(h.compcode_meta)
               : h.compcode_meta;
}

std::string codec_text(const format::FrameHeader& h, bool with_param = true) {
    const auto c = codec::codec_from_code(h.compcode());
    std::string s = c ? std::string(codec::codec_name(*c)) : "codec" + std::to_string(h.compcode());
    if (with_param && !codec::is_builtin(static_cast<codec::Codec>(h.compcode()))) {
        s += ":" + std::to_string(codec_param(h));
    }
    return s;
}

std::string shape_json(const Shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) {
        out += (i > 0 ? ", " : "") + std::to_string(s[i]);
    }
    return out + "]";
}

std::string hex(const std::vector<std::uint8_t>& b, std::size_t max) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (std::size_t i = 0; i < b.size() && i < max; ++i) {
        s += digits[b[i] >> 4];
        s += digits[b[i] & 15];
    }
    return b.size() > max ? s + "..." : s;
}

/// A metalayer's or vlmeta's content for JSON: "value": the msgpack decoded, or "hex" and why not.
std::string content_json(const std::vector<std::uint8_t>& b) {
    try {
        return "\"value\": " + Value::from_msgpack({b.data(), b.size()}).urls_redacted().to_json();
    } catch (const FormatError& e) {
        return "\"hex\": " + json_string(hex(b, b.size())) +
               ", \"not_msgpack\": " + json_string(e.what());
    }
}

/// ... and for text: the value as one line of JSON (cut at 100 characters), or hex.
std::string content_text(const std::vector<std::uint8_t>& b) {
    try {
        std::string t = Value::from_msgpack({b.data(), b.size()}).urls_redacted().to_json();
        return t.size() > 100 ? t.substr(0, 97) + "..." : t;
    } catch (const FormatError&) {
        return "not msgpack: " + hex(b, 48);
    }
}

/// What python-blosc2 keeps in a frame of an object kind, in a line: a persisted expression's
/// text, a proxy's source, a function's name.
std::string object_text(const storage::Frame& frame, ObjectKind kind) {
    const auto entry = [&](const char* name) -> std::optional<Value> {
        try {
            if (const auto raw = frame.vlmeta(name)) {
                return Value::from_msgpack({raw->data(), raw->size()});
            }
            if (const format::Metalayer* m = frame.metalayer(name)) {
                return Value::from_msgpack({m->content.data(), m->content.size()});
            }
        } catch (const Error&) {
        }
        return std::nullopt;
    };
    const auto field = [](const std::optional<Value>& v, const char* name) -> std::string {
        const Value* f = v ? v->find(name) : nullptr;
        return f != nullptr && f->type() == Value::Type::string ? f->as<std::string>() : "";
    };
    switch (kind) {
        case ObjectKind::lazyexpr: {
            std::string e = field(entry("b2o"), "expression");
            if (e.empty()) {
                e = field(entry("_LazyArray"), "expression");
            }
            return "a persisted expression, " + e + " (evaluated when read)";
        }
        case ObjectKind::udf: {
            std::string n = field(entry("b2o"), "name");
            if (n.empty()) {
                n = field(entry("_LazyArray"), "name");
            }
            return "a saved Python function " + n + " (Python source: never executed here)";
        }
        case ObjectKind::proxy: {
            const auto src = entry("proxy-source");
            const std::string local = field(src, "local_abspath");
            return "a proxy cache of " + (local.empty() ? std::string("a remote array") : local) +
                   " (only its fetched chunks read)";
        }
        default:
            return "";
    }
}

/// The description of a Zarr array or an HDF5 dataset (text, or a JSON object).
std::string describe_bridge(const std::string& path, bool json) {
    Value::Map m;
    if (bridges::is_zarr(path)) {
        m = bridges::zarr_summary(path, with_settings(OpenOptions{})).entries();
    } else {
        const OpenOptions o = with_settings(OpenOptions{});
        const AnyArray a = AnyArray::open(path, o);
        const auto list = [](const Shape& s) { return Value(Value::Array(s.begin(), s.end())); };
        Value::Map attrs;
        for (const std::string& name : a.attrs().names()) {
            attrs.emplace_back(name, a.attrs().get(name));
        }
        // The dataset chosen (a file's only one when none was named), as the array names it.
        bridges::Hdf5Location at = *bridges::hdf5_location(path);
        at.dataset = a.name().substr(at.file.size() + 1);
        const Value h = bridges::hdf5_summary(at, o);
        m = {{"format", "HDF5"},          {"dataset", h["dataset"]},  {"shape", list(a.shape())},
             {"maxshape", h["maxshape"]}, {"dtype", a.dtype().str()}, {"layout", h["layout"]}};
        if (h["layout"].as<std::string>() == "chunked") {
            m.emplace_back("chunks", list(a.chunk_shape()));
        }
        m.emplace_back("filters", h["filters"]);
        if (const Value* f = h.find("fill_value")) {
            m.emplace_back("fill_value", *f);
        }
        m.emplace_back("nbytes", a.nbytes());
        m.emplace_back("stored", h["stored"]);
        m.emplace_back("attributes", Value::map(std::move(attrs)));
        if (const Value* l = h.find("attributes_left_out")) {
            m.emplace_back("attributes_left_out", *l);
        }
    }
    const Value z = Value::map(m);
    const DType dtype = DType::parse(z["dtype"].as<std::string>());
    std::string fill;
    if (const Value* f = z.find("fill_value")) {
        ItemFormat(dtype).json(fill, f->bytes().data());
    }
    const auto shape = [&](const char* key) { return z[key].as<std::vector<std::int64_t>>(); };
    if (json) {
        Value::Map head;
        head.emplace_back("path", redact_secrets(path));
        for (auto& [k, v] : m) {
            head.emplace_back(k, k.as<std::string>() == "fill_value" ? Value::from_json(fill) : v);
        }
        return Value::map(std::move(head)).to_json(2) + "\n";
    }
    std::ostringstream o;
    o << "path        " << redact_secrets(path) << " (" << z["format"].as<std::string>()
      << (z.find("dataset") == nullptr ? " array" : " dataset") << ")\n";
    if (const Value* d = z.find("dataset")) {
        o << "dataset     " << d->as<std::string>() << "\n";
    }
    o << "shape       " << to_string(shape("shape"));
    if (const Value* most = z.find("maxshape"); most != nullptr && *most != z["shape"]) {
        std::string t;
        for (const Value& e : most->array()) {
            t += (t.empty() ? "" : ", ") + (e.is_nil() ? std::string("None") : e.to_json());
        }
        o << ", max (" << t << (most->size() == 1 ? ",)" : ")");
    }
    o << "\n";
    o << "dtype       " << dtype.str() << "\n";
    if (const Value* layout = z.find("layout")) {
        o << "layout      " << layout->as<std::string>();
        if (const Value* c = z.find("chunks")) {
            o << ", chunks " << to_string(c->as<std::vector<std::int64_t>>());
        }
        o << "\n";
        o << "filters     " << z["filters"].as<std::string>() << "\n";
        const bool quoted = fill.size() >= 2 && fill.front() == '"' && fill.back() == '"';
        o << "fill value  "
          << (fill.empty() ? "none defined (zeros)"
              : quoted     ? fill.substr(1, fill.size() - 2)
                           : fill)
          << "\n";
        o << "size        "
          << sizes_text(z["nbytes"].as<std::int64_t>(), z["stored"].as<std::int64_t>()) << "\n";
    } else if (z.find("inner_chunks") != nullptr) {
        o << "shards      " << to_string(shape("chunks")) << ", of inner chunks "
          << to_string(shape("inner_chunks")) << "\n";
    } else {
        o << "chunks      " << to_string(shape("chunks")) << "\n";
    }
    if (const Value* c = z.find("compressor")) {
        o << "order       " << z["order"].as<std::string>() << "\n";
        o << "compressor  " << c->as<std::string>() << "\n";
        o << "filters     " << z["filters"].as<std::string>() << "\n";
        o << "fill value  " << fill << "\n";
    } else if (const Value* c2 = z.find("codecs")) {
        o << "codecs      " << c2->as<std::string>() << "\n";
        o << "fill value  " << fill << "\n";
    }
    const Value& attrs = z["attributes"];
    if (attrs.size() > 0) {
        o << "attributes  " << attrs.to_json() << "\n";
    }
    if (const Value* l = z.find("attributes_left_out")) {
        // What the array does not carry, and why (an import or export leaves them behind).
        std::string t;
        for (const auto& [k, v] : l->entries()) {
            t += (t.empty() ? "" : "; ") + k.as<std::string>() + " (" + v.as<std::string>() + ")";
        }
        o << "left out    " << t << "\n";
    }
    return o.str();
}

/// The description of one file (text, or a JSON object).
/// `unreadable`: how many chunks could not be read (a missing chunk file).
std::string describe(const std::string& path, bool json, std::size_t& unreadable) {
    if (bridges::is_zarr(path) || bridges::hdf5_location(path)) {
        return describe_bridge(path, json);
    }
    // The frame always; the array view when the frame is one (as stored: a persisted
    // expression's carrier, a proxy's cache); the object kind it holds for python-blosc2.
    std::optional<storage::Frame> own;
    AnyArray leaf;
    const storage::Frame& frame = input_frame(path, own, leaf);
    AnyArray arr;
    std::string not_array;
    try {
        OpenOptions raw = with_settings(OpenOptions{});
        raw.raw_objects = true;
        arr = leaf ? leaf : AnyArray::open(path, raw);
    } catch (const UnsupportedError& e) {
        not_array = e.what();
    }
    const ObjectKind kind = object_kind(frame);
    const std::string object = kind == ObjectKind::ndarray ? "" : object_text(frame, kind);
    const format::FrameHeader& h = frame.header();
    const ChunkKinds k = count_kinds(frame);
    // One definition of size (as convert and verify state it): the elements' bytes, and what
    // the chunks take as stored. The frame's own nbytes counts edge chunks padded whole.
    const std::int64_t dead = frame.dead_bytes();
    const std::int64_t nbytes = arr ? arr.nbytes() : h.nbytes;
    const std::int64_t cbytes = frame.chunk_bytes();  // as AnyArray::cbytes()
    const double ratio =
        cbytes > 0 ? static_cast<double>(nbytes) / static_cast<double>(cbytes) : 0.0;
    std::ostringstream o;
    std::string ratio_json = "null";  // nothing stored (every chunk special): no ratio, as "-"
    if (cbytes > 0) {
        std::ostringstream r;
        r << ratio;
        ratio_json = r.str();
    }
    if (json) {
        o << "{\n  \"path\": " << json_string(redact_secrets(path)) << ",\n  \"storage\": \""
          << (frame.sparse() ? "sframe" : "cframe")
          << "\",\n  \"kind\": " << json_string(to_string(kind)) << ",\n";
        if (!object.empty()) {
            o << "  \"object\": " << json_string(object) << ",\n";
        }
        if (arr) {
            o << "  \"shape\": " << shape_json(arr.shape())
              << ",\n  \"dtype\": " << json_string(arr.dtype().str()) << ",\n";
            if (!arr.dtype_note().empty()) {
                o << "  \"dtype_note\": " << json_string(in_cli_terms(arr.dtype_note())) << ",\n";
            }
            o << "  \"chunkshape\": " << shape_json(arr.chunk_shape())
              << ",\n  \"blockshape\": " << shape_json(arr.block_shape())
              << ",\n  \"legacy_caterva\": " << (arr.legacy_caterva() ? "true" : "false") << ",\n";
        } else {
            o << "  \"array\": null,\n  \"not_an_array\": " << json_string(not_array) << ",\n";
        }
        o << "  \"typesize\": " << h.typesize
          << ",\n  \"codec\": " << json_string(codec_text(h, false))
          << ",\n  \"codec_param\": " << codec_param(h) << ",\n  \"clevel\": " << h.clevel()
          << ",\n  \"filters\": " << json_string(filters_text(h)) << ",\n  \"splitmode\": "
          << json_string(
                 std::string(codec::split_mode_name(static_cast<codec::SplitMode>(h.splitmode()))))
          << ",\n  \"nchunks\": " << frame.nchunks() << ",\n  \"chunksize\": " << h.chunksize
          << ",\n  \"blocksize\": " << h.blocksize << ",\n  \"nbytes\": " << nbytes
          << ",\n  \"cbytes\": " << cbytes << ",\n  \"ratio\": " << ratio_json
          << ",\n  \"padded_nbytes\": " << h.nbytes << ",\n  \"dead_bytes\": " << dead
          << ",\n  \"checksums\": \"" << checksum_state_name(frame.checksums().state)
          << "\",\n  \"chunks\": {\"compressed\": " << k.compressed
          << ", \"memcpyed\": " << k.memcpyed << ", \"zeros\": " << k.zeros
          << ", \"nan\": " << k.nan << ", \"uninit\": " << k.uninit << ", \"value\": " << k.value
          << "},\n  \"unreadable\": [";
        for (std::size_t i = 0; i < k.unreadable.size(); ++i) {
            o << (i > 0 ? ", " : "") << json_string(k.unreadable[i]);
        }
        o << "],\n  \"metalayers\": [";
        bool first = true;
        for (const auto& m : frame.metalayers()) {
            o << (first ? "" : ", ") << "{\"name\": " << json_string(m.name)
              << ", \"bytes\": " << m.content.size() << ", " << content_json(m.content) << "}";
            first = false;
        }
        o << "],\n  \"vlmeta\": [";
        first = true;
        for (const auto& name : frame.vlmeta_names()) {
            const std::vector<std::uint8_t> v =
                frame.vlmeta(name).value_or(std::vector<std::uint8_t>{});
            o << (first ? "" : ", ") << "{\"name\": " << json_string(name)
              << ", \"bytes\": " << v.size() << ", " << content_json(v) << "}";
            first = false;
        }
        o << "]\n}\n";
    } else {
        o << "path        " << redact_secrets(path) << " ("
          << (frame.sparse() ? "sparse frame, a directory" : "contiguous frame") << ")\n";
        if (kind != ObjectKind::ndarray) {
            o << "kind        " << to_string(kind) << (object.empty() ? "" : ": " + object) << "\n";
        }
        if (arr) {
            const Grid& g = arr.grid();
            o << "shape       " << to_string(arr.shape()) << "\n";
            o << "dtype       " << arr.dtype().str()
              << (arr.legacy_caterva() ? "  (legacy caterva metalayer)" : "") << "\n";
            if (!arr.dtype_note().empty()) {
                o << "            " << in_cli_terms(arr.dtype_note()) << "\n";
            }
            o << "chunks      " << to_string(arr.chunk_shape()) << ", " << g.nchunks()
              << " in all\n";
            o << "blocks      " << to_string(arr.block_shape()) << ", " << g.nblocks()
              << " per chunk (" << human_bytes(g.block_nbytes()) << " each)\n";
        } else {
            o << "array       none: " << not_array << "\n";
            o << "chunks      " << frame.nchunks() << " of "
              << (h.chunksize > 0 ? human_bytes(h.chunksize) : "varying size") << ", typesize "
              << h.typesize << "\n";
        }
        o << "codec       " << codec_text(h) << " clevel " << h.clevel() << ", filters "
          << filters_text(h) << ", split "
          << codec::split_mode_name(static_cast<codec::SplitMode>(h.splitmode())) << "\n";
        o << "size        " << nbytes << " bytes (" << human_bytes(nbytes) << ") stored in "
          << cbytes << " (" << human_bytes(cbytes) << "), ratio " << ratio_text(nbytes, cbytes)
          << "\n";
        if (h.nbytes != nbytes) {
            o << "padded      " << h.nbytes << " bytes (" << human_bytes(h.nbytes)
              << ") with edge chunks counted whole, as the frame header says\n";
        }
        if (dead > 0) {
            o << "dead space  " << dead << " bytes (" << human_bytes(dead)
              << ") left by updates; 'b2nd compact' removes it\n";
        }
        o << "checksums   " << std::string(checksum_state_text(frame.checksums().state)).substr(11)
          << "\n";
        o << "chunk kinds " << k.compressed << " compressed, " << k.memcpyed << " memcpyed, "
          << k.zeros << " zeros, " << k.nan << " NaN, " << k.uninit << " uninitialized, " << k.value
          << " repeated value\n";
        for (std::size_t i = 0; i < k.unreadable.size() && i < 10; ++i) {
            o << "unreadable  " << k.unreadable[i] << "\n";
        }
        if (k.unreadable.size() > 10) {
            o << "unreadable  ... " << k.unreadable.size() - 10 << " more\n";
        }
        for (const auto& m : frame.metalayers()) {
            o << "metalayer   " << detail::printable(m.name) << " (" << m.content.size()
              << " bytes) " << content_text(m.content) << "\n";
        }
        for (const auto& name : frame.vlmeta_names()) {
            const std::vector<std::uint8_t> v =
                frame.vlmeta(name).value_or(std::vector<std::uint8_t>{});
            o << "vlmeta      " << detail::printable(name) << " (" << v.size() << " bytes) "
              << content_text(v) << "\n";
        }
    }
    unreadable = k.unreadable.size();
    return o.str();
}

}  // namespace

int cmd_info(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, {}, {"--json", "--help"});
    if (a.has("--help")) {
        std::cout << kHelp;
        return 0;
    }
    if (a.positional.empty()) {
        throw ArgError("expected PATH...");
    }
    const bool json = a.has("--json");
    const bool many = a.positional.size() > 1;
    // Each file on its own: one that cannot be read is named on stderr, the others described.
    int status = 0;
    std::size_t shown = 0;
    if (json && many) {
        std::cout << "[\n";
    }
    for (const std::string& path : a.positional) {
        std::string text;
        try {
            std::size_t unreadable = 0;
            text = describe(path, json, unreadable);
            if (unreadable > 0) {  // described, but its data is not all there
                std::cerr << "b2nd info: " << detail::quoted_path(path) << ": " << unreadable
                          << " chunk" << (unreadable > 1 ? "s" : "")
                          << " cannot be read (listed as unreadable)\n";
                status = std::max(status, 1);
            }
        } catch (const Error& e) {
            status = std::max(status, report("info", e));
            continue;
        }
        if (shown++ > 0) {
            std::cout << (json ? ",\n" : "\n");
        }
        if (json && many && !text.empty() && text.back() == '\n') {
            text.pop_back();
        }
        std::cout << text;
    }
    if (json && many) {
        std::cout << "\n]\n";
    }
    return status;
}

}  // namespace b2nd::cli
