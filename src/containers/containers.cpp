// What the variable-length containers share (containers_detail.hpp), and the items of any of
// them by kind (container_items, for `b2nd show --json`).
#include <algorithm>

#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/containers.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/endian.hpp>
#include <b2nd/objects.hpp>
#include <b2nd/storage/frame.hpp>

#include "../detail/text.hpp"
#include "../storage/publish.hpp"
#include "../values/params_detail.hpp"
#include "containers_detail.hpp"

namespace b2nd::detail {

std::vector<std::int64_t> read_int64s(const AnyArray& a,
                                      std::int64_t start,
                                      std::int64_t count,
                                      const char* what) {
    if (start < 0 || count < 0 || start > a.size() || count > a.size() - start) {
        throw FormatError(a.path() + ": " + what + ": entries " + num(start) + ".." +
                          num(start + count) + " are past its " + num(a.size()));
    }
    require_memory(a, static_cast<std::uint64_t>(count), "read");
    std::vector<std::int64_t> v(static_cast<std::size_t>(count));
    if (count == 0) {
        return v;
    }
    a.read(Box::region({start}, {count}), v.data(), v.size() * 8);
    if (a.dtype().needs_byteswap()) {
        for (auto& x : v) {
            x = static_cast<std::int64_t>(format::byteswap(static_cast<std::uint64_t>(x)));
        }
    }
    return v;
}

void native_to_little(std::vector<std::int64_t>& v) noexcept {
    if constexpr (b2nd::endian::native == b2nd::endian::big) {
        for (auto& x : v) {
            x = static_cast<std::int64_t>(format::byteswap(static_cast<std::uint64_t>(x)));
        }
    }
}

std::shared_ptr<const storage::Frame> open_container_frame(const std::string& path,
                                                           const OpenOptions& o) {
    storage::OpenOptions fo = o;
    fo.writable = false;
    return std::make_shared<const storage::Frame>(storage::Frame::open(path, fo));
}

Value metalayer_value(const storage::Frame& f, const std::string& name) {
    const format::Metalayer* m = f.metalayer(name);
    if (m == nullptr) {
        return Value();
    }
    return Value::from_msgpack({m->content.data(), m->content.size()},
                               f.path() + ": metalayer '" + name + "'");
}

Value vlmeta_value(const storage::Frame& f, const std::string& name) {
    const auto raw = f.vlmeta(name);
    if (!raw) {
        return Value();
    }
    return Value::from_msgpack({raw->data(), raw->size()}, f.path() + ": vlmeta '" + name + "'");
}

std::vector<std::uint8_t> decode_container_chunk(const storage::Frame& f, std::int64_t i) {
    try {
        return f.decode_chunk(i);
    } catch (const FormatError& e) {
        throw FormatError(f.path() + ": chunk " + num(i) + ": " + e.what());
    }
}

namespace {
codec::CodecChoice bytes_choice(const CompressionParams& c) {
    // Items are bytes: typesize 1 (python's _set_typesize_one), a one-element grid.
    const Grid g({1}, {1}, {1}, 1);
    const std::string why = check_compression(c, g);
    if (!why.empty()) {
        throw UsageError("container compression: " + why);
    }
    return encode_params(c, g);
}
}  // namespace

std::vector<std::uint8_t> encode_item_chunk(const std::vector<std::uint8_t>& payload,
                                            const CompressionParams& c) {
    codec::EncodeParams p;
    static_cast<codec::CodecChoice&>(p) = bytes_choice(c);
    p.typesize = 1;
    return codec::encode_chunk({payload.data(), payload.size()}, p);
}

std::vector<std::uint8_t> encode_vlblocks_chunk(
    const std::vector<std::vector<std::uint8_t>>& blocks, const CompressionParams& c) {
    std::vector<ByteSpan> spans;
    spans.reserve(blocks.size());
    for (const auto& b : blocks) {
        spans.emplace_back(b.data(), b.size());
    }
    return codec::encode_vlblocks_chunk(spans, bytes_choice(c));
}

void write_container_frame(const std::string& path,
                           bool overwrite,
                           const CompressionParams& c,
                           const std::vector<std::pair<std::string, Value>>& metalayers,
                           const std::vector<std::pair<std::string, Value>>& vlmeta,
                           const std::vector<std::vector<std::uint8_t>>& chunks,
                           bool vl_blocks) {
    Publication pub(path, overwrite, quoted_path(path));
    try {
        storage::FrameParams fp;
        static_cast<codec::CodecChoice&>(fp) = bytes_choice(c);
        fp.typesize = 1;
        fp.chunksize = 0;
        fp.vl_blocks = vl_blocks;
        std::vector<format::Metalayer> metas;
        for (const auto& [name, v] : metalayers) {
            metas.push_back({name, v.to_msgpack(), 0});
        }
        {
            storage::Frame f =
                storage::Frame::create(pub.temporary(), fp, false, metas, false, false);
            storage::FrameEdit e = f.keep_all();
            for (const auto& ch : chunks) {
                e.add_new({ch.data(), ch.size()});
            }
            for (const auto& [name, v] : vlmeta) {
                e.set_vlmeta(name, v.to_msgpack());
            }
            f.apply(e);
            f.sync();
        }
        pub.publish(false);
    } catch (...) {
        pub.rethrow();
    }
}

std::pair<std::int64_t, std::int64_t> clamp_range(std::int64_t start,
                                                  std::int64_t stop,
                                                  std::int64_t n) {
    start = std::clamp<std::int64_t>(start, 0, n);
    stop = std::clamp<std::int64_t>(stop, start, n);
    return {start, stop};
}

std::int64_t item_index(std::int64_t i, std::int64_t n, const std::string& where) {
    const std::int64_t k = i < 0 ? i + n : i;
    if (k < 0 || k >= n) {
        throw UsageError(where + ": item " + num(i) + " is out of range for " + num(n) + " items");
    }
    return k;
}

}  // namespace b2nd::detail

namespace b2nd {

bool is_item_container(const storage::Frame& frame) {
    const ObjectKind k = object_kind(frame);
    return k == ObjectKind::listarray || k == ObjectKind::objectarray ||
           k == ObjectKind::batcharray;
}

namespace {
[[noreturn]] void not_container(const storage::Frame& f) {
    throw UnsupportedError(f.path() + ": a " + to_string(object_kind(f)) +
                           ", not an ObjectArray, BatchArray or ListArray");
}
}  // namespace

std::int64_t container_size(const FramePtr& frame) {
    switch (object_kind(*frame)) {
        case ObjectKind::listarray:
            return ListArray::from_frame(frame).size();
        case ObjectKind::objectarray:
            return ObjectArray::from_frame(frame).size();
        case ObjectKind::batcharray:
            return BatchArray::from_frame(frame).size();
        default:
            not_container(*frame);
    }
}

std::vector<Value> container_items(const FramePtr& frame, std::int64_t start, std::int64_t stop) {
    switch (object_kind(*frame)) {
        case ObjectKind::listarray:
            return ListArray::from_frame(frame).rows(start, stop);
        case ObjectKind::objectarray:
            return ObjectArray::from_frame(frame).items(start, stop);
        case ObjectKind::batcharray:
            return BatchArray::from_frame(frame).items(start, stop);
        default:
            not_container(*frame);
    }
}

}  // namespace b2nd
