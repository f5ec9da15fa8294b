// b2nd::Value written as JSON by hand: strict output, linear in the value's size (tagged forms
// for what JSON cannot say), nesting bounded. Parsing: value_json_parse.cpp.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <b2nd/error.hpp>
#include <b2nd/format/b2nd_meta.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/value.hpp>

#include "../detail/text.hpp"
#include "value_detail.hpp"

namespace b2nd {

namespace {

void json_string(std::string& out, const std::string& s) {
    out += '"';
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x80) {
            // A UTF-8 sequence is copied whole; a byte that starts none (a file name that is
            // not UTF-8) becomes \udcXX, Python's surrogateescape: valid JSON, and
            // os.fsencode(json.loads(...)) gives the bytes back.
            std::size_t len = u >= 0xf0 ? 4 : u >= 0xe0 ? 3 : 2;
            std::size_t bad = 0;
            const bool ok =
                i + len <= s.size() && detail::utf8_decode(s.substr(i, len), nullptr, &bad) == 1;
            if (ok) {
                out.append(s, i, len);
                i += len - 1;
            } else {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\udc%02x", p[i]);
                out += buf;
            }
        } else if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (u < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", u);
            out += buf;
        } else {
            out += c;
        }
    }
    out += '"';
}

void newline(std::string& out, int indent, std::size_t level) {
    if (indent >= 0) {
        out += '\n';
        out.append(static_cast<std::size_t>(indent) * level, ' ');
    }
}

/// Whether a map can be written as a JSON object: string keys only, and not mistakable for one
/// of the tagged forms ({"$bytes"}, {"$ext", "$bytes"}, {"$float"}, {"$map"}) that stand for
/// other values.
bool plain_object(const Value::Map& m) {
    for (const auto& kv : m) {
        if (kv.first.type() != Value::Type::string) {
            return false;
        }
    }
    if (m.size() == 1) {
        const std::string& k = m[0].first.as<std::string>();
        return k != "$bytes" && k != "$float" && k != "$map" && k != "$ref" && k != "$blosc2";
    }
    return !(m.size() == 2 && m[0].first.as<std::string>() == "$ext" &&
             m[1].first.as<std::string>() == "$bytes");
}

/// The shortest text that reads back as the same double ("2.0", not "2"; "1000.0", not "1e+03").
void json_number(std::string& out, double d) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    for (int prec = 1; prec <= 17; ++prec) {
        char b2[40];
        std::snprintf(b2, sizeof b2, "%.*g", prec, d);
        if (std::strtod(b2, nullptr) == d) {
            std::memcpy(buf, b2, sizeof buf);
            break;
        }
    }
    std::string s = buf;
    if (s.find('e') != std::string::npos && std::fabs(d) >= 1e-4 && std::fabs(d) < 1e16) {
        std::snprintf(buf, sizeof buf, "%.17g", d);
        s = buf;
    }
    if (s.find_first_of(".eE") == std::string::npos) {
        s += ".0";  // stays a float when read back
    }
    out += s;
}

/// Strict JSON, linear in the value's size: every byte of output stands for bytes of the value
/// (keys are never JSON text quoted again), and nesting stops at detail::kValueMaxDepth.
/// What an ext 42 value's frame holds, for {"$blosc2": ...}: its array's shape, dtype, chunks
/// and blocks (a super-chunk: its typesize and nbytes); {"error": why} when it is not a frame.
Value blosc2_summary(const Value::Bytes& b) {
    try {
        const storage::Frame f = storage::Frame::open(
            storage::memory_source({b.data(), b.size()}, nullptr, "msgpack ext 42 value"));
        const auto shape_value = [](const auto& v) {
            Value::Array a;
            for (auto x : v) {
                a.emplace_back(static_cast<std::int64_t>(x));
            }
            return Value(std::move(a));
        };
        Value::Map m;
        const format::Metalayer* meta = f.metalayer("b2nd");
        if (meta == nullptr) {
            meta = f.metalayer("caterva");
        }
        if (meta != nullptr) {
            const format::B2ndMeta bm =
                format::read_b2nd_meta({meta->content.data(), meta->content.size()});
            m.emplace_back("shape", shape_value(bm.shape));
            m.emplace_back("dtype", bm.has_dtype ? Value(bm.dtype) : Value());
            m.emplace_back("chunks", shape_value(bm.chunk_shape));
            m.emplace_back("blocks", shape_value(bm.block_shape));
        } else {
            m.emplace_back("kind", "schunk");
            m.emplace_back("typesize", static_cast<std::int64_t>(f.header().typesize));
            m.emplace_back("nbytes", static_cast<std::int64_t>(f.header().nbytes));
        }
        m.emplace_back("cbytes", static_cast<std::int64_t>(b.size()));
        return Value::map(std::move(m));
    } catch (const Error& e) {
        return Value::map({{"error", std::string(e.what())}});
    }
}

