// NumPy dtype strings: a small recursive-descent parser for dtype.str and the Python literal
// forms NumPy prints for structured dtypes (a list of (name, format[, shape]) tuples, or a dict
// of names/formats/offsets/itemsize[/aligned]).
#include <algorithm>
#include <cctype>
#include <numeric>

#include <b2nd/dtype.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>

#include "../detail/text.hpp"
#include "dtype_detail.hpp"

namespace b2nd {

using detail::num;

namespace {

constexpr std::int64_t kMaxItemsize = 0x7fffffff;

class Parser {
public:
    explicit Parser(std::string_view s) : s_(s) {}

    DType parse_top() {
        DType d = parse_any();
        skip_ws();
        if (pos_ != s_.size()) {
            fail("unexpected characters after the dtype");
        }
        return d;
    }

    DType parse_any() {
        skip_ws();
        if (peek() == '[') {
            return parse_list();
        }
        if (peek() == '{') {
            return parse_dict();
        }
        return parse_simple(s_.substr(pos_, s_.size() - pos_), true);
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw FormatError("dtype \"" + std::string(s_) + "\": " + what, pos_);
    }

    /// A simple dtype spelled by `text` (all of it when `consume_rest`).
    DType parse_simple(std::string_view text, bool consume_rest) {
        std::size_t i = 0;
        char order = 0;
        if (i < text.size() &&
            (text[i] == '<' || text[i] == '>' || text[i] == '|' || text[i] == '=')) {
            order = text[i] == '=' ? kNative : text[i];
            ++i;
        }
        if (i >= text.size()) {
            fail("missing type code");
        }
        const char code = text[i++];
        std::size_t digits = i;
        while (digits < text.size() &&
               std::isdigit(static_cast<unsigned char>(text[digits])) != 0) {
            ++digits;
        }
        std::int64_t n = -1;
        if (digits > i) {
            if (digits - i > 12) {
                fail("size too large");
            }
            n = std::stoll(std::string(text.substr(i, digits - i)));
        }
        i = digits;
        std::string unit;
        if (i < text.size() && text[i] == '[') {
            const std::size_t close = text.find(']', i);
            if (close == std::string_view::npos) {
                fail("unterminated datetime unit");
            }
            unit = std::string(text.substr(i + 1, close - i - 1));
            i = close + 1;
        }
        if (consume_rest) {
            pos_ += i;
        }
        auto need = [&](std::initializer_list<std::int64_t> sizes, std::int64_t dflt) {
            if (n < 0) {
                n = dflt;
            }
            if (std::find(sizes.begin(), sizes.end(), n) == sizes.end()) {
                throw UnsupportedError("dtype \"" + std::string(text) + "\": size " + num(n) +
                                           " is not supported for type code '" +
                                           std::string(1, code) + "'",
                                       pos_);
            }
        };
        DType::Kind kind;
        std::int64_t itemsize = 0;
        switch (code) {
            case '?':
            case 'b':
                if (code == 'b' && n != 1) {
                    // NumPy's 'b' alone means int8; "b1" means bool.
                    kind = DType::Kind::int_;
                    need({1}, 1);
                } else {
                    kind = DType::Kind::boolean;
                    need({1}, 1);
                }
                itemsize = 1;
                break;
            case 'i':
            case 'u':
                need({1, 2, 4, 8}, 4);
                kind = code == 'i' ? DType::Kind::int_ : DType::Kind::uint;
                itemsize = n;
                break;
            case 'f':
                need({2, 4, 8}, 8);
                kind = DType::Kind::float_;
                itemsize = n;
                break;
            case 'c':
                need({8, 16}, 16);
                kind = DType::Kind::complex_;
                itemsize = n;
                break;
            case 'S':
            case 'a':
                kind = DType::Kind::bytes;
                itemsize = bounded(std::max<std::int64_t>(n, 0));
                break;
            case 'U':
                kind = DType::Kind::unicode;
                itemsize = bounded(4 * std::max<std::int64_t>(n, 0));
                break;
            case 'V':
                kind = DType::Kind::void_;
                itemsize = bounded(std::max<std::int64_t>(n, 0));
                break;
            case 'M':
            case 'm':
                need({8}, 8);
                kind = code == 'M' ? DType::Kind::datetime : DType::Kind::timedelta;
                itemsize = 8;
                break;
            case 'O':
                throw UnsupportedError(
                    "dtype \"" + std::string(text) + "\": Python objects cannot be stored", pos_);
            default:
                fail(std::string("unknown type code '") + code + "'");
        }
        if (!consume_rest && i != text.size()) {
            fail("unexpected characters in \"" + std::string(text) + "\"");
        }
        const bool ordered = itemsize > 1 && kind != DType::Kind::bytes &&
                             kind != DType::Kind::void_ && kind != DType::Kind::boolean;
        if (!ordered) {
            order = '|';
        } else if (order == 0 || order == '|') {
            order = kNative;
        }
        DType d = DType::make(kind, itemsize, order);
        if (!unit.empty()) {
            if (kind != DType::Kind::datetime && kind != DType::Kind::timedelta) {
                fail("a unit is only valid for datetime64/timedelta64");
            }
            return with_unit(d, unit);
        }
        return d;
    }

