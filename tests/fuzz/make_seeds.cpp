// Writes the seed corpus of fuzz_chunk_decode: small chunks from our own encoder covering every
// codec, filter, split mode, run streams, memcpy and special chunks.
//   build/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus/fuzz_chunk_decode
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <b2nd/codec/chunk_encoder.hpp>

using namespace b2nd::codec;

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    int count = 0;
    auto save = [&](const std::string& name, const std::vector<std::uint8_t>& bytes) {
        std::ofstream(dir + "/" + name, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()),
                   static_cast<std::streamsize>(bytes.size()));
        ++count;
    };
    std::vector<std::uint8_t> data(3000);
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<std::uint8_t>((i / 4) % 97 + ((i * 7919) % 13 == 0 ? 1 : 0));
    }
    const Compressor codecs[] = {Compressor::blosclz, Compressor::lz4, Compressor::lz4hc,
                                 Compressor::zlib, Compressor::zstd};
    const std::pair<const char*, FilterPipeline> pipes[] = {
        {"none", make_pipeline({})},
        {"shuffle", make_pipeline({{Filter::shuffle, 0}})},
        {"bitshuffle", make_pipeline({{Filter::bitshuffle, 0}})},
        {"delta", make_pipeline({{Filter::delta, 0}, {Filter::shuffle, 0}})},
        {"bytedelta", make_pipeline({{Filter::shuffle, 0}, {Filter::bytedelta, 0}})},
        {"truncprec", make_pipeline({{Filter::trunc_prec, 9}, {Filter::bitshuffle, 0}})}};
    for (Compressor c : codecs) {
        for (const auto& [name, pipe] : pipes) {
            for (SplitMode m : {SplitMode::always, SplitMode::never}) {
                EncodeParams p;
                p.compressor = c;
                p.clevel = 5;
                p.filters = pipe;
                p.typesize = 4;
                p.blocksize = 512;
                p.splitmode = m;
                save(std::string(compressor_name(c)) + "-" + name + "-" +
                         std::string(split_mode_name(m)) + ".chunk",
                     encode_chunk(data, p));
            }
        }
    }
    EncodeParams store;
    store.clevel = 0;
    save("memcpyed.chunk",
         encode_chunk(std::vector<std::uint8_t>(data.begin(), data.begin() + 200), store));
    std::vector<std::uint8_t> runs(1024, 5);
    runs[100] = 0;
    save("runs.chunk", encode_chunk(runs, EncodeParams{}));
    save("empty.chunk", encode_chunk(std::vector<std::uint8_t>{}, EncodeParams{}));
    save("zeros.chunk", make_zeros_chunk(4096, 4, 1024));
    save("nans.chunk", make_nans_chunk(4096, 8, 1024));
    save("uninit.chunk", make_uninit_chunk(4096, 2));
    save("repeated.chunk",
         make_repeated_chunk(4096, std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}, 1024));
    std::printf("wrote %d seeds to %s\n", count, dir.c_str());
    return 0;
}
