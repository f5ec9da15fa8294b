// Arrays written as Zarr arrays (bridges.hpp): v3 with the array's chunks as shards of its blocks
// (sharding_indexed: inner codecs bytes + blosc, or zstd; the index checked by crc32c), or v2
// with the array's chunks and the blosc compressor. Built under a temporary name chunk by chunk,
// in parallel, and moved into place whole.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <b2nd/attrs.hpp>
#include <b2nd/codec/filters.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/sources.hpp>

#include "../codec/blosc1.hpp"
#include "../codec/compressors.hpp"
#include "../detail/text.hpp"
#include "../storage/publish.hpp"
#include "../storage/sources/posix_file.hpp"
#include "bridges.hpp"
#include "crc32c.hpp"
#include "export_coding.hpp"
#include "zarr_meta.hpp"

namespace b2nd::bridges {

namespace {

namespace fs = std::filesystem;
using detail::num;

/// How chunks (v2) or inner chunks (v3) are compressed.
const char* blosc_shuffle_name(int s) {
    return s == 2 ? "bitshuffle" : s == 1 ? "shuffle" : "noshuffle";
}

/// v3's inner chunks must divide the shard: the array's block shape where it divides the chunk
/// shape, else along that dimension the largest divisor of the chunk's extent below the block's.
Shape inner_shape(const Grid& g) {
    Shape inner;
    for (int d = 0; d < g.ndim(); ++d) {
        const std::int64_t c =
            std::max<std::int64_t>(g.chunk_shape()[static_cast<std::size_t>(d)], 1);
        std::int64_t b =
            std::min(std::max<std::int64_t>(g.block_shape()[static_cast<std::size_t>(d)], 1), c);
        while (c % b != 0) {
            --b;
        }
        inner.push_back(b);
    }
    return inner;
}

Shape shard_shape(const Grid& g) {
    Shape s = g.chunk_shape();
    for (std::int64_t& e : s) {
        e = std::max<std::int64_t>(e, 1);
    }
    return s;
}

Value shape_value(const Shape& s) {
    return Value(Value::Array(s.begin(), s.end()));
}

/// v2's dtype: NumPy's string, or a structured dtype's list of [name, dtype(, shape)].
Value v2_dtype(const DType& d, const std::string& where) {
    if (d.kind() != DType::Kind::structured) {
        return d.str();
    }
    Value::Array fields;
    std::int64_t end = 0;
    for (const DType::Field& f : d.fields()) {
        if (f.offset != end) {
            throw UnsupportedError(where +
                                   ": a structured dtype with padding between fields, "
                                   "which Zarr v2's dtype lists cannot say");
        }
        Value::Array e{f.name, v2_dtype(*f.type, where)};
        std::int64_t n = 1;
        if (!f.shape.empty()) {
            e.push_back(shape_value(f.shape));
            for (const std::int64_t x : f.shape) {
                n *= x;
            }
        }
        end += n * f.type->itemsize();
        fields.emplace_back(std::move(e));
    }
    if (end != d.itemsize()) {
        throw UnsupportedError(where + ": a structured dtype with padding at its end");
    }
    return Value(std::move(fields));
}

Value zero_fill(const DType& d, int format) {
    switch (d.kind()) {
        case DType::Kind::boolean:
            return false;
        case DType::Kind::float_:
            return 0.0;
        case DType::Kind::complex_:
            return Value(Value::Array{0.0, 0.0});
        case DType::Kind::int_:
        case DType::Kind::uint:
            return 0;
        case DType::Kind::bytes:
        case DType::Kind::unicode:
            return "";  // v2: base64 of nothing, an empty string
        default:
            return format == 2 ? Value(nullptr) : Value(0);
    }
}

std::string v3_type_name(const DType& d, const std::string& where) {
    for (const ZarrV3Type& t : zarr_v3_types()) {
        if (d.kind() == t.kind && d.itemsize() == t.size) {
            return t.name;
        }
    }
    throw UnsupportedError(where + ": dtype " + d.str() +
                           " has no Zarr v3 core data type (write --zarr-format 2)");
}

/// The fill value written: the array's _FillValue where it is a number its dtype holds (NaN and
/// infinities as Zarr spells them), else zero.
Value fill_of(const AnyArray& a, int format, const std::string& where) {
    const DType& d = a.dtype();
    const Value held = a.attrs().contains(kFillValueKey) ? a.attrs().get(kFillValueKey) : Value();
    const Value* f = held.is_nil() ? nullptr : &held;
    const DType::Kind kind = d.kind();
    if (f != nullptr && f->type() == Value::Type::array && f->size() == 1) {
        f = &(*f)[0];
    }
    if (f == nullptr || (f->type() != Value::Type::integer && f->type() != Value::Type::real) ||
        (kind != DType::Kind::int_ && kind != DType::Kind::uint && kind != DType::Kind::float_)) {
        return zero_fill(d, format);
    }
    try {
        (void)zarr_fill_bytes(*f, d, where);  // refused when the dtype cannot hold it
    } catch (const Error&) {
        return zero_fill(d, format);
    }
    if (kind == DType::Kind::float_) {
        const double x = f->as<double>();
        if (std::isnan(x)) {
            return "NaN";
        }
        if (std::isinf(x)) {
            return x > 0 ? "Infinity" : "-Infinity";
        }
        return x;
    }
    return *f;
}

/// The attributes written: the dtypes an HDF5 import recorded left out (JSON has no widths), as
/// is a _FillValue that became the fill value; for v3, _ARRAY_DIMENSIONS taken out as `names`
/// (zarr.json's dimension_names).
Value::Map attributes_of(const AnyArray& a, int format, Value* names) {
    const bool filled = fill_of(a, format, "") != zero_fill(a.dtype(), format);
    Value::Map out;
    for (auto& [k, v] : user_attributes(a)) {
        const std::string key = k.type() == Value::Type::string ? k.as<std::string>() : "";
        if (key == kAttributeDtypesKey || (key == kFillValueKey && filled)) {
            continue;
        }
        if (key == kGlobalsKey && v.type() == Value::Type::map) {
            Value::Map globals;
            for (const auto& [gk, gv] : v.entries()) {
                if (!(gk.type() == Value::Type::string &&
                      gk.as<std::string>() == kAttributeDtypesKey)) {
                    globals.emplace_back(gk, gv);
                }
            }
            out.emplace_back(k, Value::map(std::move(globals)));
            continue;
        }
        if (format == 3 && key == kDimensionsKey && v.type() == Value::Type::array &&
            v.size() == static_cast<std::size_t>(a.ndim()) &&
            std::all_of(v.array().begin(), v.array().end(),
                        [](const Value& e) { return e.type() == Value::Type::string; })) {
            *names = v;
            continue;
        }
        out.emplace_back(k, v);
    }
    return out;
}

/// v2's compressor object (numcodecs' configuration), null for none.
Value v2_compressor(const ChunkCoding& c, int typesize) {
    (void)typesize;
    switch (c.stream) {
        case ChunkCoding::Stream::blosc1:
            return Value::map({{"id", "blosc"},
                               {"cname", std::string(codec::codec_name(c.codec))},
                               {"clevel", c.clevel},
                               {"shuffle", c.shuffle},
                               {"blocksize", 0}});
        case ChunkCoding::Stream::lz4:
            return Value::map({{"id", "lz4"}, {"acceleration", 1}});
        case ChunkCoding::Stream::raw:
            return Value();
        default:
            return Value::map({{"id", compressor_name(c.compressor)}, {"level", c.clevel}});
    }
}

/// v3's bytes-to-bytes codec after `bytes` inside a shard (none for none).
Value::Array v3_codecs(const ChunkCoding& c, int typesize) {
    switch (c.stream) {
        case ChunkCoding::Stream::blosc1:
            return {Value::map(
                {{"name", "blosc"},
                 {"configuration", Value::map({{"cname", std::string(codec::codec_name(c.codec))},
                                               {"clevel", c.clevel},
                                               {"shuffle", blosc_shuffle_name(c.shuffle)},
                                               {"typesize", typesize},
                                               {"blocksize", 0}})}})};
        case ChunkCoding::Stream::zstd:
            return {Value::map(
                {{"name", "zstd"},
                 {"configuration", Value::map({{"level", c.clevel}, {"checksum", false}})}})};
        case ChunkCoding::Stream::gzip:
            return {Value::map(
                {{"name", "gzip"}, {"configuration", Value::map({{"level", c.clevel}})}})};
        default:
            return {};
    }
}

std::string metadata_json(const AnyArray& a,
                          const ChunkCoding& c,
                          int format,
                          const std::string& where) {
    const DType& d = a.dtype();
    const int typesize = static_cast<int>(std::min<std::int64_t>(d.itemsize(), 255));
    if (format == 2) {
        Value::Map z = {{"zarr_format", 2},
                        {"shape", shape_value(a.shape())},
                        {"chunks", shape_value(shard_shape(a.grid()))},
                        {"dtype", v2_dtype(d, where)},
                        {"compressor", v2_compressor(c, typesize)},
                        {"fill_value", fill_of(a, 2, where)},
                        {"order", "C"},
                        {"filters", nullptr},
                        {"dimension_separator", "."}};
        return Value::map(std::move(z)).to_json(4) + "\n";
    }
    const bool big = d.byteorder() == '>';
    Value::Array inner{Value::map(
        {{"name", "bytes"}, {"configuration", Value::map({{"endian", big ? "big" : "little"}})}})};
    for (Value& codec : v3_codecs(c, typesize)) {
        inner.push_back(std::move(codec));
    }
    const Value sharding = Value::map(
        {{"name", "sharding_indexed"},
         {"configuration",
          Value::map({{"chunk_shape", shape_value(inner_shape(a.grid()))},
                      {"codecs", Value(std::move(inner))},
                      {"index_codecs",
                       Value(Value::Array{
                           Value::map({{"name", "bytes"},
                                       {"configuration", Value::map({{"endian", "little"}})}}),
                           Value::map({{"name", "crc32c"}})})},
                      {"index_location", "end"}})}});
    Value::Map z = {
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", shape_value(a.shape())},
        {"data_type", v3_type_name(d, where)},
        {"chunk_grid",
         Value::map({{"name", "regular"},
                     {"configuration",
                      Value::map({{"chunk_shape", shape_value(shard_shape(a.grid()))}})}})},
        {"chunk_key_encoding",
         Value::map({{"name", "default"}, {"configuration", Value::map({{"separator", "/"}})}})},
        {"fill_value", fill_of(a, 3, where)},
        {"codecs", Value(Value::Array{sharding})}};
    Value names;
    z.emplace_back("attributes", Value::map(attributes_of(a, 3, &names)));
    if (!names.is_nil()) {
        z.emplace_back("dimension_names", names);
    }
    return Value::map(std::move(z)).to_json(2) + "\n";
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes, bool durable) {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    storage::detail::PosixFile f(path, storage::detail::PosixFile::Mode::create_new);
    f.write_at({bytes.data(), bytes.size()}, 0);
    if (durable) {
        f.sync();
    }
}

/// Writes chunk `ci` (its `region`, C order) under `dir`: a v2 chunk, or a v3 shard.
void write_chunk(const AnyArray& a,
                 const ZarrMeta& keys,
                 const ChunkCoding& c,
                 int format,
                 std::int64_t ci,
                 const Box& region,
                 const std::uint8_t* data,
                 const std::string& dir,
                 bool durable) {
    const Grid& g = a.grid();
    const int nd = g.ndim();
    const auto item = static_cast<std::size_t>(g.itemsize());
    const int typesize = static_cast<int>(std::min<std::int64_t>(g.itemsize(), 255));
    std::int64_t cc[kMaxNdim] = {};
    g.chunk_coords(ci, cc);
    const std::string path = dir + "/" + chunk_key(keys, cc);
    const Shape origin(static_cast<std::size_t>(nd), 0);
    thread_local std::vector<std::uint8_t> shard, index, raw, enc;  // their room reused
    if (format == 2) {
        const Shape cs = shard_shape(g);
        std::int64_t items = 1;
        for (const std::int64_t e : cs) {
            items *= e;
        }
        raw.assign(static_cast<std::size_t>(items) * item, 0);
        copy_box(data, region.count, origin, raw.data(), cs, region.count, item);
        encode_chunk(c, raw.data(), raw.size(), typesize, enc);
        write_file(path, enc, durable);
        return;
    }
    // A shard: its inner chunks in C order, then the index and its crc32c.
    shard.clear();
    index.clear();
    const Shape bs = inner_shape(g);
    std::int64_t per[kMaxNdim] = {};
    std::int64_t inners = 1;
    for (int d = 0; d < nd; ++d) {
        per[d] = std::max<std::int64_t>(g.chunk_shape()[static_cast<std::size_t>(d)], 1) /
                 bs[static_cast<std::size_t>(d)];
        inners *= per[d];
    }
    std::int64_t inner_items = 1;
    for (const std::int64_t e : bs) {
        inner_items *= e;
    }
    raw.resize(static_cast<std::size_t>(inner_items) * item);
    for (std::int64_t b = 0; b < inners; ++b) {
        Shape start(static_cast<std::size_t>(nd)), count(static_cast<std::size_t>(nd));
        std::int64_t rest = b;
        bool empty = false;
        for (int d = nd - 1; d >= 0; --d) {
            const auto u = static_cast<std::size_t>(d);
            start[u] = rest % per[d] * bs[u];
            rest /= per[d];
            count[u] = std::min(bs[u], region.count[u] - start[u]);
            empty = empty || count[u] <= 0;
        }
        std::uint64_t entry[2] = {~std::uint64_t{0}, ~std::uint64_t{0}};
        if (!empty) {
            std::fill(raw.begin(), raw.end(), 0);
            copy_box(data, region.count, start, raw.data(), bs, count, item);
            encode_chunk(c, raw.data(), raw.size(), typesize, enc);
            entry[0] = shard.size();
            entry[1] = enc.size();
            shard.insert(shard.end(), enc.begin(), enc.end());
        }
        for (const std::uint64_t v : entry) {
            for (int k = 0; k < 8; ++k) {
                index.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
            }
        }
    }
    const std::uint32_t crc = crc32c(index.data(), index.size());
    for (int k = 0; k < 4; ++k) {
        index.push_back(static_cast<std::uint8_t>(crc >> (8 * k)));
    }
    shard.insert(shard.end(), index.begin(), index.end());
    write_file(path, shard, durable);
}

}  // namespace

}  // namespace b2nd::bridges

