// Our own decoders registered with libhdf5: Blosc (filter 32001, as PyTables and hdf5-blosc write
// it: one Blosc1 chunk per HDF5 chunk) and LZF (32000, h5py's), so that such files read without
// any plugin installed. Blosc also encodes, from its parameters (exports that choose it, and any
// write through libhdf5 in this process); LZF decodes only.
//
// libhdf5 uses what a filter returns as a whole chunk, without checking its size: a decoder that
// hands back fewer bytes makes it read past the buffer. A filter is told neither the dataset nor
// its chunk shape, and cd_values and the stream are the file's word, which may be anything: the
// size comes from the dataset, through the FilterScope the caller of H5Dread sets on its thread
// (libhdf5 runs filters on the thread that reads). Each decoder returns exactly that many bytes,
// allocated once, or fails; outside a scope it fails.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/error.hpp>

#include "../codec/blosc1.hpp"
#include "../codec/compressors.hpp"
#include "../detail/text.hpp"
#include "hdf5_detail.hpp"

namespace b2nd::bridges::h5 {

namespace {

constexpr H5Z_filter_t kLzf = 32000;

thread_local FilterScope* tl_scope = nullptr;

/// A decoder's refusal: kept for the caller's message (libhdf5 only says the filter failed).
std::size_t refuse(const char* filter, const std::string& why) {
    if (tl_scope != nullptr && tl_scope->refusal().empty()) {
        tl_scope->refuse(std::string("a chunk's ") + filter + " stream: " + why);
    }
    return 0;
}

/// The size every chunk decodes to, or 0 (and a refusal) outside a scope.
std::uint64_t chunk_bytes(const char* filter) {
    if (tl_scope == nullptr || tl_scope->chunk_bytes() == 0) {
        refuse(filter, "decoded outside a read that knows the dataset's chunk size");
        return 0;
    }
    return tl_scope->chunk_bytes();
}

/// Replaces libhdf5's buffer by `out` (want bytes, from H5allocate_memory).
std::size_t hand_back(void* out, std::uint64_t want, std::size_t* buf_size, void** buf) {
    H5free_memory(*buf);
    *buf = out;
    *buf_size = static_cast<std::size_t>(want);
    return static_cast<std::size_t>(want);
}

}  // namespace

FilterScope::FilterScope(std::uint64_t chunk_bytes) : bytes_(chunk_bytes), outer_(tl_scope) {
    tl_scope = this;
}

FilterScope::~FilterScope() {
    tl_scope = outer_;
}

unsigned blosc_compcode(codec::Codec c) noexcept {
    switch (c) {
        case codec::Codec::blosclz:
            return 0;
        case codec::Codec::lz4:
            return 1;
        case codec::Codec::lz4hc:
            return 2;
        case codec::Codec::zlib:
            return 4;
        default:
            return 5;  // zstd
    }
}

namespace {

/// A chunk encoded as the Blosc filter's parameters say (cd_values: filter revision, Blosc
/// version, typesize, chunk bytes, clevel, shuffle, compressor code).
std::size_t blosc_encode(std::size_t cd_nelmts,
                         const unsigned cd_values[],
                         std::size_t nbytes,
                         std::size_t* buf_size,
                         void** buf) {
    if (cd_nelmts < 7) {
        return refuse("Blosc", "the filter's parameters are incomplete");
    }
    std::optional<codec::Codec> c;
    for (const codec::Codec k : {codec::Codec::blosclz, codec::Codec::lz4, codec::Codec::lz4hc,
                                 codec::Codec::zlib, codec::Codec::zstd}) {
        if (blosc_compcode(k) == cd_values[6]) {
            c = k;
        }
    }
    if (!c || cd_values[4] > 9 || cd_values[5] > 2 || cd_values[2] == 0 || cd_values[2] > 255) {
        return refuse("Blosc",
                      "the filter's parameters name no codec, level or shuffle Blosc "
                      "has");
    }
    try {
        std::vector<std::uint8_t> z;
        codec::detail::encode_blosc1_chunk(
            static_cast<const std::uint8_t*>(*buf), nbytes, *c, static_cast<int>(cd_values[4]),
            static_cast<int>(cd_values[5]), static_cast<int>(cd_values[2]), z);
        void* out = H5allocate_memory(z.size(), false);
        if (out == nullptr) {
            return refuse("Blosc", "cannot allocate " + std::to_string(z.size()) + " bytes");
        }
        std::memcpy(out, z.data(), z.size());
        return hand_back(out, z.size(), buf_size, buf);
    } catch (const std::exception& e) {
        return refuse("Blosc", e.what());
    }
}

}  // namespace

// The chunk says all of its coding; only its size is checked, against the dataset.
std::size_t blosc_filter(unsigned flags,
                         std::size_t cd_nelmts,
                         const unsigned cd_values[],
                         std::size_t nbytes,
                         std::size_t* buf_size,
                         void** buf) {
    if ((flags & H5Z_FLAG_REVERSE) == 0) {
        return blosc_encode(cd_nelmts, cd_values, nbytes, buf_size, buf);
    }
    const std::uint64_t want = chunk_bytes("Blosc");
    if (want == 0) {
        return 0;
    }
    try {
        const codec::ChunkDecoder dec(ByteSpan(static_cast<const std::uint8_t*>(*buf), nbytes));
        if (static_cast<std::uint64_t>(dec.nbytes()) != want) {
            return refuse("Blosc", "it holds " + detail::num(dec.nbytes()) +
                                       " bytes; the dataset's chunks hold " + std::to_string(want));
        }
        void* out = H5allocate_memory(static_cast<std::size_t>(want), false);
        if (out == nullptr) {
            return refuse("Blosc", "cannot allocate " + std::to_string(want) + " bytes");
        }
        try {
            dec.decode({static_cast<std::uint8_t*>(out), static_cast<std::size_t>(want)}, 1);
        } catch (...) {
            H5free_memory(out);
            throw;
        }
        return hand_back(out, want, buf_size, buf);
    } catch (const std::exception& e) {
        return refuse("Blosc", e.what());
    }
}

// cd_values of h5py's LZF filter: filter version, LZF version, chunk bytes. A stream decodes to
// exactly the chunk, decoded into a buffer of that size: a longer one does not fit, a shorter
// one is corrupt.
std::size_t lzf_filter(unsigned flags,
                       std::size_t /*cd_nelmts*/,
                       const unsigned /*cd_values*/[],
                       std::size_t nbytes,
                       std::size_t* buf_size,
                       void** buf) {
    if ((flags & H5Z_FLAG_REVERSE) == 0) {
        return refuse("LZF", "this library decodes LZF chunks; it does not write them");
    }
    const std::uint64_t want = chunk_bytes("LZF");
    if (want == 0) {
        return 0;
    }
    void* out = H5allocate_memory(static_cast<std::size_t>(want), false);
    if (out == nullptr) {
        return refuse("LZF", "cannot allocate " + std::to_string(want) + " bytes");
    }
    std::size_t got = 0;
    if (!codec::detail::lzf_decompress(static_cast<const std::uint8_t*>(*buf), nbytes,
                                       static_cast<std::uint8_t*>(out),
                                       static_cast<std::size_t>(want), got) ||
        got != want) {
        H5free_memory(out);
        return refuse("LZF", got != want && got != 0
                                 ? "it decodes to " + std::to_string(got) +
                                       " bytes; the dataset's chunks hold " + std::to_string(want)
                                 : "it is corrupt or longer than the dataset's chunks (" +
                                       std::to_string(want) + " bytes)");
    }
    return hand_back(out, want, buf_size, buf);
}

void register_filters() {
    static const H5Z_class2_t blosc = {
        H5Z_CLASS_T_VERS,           kBloscFilter, 1,       1,
        "blosc (b2nd-cpp's codec)", nullptr,      nullptr, blosc_filter};
    static const H5Z_class2_t lzf = {H5Z_CLASS_T_VERS,           kLzf,    0,       1,
                                     "lzf (b2nd-cpp's decoder)", nullptr, nullptr, lzf_filter};
    H5Zregister(&blosc);
    H5Zregister(&lzf);
}

}  // namespace b2nd::bridges::h5
