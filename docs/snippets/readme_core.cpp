// The README's code, compiled and run as written (docs/snippets/README.md): each section below
// holds one of its blocks verbatim, between the lines the section needs first (the inputs the
// README leaves to the reader) and checks of what it did. tests/docs/check_snippets.py checks
// that every block of the README is one of these, or an excerpt of an example.
#include <cstdio>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/codec/registry.hpp>
#include <b2nd/mask.hpp>
#include <b2nd/ops.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/store.hpp>

#include "snippet_dir.hpp"

namespace {

void check(bool ok, const char* what) {
    if (!ok) {
        throw std::runtime_error(std::string("snippet check failed: ") + what);
    }
}

std::vector<float> ramp(std::size_t n) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = static_cast<float>(i % 1000) * 0.25F;
    }
    return v;
}

// clang-format off
void codec() {
    const std::vector<float> data = ramp(1024 * 1024);
    // README: "The chunk codec"
    #include <b2nd/codec/chunk_decoder.hpp>
    #include <b2nd/codec/chunk_encoder.hpp>

    b2nd::codec::EncodeParams p;  // zstd 1 + SHUFFLE by default
    p.typesize = sizeof(float);
    auto chunk = b2nd::codec::encode_chunk(b2nd::as_bytes(data.data(), data.size()), p);

    b2nd::codec::ChunkDecoder dec(chunk);  // validates the header and tables
    std::vector<std::uint8_t> block(static_cast<std::size_t>(dec.block_nbytes(3)));
    dec.decode_block(3, block);  // decodes one block only
    // end
    check(std::memcmp(block.data(),
                      reinterpret_cast<const std::uint8_t*>(data.data()) + 3 * dec.blocksize(),
                      block.size()) == 0,
          "block 3 decodes to its bytes");
}
// clang-format on

// clang-format off
void frames() {
    b2nd::CreateOptions co;
    co.chunk_shape = {8, 64, 64};  // 32 chunks
    (void)b2nd::NDArray<float>::create_from("temperature.b2nd", {64, 128, 128},
                                            ramp(64 * 128 * 128), co);
    std::vector<std::uint8_t> new_chunk, another_chunk;  // chunks of the frame's size
    {
        const auto f0 = b2nd::storage::Frame::open("temperature.b2nd");
        const auto bytes = f0.decode_chunk(1);
        b2nd::codec::EncodeParams p;
        p.typesize = 4;
        p.blocksize = f0.header().blocksize;
        new_chunk = b2nd::codec::encode_chunk({bytes.data(), bytes.size()}, p);
        another_chunk = new_chunk;
    }
    // README: "Frames"
    #include <b2nd/storage/frame.hpp>

    auto frame = b2nd::storage::Frame::open("temperature.b2nd");
    auto bytes = frame.decode_chunk(12);   // or frame.chunk(12).bytes, still compressed
    auto attrs = frame.vlmeta("attrs");    // std::optional<std::vector<std::uint8_t>>

    b2nd::storage::OpenOptions w;  w.writable = true;
    auto f = b2nd::storage::Frame::open("temperature.b2nd", w);
    b2nd::storage::FrameEdit e = f.keep_all();   // every chunk where it is
    e.replace(3, f.stage(new_chunk));             // written now, after the live data
    e.erase(0);  e.add_new(another_chunk);        // any reordering, in one commit
    f.apply(e);                                   // a crash leaves the old frame or the new one
    // end
    check(!attrs && !bytes.empty(), "a chunk decoded, no attrs vlmeta");
    check(b2nd::storage::Frame::open("temperature.b2nd").nchunks() == frame.nchunks(),
          "the edit kept the chunk count");
}
// clang-format on

// clang-format off
void arrays() {
    // README: "Arrays", making an array
    #include <b2nd/b2nd.hpp>

    std::vector<float> field(64 * 128 * 128);          // C order, as in numpy
    // ... fill it ...
    auto a = b2nd::NDArray<float>::create_from("temperature.b2nd", {64, 128, 128}, field);
    std::vector<float> all = a.read();                  // the whole array (Box::whole(a.shape()))
    std::vector<float> day = a.read({7, b2nd::Slice::all(), b2nd::Slice::all()});  // one plane
    a.write(b2nd::Box::whole(a.shape()), field);        // a box of the array: here all of it
    // end
    check(all.size() == field.size() && day.size() == 128 * 128, "sizes");
}
// clang-format on

