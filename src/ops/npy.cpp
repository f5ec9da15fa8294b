#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>
#include <b2nd/format/endian.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/npy.hpp>
#include <b2nd/storage/mapped_file.hpp>
#include <b2nd/storage/open_options.hpp>
#include <b2nd/storage/sources.hpp>

#include "../detail/text.hpp"
#include "../engine/array_core.hpp"
#include "../storage/publish.hpp"
#include "../values/params_detail.hpp"
#include <unistd.h>

namespace b2nd {

using detail::num;

namespace {

constexpr char kMagic[] = "\x93NUMPY";

[[noreturn]] void bad(const std::string& what, std::size_t at) {
    throw FormatError(".npy header: " + what, at);
}

/// The text of the value after `'key':` in the header dict (up to the matching close for
/// brackets and parentheses, or the end of a quoted string), with its offset.
std::pair<std::string, std::size_t> value_of(const std::string& h,
                                             const std::string& key,
                                             std::size_t base) {
    const std::string k1 = "'" + key + "'", k2 = "\"" + key + "\"";
    std::size_t p = h.find(k1);
    if (p == std::string::npos) {
        p = h.find(k2);
    }
    if (p == std::string::npos) {
        bad("no '" + key + "' entry", base);
    }
    p += k1.size();
    while (p < h.size() && (std::isspace(static_cast<unsigned char>(h[p])) != 0 || h[p] == ':')) {
        ++p;
    }
    const std::size_t start = p;
    if (p >= h.size()) {
        bad("'" + key + "' has no value", base + p);
    }
    const char c = h[p];
    if (c == '\'' || c == '"') {
        const std::size_t q = h.find(c, p + 1);
        if (q == std::string::npos) {
            bad("unterminated string for '" + key + "'", base + p);
        }
        return {h.substr(p + 1, q - p - 1), base + start};
    }
    if (c == '[' || c == '(' || c == '{') {
        int depth = 0;
        char quote = 0;
        for (; p < h.size(); ++p) {
            const char x = h[p];
            if (quote != 0) {
                quote = x == quote ? 0 : quote;
            } else if (x == '\'' || x == '"') {
                quote = x;
            } else if (x == '[' || x == '(' || x == '{') {
                ++depth;
            } else if (x == ']' || x == ')' || x == '}') {
                if (--depth == 0) {
                    return {h.substr(start, p + 1 - start), base + start};
                }
            }
        }
        bad("unbalanced value for '" + key + "'", base + start);
    }
    while (p < h.size() && h[p] != ',' && h[p] != '}') {
        ++p;
    }
    std::string v = h.substr(start, p - start);
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back())) != 0) {
        v.pop_back();
    }
    return {v, base + start};
}

}  // namespace

