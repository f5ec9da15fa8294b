// BloscLZ: our own encoder and decoder for the BloscLZ stream format (a FastLZ level-1 dialect).
//
// Stream format (as c-blosc2's blosclz_decompress reads it):
//   The first byte's low 5 bits are a literal-run control; its top 3 bits are a format marker
//   (the encoder writes 001) and are ignored when decoding.
//   ctrl < 32      literal run of ctrl + 1 bytes, copied from the stream.
//   ctrl >= 32     match. L = ctrl >> 5. If L == 7, extension bytes follow and are added to the
//                  length while they equal 255 (the last one < 255 is added too). Length of the
//                  copy = (L - 1) + extensions + 3. Then one distance byte `code`;
//                  distance = ((ctrl & 31) << 8) + code + 1, except when (ctrl & 31) == 31 and
//                  code == 255: two more bytes follow, big-endian d16, and distance = d16 + 8192.
//   A copy may overlap its own output (distance < length), producing a repeating pattern.
//   The stream ends when the input is exhausted after a complete token.
//
// The encoder is a greedy LZ77 with a hash table of 4-byte sequences, skip acceleration over
// incompressible data, and a tail of literal bytes so that the stream ends with a literal run.
#include <algorithm>
#include <cstring>
#include <vector>

#include "compressors.hpp"