    static DType with_unit(DType d, const std::string& unit);
    static DType with_aligned(DType d);
    /// NumPy itself caps an itemsize at 2^31 - 1; larger sizes in a file are hostile.
    std::int64_t bounded(std::int64_t v) const {
        if (v < 0 || v > kMaxItemsize) {
            fail("itemsize exceeds " + num(kMaxItemsize) + " bytes");
        }
        return v;
    }
    static DType structured(std::vector<DType::Field> fields, std::int64_t itemsize);

private:
    char peek() {
        skip_ws();
        return pos_ < s_.size() ? s_[pos_] : '\0';
    }
    void skip_ws() {
        while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])) != 0) {
            ++pos_;
        }
    }
    void expect(char c) {
        if (peek() != c) {
            fail(std::string("expected '") + c + "'");
        }
        ++pos_;
    }
    bool accept(char c) {
        if (peek() == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    std::string parse_string() {
        const char q = peek();
        if (q != '\'' && q != '"') {
            fail("expected a quoted string");
        }
        ++pos_;
        std::string out;
        while (pos_ < s_.size() && s_[pos_] != q) {
            if (s_[pos_] != '\\' || pos_ + 1 >= s_.size()) {
                out += s_[pos_++];
                continue;
            }
            // Python's escapes: \n \t \r, \xNN \uNNNN \UNNNNNNNN (code points, as UTF-8),
            // anything else the character itself (\\, \', \").
            const char e = s_[++pos_];
            const int hex_digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
            if (hex_digits == 0) {
                out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
                ++pos_;
                continue;
            }
            std::uint32_t cp = 0;
            for (int k = 1; k <= hex_digits; ++k) {
                const char h = pos_ + static_cast<std::size_t>(k) < s_.size()
                                   ? s_[pos_ + static_cast<std::size_t>(k)]
                                   : '\0';
                if (std::isxdigit(static_cast<unsigned char>(h)) == 0) {
                    fail("a \\" + std::string(1, e) + " escape needs " +
                         std::to_string(hex_digits) + " hex digits");
                }
                cp = cp * 16 + static_cast<std::uint32_t>(
                                   std::isdigit(static_cast<unsigned char>(h)) != 0
                                       ? h - '0'
                                       : (std::tolower(static_cast<unsigned char>(h)) - 'a' + 10));
            }
            if (cp > 0x10FFFF) {
                fail("escape beyond the last code point");
            }
            detail::append_utf8(out, cp);
            pos_ += static_cast<std::size_t>(hex_digits) + 1;
        }
        if (pos_ >= s_.size()) {
            fail("unterminated string");
        }
        ++pos_;
        return out;
    }
    std::int64_t parse_int() {
        skip_ws();
        const std::size_t start = pos_;
        while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])) != 0) {
            ++pos_;
        }
        if (pos_ == start || pos_ - start > 12) {
            fail("expected a non-negative integer");
        }
        return std::stoll(std::string(s_.substr(start, pos_ - start)));
    }
    std::vector<std::int64_t> parse_shape() {
        if (!accept('(')) {
            return {parse_int()};
        }
        std::vector<std::int64_t> shape;
        while (!accept(')')) {
            shape.push_back(parse_int());
            if (!accept(',')) {
                expect(')');
                break;
            }
        }
        return shape;
    }
    /// A format inside a structured dtype: a quoted simple dtype, or a nested list/dict.
    DType parse_format() {
        if (peek() == '[' || peek() == '{') {
            return parse_any();
        }
        const std::size_t at = pos_;
        const std::string f = parse_string();
        Parser sub(f);
        try {
            return sub.parse_top();
        } catch (const FormatError& e) {
            throw FormatError("dtype \"" + std::string(s_) + "\": field format: " + e.detail(), at);
        }
    }

    DType parse_list() {
        expect('[');
        std::vector<DType::Field> fields;
        std::int64_t offset = 0;
        while (!accept(']')) {
            expect('(');
            DType::Field f;
            f.name = parse_string();
            expect(',');
            f.type = std::make_shared<const DType>(parse_format());
            if (accept(',')) {
                if (peek() != ')') {
                    f.shape = parse_shape();
                }
            }
            expect(')');
            f.offset = offset;
            std::int64_t count = 1;
            for (std::int64_t d : f.shape) {
                std::int64_t c = 0;
                if (format::mul_overflows(count, d, &c)) {
                    c = -1;
                }
                count = bounded(c);
            }
            // itemsize and count are both below 2^31: neither product nor sum overflows int64.
            offset = bounded(offset + bounded(f.type->itemsize() * count));
            fields.push_back(std::move(f));
            if (!accept(',')) {
                expect(']');
                break;
            }
        }
        if (fields.empty()) {
            fail("a structured dtype needs fields");
        }
        return structured(std::move(fields), offset);
    }

    DType parse_dict() {
        expect('{');
        std::vector<std::string> names;
        std::vector<DType> formats;
        std::vector<std::vector<std::int64_t>> shapes;  // sub-array fields: ('<i2', (3,))
        std::vector<std::int64_t> offsets;
        std::int64_t itemsize = -1;
        bool aligned = false;
        while (!accept('}')) {
            const std::string key = parse_string();
            expect(':');
            if (key == "names") {
                expect('[');
                while (!accept(']')) {
                    names.push_back(parse_string());
                    if (!accept(',')) {
                        expect(']');
                        break;
                    }
                }
            } else if (key == "formats") {
                expect('[');
                while (!accept(']')) {
                    if (accept('(')) {
                        formats.push_back(parse_format());
                        expect(',');
                        shapes.push_back(parse_shape());
                        expect(')');
                    } else {
                        formats.push_back(parse_format());
                        shapes.emplace_back();
                    }
                    if (!accept(',')) {
                        expect(']');
                        break;
                    }
                }
            } else if (key == "offsets") {
                expect('[');
                while (!accept(']')) {
                    offsets.push_back(parse_int());
                    if (!accept(',')) {
                        expect(']');
                        break;
                    }
                }
            } else if (key == "itemsize") {
                itemsize = parse_int();
            } else if (key == "aligned") {
                aligned = parse_bool();
            } else {
                fail("unsupported structured dtype key '" + key + "'");
            }
            if (!accept(',')) {
                expect('}');
                break;
            }
        }
        if (names.empty() || names.size() != formats.size() ||
            (!offsets.empty() && offsets.size() != names.size())) {
            fail("names, formats and offsets must have the same length");
        }
        std::vector<DType::Field> fields;
        std::int64_t packed = 0;
        for (std::size_t i = 0; i < names.size(); ++i) {
            DType::Field f;
            f.name = names[i];
            f.type = std::make_shared<const DType>(formats[i]);
            f.shape = shapes[i];
            std::int64_t count = 1;
            for (const std::int64_t e : f.shape) {
                count = bounded(count * std::max<std::int64_t>(e, 0));
            }
            f.offset = offsets.empty() ? packed : bounded(offsets[i]);
            packed = std::max(packed, bounded(f.offset + bounded(formats[i].itemsize() * count)));
            fields.push_back(std::move(f));
        }
        if (itemsize < 0) {
            itemsize = packed;
        }
        itemsize = bounded(itemsize);
        if (itemsize < packed) {
            fail("itemsize " + num(itemsize) + " is smaller than the fields (" + num(packed) + ")");
        }
        DType d = structured(std::move(fields), itemsize);
        return aligned ? with_aligned(std::move(d)) : d;
    }

    bool parse_bool() {
        skip_ws();
        for (const auto& [word, v] :
             {std::pair<const char*, bool>{"True", true}, {"False", false}}) {
            const std::size_t n = std::char_traits<char>::length(word);
            if (s_.substr(pos_, n) == word) {
                pos_ += n;
                return v;
            }
        }
        fail("True or False expected");
    }

    std::string_view s_;
    std::size_t pos_ = 0;
};

}  // namespace

DType Parser::with_aligned(DType d) {
    DTypeAccess::set_aligned(d, true);
    return d;
}

DType Parser::with_unit(DType d, const std::string& unit) {
    DTypeAccess::set_unit(d, unit);
    return d;
}

DType Parser::structured(std::vector<DType::Field> fields, std::int64_t itemsize) {
    DType d = DType::make(DType::Kind::structured, itemsize, '|');
    DTypeAccess::set_fields(d, std::move(fields));
    return d;
}

DType DType::parse(std::string_view s) {
    Parser p(s);
    return p.parse_top();
}

}  // namespace b2nd
