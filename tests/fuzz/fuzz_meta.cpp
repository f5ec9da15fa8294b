// Fuzz target: arbitrary bytes as the metadata a frame carries: a b2nd (or caterva) metalayer,
// and a frame trailer (vlmetalayers, length, fingerprint). Only b2nd::Error may escape; a
// metalayer that parses writes back to one that parses the same, and a trailer that parses is
// rewritten (same vlmetalayers and fingerprint) to one that parses the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <b2nd/error.hpp>
#include <b2nd/format/b2nd_meta.hpp>
#include <b2nd/format/frame_header.hpp>

namespace {

bool same(const b2nd::format::B2ndMeta& a, const b2nd::format::B2ndMeta& b) {
    return a.shape == b.shape && a.chunk_shape == b.chunk_shape && a.block_shape == b.block_shape &&
           a.dtype == b.dtype;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const b2nd::ByteSpan bytes(data, size);
    try {
        const b2nd::format::B2ndMeta m = b2nd::format::read_b2nd_meta(bytes);
        const auto again = b2nd::format::write_b2nd_meta(m);
        if (!same(b2nd::format::read_b2nd_meta({again.data(), again.size()}), m)) {
            std::abort();
        }
    } catch (const b2nd::Error&) {
    }
    try {
        const b2nd::format::FrameTrailer t = b2nd::format::read_frame_trailer(bytes);
        const auto again =
            b2nd::format::write_frame_trailer(t.vlmetalayers, t.fingerprint_type, t.fingerprint);
        const b2nd::format::FrameTrailer u =
            b2nd::format::read_frame_trailer({again.data(), again.size()});
        if (u.vlmetalayers.size() != t.vlmetalayers.size() || u.fingerprint != t.fingerprint ||
            u.fingerprint_type != t.fingerprint_type) {
            std::abort();
        }
        for (std::size_t i = 0; i < u.vlmetalayers.size(); ++i) {
            if (u.vlmetalayers[i].name != t.vlmetalayers[i].name ||
                u.vlmetalayers[i].content != t.vlmetalayers[i].content) {
                std::abort();
            }
        }
    } catch (const b2nd::Error&) {
    }
    return 0;
}