namespace b2nd::codec::detail {

namespace {

constexpr std::size_t kMaxLiteralRun = 32;
constexpr std::size_t kNearMaxDistance = 8191;         // distance - 1 < 8191
constexpr std::size_t kFarMaxDistance = 65535 + 8192;  // d16 + 8192
constexpr std::size_t kMinMatch = 4;
constexpr std::size_t kMinFarMatch = 6;    // a far match costs 4+ bytes
constexpr std::size_t kTailLiterals = 12;  // matches never reach the last bytes
constexpr std::size_t kMinInput = 16;
constexpr std::size_t kBoundaryOverlap = 3;
constexpr std::size_t kLongRun = 255;

inline std::uint32_t read32(const std::uint8_t* p) noexcept {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

inline std::uint64_t read64(const std::uint8_t* p) noexcept {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

inline std::uint32_t hash4(std::uint32_t v, int log) noexcept {
    return (v * 2654435761U) >> (32 - log);
}

/// Number of equal bytes at a and b, not looking at or past `limit` (for b).
inline std::size_t match_length(const std::uint8_t* a,
                                const std::uint8_t* b,
                                const std::uint8_t* limit) noexcept {
    const std::uint8_t* start = b;
    while (b + 8 <= limit) {
        const std::uint64_t x = read64(a) ^ read64(b);
        if (x != 0) {
            if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
                return static_cast<std::size_t>(b - start) +
                       static_cast<std::size_t>(__builtin_ctzll(x) / 8);
            } else {
                return static_cast<std::size_t>(b - start) +
                       static_cast<std::size_t>(__builtin_clzll(x) / 8);
            }
        }
        a += 8;
        b += 8;
    }
    while (b < limit && *a == *b) {
        ++a;
        ++b;
    }
    return static_cast<std::size_t>(b - start);
}

class Writer {
public:
    Writer(std::uint8_t* out, std::size_t cap) noexcept : op_(out), begin_(out), end_(out + cap) {}

    /// Emits literal runs for [p, p + n); false when out of room.
    bool literals(const std::uint8_t* p, std::size_t n) noexcept {
        while (n > 0) {
            const std::size_t k = std::min(n, kMaxLiteralRun);
            if (static_cast<std::size_t>(end_ - op_) < k + 1) {
                return false;
            }
            *op_++ = static_cast<std::uint8_t>(k - 1);
            std::memcpy(op_, p, k);
            op_ += k;
            p += k;
            n -= k;
        }
        return true;
    }

    /// Emits a copy of `len` (>= 3) bytes from `dist` (1..kFarMaxDistance) back.
    bool match(std::size_t len, std::size_t dist) noexcept {
        const bool far = dist > kNearMaxDistance;
        const std::size_t hi = far ? 31 : (dist - 1) >> 8;
        const std::size_t ext = len >= 9 ? (len - 9) / 255 + 1 : 0;
        const std::size_t need = 1 + ext + 1 + (far ? 2 : 0);
        if (static_cast<std::size_t>(end_ - op_) < need) {
            return false;
        }
        if (len <= 8) {
            *op_++ = static_cast<std::uint8_t>(((len - 2) << 5) | hi);
        } else {
            *op_++ = static_cast<std::uint8_t>((7U << 5) | hi);
            std::size_t rest = len - 9;
            while (rest >= 255) {
                *op_++ = 255;
                rest -= 255;
            }
            *op_++ = static_cast<std::uint8_t>(rest);
        }
        if (far) {
            const std::size_t d16 = dist - 8192;
            *op_++ = 255;
            *op_++ = static_cast<std::uint8_t>(d16 >> 8);
            *op_++ = static_cast<std::uint8_t>(d16 & 255);
        } else {
            *op_++ = static_cast<std::uint8_t>((dist - 1) & 255);
        }
        return true;
    }

    std::size_t size() const noexcept { return static_cast<std::size_t>(op_ - begin_); }

private:
    std::uint8_t* op_;
    std::uint8_t* begin_;
    std::uint8_t* end_;
};

struct LevelParams {
    int hash_log;
    int skip_shift;  // larger: slower to accelerate over literals
};

LevelParams level_params(int clevel) noexcept {
    static constexpr LevelParams kLevels[10] = {{12, 4}, {12, 4}, {13, 5}, {14, 5}, {14, 6},
                                                {15, 6}, {15, 7}, {16, 7}, {16, 8}, {16, 9}};
    return kLevels[std::clamp(clevel, 0, 9)];
}

}  // namespace

std::size_t blosclz_compress(
    int clevel, const std::uint8_t* in, std::size_t n, std::uint8_t* out, std::size_t cap) {
    if (n < kMinInput || cap < 2) {
        return 0;
    }
    const LevelParams lp = level_params(clevel);
    // A table much larger than the input only costs its clearing.
    int hash_log = 10;
    while (hash_log < lp.hash_log && (std::size_t{1} << (hash_log + 1)) <= n) {
        ++hash_log;
    }
    thread_local std::vector<std::uint32_t> table;
    table.assign(std::size_t{1} << hash_log, 0);

    Writer w(out, cap);
    const std::uint8_t* const match_limit = in + n - kTailLiterals;  // no match starts here on
    const std::uint8_t* const extend_limit = in + n - kTailLiterals / 2;
    const std::uint8_t* anchor = in;
    const std::uint8_t* ip = in + 1;  // the stream must open with a literal
    std::size_t misses = 0;

    while (ip < match_limit) {
        const std::uint32_t seq = read32(ip);
        const std::uint32_t h = hash4(seq, hash_log);
        const std::uint8_t* ref = in + table[h];
        table[h] = static_cast<std::uint32_t>(ip - in);
        const auto dist = static_cast<std::size_t>(ip - ref);
        if (dist == 0 || dist > kFarMaxDistance || read32(ref) != seq) {
            ++misses;
            ip += 1 + (misses >> lp.skip_shift);
            continue;
        }
        std::size_t len = kMinMatch + match_length(ref + kMinMatch, ip + kMinMatch, extend_limit);
        // Stop the copy a few bytes before the mismatch: the next search then starts on the
        // bytes that straddle the boundary, and in periodic data (bit-shuffled counters,
        // alternating runs) that sequence recurs exactly one period earlier, so the next match
        // gets the period as its distance and runs long. Long runs of one byte are left whole:
        // what follows them rarely repeats.
        if (len >= kMinMatch + kBoundaryOverlap && (dist > 1 || len < kLongRun)) {
            len -= kBoundaryOverlap;
        }
        if (dist > kNearMaxDistance && len < kMinFarMatch) {
            ++misses;
            ip += 1 + (misses >> lp.skip_shift);
            continue;
        }
        // Extend backwards over pending literals (never over the opening literal byte).
        const std::uint8_t* const low = anchor == in ? in + 1 : anchor;
        while (ip > low && ref > in && ip[-1] == ref[-1]) {
            --ip;
            --ref;
            ++len;
        }
        if (!w.literals(anchor, static_cast<std::size_t>(ip - anchor)) || !w.match(len, dist)) {
            return 0;
        }
        ip += len;
        anchor = ip;
        misses = 0;
        if (ip < match_limit) {
            // Index a position inside the match and the one we continue from.
            const std::uint8_t* p = ip - 2;
            table[hash4(read32(p), hash_log)] = static_cast<std::uint32_t>(p - in);
        }
    }
    if (!w.literals(anchor, static_cast<std::size_t>(in + n - anchor))) {
        return 0;
    }
    out[0] |= 1U << 5;  // format marker expected by older decoders
    return w.size();
}

bool blosclz_decompress(const std::uint8_t* in,
                        std::size_t n,
                        std::uint8_t* out,
                        std::size_t out_size,
                        std::size_t want) {
    const bool partial = want < out_size;
    if (n == 0) {
        return out_size == 0;
    }
    const std::uint8_t* ip = in;
    const std::uint8_t* const ip_end = in + n;
    std::uint8_t* op = out;
    std::uint8_t* const op_end = out + out_size;
    std::size_t ctrl = *ip++ & 31U;
    for (;;) {
        if (ctrl >= 32) {
            std::size_t len = (ctrl >> 5) - 1;
            if (len == 6) {
                std::uint8_t code;
                do {
                    if (ip >= ip_end) {
                        return false;
                    }
                    code = *ip++;
                    len += code;
                } while (code == 255);
            }
            if (ip >= ip_end) {
                return false;
            }
            const std::uint8_t code = *ip++;
            len += 3;
            std::size_t dist = ((ctrl & 31U) << 8) + code + 1;
            if (code == 255 && (ctrl & 31U) == 31) {
                if (ip_end - ip < 2) {
                    return false;
                }
                dist = ((static_cast<std::size_t>(ip[0]) << 8) | ip[1]) + 8192;
                ip += 2;
            }
            if (dist > static_cast<std::size_t>(op - out) ||
                len > static_cast<std::size_t>(op_end - op)) {
                return false;
            }
            const std::uint8_t* ref = op - dist;
            if (dist == 1) {
                std::memset(op, *ref, len);
                op += len;
            } else if (dist >= 8 && static_cast<std::size_t>(op_end - op) >= len + 8) {
                // Copy 8 bytes at a time; overlap is harmless because dist >= 8.
                std::uint8_t* const stop = op + len;
                do {
                    std::memcpy(op, ref, 8);
                    op += 8;
                    ref += 8;
                } while (op < stop);
                op = stop;
            } else {
                // Repeating pattern: each copy doubles the available period.
                while (len > 0) {
                    const std::size_t k = std::min(len, static_cast<std::size_t>(op - ref));
                    std::memcpy(op, ref, k);
                    op += k;
                    len -= k;
                }
            }
        } else {
            const std::size_t run = ctrl + 1;
            if (run > static_cast<std::size_t>(op_end - op) ||
                run > static_cast<std::size_t>(ip_end - ip)) {
                return false;
            }
            if (static_cast<std::size_t>(ip_end - ip) >= kMaxLiteralRun &&
                static_cast<std::size_t>(op_end - op) >= kMaxLiteralRun) {
                std::memcpy(op, ip, kMaxLiteralRun);  // fixed size: one or two vector moves
            } else {
                std::memcpy(op, ip, run);
            }
            op += run;
            ip += run;
        }
        if (ip >= ip_end) {
            break;
        }
        if (partial && static_cast<std::size_t>(op - out) >= want) {
            return true;
        }
        ctrl = *ip++;
    }
    return partial ? static_cast<std::size_t>(op - out) >= want : op == op_end;
}

}  // namespace b2nd::codec::detail