void arrays_more() {
    {
        b2nd::CreateOptions o;
        o.overwrite = true;
        (void)b2nd::NDArray<float>::create_from("temperature.b2nd", {64, 128, 128},
                                                ramp(64 * 128 * 128), o);
        std::vector<std::uint8_t> v(64 * 128 * 128);
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i] = i % 7 == 0 ? 1 : 0;
        }
        (void)b2nd::AnyArray::create_from("valid.b2nd", b2nd::DType::parse("|b1"), {64, 128, 128},
                                          {v.data(), v.size()});
    }
    std::vector<std::uint8_t> bytes(64 * 128 * 128, 1);
    const std::vector<double> plane(128 * 128, 2.0), column(64, 3.0);
    const std::vector<double> more_planes(2 * 128 * 128, 4.0), planes(3 * 128 * 128, 5.0);
    // clang-format off
    // README: "Arrays", everything else
    auto t = b2nd::open<float>("temperature.b2nd");    // maps the file; reads header and index only
    t.shape(); t.chunk_shape(); t.block_shape(); t.dtype();          // dtype().str() == "<f4"
    float x = t(12, 40, 7);                            // decodes one block, then served from the cache
    std::vector<float> day = t.read({7, b2nd::Slice::all(), b2nd::Slice::all()});
    std::vector<float> odd = t.read(b2nd::parse_selection("::2, 5, -10:"));  // NumPy-style text
    std::vector<float> pts = t.read_points({{1, 2, 3}, {4, 5, 6}});  // each block decoded once
    using L = std::vector<std::int64_t>;              // index lists: like python's oindex
    std::vector<float> sel = t.read({L{3, 1, 7}, L{0, -1}, L{5}});
    std::vector<float> mix = t.read(b2nd::parse_selection("[3,1,7], 2:9:2, -1"));  // lists + slices
    auto valid = b2nd::Mask::of(b2nd::AnyArray::open("valid.b2nd"));  // a bool array, or bytes in
    auto mine = b2nd::Mask::of(bytes, t.shape());      // memory: any contiguous one-byte container
    std::vector<float> v = t.read_masked(valid);       // a[mask]: C order, the mask read slab by slab

    b2nd::CreateOptions o;                             // Zstd 1 + SHUFFLE, automatic chunk/block shapes
    o.compression.codec = b2nd::Codec::lz4;
    auto out = b2nd::create<double>("anomaly.b2nd", t.shape(), o);  // all zeros, nothing stored yet
    out.write(b2nd::Box::region({0, 0, 0}, {1, 128, 128}), plane);  // steps and negative steps too
    out.write({L{0, 9}, L{1, 2}, L{7}}, 0.0);          // one value (or data of the selection's shape)
    out.write_points({{1, 2, 3}, {4, 5, 6}}, {0.5, 1.5});  // the last of repeated points wins
    out.write({b2nd::Slice::all(), 3, L{0, 5}}, column, {64, 1});  // broadcast (64, 1) to (64, 2)
    out.write_masked(valid, 0.0);                      // a[mask] = v: only chunks with a true element
    b2nd::compress_where(t.any(), valid, "valid_t.b2nd");  // a[mask] to a new 1-d array, out of core
    out.append(0, more_planes);  out.insert(0, 10, planes);  out.remove(0, 3, 2);
    out.resize({80, 128, 128});                        // grows with zeros, or shrinks
    // end
    // clang-format on
    check(x == ramp(64 * 128 * 128)[(12 * 128 + 40) * 128 + 7], "t(12, 40, 7)");
    check(day.size() == 128 * 128 && pts.size() == 2 && sel.size() == 6 && !odd.empty() &&
              !mix.empty() && mine.shape == t.shape() && !v.empty(),
          "reads");
    check(out.shape() == b2nd::Shape{80, 128, 128}, "the new shape");
}