NpyHeader parse_npy_header(ByteSpan bytes) {
    if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) {
        const ByteSpan start = bytes.first(std::min<std::size_t>(bytes.size(), 64));
        std::string other = format::foreign_format(start);
        if (other.empty()) {
            try {
                (void)format::read_frame_lengths(start);
                other = "a Blosc2 frame (a b2nd array? 'b2nd convert' copies those)";
            } catch (const FormatError&) {
                // nothing we know
            }
        }
        bad(other.empty() ? std::string("not a .npy file (no \\x93NUMPY magic)")
                          : "not a .npy file: this is " + other,
            0);
    }
    const int major = bytes[6];
    std::size_t len = 0, base = 0;
    if (major == 1) {
        len = format::load_le<std::uint16_t>(bytes.data() + 8);
        base = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) {
            bad("truncated", bytes.size());
        }
        len = format::load_le<std::uint32_t>(bytes.data() + 8);
        base = 12;
    } else {
        throw UnsupportedError(".npy header: format version " + num(major) + " is not supported",
                               6);
    }
    if (len > bytes.size() - base) {
        bad("header of " + num(static_cast<std::int64_t>(len)) +
                " bytes runs past the end of the file",
            8);
    }
    const std::string h(reinterpret_cast<const char*>(bytes.data() + base), len);
    NpyHeader out;
    out.data_offset = base + len;
    const auto [descr, descr_at] = value_of(h, "descr", base);
    try {
        out.dtype = DType::parse(descr);
    } catch (const FormatError& e) {
        rethrow_with_context(e, ".npy header: descr", descr_at);
    }
    const auto [fortran, fortran_at] = value_of(h, "fortran_order", base);
    if (fortran != "True" && fortran != "False") {
        bad("fortran_order is \"" + fortran + "\"", fortran_at);
    }
    out.fortran_order = fortran == "True";
    const auto [shape, shape_at] = value_of(h, "shape", base);
    if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') {
        bad("shape \"" + shape + "\" is not a tuple", shape_at);
    }
    std::int64_t items = 1;
    std::size_t p = 1;
    while (p < shape.size() - 1) {
        while (p < shape.size() - 1 &&
               (std::isspace(static_cast<unsigned char>(shape[p])) != 0 || shape[p] == ',')) {
            ++p;
        }
        if (p >= shape.size() - 1) {
            break;
        }
        std::int64_t v = 0;
        const std::size_t s0 = p;
        while (p < shape.size() - 1 && std::isdigit(static_cast<unsigned char>(shape[p])) != 0) {
            if (format::mul_overflows(v, 10, &v) || format::add_overflows(v, shape[p] - '0', &v)) {
                bad("shape entry too large", shape_at + p);
            }
            ++p;
        }
        if (p == s0) {
            bad("shape \"" + shape + "\" holds a non-integer", shape_at + p);
        }
        out.shape.push_back(v);
        if (out.shape.size() > static_cast<std::size_t>(kMaxNdim) * 4 ||
            format::mul_overflows(items, v, &items)) {
            bad("shape \"" + shape + "\" is too large", shape_at);
        }
    }
    if (format::mul_overflows(items, out.dtype.itemsize(), &out.nbytes)) {
        bad("shape \"" + shape + "\" is too large", shape_at);
    }
    return out;
}

std::vector<std::uint8_t> npy_header(const DType& dtype, const Shape& shape) {
    const std::string descr = dtype.npy_descr();
    std::string dict =
        "{'descr': " + descr + ", 'fortran_order': False, 'shape': " + to_string(shape) + ", }";
    // numpy.lib.format's spare room, so that the header can be rewritten in place when the
    // array grows along its first axis: 21 characters less the digits it has now. With it the
    // header is the one numpy.save writes, byte for byte.
    if (!shape.empty()) {
        const std::size_t digits = std::to_string(shape[0]).size();
        dict.append(digits < 21 ? 21 - digits : 0, ' ');
    }
    const bool v2 = dict.size() + 11 > 65535;
    const std::size_t prefix = v2 ? 12 : 10;
    const std::size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
    dict.append(total - prefix - dict.size() - 1, ' ');
    dict += '\n';
    std::vector<std::uint8_t> out(prefix);
    std::memcpy(out.data(), kMagic, 6);
    out[6] = v2 ? 2 : 1;
    out[7] = 0;
    if (v2) {
        format::store_le<std::uint32_t>(out.data() + 8, static_cast<std::uint32_t>(dict.size()));
    } else {
        format::store_le<std::uint16_t>(out.data() + 8, static_cast<std::uint16_t>(dict.size()));
    }
    out.insert(out.end(), dict.begin(), dict.end());
    return out;
}

NpyFile NpyFile::open(const std::string& path) {
    return open(path, storage::OpenOptions{});
}

NpyFile NpyFile::open(const std::string& path, const storage::OpenOptions& options) {
    NpyFile f;
    ByteSpan bytes;
    if (storage::is_url(path)) {
        const auto src = storage::open_source(path, options);
        storage::SourceBytes all = src->read(0, src->size());
        bytes = all.bytes;
        f.owner_ = all.owner ? std::move(all.owner) : std::shared_ptr<const void>(src);
    } else {
        auto map = storage::MappedFile::open(path);
        bytes = map->bytes();
        f.owner_ = std::move(map);
    }
    try {
        f.header_ = parse_npy_header(bytes);
    } catch (const FormatError& e) {
        rethrow_with_context(e, detail::quoted_path(path));
    }
    const auto avail = bytes.size() - f.header_.data_offset;
    if (static_cast<std::uint64_t>(f.header_.nbytes) > avail) {
        throw FormatError(detail::quoted_path(path) + ": .npy data of shape " +
                              to_string(f.header_.shape) + " needs " + num(f.header_.nbytes) +
                              " bytes; the file holds " + num(static_cast<std::int64_t>(avail)),
                          f.header_.data_offset);
    }
    f.data_ = bytes.subspan(f.header_.data_offset, static_cast<std::size_t>(f.header_.nbytes));
    return f;
}