void to_json(std::string& out, const Value& v, int indent, std::size_t level, bool python);

void to_json(std::string& out, const Value& v, int indent, std::size_t level) {
    to_json(out, v, indent, level, false);
}

void to_json(std::string& out, const Value& v, int indent, std::size_t level, bool python) {
    if (level > detail::kValueMaxDepth) {
        throw UsageError("the value is nested deeper than " +
                         std::to_string(detail::kValueMaxDepth) +
                         " levels; JSON output stops there");
    }
    const auto items = [&](char open, char close, std::size_t n, const auto& each) {
        out += open;
        for (std::size_t i = 0; i < n; ++i) {
            out += i == 0 ? "" : (indent < 0 ? ", " : ",");
            newline(out, indent, level + 1);
            each(i);
        }
        if (n > 0) {
            newline(out, indent, level);
        }
        out += close;
    };
    switch (v.type()) {
        case Value::Type::nil:
            out += "null";
            return;
        case Value::Type::boolean:
            out += v.as<bool>() ? "true" : "false";
            return;
        case Value::Type::integer:
            out += v.to_json();
            return;
        case Value::Type::real: {
            const double d = v.as<double>();
            if (std::isfinite(d)) {
                json_number(out, d);
            } else {
                out += std::isnan(d)
                           ? R"({"$float": "NaN"})"
                           : (d > 0 ? R"({"$float": "Infinity"})" : R"({"$float": "-Infinity"})");
            }
            return;
        }
        case Value::Type::string:
            json_string(out, v.as<std::string>());
            return;
        case Value::Type::binary:
            out +=
                "{\"$bytes\": \"" + detail::hex_digits(v.bytes().data(), v.bytes().size()) + "\"}";
            return;
        case Value::Type::ext:
            if (python && v.is_reference()) {
                try {
                    const Value r = v.reference();
                    out += "{\"$ref\": ";
                    to_json(out, r, indent, level + 1, python);
                    out += '}';
                    return;
                } catch (const FormatError&) {
                    // not msgpack: the generic form below
                }
            }
            if (python && v.is_blosc2_object()) {
                out += "{\"$blosc2\": ";
                to_json(out, blosc2_summary(v.bytes()), indent, level + 1, python);
                out += '}';
                return;
            }
            out += "{\"$ext\": " + std::to_string(v.ext_type()) + ", \"$bytes\": \"" +
                   detail::hex_digits(v.bytes().data(), v.bytes().size()) + "\"}";
            return;
        case Value::Type::array:
            if (python && v.is_tuple()) {
                items('[', ']', v.size() - 1, [&](std::size_t i) {
                    to_json(out, v.array()[i + 1], indent, level + 1, python);
                });
                return;
            }
            items('[', ']', v.size(),
                  [&](std::size_t i) { to_json(out, v.array()[i], indent, level + 1, python); });
            return;
        case Value::Type::map: {
            const Value::Map& m = v.entries();
            if (plain_object(m)) {
                items('{', '}', m.size(), [&](std::size_t i) {
                    json_string(out, m[i].first.as<std::string>());
                    out += ": ";
                    to_json(out, m[i].second, indent, level + 1, python);
                });
                return;
            }
            // {"$map": [[key, value], ...]}: any keys, in their order.
            out += "{\"$map\": ";
            items('[', ']', m.size(), [&](std::size_t i) {
                out += '[';
                to_json(out, m[i].first, -1, level + 1, python);
                out += ", ";
                to_json(out, m[i].second, -1, level + 1, python);
                out += ']';
            });
            out += '}';
            return;
        }
    }
}

}  // namespace

std::string Value::to_json(int indent) const {
    if (type_ == Type::integer) {
        return negative_ ? std::to_string(int_) : std::to_string(static_cast<std::uint64_t>(int_));
    }
    std::string out;
    b2nd::to_json(out, *this, indent, 0);
    return out;
}

std::string Value::to_python_json(int indent) const {
    std::string out;
    b2nd::to_json(out, *this, indent, 0, true);
    return out;
}

}  // namespace b2nd