void whole_arrays() {
    auto t = b2nd::open<float>("temperature.b2nd");
    {
        b2nd::OpenOptions w;
        w.writable = true;
        b2nd::AnyArray::open("temperature.b2nd", w)
            .attrs()
            .set("calib", b2nd::Value::map({{"offset", 273.15}}));
        t = b2nd::open<float>("temperature.b2nd");
    }
    const auto a = b2nd::NDArray<float>::create_from("a.b2nd", {2, 3}, std::vector<float>(6, 1));
    const auto b = b2nd::NDArray<float>::create_from("b.b2nd", {4, 3}, std::vector<float>(12, 2));
    const auto c = b2nd::NDArray<float>::create_from("c.b2nd", {1, 3}, std::vector<float>(3, 3));
    // clang-format off
    // README: "Whole arrays, attributes, arrays in memory"
    b2nd::CopyOptions o;                               // what is not set stays as in the source
    o.compression = b2nd::CompressionParams{b2nd::Codec::lz4, 5};
    o.chunk_shape = b2nd::Shape{32, 64, 64};  o.sparse = true;
    b2nd::copy(t.any(), "t_lz4.b2frame", o);           // re-chunk, re-compress, switch frame kind
    b2nd::concatenate({a, b, c}, 0, "abc.b2nd");       // numpy.concatenate; b2nd::stack: a new axis
    b2nd::OpenOptions w;  w.writable = true;           // attributes change through a writable handle
    auto tw = b2nd::open<float>("temperature.b2nd", w);
    tw.any().attrs()["units"] = "K";                   // python-blosc2's attributes (vlmeta, msgpack)
    auto calib = t.any().attrs().get("calib");         // a b2nd::Value: maps, arrays, numbers, bytes
    double off = calib["offset"].as<double>();         // typed; a mismatch names file and attribute
    auto m = b2nd::NDArray<float>::create_in_memory({1000, 1000});  // writable, no file of its own
    std::vector<std::uint8_t> frame = m.to_cframe();   // python-blosc2's to_cframe
    auto back = b2nd::NDArray<float>::open_buffer({frame.data(), frame.size()});  // zero copy
    m.save("m.b2nd");
    // end
    // clang-format on
    check(off == 273.15, "the attribute read back");
    check(b2nd::open<float>("abc.b2nd").shape() == b2nd::Shape{7, 3}, "concatenated");
    check(back.shape() == b2nd::Shape{1000, 1000}, "the frame in memory");
}

void stores() {
    {
        // What python-blosc2 writes for: ts["/obs/pressure"] = blosc2.linspace(900, 1000, 1000);
        // ts.vlmeta["title"] = "observations".
        std::vector<double> pressure(1000);
        for (std::size_t i = 0; i < pressure.size(); ++i) {
            pressure[i] = 900.0 + 100.0 * static_cast<double>(i) / 999.0;
        }
        auto w = b2nd::StoreWriter::create("data.b2z");
        w.put("/obs/pressure",
              b2nd::NDArray<double>::create_from("pressure.b2nd", {1000}, pressure).any());
        w.set_vlmeta("/", "title", b2nd::Value("observations"));
        w.commit();
    }
    // clang-format off
    // README: "python-blosc2 stores", reading a tree
    const b2nd::Store s = b2nd::Store::open("data.b2z");
    auto p = s.open<double>("/obs/pressure");              // NDArray<double>: slices, views, evaluate
    double first = p(0);
    b2nd::Value title = s.vlmeta("/").at(0).second;        // "observations"
    // end
    // clang-format on
    check(first == 900.0 && title.as<std::string>() == "observations", "the tree read");
}

void plugins() {
    // clang-format off
    // README: "Lossy compression and plugins", ZFP
    b2nd::CreateOptions o;
    o.compression = b2nd::CompressionParams::zfp_accuracy(-3);  // |error| <= 1e-3, no filter
    auto a = b2nd::NDArray<float>::create("field.b2nd", {512, 512, 128}, o);
    // also zfp_precision(bits), zfp_rate(percent), ndlz(4 or 8); or set codec and codec_meta
    // end
    // clang-format on
    check(a.shape() == b2nd::Shape{512, 512, 128}, "created");
    // clang-format off
    // README: "Lossy compression and plugins", a codec of one's own
    b2nd::codec::CodecPlugin p;
    p.id = 200;
    p.name = "none";
    p.encode = [](const b2nd::codec::BlockContext&, b2nd::ByteSpan,
                  b2nd::MutableByteSpan) -> std::size_t { return 0; };  // 0: store as it is
    p.decode = [](const b2nd::codec::BlockContext&, b2nd::ByteSpan src, b2nd::MutableByteSpan dst) {
        if (src.size() != dst.size()) {
            throw b2nd::FormatError("none: a stream of the wrong size");
        }
        std::memcpy(dst.data(), src.data(), dst.size());
    };
    b2nd::codec::register_codec(std::move(p));
    o.compression.codec = static_cast<b2nd::Codec>(200);
    // end
    // clang-format on
    o.compression.filters.clear();
    auto mine = b2nd::NDArray<float>::create_from("mine.b2nd", {1000}, ramp(1000), o);
    check(b2nd::open<float>("mine.b2nd").read() == ramp(1000), "a codec of one's own");
}