namespace {

/// A file written under a temporary name and moved into place on commit() (publish.hpp): a
/// failed or killed export leaves what was there before.
class AtomicFile {
public:
    AtomicFile(const std::string& path, bool overwrite)
        : pub_(path, overwrite, detail::quoted_path(path), detail::OutputKind::npy) {
        f_ = std::fopen(pub_.temporary().c_str(), "wb");
        if (f_ == nullptr) {
            throw IoError(detail::quoted_path(path) + ": cannot create",
                          std::error_code(errno, std::generic_category()));
        }
    }
    ~AtomicFile() {
        if (f_ != nullptr) {
            std::fclose(f_);
        }
    }
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    std::FILE* stream() const noexcept { return f_; }
    void commit() {
        // Its bytes on disk before its name: a power loss leaves the old file or the new one.
        int rc = std::fflush(f_);
        if (rc == 0) {
            rc = ::fsync(::fileno(f_));
        }
        rc = std::fclose(f_) != 0 ? -1 : rc;
        f_ = nullptr;
        if (rc != 0) {
            throw IoError(detail::quoted_path(pub_.target()) + ": write failed",
                          std::error_code(errno, std::generic_category()));
        }
        pub_.publish(true);
    }

private:
    detail::Publication pub_;
    std::FILE* f_ = nullptr;
};

}  // namespace

struct NpySink::Impl {
    std::string name;
    std::unique_ptr<AtomicFile> file;  // a path's
    std::FILE* stream = nullptr;       // where bytes go
    std::int64_t expected = -1;        // data bytes the header promises (-1: no header yet)
    std::int64_t written = 0;
    bool finished = false;

    void put(const void* p, std::size_t n) {
        if (n != 0 && std::fwrite(p, 1, n, stream) != n) {
            throw IoError(detail::quoted_path(name) + ": write failed",
                          std::error_code(errno, std::generic_category()));
        }
    }
};

NpySink::NpySink(const std::string& path, bool overwrite) : impl_(std::make_unique<Impl>()) {
    impl_->name = path;
    impl_->file = std::make_unique<AtomicFile>(path, overwrite);
    impl_->stream = impl_->file->stream();
}

NpySink::NpySink(std::FILE* stream, const std::string& name) : impl_(std::make_unique<Impl>()) {
    impl_->name = name;
    impl_->stream = stream;
}

NpySink::~NpySink() = default;

void NpySink::begin(const DType& dtype, const Shape& shape) {
    if (impl_->expected >= 0) {
        throw UsageError(detail::quoted_path(impl_->name) + ": the .npy header is written once");
    }
    std::int64_t items = 1;
    for (const std::int64_t n : shape) {
        items = format::checked_mul<std::int64_t>(items, n, "npy shape");
    }
    impl_->expected = format::checked_mul<std::int64_t>(items, dtype.itemsize(), "npy size");
    const auto h = npy_header(dtype, shape);
    impl_->put(h.data(), h.size());
}

void NpySink::write(ByteSpan bytes) {
    Impl& s = *impl_;
    if (s.expected < 0 || s.written + static_cast<std::int64_t>(bytes.size()) > s.expected) {
        throw UsageError(detail::quoted_path(s.name) + ": " +
                         (s.expected < 0
                              ? std::string("data before the .npy header")
                              : "more data than the shape holds (" + num(s.expected) + " bytes)"));
    }
    s.put(bytes.data(), bytes.size());
    s.written += static_cast<std::int64_t>(bytes.size());
}

void NpySink::finish() {
    Impl& s = *impl_;
    if (s.expected < 0 || s.written != s.expected) {
        throw Error(detail::quoted_path(s.name) + ": " + num(s.written) +
                    " bytes of data written, " + num(std::max<std::int64_t>(s.expected, 0)) +
                    " expected");
    }
    if (s.file) {
        s.file->commit();
    } else if (std::fflush(s.stream) != 0) {
        throw IoError(detail::quoted_path(s.name) + ": write failed",
                      std::error_code(errno, std::generic_category()));
    }
    s.finished = true;
}

