// Built against an installed b2nd: round trips one chunk.
#include <cstdio>
#include <vector>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/version.hpp>

int main() {
    std::vector<std::uint8_t> data(10000);
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<std::uint8_t>(i / 100);
    }
    const auto chunk = b2nd::codec::encode_chunk(data, b2nd::codec::EncodeParams{});
    const bool ok = b2nd::codec::decode_chunk(chunk) == data;
    std::printf("b2nd %s: %s\n", B2ND_VERSION_STRING, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
