#include <string>

#include <b2nd/error.hpp>
#include <b2nd/format/b2nd_meta.hpp>
#include <b2nd/format/byte_reader.hpp>
#include <b2nd/format/byte_writer.hpp>
#include <b2nd/format/msgpack.hpp>

#include "../detail/text.hpp"

namespace b2nd::format {

using b2nd::detail::num;

namespace {

/// The array marker c-blosc2 writes for n entries (0x90 + n, which is 0xa0 for n = 16).
std::uint8_t array_marker(std::size_t n) {
    return static_cast<std::uint8_t>(msgpack::kFixArray + n);
}

void read_array_marker(ByteReader& r, std::size_t n, const char* field) {
    r.expect_marker(array_marker(n), field);
}

}  // namespace

B2ndMeta read_b2nd_meta(ByteSpan bytes) {
    ByteReader r(bytes);
    B2ndMeta m;
    const std::uint8_t top = r.u8("b2nd meta");
    if (top != (msgpack::kFixArray | 7) && top != (msgpack::kFixArray | 5)) {
        r.fail("b2nd meta: expected a fixarray of 7 (b2nd) or 5 (caterva), got " + hex_byte(top),
               0);
    }
    m.has_dtype = top == (msgpack::kFixArray | 7);
    m.version = r.u8("b2nd meta version");
    if (m.version > 127) {
        r.fail("b2nd meta: version " + hex_byte(m.version) + " is not a positive fixint", 1);
    }
    const std::uint8_t ndim = r.u8("b2nd meta ndim");
    if (ndim > kMaxDim) {
        r.fail("b2nd meta: ndim " + num(ndim) + " exceeds the maximum of " + num(kMaxDim), 2);
    }
    read_array_marker(r, ndim, "b2nd meta shape");
    for (std::size_t d = 0; d < ndim; ++d) {
        const std::string f = "shape[" + num(static_cast<std::int64_t>(d)) + "]";
        r.expect_marker(msgpack::kInt64, ("b2nd meta: " + f).c_str());
        const std::size_t at = r.position();
        const auto v = r.read_be<std::int64_t>(("b2nd meta: " + f).c_str());
        if (v < 0) {
            r.fail("b2nd meta: " + f + " is negative (" + num(v) + ")", at);
        }
        m.shape.push_back(v);
    }
    for (auto* dims : {&m.chunk_shape, &m.block_shape}) {
        const char* name = dims == &m.chunk_shape ? "chunkshape" : "blockshape";
        read_array_marker(r, ndim, (std::string("b2nd meta ") + name).c_str());
        for (std::size_t d = 0; d < ndim; ++d) {
            const std::string f = std::string(name) + "[" + num(static_cast<std::int64_t>(d)) + "]";
            r.expect_marker(msgpack::kInt32, ("b2nd meta: " + f).c_str());
            const std::size_t at = r.position();
            const auto v = r.read_be<std::int32_t>(("b2nd meta: " + f).c_str());
            if (v < 0) {
                r.fail("b2nd meta: " + f + " is negative (" + num(v) + ")", at);
            }
            dims->push_back(v);
        }
    }
    if (m.has_dtype) {
        m.dtype_format = r.u8("b2nd meta dtype_format");
        if (m.dtype_format > 127) {
            r.fail("b2nd meta: dtype_format " + hex_byte(m.dtype_format) +
                   " is not a positive fixint");
        }
        r.expect_marker(msgpack::kStr32, "b2nd meta dtype");
        const std::size_t at = r.position();
        const auto len = r.read_be<std::int32_t>("b2nd meta dtype length");
        if (len < 0) {
            r.fail("b2nd meta: negative dtype length " + num(len), at);
        }
        const ByteSpan s = r.take(static_cast<std::size_t>(len), "b2nd meta dtype");
        m.dtype.assign(reinterpret_cast<const char*>(s.data()), s.size());
    }
    return m;
}

std::vector<std::uint8_t> write_b2nd_meta(const B2ndMeta& m) {
    const std::size_t ndim = m.shape.size();
    if (ndim > kMaxDim || m.chunk_shape.size() != ndim || m.block_shape.size() != ndim) {
        throw UsageError(
            "b2nd meta: shape, chunkshape and blockshape need the same ndim (at most 16)");
    }
    std::vector<std::uint8_t> out;
    ByteWriter w(out);
    w.u8(static_cast<std::uint8_t>(msgpack::kFixArray | (m.has_dtype ? 7 : 5)));
    w.u8(m.version);
    w.u8(static_cast<std::uint8_t>(ndim));
    w.u8(array_marker(ndim));
    for (std::int64_t v : m.shape) {
        msgpack::write_int64(w, v);
    }
    for (const auto* dims : {&m.chunk_shape, &m.block_shape}) {
        w.u8(array_marker(ndim));
        for (std::int32_t v : *dims) {
            msgpack::write_int32(w, v);
        }
    }
    if (m.has_dtype) {
        w.u8(m.dtype_format);
        w.u8(msgpack::kStr32);
        w.write_be(static_cast<std::int32_t>(m.dtype.size()));
        w.bytes({reinterpret_cast<const std::uint8_t*>(m.dtype.data()), m.dtype.size()});
    }
    return out;
}

}  // namespace b2nd::format
