// python-blosc2's BatchArray ("batcharray"): batches of items in VL-block chunks (containers.hpp).
#include <algorithm>
#include <optional>
#include <utility>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/containers.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/objects.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/store.hpp>

#include "../detail/text.hpp"
#include "containers_detail.hpp"

namespace b2nd {

using detail::num;

namespace {
constexpr const char* kLengthsKey = "_batch_array_metadata";

/// python's _guess_blocksize: items whose msgpack fits a budget that grows with clevel.
std::int64_t guess_items_per_block(const std::vector<Value>& first, int clevel) {
    if (clevel == 9 || clevel <= 0) {
        return static_cast<std::int64_t>(first.size());
    }
    const std::int64_t budget = clevel <= 3   ? (std::int64_t{1} << 20)
                                : clevel <= 6 ? (std::int64_t{1} << 23)
                                              : (std::int64_t{1} << 24);
    std::int64_t total = 0, count = 0;
    for (const Value& v : first) {
        const auto n = static_cast<std::int64_t>(v.to_msgpack().size());
        if (count > 0 && total + n > budget) {
            break;
        }
        total += n;
        ++count;
    }
    return std::max<std::int64_t>(count, 1);
}
}  // namespace

struct BatchArray::Layout {
    std::vector<std::int64_t> lengths;
    std::vector<std::int64_t> starts;  // lengths' prefix sums, size nbatches + 1
    std::int64_t items_per_block = 0;
    std::string serializer = "msgpack";
    std::vector<std::uint8_t> arrow_schema;
};

BatchArray BatchArray::open(const std::string& path, const OpenOptions& o) {
    return from_frame(detail::open_container_frame(path, o));
}

BatchArray BatchArray::open(const Store& store, const std::string& key) {
    return from_frame(store.open_frame(key));
}

BatchArray BatchArray::from_frame(FramePtr raw) {
    const std::string where = raw->path();
    const Value meta = detail::metalayer_value(*raw, "batcharray");
    if (meta.type() != Value::Type::map) {
        throw FormatError(where + ": not a BatchArray (no batcharray metalayer map; it holds a " +
                          to_string(object_kind(*raw)) + ")");
    }
    auto layout = std::make_shared<Layout>();
    if (const Value* s = meta.find("serializer"); s != nullptr && !s->is_nil()) {
        layout->serializer = s->as<std::string>();
    }
    if (layout->serializer != "msgpack" && layout->serializer != "arrow") {
        throw UnsupportedError(where + ": BatchArray serializer '" + layout->serializer +
                               "' (python-blosc2 writes msgpack or arrow)");
    }
    if (const Value* s = meta.find("arrow_schema");
        s != nullptr && s->type() == Value::Type::binary) {
        layout->arrow_schema = s->bytes();
    }
    const std::int64_t nb = raw->nchunks();
    if (const Value* ipb = meta.find("items_per_block"); ipb != nullptr && !ipb->is_nil()) {
        layout->items_per_block = ipb->as<std::int64_t>();
        if (layout->items_per_block <= 0) {
            throw FormatError(where + ": BatchArray items_per_block " +
                              num(layout->items_per_block) + " is not positive");
        }
    } else if (nb > 0) {
        throw FormatError(where + ": BatchArray holds " + num(nb) +
                          " batches but its metalayer names no items_per_block");
    }
    const Value lm = detail::vlmeta_value(*raw, kLengthsKey);
    const Value* lengths = lm.type() == Value::Type::map ? lm.find("batch_lengths") : nullptr;
    if (lengths != nullptr && lengths->type() == Value::Type::array) {
        layout->lengths = lengths->as<std::vector<std::int64_t>>();
        if (static_cast<std::int64_t>(layout->lengths.size()) != nb) {
            throw FormatError(where + ": BatchArray vlmeta " + kLengthsKey + " lists " +
                              num(static_cast<std::int64_t>(layout->lengths.size())) +
                              " batch lengths for " + num(nb) + " batches");
        }
    }
    BatchArray a;
    a.frame_ = std::move(raw);
    a.decoded_ = std::make_shared<std::atomic<std::uint64_t>>(0);
    if (layout->lengths.empty() && nb > 0) {
        // python's _load_or_compute_batch_lengths: count the items of each batch's last block.
        if (layout->serializer != "msgpack") {
            throw UnsupportedError(where + ": an Arrow BatchArray without " + kLengthsKey);
        }
        a.layout_ = layout;
        for (std::int64_t b = 0; b < nb; ++b) {
            const codec::ChunkDecoder dec = a.decoder(b);
            const std::int64_t k = dec.nblocks() - 1;
            layout->lengths.push_back(k * layout->items_per_block +
                                      static_cast<std::int64_t>(a.block_items(dec, b, k).size()));
        }
    }
    // Each length against its chunk: as many VL blocks as the length needs, and no more items
    // than the chunk has bytes (every msgpack item takes one at least). The lengths are then
    // bounded by the data and their sums cannot overflow.
    layout->starts.assign(1, 0);
    for (std::size_t b = 0; b < layout->lengths.size(); ++b) {
        const auto bi = static_cast<std::int64_t>(b);
        const std::int64_t len = layout->lengths[b];
        format::ChunkHeader h;
        try {
            h = format::read_chunk_header(a.frame_->chunk(bi).bytes);
        } catch (const FormatError& e) {
            throw FormatError(where + ": batch " + num(bi) + ": " + e.what());
        }
        const std::int64_t ipb = layout->items_per_block;
        const std::int64_t blocks = len / ipb + (len % ipb != 0 ? 1 : 0);
        if (len < 0 || len > h.nbytes || !h.vl_blocks() || blocks != h.nblocks()) {
            throw FormatError(
                where + ": batch " + num(bi) + " has length " + num(len) + ", which its chunk (" +
                (h.vl_blocks() ? num(h.nblocks()) + " VL blocks of " + num(h.nbytes) + " bytes"
                               : std::string("not a VL-block chunk")) +
                ", " + num(ipb) + " items per block) cannot hold");
        }
        layout->starts.push_back(layout->starts.back() + len);
    }
    a.layout_ = std::move(layout);
    return a;
}

std::string BatchArray::where() const {
    return frame_->path();
}

std::int64_t BatchArray::size() const {
    return layout_ ? layout_->starts.back() : 0;
}
std::int64_t BatchArray::nbatches() const {
    return layout_ ? static_cast<std::int64_t>(layout_->lengths.size()) : 0;
}
const std::vector<std::int64_t>& BatchArray::batch_lengths() const {
    return layout_->lengths;
}
std::int64_t BatchArray::items_per_block() const {
    return layout_->items_per_block;
}
const std::string& BatchArray::serializer() const {
    return layout_->serializer;
}
const std::vector<std::uint8_t>& BatchArray::arrow_schema() const {
    return layout_->arrow_schema;
}

codec::ChunkDecoder BatchArray::decoder(std::int64_t b) const {
    if (b < 0 || b >= frame_->nchunks()) {
        throw UsageError(where() + ": batch " + num(b) + " is out of range for " +
                         num(frame_->nchunks()) + " batches");
    }
    try {
        codec::ChunkDecoder dec(frame_->chunk(b).bytes);
        if (!dec.header().vl_blocks()) {
            throw FormatError("not a VL-block chunk");
        }
        return dec;
    } catch (const FormatError& e) {
        throw FormatError(where() + ": batch " + num(b) + ": " + e.what());
    }
}

std::vector<std::uint8_t> BatchArray::block_bytes(std::int64_t b, std::int64_t k) const {
    return block_bytes(decoder(b), b, k);
}

std::vector<std::uint8_t> BatchArray::block_bytes(const codec::ChunkDecoder& dec,
                                                  std::int64_t b,
                                                  std::int64_t k) const {
    const std::string at = where() + ": batch " + num(b) + ", block " + num(k);
    if (k < 0 || k >= dec.nblocks()) {
        throw FormatError(at + ": the chunk has " + num(dec.nblocks()) + " VL blocks");
    }
    try {
        std::vector<std::uint8_t> out(
            static_cast<std::size_t>(dec.block_nbytes(static_cast<std::int32_t>(k))));
        dec.decode_block(static_cast<std::int32_t>(k), {out.data(), out.size()});
        decoded_->fetch_add(1, std::memory_order_relaxed);
        return out;
    } catch (const FormatError& e) {
        throw FormatError(at + ": " + e.what());
    }
}

std::vector<Value> BatchArray::block_items(const codec::ChunkDecoder& dec,
                                           std::int64_t b,
                                           std::int64_t k) const {
    if (layout_->serializer != "msgpack") {
        throw UnsupportedError(where() +
                               ": Arrow IPC items are not decoded here; block_bytes() "
                               "gives each block's IPC stream (schema in arrow_schema())");
    }
    const std::vector<std::uint8_t> raw = block_bytes(dec, b, k);
    const std::string at = where() + ": batch " + num(b) + ", block " + num(k);
    Value v = Value::from_msgpack({raw.data(), raw.size()}, at);
    if (v.type() != Value::Type::array) {
        throw FormatError(at + ": a VL block holds a msgpack array of items, not a " +
                          v.type_name());
    }
    return v.array();
}

ContainerStats BatchArray::stats() const {
    ContainerStats s;
    s.blocks = decoded_ ? decoded_->load() : 0;
    return s;
}

std::vector<Value> BatchArray::items(std::int64_t start, std::int64_t stop) const {
    const auto [a, e] = detail::clamp_range(start, stop, size());
    std::vector<Value> out;
    out.reserve(static_cast<std::size_t>(e - a));
    const auto& starts = layout_->starts;
    const std::int64_t ipb = layout_->items_per_block;
    std::optional<codec::ChunkDecoder> dec;  // the current batch's: validated once per batch
    std::int64_t dec_batch = -1;
    std::int64_t i = a;
    while (i < e) {
        const auto b = static_cast<std::int64_t>(std::upper_bound(starts.begin(), starts.end(), i) -
                                                 starts.begin() - 1);
        const std::int64_t len = layout_->lengths[static_cast<std::size_t>(b)];
        const std::int64_t j = i - starts[static_cast<std::size_t>(b)];
        const std::int64_t k = j / ipb;
        if (b != dec_batch) {
            dec.emplace(decoder(b));
            dec_batch = b;
        }
        const std::vector<Value> block = block_items(*dec, b, k);
        const std::int64_t want = std::min(ipb, len - k * ipb);
        if (static_cast<std::int64_t>(block.size()) != want) {
            throw FormatError(where() + ": batch " + num(b) + ", block " + num(k) + " holds " +
                              num(static_cast<std::int64_t>(block.size())) + " items, not " +
                              num(want) + " (batch length " + num(len) + ", " + num(ipb) +
                              " items per block)");
        }
        for (std::int64_t m = j - k * ipb; m < want && i < e; ++m, ++i) {
            out.push_back(block[static_cast<std::size_t>(m)]);
        }
    }
    return out;
}

Value BatchArray::item(std::int64_t i) const {
    const std::int64_t k = detail::item_index(i, size(), where());
    return items(k, k + 1).front();
}

std::vector<Value> BatchArray::batch(std::int64_t b) const {
    if (b < 0 || b >= nbatches()) {
        throw UsageError(where() + ": batch " + num(b) + " is out of range for " + num(nbatches()) +
                         " batches");
    }
    return items(layout_->starts[static_cast<std::size_t>(b)],
                 layout_->starts[static_cast<std::size_t>(b) + 1]);
}

BatchArray BatchArray::write(const std::string& path,
                             const std::vector<std::vector<Value>>& batches,
                             std::int64_t items_per_block,
                             const CompressionParams& cparams,
                             bool overwrite) {
    for (std::size_t b = 0; b < batches.size(); ++b) {
        if (batches[b].empty()) {
            throw UsageError(path + ": BatchArray batch " + num(static_cast<std::int64_t>(b)) +
                             " is empty (python-blosc2 refuses empty batches)");
        }
    }
    if (items_per_block < 0) {
        throw UsageError(path + ": items_per_block must be positive (0: python's guess)");
    }
    if (items_per_block == 0 && !batches.empty()) {
        items_per_block = guess_items_per_block(batches.front(), cparams.clevel);
    }
    std::vector<std::vector<std::uint8_t>> chunks;
    std::vector<Value> lengths;
    for (const auto& batch : batches) {
        std::vector<std::vector<std::uint8_t>> blocks;
        for (std::size_t at = 0; at < batch.size();
             at += static_cast<std::size_t>(items_per_block)) {
            const std::size_t n =
                std::min(batch.size() - at, static_cast<std::size_t>(items_per_block));
            Value::Array items(batch.begin() + static_cast<std::ptrdiff_t>(at),
                               batch.begin() + static_cast<std::ptrdiff_t>(at + n));
            blocks.push_back(Value(std::move(items)).to_msgpack());
        }
        chunks.push_back(detail::encode_vlblocks_chunk(blocks, cparams));
        lengths.emplace_back(static_cast<std::int64_t>(batch.size()));
    }
    const Value meta =
        Value::map({{"version", 1},
                    {"serializer", "msgpack"},
                    {"items_per_block", items_per_block > 0 ? Value(items_per_block) : Value()},
                    {"arrow_schema", Value()}});
    std::vector<std::pair<std::string, Value>> vlmeta;
    if (!batches.empty()) {
        vlmeta.emplace_back(kLengthsKey,
                            Value::map({{"batch_lengths", Value(std::move(lengths))}}));
    }
    detail::write_container_frame(path, overwrite, cparams, {{"batcharray", meta}}, vlmeta, chunks,
                                  true);
    return open(path);
}

}  // namespace b2nd
