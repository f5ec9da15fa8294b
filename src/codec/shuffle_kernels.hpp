// Byte shuffle / unshuffle and the 8x8 bit transpose, written once over a small vector-ops
// interface and instantiated per instruction set (shuffle_sse2.cpp, shuffle_avx2.cpp). Everything
// here lives in an unnamed namespace so that the SSE2 and AVX2 instantiations, compiled with
// different target flags, can never be merged by the linker.
//
// Layout (c-blosc2 README_CHUNK_FORMAT, "shuffle"): for n elements of T bytes,
//   shuffled[j * n + i] = plain[i * T + j]
// The vector kernels treat T = 2^k streams and run k rounds of a perfect-shuffle network:
// unshuffle zips pairs of vectors at unit sizes 1, 2, 4, 8 bytes; shuffle unzips in reverse.
// Starting from streams in bit-reversed order makes the network's output land in memory order.
// The rounds work per 128-bit lane; wider vectors rearrange their lanes once, in
// Ops::after_zip / Ops::before_unzip, rather than in every round.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {

constexpr std::size_t bit_reverse(std::size_t v, int bits) {
    std::size_t r = 0;
    for (int b = 0; b < bits; ++b) {
        r |= ((v >> b) & 1U) << (bits - 1 - b);
    }
    return r;
}

constexpr int log2_of(std::size_t t) {
    return t == 1 ? 0 : 1 + log2_of(t / 2);
}

/// One round of the unshuffle network per unit size U = 1, 2, ..., T/2.
template <class Ops, std::size_t T, std::size_t U>
inline void zip_rounds(typename Ops::V* l) {
    if constexpr (U < T) {
        typename Ops::V nl[T];
        for (std::size_t m = 0; m < T / 2; ++m) {
            Ops::template zip<U>(l[m], l[m + T / 2], nl[2 * m], nl[2 * m + 1]);
        }
        for (std::size_t j = 0; j < T; ++j) {
            l[j] = nl[j];
        }
        zip_rounds<Ops, T, U * 2>(l);
    }
}

/// The inverse network: unit sizes U = T/2, ..., 2, 1.
template <class Ops, std::size_t T, std::size_t U>
inline void unzip_rounds(typename Ops::V* l) {
    if constexpr (U >= 1) {
        typename Ops::V nl[T];
        for (std::size_t m = 0; m < T / 2; ++m) {
            Ops::template unzip<U>(l[2 * m], l[2 * m + 1], nl[m], nl[m + T / 2]);
        }
        for (std::size_t j = 0; j < T; ++j) {
            l[j] = nl[j];
        }
        unzip_rounds<Ops, T, U / 2>(l);
    }
}

/// Unshuffles the first (n / W) * W elements with vectors; returns how many were done.
/// `src` holds T streams, `stride` bytes apart (n: they are n bytes long), of which the first n
/// bytes are used; `dst` receives n elements of T bytes.
/// With kBits, each output vector (whole 8-byte words when T == 8) is also bit-transposed before
/// it is stored: the fused "rows to words" step of bitunshuffle.
template <class Ops, std::size_t T, bool kBits = false>
std::size_t unshuffle_vec(std::size_t n,
                          const std::uint8_t* src,
                          std::uint8_t* dst,
                          std::size_t stride = 0) {
    using V = typename Ops::V;
    constexpr std::size_t W = Ops::kWidth;
    constexpr int K = log2_of(T);
    const std::size_t nv = n / W * W;
    if (stride == 0) {
        stride = n;
    }
    for (std::size_t i = 0; i < nv; i += W) {
        V l[T];
        for (std::size_t j = 0; j < T; ++j) {
            l[j] = Ops::load(src + bit_reverse(j, K) * stride + i);
        }
        zip_rounds<Ops, T, 1>(l);
        Ops::template after_zip<T>(l);
        std::uint8_t* out = dst + i * T;
        for (std::size_t j = 0; j < T; ++j) {
            if constexpr (kBits) {
                l[j] = Ops::bit_transpose8x8(l[j]);
            }
            Ops::store(out + j * W, l[j]);
        }
    }
    return nv;
}

/// Shuffles the first (n / W) * W elements with vectors; returns how many were done. With kBits,
/// each loaded vector is bit-transposed first (the fused "words to rows" step of bitshuffle).
template <class Ops, std::size_t T, bool kBits = false>
std::size_t shuffle_vec(std::size_t n, const std::uint8_t* src, std::uint8_t* dst) {
    using V = typename Ops::V;
    constexpr std::size_t W = Ops::kWidth;
    constexpr int K = log2_of(T);
    const std::size_t nv = n / W * W;
    for (std::size_t i = 0; i < nv; i += W) {
        V l[T];
        const std::uint8_t* in = src + i * T;
        for (std::size_t j = 0; j < T; ++j) {
            l[j] = Ops::load(in + j * W);
            if constexpr (kBits) {
                l[j] = Ops::bit_transpose8x8(l[j]);
            }
        }
        Ops::template before_unzip<T>(l);
        unzip_rounds<Ops, T, T / 2>(l);
        for (std::size_t j = 0; j < T; ++j) {
            Ops::store(dst + bit_reverse(j, K) * n + i, l[j]);
        }
    }
    return nv;
}

