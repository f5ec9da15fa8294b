#include "item_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <b2nd/datetime.hpp>

#include "../detail/text.hpp"
#include "cli.hpp"

namespace b2nd::cli {

double round_to_half(double d) {
    if (!std::isfinite(d) || d == 0) {
        return d;
    }
    int e = 0;
    (void)std::frexp(d, &e);  // |d| in [2^(e-1), 2^e)
    const double quantum = std::ldexp(1.0, std::max(e - 1, -14) - 10);
    const double r = std::nearbyint(d / quantum) * quantum;
    return std::fabs(r) > 65504.0 ? std::copysign(HUGE_VAL, d) : r;
}

namespace {

constexpr int kMaxFraction = 8;  // NumPy's default print precision

/// Whether `text` reads back as d in a float of `bits`.
bool reads_back(const char* text, double d, int bits) {
    const double back = std::strtod(text, nullptr);
    switch (bits) {
        case 16:
            return round_to_half(back) == d;
        case 32:
            return static_cast<float>(back) == static_cast<float>(d);
        default:
            return back == d;
    }
}

double half_value(std::uint16_t h) {
    const int e = (h >> 10) & 0x1f;
    const double m = h & 0x3ff;
    const double x = e == 0    ? std::ldexp(m, -24)
                     : e == 31 ? (m == 0 ? HUGE_VAL : std::nan(""))
                               : std::ldexp(m + 1024, e - 25);
    return (h & 0x8000) != 0 ? -x : x;
}

template <class T>
T load(const std::uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

/// A shortest-digits float as JSON ("0.1", "2.0", "1e+300").
void json_float(std::string& out, double d, int bits) {
    if (std::isnan(d)) {
        out += "\"NaN\"";
        return;
    }
    if (std::isinf(d)) {
        out += d > 0 ? "\"Infinity\"" : "\"-Infinity\"";
        return;
    }
    char buf[40];
    for (int prec = 1; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (reads_back(buf, d, bits)) {
            break;
        }
    }
    out += buf;
    if (std::strpbrk(buf, ".eni") == nullptr) {
        out += ".0";
    }
}

}  // namespace

// ---- FloatColumn ----------------------------------------------------------------------------

ItemFormat::FloatColumn::Parts ItemFormat::FloatColumn::parts(double d, bool scientific) const {
    char buf[64];
    for (int prec = 0; prec <= kMaxFraction; ++prec) {
        std::snprintf(buf, sizeof buf, scientific ? "%.*e" : "%.*f", prec, d);
        if (reads_back(buf, d, bits_)) {
            break;
        }
    }
    return split(buf, true);
}

ItemFormat::FloatColumn::Parts ItemFormat::FloatColumn::digits(double d, int fraction) const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", fraction, d);
    return split(buf, false);
}

ItemFormat::FloatColumn::Parts ItemFormat::FloatColumn::split(const std::string& text,
                                                              bool trim) const {
    std::string t = text;
    Parts p;
    const std::size_t e = t.find('e');
    if (e != std::string::npos) {
        p.exponent = std::atoi(t.c_str() + e + 1);
        t.erase(e);
    }
    const std::size_t dot = t.find('.');
    p.whole = t.substr(0, dot);
    p.fraction = dot == std::string::npos ? "" : t.substr(dot + 1);
    if (trim) {
        // Capped at 8 digits, the rounded digits may end in zeros: NumPy trims them.
        p.fraction.erase(p.fraction.find_last_not_of('0') + 1);
    }
    if (plus_ && p.whole[0] != '-') {
        p.whole.insert(0, "+");
    }
    return p;
}

void ItemFormat::FloatColumn::observe(double d) {
    if (!std::isfinite(d)) {
        const bool sign = (std::isinf(d) && d < 0) || plus_;
        special_width_ = std::max<std::size_t>(special_width_, sign ? 4 : 3);
        return;
    }
    if (d != 0) {
        const double a = std::fabs(d);
        max_abs_ = any_nonzero_ ? std::max(max_abs_, a) : a;
        min_abs_ = any_nonzero_ ? std::min(min_abs_, a) : a;
        any_nonzero_ = true;
    }
    for (int sci = 0; sci < 2; ++sci) {
        const Parts p = parts(d, sci == 1);
        whole_[sci] = std::max(whole_[sci], p.whole.size());
        fraction_[sci] = std::max(fraction_[sci], p.fraction.size());
        if (sci == 1) {
            exponent_digits_ =
                std::max(exponent_digits_, std::to_string(std::abs(p.exponent)).size());
        }
    }
}

bool ItemFormat::FloatColumn::scientific() const noexcept {
    return any_nonzero_ && (max_abs_ >= 1e8 || min_abs_ < 1e-4 || max_abs_ / min_abs_ > 1000);
}

std::size_t ItemFormat::FloatColumn::left(bool sci) const noexcept {
    // What follows the point: the fraction, and in scientific notation "e+NN".
    const std::size_t right = fraction_[sci ? 1 : 0] + (sci ? 2 + exponent_digits_ : 0);
    const std::size_t special = special_width_ > right + 1 ? special_width_ - right - 1 : 0;
    return std::max(whole_[sci ? 1 : 0], special);
}

std::string ItemFormat::FloatColumn::word(double d) const {
    const bool sci = scientific();
    const std::size_t fraction = fraction_[sci ? 1 : 0];
    const std::size_t width_left = left(sci);
    if (!std::isfinite(d)) {
        std::string t = std::isnan(d) ? "nan" : (d < 0 ? "-inf" : "inf");
        if (plus_ && t[0] != '-') {
            t.insert(0, "+");
        }
        const std::size_t width = width_left + 1 + fraction + (sci ? 2 + exponent_digits_ : 0);
        return std::string(width - std::min(width, t.size()), ' ') + t;
    }
    // Scientific: every value with the column's count of digits, its own (NumPy's min_digits:
    // 4.94065646e-324, not 5.00000000e-324); positional: its shortest digits, blank-padded.
    Parts p = sci ? digits(d, static_cast<int>(fraction)) : parts(d, false);
    std::string t = std::string(width_left - std::min(width_left, p.whole.size()), ' ') + p.whole +
                    "." + p.fraction;
    if (sci) {
        const std::string digits = std::to_string(std::abs(p.exponent));
        t += p.exponent < 0 ? "e-" : "e+";
        t.append(exponent_digits_ - std::min(exponent_digits_, digits.size()), '0');
        t += digits;
    } else {
        t.append(fraction - std::min(fraction, p.fraction.size()), ' ');
    }
    return t;
}

// ---- ItemFormat -----------------------------------------------------------------------------

ItemFormat::ItemFormat(DType dtype)
    : dtype_(std::move(dtype)),
      float_bits_(dtype_.kind() == DType::Kind::float_     ? static_cast<int>(8 * dtype_.itemsize())
                  : dtype_.kind() == DType::Kind::complex_ ? static_cast<int>(4 * dtype_.itemsize())
                                                           : 0),
      reals_(float_bits_, false),
      imags_(float_bits_, true) {
    if (float_bits_ != 16 && float_bits_ != 32 && float_bits_ != 64) {
        float_bits_ = 0;  // float128 and the like: shown as hex
    }
    if (dtype_.is_structured()) {
        for (const DType::Field& f : dtype_.fields()) {
            fields_.push_back(std::make_unique<ItemFormat>(*f.type));
        }
    }
}

namespace {
/// A sub-array field's values as nested lists ("[[1, 2], [3, 4]]"), `item` writing each value
/// and `text` the brackets and separators; returns the bytes walked.
template <class Item, class Text>
std::int64_t nested_list(const Shape& shape,
                         std::size_t d,
                         const std::uint8_t* p,
                         std::int64_t isz,
                         const Item& item,
                         const Text& text) {
    text("[");
    std::int64_t used = 0;
    for (std::int64_t j = 0; j < shape[d]; ++j) {
        if (j > 0) {
            text(", ");
        }
        if (d + 1 == shape.size()) {
            item(p + used);
            used += isz;
        } else {
            used += nested_list(shape, d + 1, p + used, isz, item, text);
        }
    }
    text("]");
    return used;
}

std::int64_t sub_count(const DType::Field& f) {
    std::int64_t n = 1;
    for (const std::int64_t e : f.shape) {
        n *= e;
    }
    return n;
}
}  // namespace

std::string ItemFormat::record_word(const std::uint8_t* item) const {
    std::string s = "(";
    const auto& fs = dtype_.fields();
    for (std::size_t k = 0; k < fs.size(); ++k) {
        const std::uint8_t* p = item + fs[k].offset;
        s += k > 0 ? ", " : "";
        if (fs[k].shape.empty()) {
            s += fields_[k]->word(p);
            continue;
        }
        nested_list(
            fs[k].shape, 0, p, fs[k].type->itemsize(),
            [&](const std::uint8_t* q) { s += fields_[k]->word(q); },
            [&](const char* t) { s += t; });
    }
    return s + (fs.size() == 1 ? ",)" : ")");
}

void ItemFormat::record_json(std::string& out, const std::uint8_t* item) const {
    out += '[';
    const auto& fs = dtype_.fields();
    for (std::size_t k = 0; k < fs.size(); ++k) {
        const std::uint8_t* p = item + fs[k].offset;
        out += k > 0 ? ", " : "";
        if (fs[k].shape.empty()) {
            fields_[k]->json(out, p);
            continue;
        }
        nested_list(
            fs[k].shape, 0, p, fs[k].type->itemsize(),
            [&](const std::uint8_t* q) { fields_[k]->json(out, q); },
            [&](const char* t) { out += t; });
    }
    out += ']';
}

ItemFormat::Number ItemFormat::number() const noexcept {
    switch (dtype_.kind()) {
        case DType::Kind::boolean:
            return dtype_.itemsize() == 1 ? Number::real : Number::none;
        case DType::Kind::int_:
        case DType::Kind::uint:
            return dtype_.itemsize() <= 8 ? Number::real : Number::none;
        case DType::Kind::float_:
            return float_bits_ != 0 ? Number::real : Number::none;
        case DType::Kind::complex_:
            return float_bits_ != 0 ? Number::complex : Number::none;
        default:
            return Number::none;
    }
}

namespace {

/// An item's bytes in the host's (little-endian) order.
struct Native {
    std::uint8_t b[16] = {};
    Native(const DType& dt, const std::uint8_t* p) {
        const auto n = static_cast<std::size_t>(std::min<std::int64_t>(dt.itemsize(), 16));
        std::memcpy(b, p, n);
        if (dt.needs_byteswap()) {
            if (dt.kind() == DType::Kind::complex_) {  // each part on its own
                std::reverse(b, b + n / 2);
                std::reverse(b + n / 2, b + n);
            } else {
                std::reverse(b, b + n);
            }
        }
    }
};

double float_at(const std::uint8_t* b, int bits) {
    switch (bits) {
        case 16:
            return half_value(load<std::uint16_t>(b));
        case 32:
            return static_cast<double>(load<float>(b));
        default:
            return load<double>(b);
    }
}

/// The integer of n <= 8 bytes (sign-extended unless `uint`), as the bits of a uint64.
std::uint64_t int_bits(const std::uint8_t* b, std::int64_t n, bool uint) {
    std::uint64_t u = 0;
    std::memcpy(&u, b, static_cast<std::size_t>(n));
    if (!uint && n < 8 && ((u >> (8 * n - 1)) & 1) != 0) {
        u |= ~std::uint64_t{0} << (8 * n);
    }
    return u;
}

/// Integers (and the int64 of datetime/timedelta) as text; `uint`: unsigned.
std::string int_text(const std::uint8_t* b, std::int64_t n, bool uint) {
    const std::uint64_t u = int_bits(b, n, uint);
    return uint ? std::to_string(u) : std::to_string(static_cast<std::int64_t>(u));
}

/// A `U` item (UTF-32 up to the first NUL) as UTF-8; code points UTF-8 cannot hold become U+FFFD.
std::string unicode_text(const std::uint8_t* item, std::int64_t n, bool swap) {
    std::string s;
    detail::ucs4_to_utf8(item, static_cast<std::size_t>(n), swap, s);
    return s;
}

std::string hex_text(const std::uint8_t* item, std::int64_t n) {
    std::string hex;
    char buf[4];
    for (std::int64_t i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", item[i]);
        hex += buf;
    }
    return hex;
}

}  // namespace

long double ItemFormat::value(const std::uint8_t* item) const {
    const Native v(dtype_, item);
    const std::int64_t n = dtype_.itemsize();
    switch (dtype_.kind()) {
        case DType::Kind::boolean:
            return v.b[0] != 0 ? 1.0L : 0.0L;
        case DType::Kind::float_:
            return static_cast<long double>(float_at(v.b, float_bits_));
        case DType::Kind::uint:
            return static_cast<long double>(int_bits(v.b, n, true));
        default:
            return static_cast<long double>(static_cast<std::int64_t>(int_bits(v.b, n, false)));
    }
}

std::pair<double, double> ItemFormat::parts(const std::uint8_t* item) const {
    const Native v(dtype_, item);
    return {float_at(v.b, float_bits_), float_at(v.b + dtype_.itemsize() / 2, float_bits_)};
}

void ItemFormat::observe(const std::uint8_t* items, std::int64_t n) {
    const std::int64_t isz = dtype_.itemsize();
    for (std::int64_t i = 0; i < n; ++i) {
        const std::uint8_t* p = items + i * isz;
        switch (dtype_.kind()) {
            case DType::Kind::boolean:
                any_false_ = any_false_ || p[0] == 0;
                break;
            case DType::Kind::float_:
            case DType::Kind::complex_:
                if (float_bits_ != 0) {
                    const Native v(dtype_, p);
                    reals_.observe(float_at(v.b, float_bits_));
                    if (dtype_.kind() == DType::Kind::complex_) {
                        imags_.observe(float_at(v.b + isz / 2, float_bits_));
                    }
                    break;
                }
                width_ = std::max(width_, word(p).size());
                break;
            case DType::Kind::int_:
            case DType::Kind::uint:
            case DType::Kind::datetime:
            case DType::Kind::timedelta:
                width_ = std::max(width_, word(p).size());
                break;
            case DType::Kind::structured: {
                const auto& fs = dtype_.fields();
                for (std::size_t k = 0; k < fs.size(); ++k) {
                    fields_[k]->observe(p + fs[k].offset, sub_count(fs[k]));
                }
                break;
            }
            default:
                break;  // strings and others are not padded
        }
    }
}

std::string ItemFormat::word(const std::uint8_t* item) const {
    const Native v(dtype_, item);
    const std::int64_t n = dtype_.itemsize();
    const auto padded = [&](const std::string& t) {
        return std::string(width_ - std::min(width_, t.size()), ' ') + t;
    };
    switch (dtype_.kind()) {
        case DType::Kind::boolean:
            return v.b[0] != 0 ? (any_false_ ? " True" : "True") : "False";
        case DType::Kind::datetime:
        case DType::Kind::timedelta:
            if (n == 8) {
                const auto t = static_cast<std::int64_t>(int_bits(v.b, n, false));
                if (t == kNaT) {
                    return padded("'NaT'");
                }
                return padded(dtype_.kind() == DType::Kind::timedelta
                                  ? std::to_string(t)
                                  : "'" + datetime_text(t, dtype_.unit()) + "'");
            }
            break;
        case DType::Kind::int_:
        case DType::Kind::uint:
            if (n <= 8) {
                return padded(int_text(v.b, n, dtype_.kind() == DType::Kind::uint));
            }
            break;
        case DType::Kind::structured:
            return record_word(item);
        case DType::Kind::float_:
            if (float_bits_ != 0) {
                return reals_.word(float_at(v.b, float_bits_));
            }
            break;
        case DType::Kind::complex_:
            if (float_bits_ != 0) {
                std::string im = imags_.word(float_at(v.b + n / 2, float_bits_));
                const std::size_t end = im.find_last_not_of(' ') + 1;
                im.insert(end, "j");
                return reals_.word(float_at(v.b, float_bits_)) + im;
            }
            break;
        case DType::Kind::bytes: {
            std::string s(reinterpret_cast<const char*>(item),
                          static_cast<std::size_t>(n));  // NumPy drops trailing NULs
            s.erase(s.find_last_not_of('\0') + 1);
            return detail::python_repr(s, "b", true);
        }
        case DType::Kind::unicode: {
            const std::string s = unicode_text(item, n, dtype_.needs_byteswap());
            return detail::python_repr(s, "");
        }
        default:
            break;
    }
    return padded(hex_text(item, n));
}

void ItemFormat::json(std::string& out, const std::uint8_t* item) const {
    const Native v(dtype_, item);
    const std::int64_t n = dtype_.itemsize();
    switch (dtype_.kind()) {
        case DType::Kind::boolean:
            out += v.b[0] != 0 ? "true" : "false";
            return;
        case DType::Kind::datetime:
        case DType::Kind::timedelta:
            if (n == 8) {
                const auto t = static_cast<std::int64_t>(int_bits(v.b, n, false));
                out += t == kNaT ? "null"
                       : dtype_.kind() == DType::Kind::timedelta
                           ? std::to_string(t)
                           : json_string(datetime_text(t, dtype_.unit()));
                return;
            }
            break;
        case DType::Kind::int_:
        case DType::Kind::uint:
            if (n <= 8) {
                out += int_text(v.b, n, dtype_.kind() == DType::Kind::uint);
                return;
            }
            break;
        case DType::Kind::structured:
            record_json(out, item);
            return;
        case DType::Kind::float_:
            if (float_bits_ != 0) {
                json_float(out, float_at(v.b, float_bits_), float_bits_);
                return;
            }
            break;
        case DType::Kind::complex_:
            if (float_bits_ != 0) {
                out += '[';
                json_float(out, float_at(v.b, float_bits_), float_bits_);
                out += ", ";
                json_float(out, float_at(v.b + n / 2, float_bits_), float_bits_);
                out += ']';
                return;
            }
            break;
        case DType::Kind::bytes: {
            std::string s;  // bytes as code points 0-255; NumPy's rule: trailing NULs dropped
            std::int64_t end = n;
            while (end > 0 && item[end - 1] == 0) {
                --end;
            }
            for (std::int64_t i = 0; i < end; ++i) {
                detail::append_utf8(s, item[i]);
            }
            out += json_string(s);
            return;
        }
        case DType::Kind::unicode: {
            const std::string s = unicode_text(item, n, dtype_.needs_byteswap());
            out += json_string(s);
            return;
        }
        default:
            break;
    }
    out += json_string(hex_text(item, n));
}

}  // namespace b2nd::cli
