// b2nd::Value: msgpack through msgpack-cxx (limits set from the input's size, so that a
// malformed length cannot make it allocate more than the bytes could hold), JSON by hand.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <b2nd/error.hpp>
#include <b2nd/value.hpp>

#include "../detail/strings.hpp"

#define MSGPACK_NO_BOOST 1
#include <msgpack.hpp>

namespace b2nd {

namespace {

constexpr std::size_t kMaxDepth = 256;

const Value::Array kNoArray;
const Value::Map kNoMap;
const Value::Bytes kNoBytes;

std::string hex(const std::uint8_t* p, std::size_t n) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    s.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return s;
}

Value from_object(const msgpack::object& o) {
    switch (o.type) {
        case msgpack::type::NIL:
            return {};
        case msgpack::type::BOOLEAN:
            return Value(o.via.boolean);
        case msgpack::type::POSITIVE_INTEGER:
            return Value(static_cast<std::uint64_t>(o.via.u64));
        case msgpack::type::NEGATIVE_INTEGER:
            return Value(static_cast<std::int64_t>(o.via.i64));
        case msgpack::type::FLOAT32:
        case msgpack::type::FLOAT64:
            return Value(o.via.f64);
        case msgpack::type::STR:
            return Value(std::string(o.via.str.ptr, o.via.str.size));
        case msgpack::type::BIN: {
            const auto* p = reinterpret_cast<const std::uint8_t*>(o.via.bin.ptr);
            return Value::binary(Value::Bytes(p, p + o.via.bin.size));
        }
        case msgpack::type::EXT: {
            const auto* p = reinterpret_cast<const std::uint8_t*>(o.via.ext.data());
            return Value::ext(o.via.ext.type(), Value::Bytes(p, p + o.via.ext.size));
        }
        case msgpack::type::ARRAY: {
            Value::Array a;
            a.reserve(o.via.array.size);
            for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
                a.push_back(from_object(o.via.array.ptr[i]));
            }
            return Value(std::move(a));
        }
        case msgpack::type::MAP: {
            Value::Map m;
            m.reserve(o.via.map.size);
            for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
                m.emplace_back(from_object(o.via.map.ptr[i].key),
                               from_object(o.via.map.ptr[i].val));
            }
            return Value::map(std::move(m));
        }
    }
    throw FormatError("unknown msgpack object type");
}

/// float64 as msgpack's 0xcb and 8 big-endian bytes, always (msgpack-cxx 4's pack_double writes
/// integral doubles as integers, which other readers then see as ints).
void pack_float64(msgpack::sbuffer& buf, double d) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &d, 8);
    char out[9];
    out[0] = static_cast<char>(0xcb);
    for (int i = 0; i < 8; ++i) {
        out[1 + i] = static_cast<char>((bits >> (56 - 8 * i)) & 0xff);
    }
    buf.write(out, sizeof out);
}

void pack_value(msgpack::sbuffer& buf, msgpack::packer<msgpack::sbuffer>& pk, const Value& v) {
    switch (v.type()) {
        case Value::Type::nil:
            pk.pack_nil();
            return;
        case Value::Type::boolean:
            if (v.as<bool>()) {
                pk.pack_true();
            } else {
                pk.pack_false();
            }
            return;
        case Value::Type::integer:
            if (v.is_negative()) {
                pk.pack_int64(v.as<std::int64_t>());
            } else {
                pk.pack_uint64(v.as<std::uint64_t>());
            }
            return;
        case Value::Type::real:
            pack_float64(buf, v.as<double>());
            return;
        case Value::Type::string: {
            const std::string& s = v.as<std::string>();
            pk.pack_str(static_cast<std::uint32_t>(s.size()));
            pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
            return;
        }
        case Value::Type::binary:
            pk.pack_bin(static_cast<std::uint32_t>(v.bytes().size()));
            pk.pack_bin_body(reinterpret_cast<const char*>(v.bytes().data()),
                             static_cast<std::uint32_t>(v.bytes().size()));
            return;
        case Value::Type::ext:
            pk.pack_ext(v.bytes().size(), v.ext_type());
            pk.pack_ext_body(reinterpret_cast<const char*>(v.bytes().data()),
                             static_cast<std::uint32_t>(v.bytes().size()));
            return;
        case Value::Type::array:
            pk.pack_array(static_cast<std::uint32_t>(v.size()));
            for (const Value& e : v.array()) {
                pack_value(buf, pk, e);
            }
            return;
        case Value::Type::map:
            pk.pack_map(static_cast<std::uint32_t>(v.size()));
            for (const auto& [k, e] : v.entries()) {
                pack_value(buf, pk, k);
                pack_value(buf, pk, e);
            }
            return;
    }
}

