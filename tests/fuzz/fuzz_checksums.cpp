// Fuzz target: arbitrary bytes as a checksum table (docs/CHECKSUMS.md), as a frame trailer
// carrying one, and as a chunk followed by its record (table versions 2 and 3). Only
// b2nd::Error may escape; a table that decodes encodes to the same bytes; the checks of a trailer
// never throw (a bad table is a state, with its problems); any bytes sealed (or refused before
// they are) open with their own record of the size promised and every block matches, and a record
// that opens against the input's own digest checks blocks without reading outside the chunk.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <b2nd/error.hpp>
#include <b2nd/format/frame_header.hpp>

#include "storage/block_seals.hpp"
#include "storage/checksums.hpp"

using namespace b2nd::storage::detail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const b2nd::ByteSpan bytes(data, size);
    try {
        ChecksumTable t = decode_table(bytes);
        const std::uint64_t self = t.self;
        const std::vector<std::uint8_t> again = encode_table(t);
        if (t.self != self || again.size() != size ||
            !std::equal(again.begin(), again.end(), data)) {
            std::abort();  // a table that verifies is its own encoding
        }
    } catch (const b2nd::Error&) {
    }
    try {
        b2nd::format::FrameTrailer t = b2nd::format::read_frame_trailer(bytes);
        // The header and index are a prefix of the input: any bytes work for the digests.
        const std::size_t half = size / 2;
        const Checks c = Checks::read({data, half}, {data + half, size - half}, size % 64, t, true);
        if (c.state() == b2nd::storage::ChecksumReport::State::broken && c.problems().empty()) {
            std::abort();
        }
    } catch (const b2nd::Error&) {
    }
    // The input as a chunk (its header's cbytes of it, or all) and the record after it.
    std::size_t cut = size;
    if (size >= 16) {
        const std::uint32_t cbytes =
            static_cast<std::uint32_t>(data[12]) | static_cast<std::uint32_t>(data[13]) << 8 |
            static_cast<std::uint32_t>(data[14]) << 16 | static_cast<std::uint32_t>(data[15]) << 24;
        cut = std::min<std::size_t>(cbytes, size);
    }
    const b2nd::ByteSpan chunk(data, cut), record(data + cut, size - cut);
    // Version 3 decodes the chunk to seal it: as fuzz_chunk_decode, no more than 16 MiB of it.
    const bool small =
        cut < 8 || (static_cast<std::uint32_t>(data[4]) | static_cast<std::uint32_t>(data[5]) << 8 |
                    static_cast<std::uint32_t>(data[6]) << 16 |
                    static_cast<std::uint32_t>(data[7]) << 24) <= (1U << 24);
    for (const int version : {2, 3}) {
        if (version == 3 && !small) {
            continue;
        }
        Seal sealed;
        try {
            sealed = seal(chunk, version);
        } catch (const b2nd::Error&) {
            continue;  // refused before it is sealed (a chunk cut short of its cbytes)
        }
        std::string why;
        const auto own = ChunkSeal::open(chunk, {sealed.record.data(), sealed.record.size()},
                                         version, sealed.digest, true, why);
        if (!own || !why.empty() || sealed.record.size() != record_size(chunk, version)) {
            std::abort();  // sealed bytes open with their own record, of the size promised
        }
        for (std::size_t b = 0; b < own->nblocks(); ++b) {
            if (!own->check(b, chunk) || !own->check(b, chunk)) {  // the second: remembered
                std::abort();
            }
        }
        const auto given = ChunkSeal::open(chunk, record, version, sealed.digest, false, why);
        for (std::size_t b = 0; given && b < given->nblocks(); ++b) {
            (void)given->check(b, chunk);
            // Pieces checked against any bytes: never read past the prefix they are given.
            const std::size_t end = given->prefix_end(b, 1 + size % 5000);
            if (end > 0) {
                std::vector<std::uint8_t> decoded(end, 0);
                (void)given->check_prefix(b, decoded.data(), end);
            }
        }
    }
    return 0;
}
