// Strided copies and fills of N-dimensional boxes (the step between decoded blocks and callers'
// buffers), against an element-by-element walk: random extents, strides of any sign, items of
// odd sizes, dimensions that merge and ones that do not.
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "../../support/files.hpp"
#include "select/strided_copy.hpp"

using b2nd::detail::StridedBox;

namespace {

/// Byte offsets (from a base) of every element of the box, in C order, along one side.
std::vector<std::int64_t> offsets(const StridedBox& b, const std::int64_t* stride) {
    std::int64_t n = 1;
    for (int d = 0; d < b.ndim; ++d) {
        n *= b.extent[d];
    }
    std::vector<std::int64_t> out;
    std::vector<std::int64_t> k(static_cast<std::size_t>(b.ndim), 0);
    for (std::int64_t e = 0; e < n; ++e) {
        std::int64_t off = 0;
        for (int d = 0; d < b.ndim; ++d) {
            off += k[static_cast<std::size_t>(d)] * stride[d];
        }
        out.push_back(off);
        for (int d = b.ndim; d-- > 0;) {
            if (++k[static_cast<std::size_t>(d)] < b.extent[d]) {
                break;
            }
            k[static_cast<std::size_t>(d)] = 0;
        }
    }
    return out;
}

/// Random strides for one side: C order of the extents (contiguous: merges), or with gaps,
/// or with a reversed dimension; returns the offset of element 0 that keeps all in [0, size).
std::int64_t random_side(StridedBox& b,
                         std::int64_t* stride,
                         std::int64_t itemsize,
                         b2nd::test::SplitMix& rng,
                         std::int64_t& size) {
    std::int64_t s = itemsize;
    std::int64_t base = 0;
    const bool gaps = rng.below(2) == 0;
    for (int d = b.ndim; d-- > 0;) {
        const std::int64_t pitch =
            s + (gaps ? static_cast<std::int64_t>(rng.below(3)) * itemsize : 0);
        const bool reverse = rng.below(4) == 0;
        stride[d] = reverse ? -pitch : pitch;
        if (reverse) {
            base += (b.extent[d] - 1) * pitch;
        }
        s = pitch * b.extent[d];
    }
    size = s;
    return base;
}

}  // namespace

TEST_CASE("strided copy: equals an element-by-element copy", "[array]") {
    b2nd::test::SplitMix rng(77);
    for (int round = 0; round < 400; ++round) {
        StridedBox b;
        b.ndim = 1 + static_cast<int>(rng.below(5));
        for (int d = 0; d < b.ndim; ++d) {
            b.extent[d] = 1 + static_cast<std::int64_t>(rng.below(6));
        }
        static const std::int64_t sizes[] = {1, 2, 3, 4, 8, 12, 16};
        const std::int64_t isz = sizes[rng.below(7)];
        INFO("round " << round << " ndim " << b.ndim << " itemsize " << isz);
        std::int64_t src_size = 0, dst_size = 0;
        const std::int64_t src_base = random_side(b, b.src_stride, isz, rng, src_size);
        const std::int64_t dst_base = random_side(b, b.dst_stride, isz, rng, dst_size);
        std::vector<std::uint8_t> src(static_cast<std::size_t>(src_size));
        for (auto& x : src) {
            x = static_cast<std::uint8_t>(rng.next());
        }
        std::vector<std::uint8_t> got(static_cast<std::size_t>(dst_size), 0xee);
        std::vector<std::uint8_t> want = got;
        const auto so = offsets(b, b.src_stride);
        const auto dof = offsets(b, b.dst_stride);
        for (std::size_t e = 0; e < so.size(); ++e) {
            std::memcpy(&want[static_cast<std::size_t>(dst_base + dof[e])],
                        &src[static_cast<std::size_t>(src_base + so[e])],
                        static_cast<std::size_t>(isz));
        }
        b2nd::detail::copy_strided(b, src.data() + src_base, got.data() + dst_base, isz);
        REQUIRE(got == want);  // bytes between elements untouched too

        // Fill: the same walk over the destination, one pattern.
        std::vector<std::uint8_t> pattern(static_cast<std::size_t>(isz));
        for (auto& x : pattern) {
            x = static_cast<std::uint8_t>(rng.next());
        }
        std::vector<std::uint8_t> filled(static_cast<std::size_t>(dst_size), 0xee);
        std::vector<std::uint8_t> want_fill = filled;
        for (const std::int64_t off : dof) {
            std::memcpy(&want_fill[static_cast<std::size_t>(dst_base + off)], pattern.data(),
                        static_cast<std::size_t>(isz));
        }
        b2nd::detail::fill_strided(b, filled.data() + dst_base, pattern.data(), isz);
        REQUIRE(filled == want_fill);
    }
}

TEST_CASE("strided copy: fill_elements repeats one element", "[array]") {
    const std::uint8_t e[3] = {1, 2, 3};
    std::vector<std::uint8_t> v(30, 0);
    b2nd::detail::fill_elements(v.data(), v.size(), e, 3);
    for (std::size_t i = 0; i < v.size(); ++i) {
        REQUIRE(v[i] == e[i % 3]);
    }
    b2nd::detail::fill_elements(v.data(), 0, e, 3);  // nothing to do, nothing touched
    CHECK(v[0] == 1);
}