// ---- JSON ---------------------------------------------------------------------------------

void json_string(std::string& out, const std::string& s) {
    out += '"';
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
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
        return k != "$bytes" && k != "$float" && k != "$map";
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
/// (keys are never JSON text quoted again), and nesting stops at kMaxDepth.
void to_json(std::string& out, const Value& v, int indent, std::size_t level) {
    if (level > kMaxDepth) {
        throw UsageError("the value is nested deeper than " + std::to_string(kMaxDepth) +
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
            out += "{\"$bytes\": \"" + hex(v.bytes().data(), v.bytes().size()) + "\"}";
            return;
        case Value::Type::ext:
            out += "{\"$ext\": " + std::to_string(v.ext_type()) + ", \"$bytes\": \"" +
                   hex(v.bytes().data(), v.bytes().size()) + "\"}";
            return;
        case Value::Type::array:
            items('[', ']', v.size(),
                  [&](std::size_t i) { to_json(out, v.array()[i], indent, level + 1); });
            return;
        case Value::Type::map: {
            const Value::Map& m = v.entries();
            if (plain_object(m)) {
                items('{', '}', m.size(), [&](std::size_t i) {
                    json_string(out, m[i].first.as<std::string>());
                    out += ": ";
                    to_json(out, m[i].second, indent, level + 1);
                });
                return;
            }
            // {"$map": [[key, value], ...]}: any keys, in their order.
            out += "{\"$map\": ";
            items('[', ']', m.size(), [&](std::size_t i) {
                out += '[';
                to_json(out, m[i].first, -1, level + 1);
                out += ", ";
                to_json(out, m[i].second, -1, level + 1);
                out += ']';
            });
            out += '}';
            return;
        }
    }
}

class JsonParser {
public:
    explicit JsonParser(const std::string& t) : t_(t) {}

    Value document() {
        Value v = value(0);
        space();
        if (i_ != t_.size()) {
            fail("unexpected text after the value");
        }
        if (value_depth(v, 0) > kMaxDepth) {
            i_ = 0;
            fail("the value is nested deeper than " + std::to_string(kMaxDepth) + " levels");
        }
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw UsageError("JSON: " + why + " at character " + std::to_string(i_ + 1) + " of '" +
                         (t_.size() > 60 ? t_.substr(0, 60) + "..." : t_) + "'");
    }
    void space() {
        while (i_ < t_.size() &&
               (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) {
            ++i_;
        }
    }
    bool word(const char* w) {
        const std::size_t n = std::strlen(w);
        if (t_.compare(i_, n, w) == 0) {
            i_ += n;
            return true;
        }
        return false;
    }
    /// Levels of arrays and maps (the tagged forms take up to three JSON levels for one).
    static std::size_t value_depth(const Value& v, std::size_t level) {
        std::size_t d = level;
        if (v.type() == Value::Type::array) {
            for (const Value& e : v.array()) {
                d = std::max(d, value_depth(e, level + 1));
            }
        } else if (v.type() == Value::Type::map) {
            for (const auto& kv : v.entries()) {
                d = std::max(
                    {d, value_depth(kv.first, level + 1), value_depth(kv.second, level + 1)});
            }
        }
        return d;
    }

    Value value(std::size_t depth) {
        if (depth > 3 * kMaxDepth) {
            fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
        }
        space();
        if (i_ >= t_.size()) {
            fail("a value is missing");
        }
        const char c = t_[i_];
        if (c == '{') {
            return object(depth);
        }
        if (c == '[') {
            ++i_;
            Value::Array a;
            space();
            if (i_ < t_.size() && t_[i_] == ']') {
                ++i_;
                return Value(std::move(a));
            }
            for (;;) {
                a.push_back(value(depth + 1));
                space();
                if (i_ < t_.size() && t_[i_] == ',') {
                    ++i_;
                } else if (i_ < t_.size() && t_[i_] == ']') {
                    ++i_;
                    return Value(std::move(a));
                } else {
                    fail("',' or ']' expected");
                }
            }
        }
        if (c == '"') {
            return Value(string());
        }
        if (word("null")) {
            return {};
        }
        if (word("true")) {
            return Value(true);
        }
        if (word("false")) {
            return Value(false);
        }
        if (word("NaN")) {
            return Value(std::nan(""));
        }
        if (word("Infinity")) {
            return Value(HUGE_VAL);
        }
        if (word("-Infinity")) {
            return Value(-HUGE_VAL);
        }
        return number();
    }
    Value object(std::size_t depth) {
        ++i_;
        Value::Map m;
        space();
        if (i_ < t_.size() && t_[i_] == '}') {
            ++i_;
            return Value::map({});
        }
        for (;;) {
            space();
            if (i_ >= t_.size() || t_[i_] != '"') {
                fail("a string key expected");
            }
            std::string k = string();
            space();
            if (i_ >= t_.size() || t_[i_] != ':') {
                fail("':' expected");
            }
            ++i_;
            m.emplace_back(Value(std::move(k)), value(depth + 1));
            space();
            if (i_ < t_.size() && t_[i_] == ',') {
                ++i_;
            } else if (i_ < t_.size() && t_[i_] == '}') {
                ++i_;
                break;
            } else {
                fail("',' or '}' expected");
            }
        }
        // The forms to_json writes for bytes and ext values.
        auto bytes_of = [&](const Value& h) {
            if (h.type() != Value::Type::string || h.as<std::string>().size() % 2 != 0) {
                fail("\"$bytes\" must be a string of hex digit pairs");
            }
            const std::string& s = h.as<std::string>();
            Value::Bytes b;
            for (std::size_t k = 0; k < s.size(); k += 2) {
                const auto digit = [&](char d) {
                    if (d >= '0' && d <= '9') {
                        return d - '0';
                    }
                    if (d >= 'a' && d <= 'f') {
                        return d - 'a' + 10;
                    }
                    if (d >= 'A' && d <= 'F') {
                        return d - 'A' + 10;
                    }
                    fail("\"$bytes\" must be a string of hex digit pairs");
                };
                b.push_back(static_cast<std::uint8_t>(digit(s[k]) * 16 + digit(s[k + 1])));
            }
            return b;
        };
        if (m.size() == 1 && m[0].first.as<std::string>() == "$bytes") {
            return Value::binary(bytes_of(m[0].second));
        }
        if (m.size() == 1 && m[0].first.as<std::string>() == "$float") {
            const Value& f = m[0].second;
            const std::string name = f.type() == Value::Type::string ? f.as<std::string>() : "";
            if (name == "NaN") {
                return Value(std::nan(""));
            }
            if (name == "Infinity" || name == "-Infinity") {
                return Value(name[0] == '-' ? -HUGE_VAL : HUGE_VAL);
            }
            fail("\"$float\" must be \"NaN\", \"Infinity\" or \"-Infinity\"");
        }
        if (m.size() == 1 && m[0].first.as<std::string>() == "$map") {
            Value::Map pairs;
            const Value& list = m[0].second;
            if (list.type() != Value::Type::array) {
                fail("\"$map\" must be an array of [key, value] pairs");
            }
            for (const Value& kv : list.array()) {
                if (kv.type() != Value::Type::array || kv.size() != 2) {
                    fail("\"$map\" must be an array of [key, value] pairs");
                }
                pairs.emplace_back(kv[0], kv[1]);
            }
            return Value::map(std::move(pairs));
        }
        if (m.size() == 2 && m[0].first.as<std::string>() == "$ext" &&
            m[1].first.as<std::string>() == "$bytes") {
            if (m[0].second.type() != Value::Type::integer) {
                fail("\"$ext\" must be an integer type");
            }
            return Value::ext(m[0].second.as<std::int8_t>(), bytes_of(m[1].second));
        }
        return Value::map(std::move(m));
    }
    std::string string() {
        ++i_;  // the opening quote
        std::string s;
        while (i_ < t_.size() && t_[i_] != '"') {
            char c = t_[i_++];
            if (static_cast<unsigned char>(c) < 0x20) {
                fail("a control character in a string");
            }
            if (c != '\\') {
                s += c;
                continue;
            }
            if (i_ >= t_.size()) {
                break;
            }
            c = t_[i_++];
            switch (c) {
                case 'n':
                    s += '\n';
                    break;
                case 't':
                    s += '\t';
                    break;
                case 'r':
                    s += '\r';
                    break;
                case 'b':
                    s += '\b';
                    break;
                case 'f':
                    s += '\f';
                    break;
                case 'u': {
                    unsigned cp = hex4();
                    if (cp >= 0xd800 && cp < 0xdc00 && word("\\u")) {
                        const unsigned lo = hex4();
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    }
                    detail::append_utf8(s, cp);
                    break;
                }
                case '"':
                case '\\':
                case '/':
                    s += c;
                    break;
                default:
                    fail(std::string("unknown escape \\") + c);
            }
        }
        if (i_ >= t_.size()) {
            fail("unterminated string");
        }
        ++i_;
        return s;
    }
    unsigned hex4() {
        if (i_ + 4 > t_.size()) {
            fail("\\u needs 4 hex digits");
        }
        unsigned v = 0;
        for (int k = 0; k < 4; ++k) {
            const char d = t_[i_++];
            v <<= 4;
            if (d >= '0' && d <= '9') {
                v |= static_cast<unsigned>(d - '0');
            } else if (d >= 'a' && d <= 'f') {
                v |= static_cast<unsigned>(d - 'a' + 10);
            } else if (d >= 'A' && d <= 'F') {
                v |= static_cast<unsigned>(d - 'A' + 10);
            } else {
                fail("\\u needs 4 hex digits");
            }
        }
        return v;
    }
    Value number() {
        const std::size_t start = i_;
        if (i_ < t_.size() && t_[i_] == '-') {
            ++i_;
        }
        bool integral = true;
        while (i_ < t_.size()) {
            const char c = t_[i_];
            if (c >= '0' && c <= '9') {
                ++i_;
            } else if (c == '.' || c == 'e' || c == 'E' || c == '+' ||
                       (c == '-' && i_ > start + 1)) {
                integral = false;
                ++i_;
            } else {
                break;
            }
        }
        const std::string num = t_.substr(start, i_ - start);
        if (num.empty() || num == "-") {
            i_ = start;
            fail("a value expected");
        }
        errno = 0;
        char* end = nullptr;
        if (integral) {
            if (num[0] == '-') {
                const long long v = std::strtoll(num.c_str(), &end, 10);
                if (errno == 0 && *end == '\0') {
                    return Value(static_cast<std::int64_t>(v));
                }
            } else {
                const unsigned long long v = std::strtoull(num.c_str(), &end, 10);
                if (errno == 0 && *end == '\0') {
                    return Value(static_cast<std::uint64_t>(v));
                }
            }
            errno = 0;  // too large for 64 bits: a float, as Python's json would not do
        }
        const double d = std::strtod(num.c_str(), &end);
        if (*end != '\0') {
            i_ = start;
            fail("'" + num + "' is not a number");
        }
        return Value(d);
    }

    const std::string& t_;
    std::size_t i_ = 0;
};

}  // namespace

Value Value::binary(Bytes b) {
    Value v;
    v.type_ = Type::binary;
    v.bytes_ = std::make_shared<Bytes>(std::move(b));
    return v;
}

Value Value::map(Map m) {
    Value v;
    v.type_ = Type::map;
    v.map_ = std::make_shared<Map>(std::move(m));
    return v;
}

Value Value::ext(std::int8_t type, Bytes data) {
    Value v;
    v.type_ = Type::ext;
    v.int_ = type;
    v.bytes_ = std::make_shared<Bytes>(std::move(data));
    return v;
}

const char* Value::type_name() const noexcept {
    switch (type_) {
        case Type::nil:
            return "nil";
        case Type::boolean:
            return "bool";
        case Type::integer:
            return "integer";
        case Type::real:
            return "float";
        case Type::string:
            return "string";
        case Type::binary:
            return "bytes";
        case Type::array:
            return "array";
        case Type::map:
            return "map";
        case Type::ext:
            return "ext";
    }
    return "?";
}

void Value::mismatch(const char* want) const {
    // "an integer", "a string": the article of what was found and of what was wanted.
    const auto with_article = [](const std::string& what) {
        if (what == "bytes" || what == "nil") {
            return what;
        }
        return (std::string("aeiou").find(what[0]) != std::string::npos ? "an " : "a ") + what;
    };
    std::string shown;
    try {
        shown = to_json();
    } catch (const Error&) {
        shown = "...";
    }
    if (shown.size() > 40) {
        shown = shown.substr(0, 37) + "...";
    }
    throw UsageError("the value " + shown + " is " + with_article(type_name()) + ", not " +
                     with_article(want));
}

std::int64_t Value::int_value(std::int64_t lo, std::int64_t hi, const char* want) const {
    if (type_ != Type::integer) {
        mismatch(want);
    }
    if ((!negative_ && (int_ < 0 || int_ > hi)) || (negative_ && int_ < lo)) {
        throw UsageError("the value " + to_json() + " is out of the range [" + std::to_string(lo) +
                         ", " + std::to_string(hi) + "] of the type asked for");
    }
    return int_;
}

std::uint64_t Value::uint_value(std::uint64_t hi, const char* want) const {
    if (type_ != Type::integer) {
        mismatch(want);
    }
    const auto u = static_cast<std::uint64_t>(int_);
    if (negative_ || u > hi) {
        throw UsageError("the value " + to_json() + " is out of the range [0, " +
                         std::to_string(hi) + "] of the type asked for");
    }
    return u;
}

double Value::real_value() const {
    if (type_ == Type::real) {
        return real_;
    }
    if (type_ == Type::integer) {
        return negative_ ? static_cast<double>(int_)
                         : static_cast<double>(static_cast<std::uint64_t>(int_));
    }
    mismatch("float");
}

const Value& Value::operator[](std::size_t i) const {
    if (type_ != Type::array) {
        mismatch("array");
    }
    if (i >= array_->size()) {
        throw UsageError("index " + std::to_string(i) + " is out of an array of " +
                         std::to_string(array_->size()));
    }
    return (*array_)[i];
}

const Value& Value::operator[](const std::string& key) const {
    if (type_ != Type::map) {
        mismatch("map");
    }
    const Value* v = find(key);
    if (v == nullptr) {
        throw UsageError("the map has no key \"" + key + "\"");
    }
    return *v;
}

const Value* Value::find(const std::string& key) const noexcept {
    if (type_ != Type::map) {
        return nullptr;
    }
    for (const auto& [k, v] : *map_) {
        if (k.type_ == Type::string && k.str_ == key) {
            return &v;
        }
    }
    return nullptr;
}

std::size_t Value::size() const noexcept {
    if (type_ == Type::array) {
        return array_->size();
    }
    if (type_ == Type::map) {
        return map_->size();
    }
    return 0;
}

const Value::Array& Value::array() const {
    if (type_ != Type::array) {
        mismatch("array");
    }
    return *array_;
}

const Value::Map& Value::entries() const {
    if (type_ != Type::map) {
        mismatch("map");
    }
    return *map_;
}

const Value::Bytes& Value::bytes() const {
    if (type_ != Type::binary && type_ != Type::ext) {
        mismatch("bytes");
    }
    return *bytes_;
}

bool Value::operator==(const Value& o) const {
    if (type_ != o.type_) {
        return false;
    }
    switch (type_) {
        case Type::nil:
            return true;
        case Type::boolean:
            return int_ == o.int_;
        case Type::integer:
            return int_ == o.int_ && negative_ == o.negative_;
        case Type::real:
            return real_ == o.real_ || (std::isnan(real_) && std::isnan(o.real_));
        case Type::string:
            return str_ == o.str_;
        case Type::binary:
            return *bytes_ == *o.bytes_;
        case Type::ext:
            return int_ == o.int_ && *bytes_ == *o.bytes_;
        case Type::array:
            return *array_ == *o.array_;
        case Type::map:
            return *map_ == *o.map_;
    }
    return false;
}

std::vector<std::uint8_t> Value::to_msgpack() const {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pack_value(buf, pk, *this);
    const auto* p = reinterpret_cast<const std::uint8_t*>(buf.data());
    return {p, p + buf.size()};
}

Value Value::from_msgpack(ByteSpan bytes, const std::string& what) {
    if (bytes.empty()) {
        throw FormatError(what + ": empty (no msgpack value)");
    }
    // No count can exceed the bytes there are: each element takes at least one.
    const std::size_t n = bytes.size();
    const msgpack::unpack_limit limit(n, n / 2, n, n, n, kMaxDepth);
    std::size_t off = 0;
    msgpack::object_handle h;
    try {
        h = msgpack::unpack(reinterpret_cast<const char*>(bytes.data()), n, off, nullptr, nullptr,
                            limit);
    } catch (const std::exception& e) {
        throw FormatError(what + ": not a valid msgpack value (" + e.what() + ")");
    }
    if (off != n) {
        throw FormatError(what + ": " + std::to_string(n - off) +
                          " bytes follow its msgpack value");
    }
    return from_object(h.get());
}

std::string Value::to_json(int indent) const {
    if (type_ == Type::integer) {
        return negative_ ? std::to_string(int_) : std::to_string(static_cast<std::uint64_t>(int_));
    }
    std::string out;
    b2nd::to_json(out, *this, indent, 0);
    return out;
}

Value Value::from_json(const std::string& text) {
    return JsonParser(text).document();
}

}  // namespace b2nd
