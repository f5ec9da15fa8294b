// A minimal JSON reader for test manifests (objects, arrays, strings, numbers, true/false/null).
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <b2nd/value.hpp>

namespace b2nd::test {

class Json {
public:
    enum class Kind { null, boolean, number, string, array, object };

    Kind kind() const { return kind_; }
    bool is_null() const { return kind_ == Kind::null; }
    bool as_bool() const { return expect(Kind::boolean).bool_; }
    double as_number() const { return expect(Kind::number).num_; }
    std::int64_t as_int() const { return static_cast<std::int64_t>(expect(Kind::number).num_); }
    const std::string& as_string() const { return expect(Kind::string).str_; }
    const std::vector<Json>& as_array() const { return expect(Kind::array).arr_; }
    const std::map<std::string, Json>& as_object() const { return expect(Kind::object).obj_; }
    bool has(const std::string& key) const { return kind_ == Kind::object && obj_.count(key) != 0; }
    const Json& operator[](const std::string& key) const {
        const auto& o = as_object();
        auto it = o.find(key);
        if (it == o.end()) {
            throw std::runtime_error("json: missing key " + key);
        }
        return it->second;
    }

    static Json parse(const std::string& text) {
        std::size_t pos = 0;
        Json v = parse_value(text, pos);
        skip_ws(text, pos);
        if (pos != text.size()) {
            throw std::runtime_error("json: trailing characters");
        }
        return v;
    }

private:
    const Json& expect(Kind k) const {
        if (kind_ != k) {
            throw std::runtime_error("json: unexpected value kind");
        }
        return *this;
    }

    static void skip_ws(const std::string& s, std::size_t& p) {
        while (p < s.size() && (s[p] == ' ' || s[p] == '\n' || s[p] == '\r' || s[p] == '\t')) {
            ++p;
        }
    }

    static Json parse_value(const std::string& s, std::size_t& p) {
        skip_ws(s, p);
        if (p >= s.size()) {
            throw std::runtime_error("json: unexpected end");
        }
        Json v;
        const char c = s[p];
        if (c == '{') {
            v.kind_ = Kind::object;
            ++p;
            skip_ws(s, p);
            if (p < s.size() && s[p] == '}') {
                ++p;
                return v;
            }
            for (;;) {
                skip_ws(s, p);
                std::string key = parse_string(s, p);
                skip_ws(s, p);
                if (p >= s.size() || s[p] != ':') {
                    throw std::runtime_error("json: expected ':'");
                }
                ++p;
                v.obj_[key] = parse_value(s, p);
                skip_ws(s, p);
                if (p < s.size() && s[p] == ',') {
                    ++p;
                    continue;
                }
                if (p < s.size() && s[p] == '}') {
                    ++p;
                    return v;
                }
                throw std::runtime_error("json: expected ',' or '}'");
            }
        }
        if (c == '[') {
            v.kind_ = Kind::array;
            ++p;
            skip_ws(s, p);
            if (p < s.size() && s[p] == ']') {
                ++p;
                return v;
            }
            for (;;) {
                v.arr_.push_back(parse_value(s, p));
                skip_ws(s, p);
                if (p < s.size() && s[p] == ',') {
                    ++p;
                    continue;
                }
                if (p < s.size() && s[p] == ']') {
                    ++p;
                    return v;
                }
                throw std::runtime_error("json: expected ',' or ']'");
            }
        }
        if (c == '"') {
            v.kind_ = Kind::string;
            v.str_ = parse_string(s, p);
            return v;
        }
        if (s.compare(p, 4, "true") == 0) {
            v.kind_ = Kind::boolean;
            v.bool_ = true;
            p += 4;
            return v;
        }
        if (s.compare(p, 5, "false") == 0) {
            v.kind_ = Kind::boolean;
            p += 5;
            return v;
        }
        if (s.compare(p, 4, "null") == 0) {
            p += 4;
            return v;
        }
        std::size_t used = 0;
        v.num_ = std::stod(s.substr(p, 40), &used);
        v.kind_ = Kind::number;
        p += used;
        return v;
    }

