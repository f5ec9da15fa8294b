// b2nd::Value parsed from JSON by hand (Value::from_json): the forms Value::to_json writes,
// tagged ones included, linear in the text's size, nesting bounded.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <b2nd/error.hpp>
#include <b2nd/value.hpp>

#include "../detail/text.hpp"
#include "value_detail.hpp"

namespace b2nd {

namespace {

class JsonParser {
public:
    explicit JsonParser(const std::string& t) : t_(t) {}

    Value document() {
        Value v = value(0);
        space();
        if (i_ != t_.size()) {
            fail("unexpected text after the value");
        }
        if (value_depth(v, 0) > detail::kValueMaxDepth) {
            i_ = 0;
            fail("the value is nested deeper than " + std::to_string(detail::kValueMaxDepth) +
                 " levels");
        }
        return v;
    }

private:
    // The text is never quoted: it may be a file's (Zarr metadata, a link to any file), and a
    // message must not carry what a file holds.
    [[noreturn]] void fail(const std::string& why) const {
        throw UsageError("JSON: " + why + " at character " + std::to_string(i_ + 1) + " of " +
                         std::to_string(t_.size()));
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
        if (depth > 3 * detail::kValueMaxDepth) {
            fail("nested deeper than " + std::to_string(detail::kValueMaxDepth) + " levels");
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
        if (m.size() == 1 && m[0].first.as<std::string>() == "$ref") {
            if (m[0].second.type() != Value::Type::map) {
                fail("\"$ref\" must be an object");
            }
            return Value::reference(m[0].second);
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
                    if (cp >= 0xd800 && cp < 0xdc00) {  // a pair: high, then low
                        if (!word("\\u")) {
                            fail("a \\u high surrogate without its low one");
                        }
                        const unsigned lo = hex4();
                        if (lo < 0xdc00 || lo >= 0xe000) {
                            fail("a \\u high surrogate without its low one");
                        }
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    } else if (cp >= 0xdc80 && cp < 0xdd00) {
                        // Python's surrogateescape, as to_json writes a byte that is not UTF-8:
                        // the byte itself.
                        s += static_cast<char>(cp & 0xff);
                        break;
                    } else if (cp >= 0xdc00 && cp < 0xe000) {
                        fail("a \\u low surrogate without its high one");
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

Value Value::from_json(const std::string& text) {
    return JsonParser(text).document();
}

}  // namespace b2nd
