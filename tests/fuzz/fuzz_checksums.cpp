// Fuzz target: arbitrary bytes as a checksum table (docs/CHECKSUMS.md), and as a frame trailer
// carrying one. Only b2nd::Error may escape; a table that decodes encodes to the same bytes; the
// checks of a trailer never throw (a bad table is a state, with its problems).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <b2nd/error.hpp>
#include <b2nd/format/frame_header.hpp>

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
    return 0;
}