    static std::string parse_string(const std::string& s, std::size_t& p) {
        if (p >= s.size() || s[p] != '"') {
            throw std::runtime_error("json: expected string");
        }
        ++p;
        std::string out;
        while (p < s.size() && s[p] != '"') {
            char c = s[p++];
            if (c == '\\' && p < s.size()) {
                const char e = s[p++];
                switch (e) {
                    case 'n':
                        out += '\n';
                        break;
                    case 't':
                        out += '\t';
                        break;
                    case 'r':
                        out += '\r';
                        break;
                    case 'b':
                        out += '\b';
                        break;
                    case 'f':
                        out += '\f';
                        break;
                    case 'u': {
                        const unsigned code =
                            static_cast<unsigned>(std::stoul(s.substr(p, 4), nullptr, 16));
                        p += 4;
                        if (code < 0x80) {
                            out += static_cast<char>(code);
                        } else if (code < 0x800) {
                            out += static_cast<char>(0xC0 | (code >> 6));
                            out += static_cast<char>(0x80 | (code & 0x3F));
                        } else {
                            out += static_cast<char>(0xE0 | (code >> 12));
                            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
                            out += static_cast<char>(0x80 | (code & 0x3F));
                        }
                        break;
                    }
                    default:
                        out += e;
                        break;
                }
            } else {
                out += c;
            }
        }
        if (p >= s.size()) {
            throw std::runtime_error("json: unterminated string");
        }
        ++p;
        return out;
    }

    Kind kind_ = Kind::null;
    bool bool_ = false;
    double num_ = 0;
    std::string str_;
    std::vector<Json> arr_;
    std::map<std::string, Json> obj_;
};

/// Parses a JSON file (a corpus manifest).
inline Json load_json_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        throw std::runtime_error("cannot open " + path);
    }
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return Json::parse(text);
}

/// JSON text of a parsed value (strings with \" and \\ escaped only: the manifests' texts).
inline std::string json_text(const Json& j) {
    switch (j.kind()) {
        case Json::Kind::null:
            return "null";
        case Json::Kind::boolean:
            return j.as_bool() ? "true" : "false";
        case Json::Kind::number: {
            const double d = j.as_number();
            if (d == static_cast<double>(static_cast<std::int64_t>(d))) {
                return std::to_string(static_cast<std::int64_t>(d));
            }
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.17g", d);
            return buf;
        }
        case Json::Kind::string: {
            std::string s = "\"";
            for (const char c : j.as_string()) {
                if (c == '"' || c == '\\') {
                    s += '\\';
                }
                s += c;
            }
            return s + "\"";
        }
        case Json::Kind::array: {
            std::string s = "[";
            for (const Json& e : j.as_array()) {
                s += (s.size() > 1 ? ", " : "") + json_text(e);
            }
            return s + "]";
        }
        case Json::Kind::object: {
            std::string s = "{";
            for (const auto& [k, e] : j.as_object()) {
                s += (s.size() > 1 ? ", \"" : "\"") + k + "\": " + json_text(e);
            }
            return s + "}";
        }
    }
    return "null";
}

/// Whether a decoded value is what the test's own JSON reader makes of the manifest's meaning.
inline bool same_value(const b2nd::Value& v, const Json& j) {
    switch (j.kind()) {
        case Json::Kind::null:
            return v.is_nil();
        case Json::Kind::boolean:
            return v.type() == b2nd::Value::Type::boolean && v.as<bool>() == j.as_bool();
        case Json::Kind::number:
            return (v.type() == b2nd::Value::Type::integer ||
                    v.type() == b2nd::Value::Type::real) &&
                   v.as<double>() == j.as_number();
        case Json::Kind::string:
            return v.type() == b2nd::Value::Type::string && v.as<std::string>() == j.as_string();
        case Json::Kind::array: {
            if (v.type() != b2nd::Value::Type::array || v.size() != j.as_array().size()) {
                return false;
            }
            for (std::size_t i = 0; i < v.size(); ++i) {
                if (!same_value(v[i], j.as_array()[i])) {
                    return false;
                }
            }
            return true;
        }
        case Json::Kind::object: {
            if (v.type() != b2nd::Value::Type::map || v.size() != j.as_object().size()) {
                return false;
            }
            for (const auto& [k, e] : j.as_object()) {
                const b2nd::Value* x = v.find(k);
                if (x == nullptr || !same_value(*x, e)) {
                    return false;
                }
            }
            return true;
        }
    }
    return false;
}

}  // namespace b2nd::test