void write_npy(const std::string& path, const DType& dtype, const Shape& shape, ByteSpan data) {
    NpySink f(path);
    f.begin(dtype, shape);
    f.write(data);
    f.finish();
}

void export_npy(const AnyArray& a,
                const Box& box,
                const Shape& out_shape,
                NpySink& f,
                const NpyProgress& progress) {
    std::int64_t items = 1;
    for (std::int64_t v : out_shape) {
        items *= v;
    }
    if (items != box.size()) {
        throw UsageError("export_npy: result shape " + to_string(out_shape) +
                         " does not hold the " + num(box.size()) + " elements of " + box.str());
    }
    f.begin(a.dtype(), out_shape);
    if (box.size() > 0) {
        // Slabs along the first dimension, each about 64 MiB (at least one row).
        std::int64_t row = a.itemsize();
        for (int d = 1; d < box.ndim(); ++d) {
            row *= box.count[static_cast<std::size_t>(d)];
        }
        const std::int64_t rows = box.ndim() == 0 ? 1 : box.count[0];
        const std::int64_t per =
            std::max<std::int64_t>(1, (std::int64_t{64} << 20) / std::max<std::int64_t>(row, 1));
        std::vector<std::uint8_t> buf;
        for (std::int64_t r = 0; r < rows; r += per) {
            Box slab = box;
            if (box.ndim() > 0) {
                slab.start[0] = box.start[0] + r * box.step[0];
                slab.count[0] = std::min(per, rows - r);
            }
            buf.resize(static_cast<std::size_t>(slab.size() * a.itemsize()));
            a.read(slab, buf.data(), buf.size());
            f.write({buf.data(), buf.size()});
            if (progress) {
                progress((r + std::min(per, rows - r)) * row, rows * row);
            }
        }
    }
    f.finish();
}

void export_npy(const AnyArray& a,
                const Box& box,
                const Shape& out_shape,
                const std::string& path,
                const NpyProgress& progress) {
    NpySink f(path);
    export_npy(a, box, out_shape, f, progress);
}

void export_npy(const AnyArray& a, const Resolved& sel, NpySink& f, const NpyProgress& progress) {
    if (!sel.orthogonal()) {
        export_npy(a, sel.box, sel.shape, f, progress);
        return;
    }
    // C order over the lists is the result's order: slabs of the first dimension's list.
    f.begin(a.dtype(), sel.shape);
    if (sel.size() > 0) {
        std::int64_t row = a.itemsize();
        for (std::size_t d = 1; d < sel.lists.size(); ++d) {
            row *= static_cast<std::int64_t>(sel.lists[d].size());
        }
        const auto rows = static_cast<std::int64_t>(sel.lists[0].size());
        const std::int64_t per = std::max<std::int64_t>(1, (std::int64_t{64} << 20) / row);
        std::vector<std::vector<std::int64_t>> part = sel.lists;
        std::vector<std::uint8_t> buf;
        for (std::int64_t r = 0; r < rows; r += per) {
            const auto first = sel.lists[0].begin() + r;
            part[0].assign(first, first + std::min(per, rows - r));
            buf.resize(static_cast<std::size_t>(static_cast<std::int64_t>(part[0].size()) * row));
            Resolved slab;
            slab.lists = part;
            a.read(slab, buf.data(), buf.size());
            f.write({buf.data(), buf.size()});
            if (progress) {
                progress((r + static_cast<std::int64_t>(part[0].size())) * row, rows * row);
            }
        }
    }
    f.finish();
}

void export_npy(const AnyArray& a,
                const Resolved& sel,
                const std::string& path,
                const NpyProgress& progress) {
    NpySink f(path);
    export_npy(a, sel, f, progress);
}

void export_npy(const AnyArray& a, const Mask& mask, NpySink& f) {
    const auto n = static_cast<std::int64_t>(mask.count(a.nthreads()));
    if (mask.shape != a.shape()) {
        throw UsageError(detail::quoted_path(a.name()) + ": a mask of shape " +
                         to_string(mask.shape) + " for an array of shape " + to_string(a.shape()));
    }
    f.begin(a.dtype(), {n});
    a.read_masked(mask, [&](const std::uint8_t* p, std::int64_t k) {
        f.write({p, static_cast<std::size_t>(k * a.itemsize())});
    });
    f.finish();  // a mask that gave other counts on its two passes: an Error naming the file
}

