// python-blosc2's Proxy layout (proxy_layout.hpp).
#include "proxy_layout.hpp"

#include <b2nd/error.hpp>

#include "../detail/text.hpp"

namespace b2nd::detail::proxy_layout {

bool owns(const std::string& name) {
    for (const char* n : {kSource, kBlockBits, kBlocksPerChunk, kChunkBits, kStamp, kIndex}) {
        if (name == n) {
            return true;
        }
    }
    return false;
}

Value source_for(const std::string& url) {
    return Value::map({{"local_abspath", nullptr},
                       {"urlpath", nullptr},
                       {"caterva2_env", nullptr},
                       {"url", url}});
}

std::optional<std::string> source_url(const Value& source) {
    const Value* url = source.type() == Value::Type::map ? source.find("url") : nullptr;
    if (url == nullptr || url->type() != Value::Type::string) {
        return std::nullopt;
    }
    return url->as<std::string>();
}

std::string describe(const Value& source) {
    if (const Value* p = source.find("local_abspath"); p != nullptr && !p->is_nil()) {
        return p->type() == Value::Type::string ? "'" + p->as<std::string>() + "'" : p->to_json();
    }
    if (const Value* u = source.find("urlpath"); u != nullptr && u->type() == Value::Type::array) {
        const Value::Array& a = u->array();
        const std::size_t skip = !a.empty() && a[0].type() == Value::Type::string &&
                                         a[0].as<std::string>() == "__tuple__"
                                     ? 1
                                     : 0;
        std::string s;
        for (std::size_t i = skip; i < a.size() && i < skip + 2; ++i) {
            s += (s.empty() ? "" : " at ") +
                 (a[i].type() == Value::Type::string ? a[i].as<std::string>() : a[i].to_json());
        }
        return "the remote array " + s;
    }
    if (const auto url = source_url(source)) {
        return *url;
    }
    return "an unnamed source";
}

std::vector<std::uint8_t> pack(const std::vector<bool>& bits) {
    std::vector<std::uint8_t> out((bits.size() + 7) / 8, 0);
    for (std::size_t k = 0; k < bits.size(); ++k) {
        if (bits[k]) {
            out[k / 8] = static_cast<std::uint8_t>(out[k / 8] | (1U << (k % 8)));
        }
    }
    return out;
}

namespace {

std::vector<bool> unpack(const std::vector<std::uint8_t>& bytes, std::size_t n) {
    std::vector<bool> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = ((bytes[i / 8] >> (i % 8)) & 1) != 0;
    }
    return out;
}

}  // namespace

std::optional<std::vector<bool>> fetched(const storage::Frame& f,
                                         std::int64_t nchunks,
                                         std::int64_t bpc,
                                         const std::string& where) {
    const auto vl = [&](const char* name) -> std::optional<Value> {
        const auto raw = f.vlmeta(name);
        if (!raw) {
            return std::nullopt;
        }
        return Value::from_msgpack({raw->data(), raw->size()}, where + ": vlmeta '" + name + "'");
    };
    const auto chunks = static_cast<std::size_t>(nchunks);
    const auto per = static_cast<std::size_t>(bpc);
    if (const auto blocks = vl(kBlockBits); blocks && blocks->type() == Value::Type::binary) {
        if (const auto stored = vl(kBlocksPerChunk);
            stored && (stored->type() != Value::Type::integer || stored->is_negative() ||
                       stored->as<std::int64_t>() != bpc)) {
            throw FormatError(where + ": proxy cache: vlmeta '" + kBlocksPerChunk + "' is " +
                              stored->to_json() + ", but its chunks hold " + num(bpc) + " blocks");
        }
        if (blocks->bytes().size() == (chunks * per + 7) / 8) {
            return unpack(blocks->bytes(), chunks * per);
        }
    }
    if (const auto bits = vl(kChunkBits);
        bits && bits->type() == Value::Type::binary && bits->bytes().size() == (chunks + 7) / 8) {
        const std::vector<bool> have = unpack(bits->bytes(), chunks);
        std::vector<bool> out(chunks * per);
        for (std::size_t c = 0; c < chunks; ++c) {
            for (std::size_t b = 0; b < per; ++b) {
                out[c * per + b] = have[c];
            }
        }
        return out;
    }
    return std::nullopt;
}

std::optional<Value> vlmeta_value(const storage::Frame& f, const char* name) {
    const auto raw = f.vlmeta(name);
    if (!raw) {
        return std::nullopt;
    }
    try {
        return Value::from_msgpack({raw->data(), raw->size()}, name);
    } catch (const FormatError&) {
        return std::nullopt;  // unreadable: as if absent (the cache starts empty)
    }
}

}  // namespace b2nd::detail::proxy_layout