namespace b2nd {

void export_zarr(const AnyArray& given, const std::string& out, const ZarrExportOptions& o) {
    using namespace bridges;
    const std::string where = detail::quoted_path(out);
    if (o.format != 2 && o.format != 3) {
        throw UsageError("Zarr format " + num(o.format) + ": 2 or 3");
    }
    const ExportFormat format = o.format == 2 ? ExportFormat::zarr2 : ExportFormat::zarr3;
    ChunkCoding c = resolve_coding(given, o, format, where);
    if (format == ExportFormat::zarr3 && o.compressor == ExportCompressor::standard && !o.codec &&
        given.compression().codec != c.codec) {
        // An array whose codec Blosc 1.x lacks (ZFP, NDLZ, ...): v3's own zstd.
        c.stream = ChunkCoding::Stream::zstd;
        c.compressor = ExportCompressor::zstd;
        c.shuffle = 0;
    }
    const AnyArray a = coded_grid(given, o, format, where);
    const std::string meta = metadata_json(a, c, o.format, where);
    ZarrMeta keys;  // how chunk keys are spelled
    keys.version = o.format;
    keys.shape = a.shape();
    keys.key_prefix = o.format == 3 ? "c" : "";
    keys.separator = o.format == 3 ? '/' : '.';

    storage::OpenOptions remote;
    remote.s3 = o.s3;
    remote.http = o.http;
    detail::Publication pub(out, o.overwrite, where, detail::OutputKind::zarr, 0, remote);
    const std::string tmp = pub.temporary();
    try {
        storage::detail::make_directory(tmp);
        write_file(tmp + (o.format == 3 ? "/zarr.json" : "/.zarray"),
                   std::vector<std::uint8_t>(meta.begin(), meta.end()), o.durable);
        if (o.format == 2) {
            Value unused;
            const std::string attrs = Value::map(attributes_of(a, 2, &unused)).to_json(4) + "\n";
            write_file(tmp + "/.zattrs", std::vector<std::uint8_t>(attrs.begin(), attrs.end()),
                       o.durable);
        }
        std::atomic<std::int64_t> done{0};
        std::mutex progress_mutex;
        const std::int64_t total = a.grid().nchunks();
        const Grid& g = a.grid();
        a.for_each_chunk(
            a.all_chunks(),
            [&](std::int64_t ci, const Box& region, const std::uint8_t* data,
                const std::uint8_t* uniform) {
                std::vector<std::uint8_t> filled;
                if (data == nullptr) {
                    const auto item = static_cast<std::size_t>(g.itemsize());
                    filled.resize(static_cast<std::size_t>(region.size()) * item);
                    for (std::size_t k = 0; k < filled.size(); k += item) {
                        std::memcpy(filled.data() + k, uniform, item);
                    }
                    data = filled.data();
                }
                write_chunk(a, keys, c, o.format, ci, region, data, tmp, o.durable);
                const std::int64_t n = ++done;
                if (o.progress) {
                    std::lock_guard<std::mutex> lock(progress_mutex);
                    o.progress(n, total);
                }
            },
            o.nthreads);
        pub.publish(o.durable);
    } catch (...) {
        pub.rethrow();
    }
}

}  // namespace b2nd