void errors() {
    (void)b2nd::NDArray<float>::create_from("t.b2nd", {64, 32, 32}, ramp(64 * 32 * 32));
    // clang-format off
    // docs/errors.md: catching
    std::string what;
    try {
        auto t = b2nd::open<float>("t.b2nd");
        std::vector<float> v = t.read(b2nd::parse_selection("70, :, :8"));  // 64 planes
    } catch (const b2nd::FormatError& e) {  // malformed bytes, or bytes that fail their checksum
        what = e.what();                      // names the file, the chunk and the offset
        std::uint64_t at = e.offset().value_or(0);  // where in the file, when at one byte
        (void)at;
    } catch (const b2nd::Error& e) {  // IoError, UsageError, LockError, CodecError...
        what = e.what();
    }
    // end
    // clang-format on
    check(what.find("out of range") != std::string::npos, "the slice is out of range");
}

void integrity() {
    (void)b2nd::NDArray<float>::create_from("t.b2nd", {64, 32, 32}, ramp(64 * 32 * 32));
    // clang-format off
    // docs/integrity.md: what a file's checksums say
    auto t = b2nd::AnyArray::open("t.b2nd");
    b2nd::storage::ChecksumReport r = t.frame().checksums();  // none, stale, covered or broken
    for (const std::string& problem : r.problems) {           // broken: what disagrees
        std::fprintf(stderr, "%s\n", problem.c_str());
    }
    b2nd::OpenOptions trusting;
    trusting.verify_checksums = false;  // reads without checking (commits keep the table current)
    auto fast = b2nd::AnyArray::open("t.b2nd", trusting);
    // end
    // clang-format on
    check(r.state == b2nd::storage::ChecksumReport::State::covered, "our file is covered");
    check(fast.read() == t.read(), "the same values either way");
}

}  // namespace

// clang-format off
void bridges() {
    b2nd::NDArray<float>::create_from("t.b2nd", {64, 48}, ramp(64 * 48));
    // docs/bridges.md: "From the library"
    b2nd::AnyArray a = b2nd::AnyArray::open("t.b2nd");
    b2nd::export_zarr(a, "t.zarr");                       // Zarr v3, sharded
    b2nd::ZarrExportOptions v2;
    v2.format = 2;
    b2nd::export_zarr(a, "t2.zarr", v2);                   // Zarr v2, blosc

    b2nd::AnyArray z = b2nd::AnyArray::open("t.zarr");    // read in place, lazily
    std::vector<std::uint8_t> row = z.read(b2nd::parse_selection("5, :"));
    b2nd::copy(z, "back.b2nd");                           // imported

    if (b2nd::have_hdf5()) {
        b2nd::export_hdf5(a, "results.h5:/run7/t");        // shuffle + gzip
        auto t = b2nd::open<float>("results.h5:/run7/t");  // an HDF5 dataset, in place
    }
    // end
    check(row == a.read(b2nd::parse_selection("5, :")), "a row read in place");
    check(b2nd::AnyArray::open("back.b2nd").read() == a.read(), "the import holds the values");
    check(b2nd::AnyArray::open("t2.zarr").read() == a.read(), "the v2 array holds the values");
    if (b2nd::have_hdf5()) {
        check(b2nd::open<float>("results.h5:/run7/t").read() == ramp(64 * 48), "the dataset");
    }
}
// clang-format on

int main() {
    const SnippetDir dir;  // a fresh directory, the current one while the snippets run
    try {
        dir.section("codec", codec);
        dir.section("frames", frames);
        dir.section("arrays", arrays);
        dir.section("arrays_more", arrays_more);
        dir.section("whole_arrays", [] {
            arrays_more();  // its files: temperature.b2nd
            whole_arrays();
        });
        dir.section("stores", stores);
        dir.section("plugins", plugins);
        dir.section("errors", errors);
        dir.section("integrity", integrity);
        dir.section("bridges", bridges);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    std::printf("README snippets (core): all ran\n");
    return 0;
}
