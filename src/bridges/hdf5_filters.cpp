// Our own decoders registered with libhdf5: Blosc (filter 32001, as PyTables and hdf5-blosc write
// it: one Blosc1 chunk per HDF5 chunk) and LZF (32000, h5py's), so that such files read without
// any plugin installed. Decoding only: exports use deflate, which every reader has.
#include <cstring>
#include <vector>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/error.hpp>

#include "../codec/compressors.hpp"
#include "hdf5_detail.hpp"

namespace b2nd::bridges::h5 {

namespace {

constexpr H5Z_filter_t kLzf = 32000;
constexpr H5Z_filter_t kBlosc = 32001;

/// Replaces HDF5's buffer with `out`; the new size, or 0 when it cannot allocate.
std::size_t hand_back(const std::vector<std::uint8_t>& out, std::size_t* buf_size, void** buf) {
    void* fresh = H5allocate_memory(out.size(), false);
    if (fresh == nullptr) {
        return 0;
    }
    std::memcpy(fresh, out.data(), out.size());
    H5free_memory(*buf);
    *buf = fresh;
    *buf_size = out.size();
    return out.size();
}

// cd_values of hdf5-blosc: filter revision, Blosc version, typesize, chunk bytes, clevel,
// shuffle, compressor. The chunk itself says all of it; the chunk's bytes bound what it may
// claim.
std::size_t blosc_filter(unsigned flags,
                         std::size_t cd_nelmts,
                         const unsigned cd_values[],
                         std::size_t nbytes,
                         std::size_t* buf_size,
                         void** buf) {
    if ((flags & H5Z_FLAG_REVERSE) == 0) {
        return 0;  // no encoder here
    }
    try {
        const std::int64_t most =
            cd_nelmts > 3 && cd_values[3] != 0 ? std::int64_t{cd_values[3]} : std::int64_t{1} << 31;
        const std::vector<std::uint8_t> out =
            codec::decode_chunk(ByteSpan(static_cast<const std::uint8_t*>(*buf), nbytes), 1, most);
        return hand_back(out, buf_size, buf);
    } catch (const std::exception&) {
        return 0;  // libhdf5 reports a failed filter, naming the dataset
    }
}

// cd_values of h5py's LZF filter: filter version, LZF version, chunk bytes.
std::size_t lzf_filter(unsigned flags,
                       std::size_t cd_nelmts,
                       const unsigned cd_values[],
                       std::size_t nbytes,
                       std::size_t* buf_size,
                       void** buf) {
    if ((flags & H5Z_FLAG_REVERSE) == 0) {
        return 0;
    }
    try {
        std::size_t cap = cd_nelmts > 2 && cd_values[2] != 0 ? cd_values[2] : 4 * nbytes + 64;
        std::vector<std::uint8_t> out;
        for (int attempt = 0; attempt < 6; ++attempt, cap *= 4) {
            out.resize(cap);
            std::size_t got = 0;
            if (codec::detail::lzf_decompress(static_cast<const std::uint8_t*>(*buf), nbytes,
                                              out.data(), out.size(), got)) {
                out.resize(got);
                return hand_back(out, buf_size, buf);
            }
            if (cd_nelmts > 2 && cd_values[2] != 0) {
                break;  // the chunk size was given: a stream that does not fit is corrupt
            }
        }
    } catch (const std::exception&) {
    }
    return 0;
}

}  // namespace

void register_filters() {
    static const H5Z_class2_t blosc = {
        H5Z_CLASS_T_VERS, kBlosc,  0,           1, "blosc (b2nd-cpp's decoder)",
        nullptr,          nullptr, blosc_filter};
    static const H5Z_class2_t lzf = {H5Z_CLASS_T_VERS,           kLzf,    0,       1,
                                     "lzf (b2nd-cpp's decoder)", nullptr, nullptr, lzf_filter};
    H5Zregister(&blosc);
    H5Zregister(&lzf);
}

}  // namespace b2nd::bridges::h5