/// Scalar: unshuffles elements [from, n) of t streams `stride` bytes apart.
inline void unshuffle_scalar(int t,
                             std::size_t n,
                             std::size_t from,
                             std::size_t stride,
                             const std::uint8_t* src,
                             std::uint8_t* dst) {
    for (std::size_t i = from; i < n; ++i) {
        for (int j = 0; j < t; ++j) {
            dst[i * static_cast<std::size_t>(t) + static_cast<std::size_t>(j)] =
                src[static_cast<std::size_t>(j) * stride + i];
        }
    }
}

/// Scalar tail: unshuffles elements [from, n) of t streams of n bytes.
inline void unshuffle_tail(
    int t, std::size_t n, std::size_t from, const std::uint8_t* src, std::uint8_t* dst) {
    unshuffle_scalar(t, n, from, n, src, dst);
}

/// Scalar tail: shuffles elements [from, n).
inline void shuffle_tail(
    int t, std::size_t n, std::size_t from, const std::uint8_t* src, std::uint8_t* dst) {
    for (int j = 0; j < t; ++j) {
        for (std::size_t i = from; i < n; ++i) {
            dst[static_cast<std::size_t>(j) * n + i] =
                src[i * static_cast<std::size_t>(t) + static_cast<std::size_t>(j)];
        }
    }
}

/// Vector + scalar-tail unshuffle of n elements of T bytes. Returns false for unsupported T.
template <class Ops>
bool unshuffle_dispatch(int t, std::size_t n, const std::uint8_t* src, std::uint8_t* dst) {
    std::size_t done;
    switch (t) {
        case 2:
            done = unshuffle_vec<Ops, 2>(n, src, dst);
            break;
        case 4:
            done = unshuffle_vec<Ops, 4>(n, src, dst);
            break;
        case 8:
            done = unshuffle_vec<Ops, 8>(n, src, dst);
            break;
        case 16:
            done = unshuffle_vec<Ops, 16>(n, src, dst);
            break;
        default:
            return false;
    }
    unshuffle_tail(t, n, done, src, dst);
    return true;
}

/// Unshuffles a block of n elements of T bytes (T streams of n bytes at src) as nrows rows of
/// row_elems elements, row r to dst + offsets[r]: the scatter of the block's rows into an array
/// done by the unshuffle itself. Returns false for unsupported T.
template <class Ops, std::size_t T>
void unshuffle_rows_vec(std::size_t n,
                        const std::uint8_t* src,
                        std::size_t row_elems,
                        std::size_t nrows,
                        std::uint8_t* dst,
                        const std::ptrdiff_t* offsets) {
    for (std::size_t r = 0; r < nrows; ++r) {
        const std::uint8_t* in = src + r * row_elems;
        std::uint8_t* out = dst + offsets[r];
        const std::size_t done = unshuffle_vec<Ops, T>(row_elems, in, out, n);
        unshuffle_scalar(static_cast<int>(T), row_elems, done, n, in, out);
    }
}

template <class Ops>
bool unshuffle_rows_dispatch(int t,
                             std::size_t n,
                             const std::uint8_t* src,
                             std::size_t row_elems,
                             std::size_t nrows,
                             std::uint8_t* dst,
                             const std::ptrdiff_t* offsets) {
    switch (t) {
        case 2:
            unshuffle_rows_vec<Ops, 2>(n, src, row_elems, nrows, dst, offsets);
            return true;
        case 4:
            unshuffle_rows_vec<Ops, 4>(n, src, row_elems, nrows, dst, offsets);
            return true;
        case 8:
            unshuffle_rows_vec<Ops, 8>(n, src, row_elems, nrows, dst, offsets);
            return true;
        case 16:
            unshuffle_rows_vec<Ops, 16>(n, src, row_elems, nrows, dst, offsets);
            return true;
        default:
            return false;
    }
}

/// Vector + scalar-tail shuffle of n elements of T bytes. Returns false for unsupported T.
template <class Ops>
bool shuffle_dispatch(int t, std::size_t n, const std::uint8_t* src, std::uint8_t* dst) {
    std::size_t done;
    switch (t) {
        case 2:
            done = shuffle_vec<Ops, 2>(n, src, dst);
            break;
        case 4:
            done = shuffle_vec<Ops, 4>(n, src, dst);
            break;
        case 8:
            done = shuffle_vec<Ops, 8>(n, src, dst);
            break;
        case 16:
            done = shuffle_vec<Ops, 16>(n, src, dst);
            break;
        default:
            return false;
    }
    shuffle_tail(t, n, done, src, dst);
    return true;
}

/// Bitshuffle's inner step for one byte stream of 8 * nwords bytes: bit-transpose every 8-byte
/// word, then split the words into 8 rows (row b = byte b of each word). Returns words done.
template <class Ops>
std::size_t words_to_rows_vec(std::size_t nwords, const std::uint8_t* src, std::uint8_t* dst) {
    return shuffle_vec<Ops, 8, true>(nwords, src, dst);
}

/// The inverse: gather 8 rows of nwords bytes into words and bit-transpose each.
template <class Ops>
std::size_t rows_to_words_vec(std::size_t nwords, const std::uint8_t* src, std::uint8_t* dst) {
    return unshuffle_vec<Ops, 8, true>(nwords, src, dst);
}

}  // namespace
