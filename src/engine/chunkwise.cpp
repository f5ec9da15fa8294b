// Chunk by chunk: write_chunks (produce whole chunks in parallel, stage them, one commit) and
// for_each_chunk (visit chunks in parallel, uniform chunks without decoding them), the
// primitives of out-of-core evaluation and reductions.
#include <mutex>
#include <stdexcept>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/error.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "../detail/thread_pool.hpp"
#include "../select/box_plan.hpp"
#include "../storage/ordered_staging.hpp"
#include "array_core.hpp"

namespace b2nd::detail {

void ArrayCore::write_chunks(const std::vector<std::int64_t>& ids,
                             const ChunkProducer& produce,
                             int in_flight,
                             const Progress& progress) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    require_writable("write_chunks");
    require_chunks(ids);
    ChunkSource& source = *source_;
    const int threads = in_flight > 0 ? std::min(in_flight, nthreads_) : nthreads_;
    storage::detail::OrderedStaging order(source.frame(), ids.size());
    std::mutex progress_mutex;
    std::int64_t done = 0;
    make_chunks(
        ids, 0, ids.size(), threads, produce,
        [&](std::size_t k, ByteSpan c, const storage::detail::SealHint& hint) {
            const storage::StagedChunk s = order.stage(k, c, hint);
            if (progress) {
                std::lock_guard<std::mutex> lock(progress_mutex);
                progress(++done, static_cast<std::int64_t>(ids.size()));
            }
            return s;
        },
        &order);
    commit_staged(ids, order.take());
}

void ArrayCore::write_chunk_raw(std::int64_t ci, ByteSpan chunk) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    require_writable("write_chunk_raw");
    require_chunks({ci});
    const Grid& g = grid();
    const std::string at = where() + ": write_chunk_raw: chunk " + num(ci);
    try {
        const codec::ChunkDecoder dec(chunk, g.block_shape());
        const auto said = [&](const char* what, std::int64_t got, std::int64_t want) {
            if (got != want) {
                throw FormatError(at + ": its " + what + " is " + num(got) + "; the array's is " +
                                  num(want));
            }
        };
        said("decoded size", dec.nbytes(), g.chunk_nbytes());
        said("item size", dec.typesize(), std::min<std::int64_t>(g.itemsize(), 255));
        said("block size", dec.blocksize(), g.block_nbytes());
        // Every block decodes (a checksum table then seals what decodes).
        Scratch out(static_cast<std::size_t>(g.chunk_nbytes()));
        dec.decode({out.data(), out.size()}, nthreads_);
    } catch (const FormatError& e) {
        if (std::string(e.what()).rfind(at, 0) == 0) {
            throw;
        }
        throw FormatError(at + ": " + e.what());
    } catch (const CodecError& e) {
        throw FormatError(at + ": " + e.what());
    }
    storage::detail::OrderedStaging order(source_->frame(), 1);
    order.run(1, [&](std::size_t k) { (void)order.stage(k, chunk, {}); });
    commit_staged({ci}, order.take());
}

void ArrayCore::make_chunks(const std::vector<std::int64_t>& ids,
                            std::size_t first,
                            std::size_t last,
                            int threads,
                            const ChunkProducer& produce,
                            const ChunkPlacer& place,
                            storage::detail::OrderedStaging* order) const {
    const ChunkSource& source = *source_;
    const Grid& g = source.grid();
    const std::int64_t isz = g.itemsize();
    const auto make = [&](std::size_t j) {
        const std::size_t k = first + j;
        const std::int64_t ci = ids[k];
        const Box region = g.chunk_box(ci);
        thread_local Scratch values;
        values.resize(static_cast<std::size_t>(region.size() * isz));
        produce(ci, region, values.data());
        const BoxPlan plan(g, region);
        std::int64_t walk[kMaxNdim];
        const std::uint8_t* src0 = values.data() + plan.walk_strides(nullptr, walk);
        thread_local Scratch buf;
        buf.resize(static_cast<std::size_t>(g.chunk_nbytes()));
        if (g.chunk_padded(ci)) {
            fill_elements(buf.data(), buf.size(), values.data(), isz);  // padding: see write()
        }
        pack_chunk(plan, plan.chunks().front(), src0, walk, buf.data(), g);
        source.make_chunk(
            buf.data(), 1, ci,
            [&](ByteSpan c, const storage::detail::SealHint& hint) { return place(k, c, hint); });
        release_if_large(buf);
        release_if_large(values);
    };
    if (order != nullptr) {
        if (first != 0 || last != order->size()) {
            throw std::logic_error("make_chunks: the staging's tasks are not ids[first, last)");
        }
        order->run(threads, make);
    } else {
        parallel_for(last - first, threads, make);
    }
}

void ArrayCore::commit_chunks(const std::vector<std::int64_t>& ids,
                              const std::vector<storage::StagedChunk>& staged) {
    std::lock_guard<std::mutex> writer(writer_mutex_);
    require_writable("commit_chunks");
    require_chunks(ids);
    commit_staged(ids, staged);
}

void ArrayCore::for_each_chunk(const std::vector<std::int64_t>& ids,
                               const ChunkVisitor& visit,
                               int in_flight) const {
    std::shared_lock<FairSharedMutex> lock(mutex_);
    require_chunks(ids);
    const ChunkSource& source = *source_;
    const Grid& g = source.grid();
    const int threads = in_flight > 0 ? std::min(in_flight, nthreads_) : nthreads_;
    const std::int64_t isz = g.itemsize();
    const CachePolicy no_cache;  // one pass: the blocks would only flush the hot set
    parallel_for(ids.size(), threads, [&](std::size_t k) {
        const Box region = g.chunk_box(ids[k]);
        const LoadedChunk c = source.load(ids[k], true, no_cache);
        if (c.kind() == LoadedChunk::Kind::uniform && !source.plain()) {
            visit(ids[k], region, nullptr, c.element());  // nothing decoded
            return;
        }
        // The chunk's valid region, block by block, from the chunk loaded above.
        thread_local Scratch values;
        values.resize(static_cast<std::size_t>(region.size() * isz));
        if (region.size() > 0) {
            const BoxPlan plan(g, region);
            std::int64_t walk[kMaxNdim];
            std::uint8_t* out0 = values.data() + plan.walk_strides(nullptr, walk);
            const ChunkTask& ct = plan.chunks().front();
            parallel_for(static_cast<std::size_t>(ct.nblocks), ids.size() == 1 ? threads : 1,
                         [&](std::size_t l) {
                             const BlockPart bp = plan.part(ct, static_cast<std::int64_t>(l), walk);
                             source.copy_block(c, bp.block, bp.box, bp.in_block, out0 + bp.in_walk,
                                               bp.whole, no_cache);
                         });
        }
        visit(ids[k], region, values.data(), nullptr);
        release_if_large(values);
    });
}

}  // namespace b2nd::detail
