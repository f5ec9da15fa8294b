// HDF5 chunks decoded here (hdf5_detail.hpp, DirectFilters): deflate and shuffle, undone last
// first, each skipped where the chunk's filter mask says it was.
#include <b2nd/codec/filters.hpp>
#include <b2nd/error.hpp>

#include "../codec/compressors.hpp"
#include "../detail/text.hpp"
#include "hdf5_detail.hpp"

namespace b2nd::bridges::h5 {

std::optional<DirectFilters> DirectFilters::of(hid_t dcpl) {
    const int n = H5Pget_nfilters(dcpl);
    if (n <= 0) {
        last_error();
        return std::nullopt;
    }
    DirectFilters f;
    for (int i = 0; i < n; ++i) {
        unsigned flags = 0, cd[8] = {};
        std::size_t ncd = 8;
        unsigned config = 0;
        const H5Z_filter_t id =
            H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &ncd, cd, 0, nullptr, &config);
        if (id == H5Z_FILTER_DEFLATE) {
            f.steps.push_back({H5Z_FILTER_DEFLATE, 0});
        } else if (id == H5Z_FILTER_SHUFFLE && ncd >= 1 && cd[0] >= 1 && cd[0] <= 255) {
            f.steps.push_back({H5Z_FILTER_SHUFFLE, cd[0]});
        } else {
            last_error();
            return std::nullopt;  // fletcher32, szip, nbit, scaleoffset, plugins: libhdf5's
        }
    }
    return f;
}

void DirectFilters::decode(unsigned mask,
                           const std::uint8_t* stored,
                           std::size_t n,
                           std::uint8_t* out,
                           std::size_t out_n,
                           const std::string& where) const {
    thread_local std::vector<std::uint8_t> scratch[2];
    const std::uint8_t* p = stored;
    std::size_t len = n;
    int next = 0;
    for (std::size_t k = steps.size(); k-- > 0;) {
        if ((mask >> k & 1U) != 0) {
            continue;  // not applied to this chunk
        }
        // The last step undone writes straight into `out`.
        bool last = true;
        for (std::size_t j = 0; j < k; ++j) {
            last = last && (mask >> j & 1U) != 0;
        }
        std::uint8_t* to = out;
        if (!last) {
            scratch[next].resize(out_n);
            to = scratch[next].data();
        }
        if (steps[k].id == H5Z_FILTER_DEFLATE) {
            if (const char* e = codec::detail::decompress_stream(codec::CompFormat::zlib, p, len,
                                                                 to, out_n, nullptr)) {
                throw FormatError(where + ": deflate: " + e);
            }
        } else {
            if (len != out_n) {
                throw FormatError(where + ": the shuffle filter holds " +
                                  detail::num(static_cast<std::int64_t>(len)) + " bytes, not " +
                                  detail::num(static_cast<std::int64_t>(out_n)));
            }
            codec::unshuffle(static_cast<int>(steps[k].element), len, p, to);
        }
        p = to;
        len = out_n;
        next ^= 1;
    }
    if (p == stored) {  // every filter skipped: the chunk as stored
        if (len != out_n) {
            throw FormatError(where + ": an unfiltered chunk of " +
                              detail::num(static_cast<std::int64_t>(len)) + " bytes, not " +
                              detail::num(static_cast<std::int64_t>(out_n)));
        }
        std::memcpy(out, stored, out_n);
    }
}

}  // namespace b2nd::bridges::h5
