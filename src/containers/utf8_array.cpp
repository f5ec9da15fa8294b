// python-blosc2's UTF8Array: int64 offsets + uint8 bytes (containers.hpp).
#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include <b2nd/containers.hpp>
#include <b2nd/error.hpp>
#include <b2nd/store.hpp>

#include "../detail/text.hpp"
#include "containers_detail.hpp"

namespace b2nd {

using detail::num;
namespace fs = std::filesystem;

namespace {

/// python's grid for a UTF8Array's backing arrays (_utf8_array.py: _OFFSETS_CHUNKS,
/// _DATA_CHUNKS); the blocks are what its compute_chunks_blocks gives on the reference CPU of
/// the records corpus (256 KiB blocks).
constexpr std::int64_t kOffsetsChunk = std::int64_t{1} << 17;
constexpr std::int64_t kOffsetsBlock = std::int64_t{1} << 15;
constexpr std::int64_t kBytesChunk = std::int64_t{1} << 21;
constexpr std::int64_t kBytesBlock = std::int64_t{1} << 18;

void check_pair(const AnyArray& offsets, const AnyArray& bytes) {
    const DType& o = offsets.dtype();
    if (offsets.ndim() != 1 || o.kind() != DType::Kind::int_ || o.itemsize() != 8) {
        throw FormatError(offsets.path() +
                          ": a UTF8Array's offsets must be a 1-d int64 array, not " + o.str() +
                          " of " + num(offsets.ndim()) + " dimensions");
    }
    if (offsets.size() < 1) {
        throw FormatError(offsets.path() +
                          ": a UTF8Array's offsets hold n + 1 entries; this array is empty");
    }
    const DType& b = bytes.dtype();
    if (bytes.ndim() != 1 || b.itemsize() != 1 ||
        (b.kind() != DType::Kind::uint && b.kind() != DType::Kind::int_)) {
        throw FormatError(bytes.path() + ": a UTF8Array's bytes must be a 1-d uint8 array, not " +
                          b.str() + " of " + num(bytes.ndim()) + " dimensions");
    }
}

}  // namespace

Strings::Strings(std::string bytes, std::vector<std::int64_t> ends)
    : bytes_(std::move(bytes)), ends_(std::move(ends)) {}

std::vector<std::string> Strings::to_vector() const {
    std::vector<std::string> out;
    out.reserve(size());
    for (std::size_t i = 0; i < size(); ++i) {
        out.emplace_back((*this)[i]);
    }
    return out;
}

std::string UTF8Array::bytes_path_for(const std::string& offsets_path) {
    fs::path p(offsets_path);
    while (!p.empty() && p.filename().empty()) {
        p = p.parent_path();  // a trailing slash
    }
    const std::string stem = p.extension() == ".b2nd" ? p.stem().string() : p.filename().string();
    return (p.parent_path() / (stem + ".utf8.b2nd")).string();
}

UTF8Array UTF8Array::open(const std::string& offsets_path, const OpenOptions& o) {
    return open(offsets_path, bytes_path_for(offsets_path), o);
}

UTF8Array UTF8Array::open(const std::string& offsets_path,
                          const std::string& bytes_path,
                          const OpenOptions& o) {
    if (!fs::exists(bytes_path)) {
        throw IoError(offsets_path + ": a UTF8Array keeps its bytes beside its offsets, in " +
                          bytes_path + ", which does not exist",
                      std::make_error_code(std::errc::no_such_file_or_directory));
    }
    return from_arrays(AnyArray::open(offsets_path, o), AnyArray::open(bytes_path, o));
}

UTF8Array UTF8Array::open(const Store& store, const std::string& key, const OpenOptions& o) {
    if (store.find(key + ".utf8") == nullptr) {
        throw FormatError(store.path() + ":" + key + ": a utf8 column keeps its bytes at " + key +
                          ".utf8, which the store does not hold");
    }
    return from_arrays(store.open_array(key, o), store.open_array(key + ".utf8", o));
}

UTF8Array UTF8Array::from_arrays(AnyArray offsets, AnyArray bytes) {
    check_pair(offsets, bytes);
    UTF8Array a;
    a.offsets_ = std::move(offsets);
    a.bytes_ = std::move(bytes);
    return a;
}

std::string UTF8Array::where() const {
    return offsets_.path();
}

std::int64_t UTF8Array::size() const {
    if (!offsets_) {
        return 0;
    }
    return offsets_.size() - 1;
}

Strings UTF8Array::read(std::int64_t start, std::int64_t stop) const {
    const std::int64_t n = size();
    start = std::clamp<std::int64_t>(start, 0, n);
    stop = std::clamp<std::int64_t>(stop, start, n);
    const std::int64_t count = stop - start;
    if (count == 0) {
        return {};
    }
    const std::vector<std::int64_t> off =
        detail::read_int64s(offsets_, start, count + 1, "UTF8Array offsets");
    const std::int64_t limit = bytes_.size();
    if (start == 0 && off[0] != 0) {
        throw FormatError(where() + ": UTF8Array offsets[0] is " + num(off[0]) + ", not 0");
    }
    for (std::int64_t i = 0; i <= count; ++i) {
        const auto k = static_cast<std::size_t>(i);
        if (off[k] < 0 || off[k] > limit) {
            throw FormatError(where() + ": UTF8Array offsets[" + num(start + i) +
                              "] = " + num(off[k]) + " points outside the " + num(limit) +
                              " bytes of " + bytes_.path());
        }
        if (i > 0 && off[k] < off[k - 1]) {
            throw FormatError(where() + ": UTF8Array offsets go back at entry " + num(start + i) +
                              " (" + num(off[k - 1]) + " then " + num(off[k]) + ")");
        }
    }
    std::string text;
    const std::int64_t nbytes = off.back() - off.front();
    if (nbytes > 0) {
        detail::require_memory(bytes_, static_cast<std::uint64_t>(nbytes), "read");
        text.resize(static_cast<std::size_t>(nbytes));
        bytes_.read(Box::region({off.front()}, {nbytes}), text.data(), text.size());
    }
    std::vector<std::int64_t> ends(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < ends.size(); ++i) {
        ends[i] = off[i + 1] - off.front();
    }
    return Strings(std::move(text), std::move(ends));
}

std::string UTF8Array::at(std::int64_t i) const {
    const std::int64_t n = size();
    const std::int64_t k = i < 0 ? i + n : i;
    if (k < 0 || k >= n) {
        throw UsageError(where() + ": string " + num(i) + " is out of range for a UTF8Array of " +
                         num(n));
    }
    return std::string(read(k, k + 1)[0]);
}

UTF8Array UTF8Array::write(const std::string& offsets_path,
                           const std::vector<std::string>& strings,
                           const CompressionParams& cparams,
                           bool overwrite) {
    std::vector<std::int64_t> off;
    off.reserve(strings.size() + 1);
    off.push_back(0);
    std::string text;
    for (const std::string& s : strings) {
        text += s;
        off.push_back(static_cast<std::int64_t>(text.size()));
    }
    if (text.empty()) {
        text.push_back('\0');  // python's one slack byte: the bytes array is never empty
    }
    CreateOptions oo;
    oo.compression = cparams;
    oo.overwrite = overwrite;
    oo.chunk_shape = {kOffsetsChunk};
    oo.block_shape = {kOffsetsBlock};
    CreateOptions bo = oo;
    bo.chunk_shape = {kBytesChunk};
    bo.block_shape = {kBytesBlock};
    const std::string bytes_path = bytes_path_for(offsets_path);
    detail::native_to_little(off);
    // The bytes first: a reader that finds the offsets finds bytes they fit.
    AnyArray::create_from(bytes_path, DType::parse("|u1"), {static_cast<std::int64_t>(text.size())},
                          ByteSpan(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()),
                          bo);
    AnyArray::create_from(
        offsets_path, DType::parse("<i8"), {static_cast<std::int64_t>(off.size())},
        ByteSpan(reinterpret_cast<const std::uint8_t*>(off.data()), off.size() * 8), oo);
    return open(offsets_path, bytes_path);
}

}  // namespace b2nd