void export_npy(const AnyArray& a, const Mask& mask, const std::string& path) {
    NpySink f(path);
    export_npy(a, mask, f);
}

namespace {

/// Rows [r, r + n) along the first axis of a Fortran-order array's `data` (shape `shape`), in C
/// order, into `out`.
void gather_fortran(ByteSpan data,
                    const Shape& shape,
                    std::int64_t itemsize,
                    std::int64_t r,
                    std::int64_t n,
                    std::uint8_t* out) {
    const std::size_t nd = shape.size();
    std::vector<std::int64_t> fstride(nd, 1), idx(nd, 0), count(shape);
    for (std::size_t d = 1; d < nd; ++d) {
        fstride[d] = fstride[d - 1] * shape[d - 1];
    }
    count[0] = n;
    idx[0] = r;
    std::int64_t total = n, off = r;  // off: the element's position in Fortran order
    for (std::size_t d = 1; d < nd; ++d) {
        total *= shape[d];
    }
    const auto isz = static_cast<std::size_t>(itemsize);
    for (std::int64_t e = 0; e < total; ++e) {
        std::memcpy(out + static_cast<std::size_t>(e) * isz,
                    data.data() + static_cast<std::size_t>(off) * isz, isz);
        for (std::size_t d = nd; d-- > 0;) {  // C order: the last axis fastest
            off += fstride[d];
            if (++idx[d] < (d == 0 ? r + n : count[d])) {
                break;
            }
            const std::int64_t first = d == 0 ? r : 0;
            off -= (idx[d] - first) * fstride[d];
            idx[d] = first;
        }
    }
}

}  // namespace

AnyArray import_npy(const std::string& npy_path,
                    const std::string& path,
                    const CreateOptions& options,
                    const NpyProgress& progress) {
    const NpyFile f = NpyFile::open(npy_path);
    const NpyHeader& h = f.header();
    const bool fortran = h.fortran_order && h.shape.size() > 1;  // 1-d: the same bytes
    if ((!progress && !fortran) || h.shape.empty()) {
        return AnyArray::create_from(path, h.dtype, h.shape, f.data(), options);
    }
    const std::int64_t rows = h.shape[0];
    std::int64_t row_bytes = h.dtype.itemsize();
    for (std::size_t d = 1; d < h.shape.size(); ++d) {
        row_bytes *= h.shape[d];
    }
    if (static_cast<std::int64_t>(f.data().size()) != rows * row_bytes) {
        throw FormatError(detail::quoted_path(npy_path) + ": holds " +
                          num(static_cast<std::int64_t>(f.data().size())) + " bytes of data for " +
                          num(rows * row_bytes));
    }
    // Slabs of whole chunk rows (each chunk written once, fresh), about 64 MiB each, into the
    // array before it is published (one state for readers, as create_from).
    CreateOptions o = options;
    o.fill = Fill::uninit;
    (void)detail::ArrayCore::create(
        path, h.dtype, h.shape, o, [&](const std::string& tmp, const OpenOptions& t) {
            AnyArray a = AnyArray::open(tmp, t);
            const std::int64_t crow = a.chunk_shape()[0];
            const std::int64_t per =
                crow * std::max<std::int64_t>(1, (std::int64_t{64} << 20) /
                                                     std::max<std::int64_t>(1, crow * row_bytes));
            std::vector<std::uint8_t> gathered;
            for (std::int64_t r = 0; r < rows; r += per) {
                const std::int64_t n = std::min(per, rows - r);
                Box slab = Box::whole(h.shape);
                slab.start[0] = r;
                slab.count[0] = n;
                if (fortran) {
                    // Fortran order: the slab's elements gathered into C order.
                    gathered.resize(static_cast<std::size_t>(n * row_bytes));
                    gather_fortran(f.data(), h.shape, h.dtype.itemsize(), r, n, gathered.data());
                    a.write(slab, {gathered.data(), gathered.size()});
                } else {
                    a.write(slab, f.data().subspan(static_cast<std::size_t>(r * row_bytes),
                                                   static_cast<std::size_t>(n * row_bytes)));
                }
                if (progress) {
                    progress((r + n) * row_bytes, rows * row_bytes);
                }
            }
        });
    return AnyArray::open(path, detail::opened_options(options));
}

}  // namespace b2nd
