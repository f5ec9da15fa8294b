// NDLZ (codec 32), written from FORMAT-NOTES.md ("NDLZ (codec 32)").
//
// A stream is a 9-byte header (ndim = 2, blockshape[0], blockshape[1] as int32 LE), then one
// entry per C x C cell (C = meta, 4 or 8) in row-major order over the cell grid. Every entry
// starts with a token; back references are a uint16 LE distance d to stream position
// (this entry's token position - d). Cells on the block's last row or column of cells are
// partial (r x c bytes).
//
// The encoder writes literal cells, cells of one byte value, whole-cell copies and the one-
// reference row tokens (three or two rows of an earlier literal cell), found through hashes of
// the bytes of literal cells. Its output is not c-blosc2's byte for byte (other hashes, no
// two-reference tokens); every decoder of the format reads it. The decoder reads every token.
#include <algorithm>
#include <cstring>
#include <vector>

#include <b2nd/error.hpp>
#include <b2nd/format/endian.hpp>

#include "../../detail/text.hpp"
#include "plugins.hpp"

namespace b2nd::codec::plugins {

using b2nd::detail::num;

namespace {

constexpr std::size_t kHeader = 9;
constexpr std::size_t kMaxDistance = 0xFFFF;

struct Grid2 {
    std::int64_t rows = 0, cols = 0;  // block shape
    int c = 4;                        // cell side
    std::int64_t cell_rows() const { return (rows + c - 1) / c; }
    std::int64_t cell_cols() const { return (cols + c - 1) / c; }
    int height(std::int64_t i) const {
        return static_cast<int>(std::min<std::int64_t>(c, rows - i * c));
    }
    int width(std::int64_t j) const {
        return static_cast<int>(std::min<std::int64_t>(c, cols - j * c));
    }
};

[[noreturn]] void bad(const std::string& what, std::size_t at) {
    throw FormatError("ndlz stream: " + what, static_cast<std::uint64_t>(at));
}

/// The rows a token takes from its reference(s), for full cells; false for unknown tokens.
/// `first`/`second`: bit r set when row r comes from the first/second reference, in row order.
bool token_rows(int c, std::uint8_t t, unsigned& first, unsigned& second) {
    first = second = 0;
    if (c == 4) {
        switch (t) {
            case 0xE0:
                first = 0b1110;
                return true;
            case 0xE8:
                first = 0b0111;
                return true;
            case 0xF0:
                first = 0b1011;
                return true;
            case 0xF8:
                first = 0b1101;
                return true;
            default:
                break;
        }
        if (t >= 0x80 && t <= 0xB8 && (t & 7) == 0) {
            if (t == 0x80) {
                first = 0b1100;
                return true;
            }
            const unsigned i = (t >> 5) & 1U;
            const unsigned j = (t >> 3) & 3U;
            if (i == j) {
                return false;
            }
            first = (1U << i) | (1U << j);
            return true;
        }
        if (t == 0x28 || t == 0x30 || t == 0x38) {
            const unsigned j = (t >> 3) & 3U;
            first = 1U | (1U << j);
            second = 0b1111 & ~first;
            return true;
        }
        return false;
    }
    if (t >= 0xA8 && t <= 0xAD) {
        first = 0b111U << (t - 0xA8);
        return true;
    }
    if (t >= 0x88 && t <= 0x8E) {
        first = 0b11U << (t - 0x88);
        return true;
    }
    return false;
}

void decode(const BlockContext& ctx, ByteSpan src, MutableByteSpan dst) {
    const int c = ctx.meta;
    if (c != 4 && c != 8) {
        throw FormatError("ndlz: cell side (codec meta) " + num(c) + " is not 4 or 8");
    }
    if (src.size() < kHeader) {
        bad("shorter than its 9-byte header", 0);
    }
    const std::uint8_t* in = src.data();
    const std::size_t n = src.size();
    if (in[0] != 2) {
        bad("ndim " + num(in[0]) + " (NDLZ streams are 2-d)", 0);
    }
    Grid2 g;
    g.rows = format::load_le<std::int32_t>(in + 1);
    g.cols = format::load_le<std::int32_t>(in + 5);
    g.c = c;
    if (g.rows <= 0 || g.cols <= 0 || static_cast<std::uint64_t>(g.rows * g.cols) != dst.size()) {
        bad("block shape " + num(g.rows) + " x " + num(g.cols) + " does not make the " +
                num(static_cast<std::int64_t>(dst.size())) + " bytes expected",
            1);
    }
    std::uint8_t cell[64];
    std::size_t pos = kHeader;
    auto need = [&](std::size_t at, std::size_t len, const char* what) {
        if (at > n || len > n - at) {
            bad(std::string(what) + " runs past the stream's " + num(static_cast<std::int64_t>(n)) +
                    " bytes",
                at);
        }
    };
    auto reference = [&](std::size_t token_at, std::size_t dist_at, std::size_t len) {
        need(dist_at, 2, "a distance");
        const std::size_t d = format::load_le<std::uint16_t>(in + dist_at);
        if (d > token_at || d == 0) {
            bad("distance " + num(static_cast<std::int64_t>(d)) + " points outside the stream",
                dist_at);
        }
        const std::size_t ref = token_at - d;
        need(ref, len, "a back reference");
        return in + ref;
    };
    for (std::int64_t ci = 0; ci < g.cell_rows(); ++ci) {
        for (std::int64_t cj = 0; cj < g.cell_cols(); ++cj) {
            const int h = g.height(ci);
            const int w = g.width(cj);
            const std::size_t cell_bytes = static_cast<std::size_t>(h * w);
            const std::size_t at = pos;
            need(at, 1, "a cell token");
            const std::uint8_t t = in[pos++];
            const std::uint8_t* rows = cell;  // h rows of w bytes
            if (t == 0x00) {
                need(pos, cell_bytes, "a literal cell");
                rows = in + pos;
                pos += cell_bytes;
            } else if (t == 0x40) {
                need(pos, 1, "a cell value");
                std::memset(cell, in[pos++], cell_bytes);
            } else if (t == 0xC0) {
                rows = reference(at, pos, cell_bytes);
                pos += 2;
            } else {
                unsigned first = 0;
                unsigned second = 0;
                if (!token_rows(c, t, first, second)) {
                    bad("unknown token " + num(t), at);
                }
                if (h != c || w != c) {
                    bad("row-match token " + num(t) + " in a partial cell", at);
                }
                const auto cc = static_cast<std::size_t>(c);
                const std::uint8_t* r1 =
                    reference(at, pos, static_cast<std::size_t>(__builtin_popcount(first)) * cc);
                pos += 2;
                const std::uint8_t* r2 = nullptr;
                if (second != 0) {
                    r2 = reference(at, pos,
                                   static_cast<std::size_t>(__builtin_popcount(second)) * cc);
                    pos += 2;
                }
                for (int r = 0; r < c; ++r) {
                    std::uint8_t* row = cell + static_cast<std::size_t>(r) * cc;
                    if ((first >> r) & 1U) {
                        std::memcpy(row, r1, cc);
                        r1 += cc;
                    } else if ((second >> r) & 1U) {
                        std::memcpy(row, r2, cc);
                        r2 += cc;
                    } else {
                        need(pos, cc, "a literal row");
                        std::memcpy(row, in + pos, cc);
                        pos += cc;
                    }
                }
            }
            std::uint8_t* out = dst.data() + static_cast<std::size_t>(ci * c * g.cols + cj * c);
            for (int r = 0; r < h; ++r) {
                std::memcpy(out + static_cast<std::size_t>(r * g.cols),
                            rows + static_cast<std::size_t>(r * w), static_cast<std::size_t>(w));
            }
        }
    }
}

std::uint32_t hash_bytes(const std::uint8_t* p, std::size_t n) {
    std::uint32_t h = 2166136261U;  // FNV-1a
    for (std::size_t i = 0; i < n; ++i) {
        h = (h ^ p[i]) * 16777619U;
    }
    return h;
}

/// Where runs of n bytes were seen in the stream (the bytes of literal cells), by hash.
class Seen {
public:
    explicit Seen(std::size_t n) : n_(n), slot_(4096, 0) {}
    /// A stream position before `pos` holding `key` (n bytes) within reach of a distance, or 0.
    std::size_t find(const std::uint8_t* out, std::size_t pos, const std::uint8_t* key) const {
        const std::size_t at = slot_[hash_bytes(key, n_) % slot_.size()];
        return at != 0 && pos - at <= kMaxDistance && std::memcmp(out + at, key, n_) == 0 ? at : 0;
    }
    void put(const std::uint8_t* out, std::size_t at) {
        slot_[hash_bytes(out + at, n_) % slot_.size()] = at;
    }

private:
    std::size_t n_;
    std::vector<std::size_t> slot_;
};

/// A row-match token: the rows it takes from one reference (bit r: row r), in row order.
struct RowToken {
    std::uint8_t token;
    unsigned rows;
};
constexpr RowToken kThree4[] = {{0xE0, 0b1110}, {0xE8, 0b0111}, {0xF0, 0b1011}, {0xF8, 0b1101}};
constexpr RowToken kTwo4[] = {{0x80, 0b1100}, {0x88, 0b0011}, {0x90, 0b0101},
                              {0x98, 0b1001}, {0xB0, 0b0110}, {0xB8, 0b1010}};

/// The encoder. Each full cell becomes, of what applies, the shortest of: one byte value, a copy
/// of an earlier literal cell, three or two of its rows from earlier literal bytes (the other
/// rows literal), or a literal; partial cells are literals or one byte value.
std::size_t encode(const BlockContext& ctx, ByteSpan src, MutableByteSpan dst) {
    const int c = ctx.meta;
    Grid2 g;
    g.c = c;
    if (ctx.ndim == 2 && ctx.blockshape != nullptr) {
        g.rows = ctx.blockshape[0];
        g.cols = ctx.blockshape[1];
    }
    if ((c != 4 && c != 8) || g.rows <= 0 || g.cols <= 0 ||
        static_cast<std::uint64_t>(g.rows * g.cols) != src.size() || g.rows > INT32_MAX ||
        g.cols > INT32_MAX) {
        throw UsageError("ndlz: a stream of " + num(static_cast<std::int64_t>(src.size())) +
                         " bytes is not one " + num(g.rows) + " x " + num(g.cols) +
                         " block of bytes with cells of side 4 or 8");
    }
    const std::size_t cap = std::min(dst.size(), src.size());  // beyond that, store raw
    std::uint8_t* out = dst.data();
    if (cap < kHeader) {
        return 0;
    }
    out[0] = 2;
    format::store_le<std::int32_t>(out + 1, static_cast<std::int32_t>(g.rows));
    format::store_le<std::int32_t>(out + 5, static_cast<std::int32_t>(g.cols));
    std::size_t pos = kHeader;
    const auto cc = static_cast<std::size_t>(c);
    Seen whole(cc * cc), three(3 * cc), two(2 * cc);
    // Row tokens: for 4x4 cells any three or two rows (fixed sets); for 8x8 cells three or two
    // consecutive rows starting at r (0xA8 + r, 0x88 + r).
    struct Tokens {
        RowToken t[7];
        std::size_t n = 0;
        const RowToken* begin() const { return t; }
        const RowToken* end() const { return t + n; }
    };
    Tokens threes, twos;
    if (c == 4) {
        for (const RowToken& t : kThree4) {
            threes.t[threes.n++] = t;
        }
        for (const RowToken& t : kTwo4) {
            twos.t[twos.n++] = t;
        }
    } else {
        for (unsigned r = 0; r + 3 <= 8; ++r) {
            threes.t[threes.n++] = {static_cast<std::uint8_t>(0xA8 + r), 0b111U << r};
        }
        for (unsigned r = 0; r + 2 <= 8; ++r) {
            twos.t[twos.n++] = {static_cast<std::uint8_t>(0x88 + r), 0b11U << r};
        }
    }
    std::uint8_t cell[64];
    std::uint8_t key[64];
    // Emits a row token whose reference holds `t.rows`, then the other rows literally.
    auto row_entry = [&](const RowToken& t, std::size_t ref) {
        const std::size_t literal =
            cc * (cc - static_cast<std::size_t>(__builtin_popcount(t.rows)));
        if (cap - pos < 3 + literal) {
            return false;
        }
        out[pos] = t.token;
        format::store_le<std::uint16_t>(out + pos + 1, static_cast<std::uint16_t>(pos - ref));
        pos += 3;
        for (std::size_t r = 0; r < cc; ++r) {
            if (((t.rows >> r) & 1U) == 0) {
                std::memcpy(out + pos, cell + r * cc, cc);
                pos += cc;
            }
        }
        return true;
    };
    // The rows of `t` one after the other (the bytes a reference must hold).
    auto rows_of = [&](const RowToken& t) {
        std::size_t n = 0;
        for (std::size_t r = 0; r < cc; ++r) {
            if ((t.rows >> r) & 1U) {
                std::memcpy(key + n, cell + r * cc, cc);
                n += cc;
            }
        }
    };
    for (std::int64_t ci = 0; ci < g.cell_rows(); ++ci) {
        for (std::int64_t cj = 0; cj < g.cell_cols(); ++cj) {
            const int h = g.height(ci);
            const int w = g.width(cj);
            const auto bytes = static_cast<std::size_t>(h * w);
            const std::uint8_t* at =
                src.data() + static_cast<std::size_t>(ci * c * g.cols + cj * c);
            for (int r = 0; r < h; ++r) {
                std::memcpy(cell + static_cast<std::size_t>(r * w),
                            at + static_cast<std::size_t>(r * g.cols), static_cast<std::size_t>(w));
            }
            if (std::all_of(cell, cell + bytes, [&](std::uint8_t b) { return b == cell[0]; })) {
                if (cap - pos < 2) {
                    return 0;
                }
                out[pos++] = 0x40;
                out[pos++] = cell[0];
                continue;
            }
            const bool full = h == c && w == c;
            if (full) {
                if (const std::size_t ref = whole.find(out, pos, cell)) {
                    if (cap - pos < 3) {
                        return 0;
                    }
                    out[pos] = 0xC0;
                    format::store_le<std::uint16_t>(out + pos + 1,
                                                    static_cast<std::uint16_t>(pos - ref));
                    pos += 3;
                    continue;
                }
                bool done = false;
                for (const auto* set : {&threes, &twos}) {
                    const Seen& table = set == &threes ? three : two;
                    for (const RowToken& t : *set) {
                        rows_of(t);
                        if (const std::size_t ref = table.find(out, pos, key)) {
                            if (!row_entry(t, ref)) {
                                return 0;
                            }
                            done = true;
                            break;
                        }
                    }
                    if (done) {
                        break;
                    }
                }
                if (done) {
                    continue;
                }
            }
            if (cap - pos < 1 + bytes) {
                return 0;
            }
            out[pos++] = 0x00;
            std::memcpy(out + pos, cell, bytes);
            if (full) {  // later cells may copy this one, or runs of its rows
                whole.put(out, pos);
                for (std::size_t r = 0; r + 3 <= cc; ++r) {
                    three.put(out, pos + r * cc);
                }
                for (std::size_t r = 0; r + 2 <= cc; ++r) {
                    two.put(out, pos + r * cc);
                }
            }
            pos += bytes;
        }
    }
    return pos < src.size() ? pos : 0;
}

}  // namespace

CodecPlugin ndlz() {
    CodecPlugin p;
    p.id = static_cast<std::uint8_t>(Codec::ndlz);
    p.name = "ndlz";
    p.needs_split = true;  // reading needs no geometry: each stream carries its block shape
    p.check = [](const BlockContext& c) -> std::string {
        if (c.meta != 4 && c.meta != 8) {
            return "ndlz: the cell side (codec meta) must be 4 or 8, not " + num(c.meta);
        }
        if (c.blockshape == nullptr) {
            return "ndlz needs the block shape to write (EncodeParams::blockshape)";
        }
        if (c.ndim != 2) {
            return "ndlz compresses 2-d arrays only (this one has " + num(c.ndim) + " dims)";
        }
        if (c.blockshape[0] > INT32_MAX || c.blockshape[1] > INT32_MAX) {
            return "ndlz: block dims must fit in int32";
        }
        return {};
    };
    p.encode = encode;
    p.decode = decode;
    return p;
}

}  // namespace b2nd::codec::plugins
