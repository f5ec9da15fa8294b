// python-blosc2's ObjectArray ("vlarray") and ListArray ("listarray") (containers.hpp).
#include <utility>

#include <b2nd/containers.hpp>
#include <b2nd/error.hpp>
#include <b2nd/objects.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/store.hpp>

#include "../detail/text.hpp"
#include "containers_detail.hpp"

namespace b2nd {

using detail::num;

namespace {

/// The serializer a container's metalayer names (python: "msgpack" when absent).
std::string serializer_of(const Value& meta) {
    const Value* s = meta.type() == Value::Type::map ? meta.find("serializer") : nullptr;
    return s == nullptr || s->is_nil() ? "msgpack" : s->as<std::string>();
}

}  // namespace

ObjectArray ObjectArray::open(const std::string& path, const OpenOptions& o) {
    return from_frame(detail::open_container_frame(path, o));
}

ObjectArray ObjectArray::open(const Store& store, const std::string& key) {
    return from_frame(store.open_frame(key));
}

ObjectArray ObjectArray::from_frame(FramePtr frame) {
    const Value meta = detail::metalayer_value(*frame, "vlarray");
    if (meta.is_nil()) {
        throw FormatError(frame->path() +
                          ": not an ObjectArray (no vlarray metalayer; it holds a " +
                          to_string(object_kind(*frame)) + ")");
    }
    const std::string ser = serializer_of(meta);
    if (ser != "msgpack") {
        throw UnsupportedError(frame->path() + ": ObjectArray items serialized as '" + ser +
                               "' (python-blosc2 writes msgpack)");
    }
    ObjectArray a;
    a.frame_ = std::move(frame);
    a.decoded_ = std::make_shared<std::atomic<std::uint64_t>>(0);
    return a;
}

std::string ObjectArray::where() const {
    return frame_->path();
}

std::int64_t ObjectArray::size() const {
    return frame_ ? frame_->nchunks() : 0;
}

Value ObjectArray::item(std::int64_t i) const {
    const std::int64_t k = detail::item_index(i, size(), where());
    const std::vector<std::uint8_t> payload = detail::decode_container_chunk(*frame_, k);
    decoded_->fetch_add(1, std::memory_order_relaxed);
    return Value::from_msgpack({payload.data(), payload.size()}, where() + ": item " + num(k));
}

std::vector<Value> ObjectArray::items(std::int64_t start, std::int64_t stop) const {
    const auto [a, b] = detail::clamp_range(start, stop, size());
    std::vector<Value> out;
    out.reserve(static_cast<std::size_t>(b - a));
    for (std::int64_t i = a; i < b; ++i) {
        out.push_back(item(i));
    }
    return out;
}

ContainerStats ObjectArray::stats() const {
    ContainerStats s;
    s.chunks = decoded_ ? decoded_->load() : 0;
    return s;
}

ObjectArray ObjectArray::write(const std::string& path,
                               const std::vector<Value>& items,
                               const CompressionParams& cparams,
                               bool overwrite) {
    std::vector<std::vector<std::uint8_t>> chunks;
    chunks.reserve(items.size());
    for (const Value& v : items) {
        chunks.push_back(detail::encode_item_chunk(v.to_msgpack(), cparams));
    }
    const Value meta = Value::map({{"version", 1}, {"serializer", "msgpack"}});
    detail::write_container_frame(path, overwrite, cparams, {{"vlarray", meta}}, {}, chunks, false);
    return open(path);
}

// ---- ListArray ----

ListArray ListArray::open(const std::string& path, const OpenOptions& o) {
    return from_frame(detail::open_container_frame(path, o));
}

ListArray ListArray::open(const Store& store, const std::string& key) {
    return from_frame(store.open_frame(key));
}

ListArray ListArray::from_frame(FramePtr frame) {
    ListArray l;
    l.spec_ = detail::metalayer_value(*frame, "listarray");
    if (l.spec_.is_nil()) {
        throw FormatError(frame->path() + ": not a ListArray (no listarray metalayer)");
    }
    if (frame->metalayer("batcharray") != nullptr) {
        l.batches_ = BatchArray::from_frame(std::move(frame));
        l.batch_backend_ = true;
    } else if (frame->metalayer("vlarray") != nullptr) {
        l.objects_ = ObjectArray::from_frame(std::move(frame));
    } else {
        throw FormatError(frame->path() +
                          ": a ListArray keeps its rows in an ObjectArray (vlarray) or a "
                          "BatchArray (batcharray); this frame has neither metalayer");
    }
    return l;
}

std::int64_t ListArray::size() const {
    return batch_backend_ ? batches_.size() : objects_.size();
}

Value ListArray::row(std::int64_t i) const {
    return batch_backend_ ? batches_.item(i) : objects_.item(i);
}

std::vector<Value> ListArray::rows(std::int64_t start, std::int64_t stop) const {
    return batch_backend_ ? batches_.items(start, stop) : objects_.items(start, stop);
}

}  // namespace b2nd
