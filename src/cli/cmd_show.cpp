// b2nd show PATH [--slice EXPR] [--json] / b2nd meta PATH [NAME [VALUE-JSON]]
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <b2nd/any_array.hpp>
#include <b2nd/attrs.hpp>
#include <b2nd/error.hpp>
#include <b2nd/selection.hpp>
#include <b2nd/value.hpp>

#include "../detail/strings.hpp"
#include "cli.hpp"

namespace b2nd::cli {

namespace {

const char* const kShowHelp =
    "usage: b2nd show PATH [--slice EXPR] [--json] [--threshold N] [--edgeitems N]\n"
    "                 [--dtype DTYPE]\n"
    "\n"
    "Prints the array, or a selection of it, as NumPy prints arrays: nested brackets, columns\n"
    "aligned, and for more than --threshold elements (default 1000) only the first and last\n"
    "--edgeitems (default 3) of each long axis, with '...' between; only those are read.\n"
    "\n"
    "  --slice EXPR   NumPy-style selection, e.g. '0, :, 100:200' or '[3,1,7], ::2'\n"
    "  --json         the selected values as nested JSON arrays (all of them)\n"
    "  --dtype DTYPE  read items as this NumPy dtype (same size), e.g. for legacy files\n"
    "\n"
    "example:\n"
    "  b2nd show t.b2nd --slice '0, :4, :4'\n";

const char* const kMetaHelp =
    "usage: b2nd meta PATH                  list the attributes (vlmeta) as NAME = JSON\n"
    "       b2nd meta PATH NAME             print one as JSON\n"
    "       b2nd meta PATH NAME VALUE-JSON  set one (stored as msgpack, as python-blosc2 does)\n"
    "       b2nd meta PATH NAME --delete    remove one\n"
    "\n"
    "Attributes are python-blosc2's vlmeta entries, one msgpack value each. Bytes are written\n"
    "{\"$bytes\": \"hex\"}; entries that are not msgpack are listed as hex.\n"
    "\n"
    "  --json    list as one JSON object\n"
    "\n"
    "examples:\n"
    "  b2nd meta t.b2nd units '\"K\"'\n"
    "  b2nd meta t.b2nd calib '{\"offset\": -273.15, \"factor\": 0.01}'\n";

/// One item, in the host's byte order where it has one.
std::vector<std::uint8_t> native_item(const DType& dt, const std::uint8_t* p) {
    std::vector<std::uint8_t> b(p, p + dt.itemsize());
    if (dt.needs_byteswap()) {
        dt.byteswap(b.data(), 1);
    }
    return b;
}

template <class T>
T load(const std::vector<std::uint8_t>& b, std::size_t at = 0) {
    T v;
    std::memcpy(&v, b.data() + at, sizeof(T));
    return v;
}

std::string hex_of(const std::uint8_t* p, std::int64_t n) {
    std::string s;
    char buf[4];
    for (std::int64_t i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", p[i]);
        s += buf;
    }
    return s;
}

/// An item as a Value (JSON output): numbers, bools, strings; complex as [re, im]; others hex.
Value item_value(const DType& dt, const std::uint8_t* p) {
    const auto b = native_item(dt, p);
    const std::int64_t n = dt.itemsize();
    switch (dt.kind()) {
        case DType::Kind::boolean:
            return Value(b[0] != 0);
        case DType::Kind::int_:
        case DType::Kind::datetime:
        case DType::Kind::timedelta:
            switch (n) {
                case 1:
                    return Value(load<std::int8_t>(b));
                case 2:
                    return Value(load<std::int16_t>(b));
                case 4:
                    return Value(load<std::int32_t>(b));
                case 8:
                    return Value(load<std::int64_t>(b));
                default:
                    break;
            }
            break;
        case DType::Kind::uint:
            switch (n) {
                case 1:
                    return Value(load<std::uint8_t>(b));
                case 2:
                    return Value(load<std::uint16_t>(b));
                case 4:
                    return Value(load<std::uint32_t>(b));
                case 8:
                    return Value(load<std::uint64_t>(b));
                default:
                    break;
            }
            break;
        case DType::Kind::float_:
            if (n == 2) {  // IEEE half
                const auto h = load<std::uint16_t>(b);
                const int e = (h >> 10) & 0x1f;
                const double m = h & 0x3ff;
                double x = e == 0    ? std::ldexp(m, -24)
                           : e == 31 ? (m == 0 ? HUGE_VAL : std::nan(""))
                                     : std::ldexp(m + 1024, e - 25);
                return Value((h & 0x8000) != 0 ? -x : x);
            }
            if (n == 4) {
                return Value(load<float>(b));
            }
            if (n == 8) {
                return Value(load<double>(b));
            }
            break;
        case DType::Kind::complex_:
            if (n == 8) {
                return Value(Value::Array{load<float>(b), load<float>(b, 4)});
            }
            if (n == 16) {
                return Value(Value::Array{load<double>(b), load<double>(b, 8)});
            }
            break;
        case DType::Kind::bytes: {
            std::string s(b.begin(), b.end());
            s.resize(std::strlen(s.c_str()));
            return Value(s);
        }
        case DType::Kind::unicode: {
            std::string s;  // UTF-32 to UTF-8
            for (std::int64_t i = 0; i + 4 <= n; i += 4) {
                const auto cp = load<std::uint32_t>(b, static_cast<std::size_t>(i));
                if (cp == 0) {
                    break;
                }
                detail::append_utf8(s, cp);
            }
            return Value(s);
        }
        default:
            break;
    }
    return Value(hex_of(p, n));
}

/// Floats as NumPy prints them in an array: one notation for all; each with the fewest digits
/// (at most 8 after the point) that read back as the same float32 or float64; points aligned
/// ("  1.5 ", "-2.25"); "1." for integral values; nan and inf.
std::vector<std::string> format_floats(const std::vector<double>& v, bool f32) {
    double maxabs = 0, minabs = HUGE_VAL;
    for (double d : v) {
        if (std::isfinite(d) && d != 0) {
            maxabs = std::max(maxabs, std::fabs(d));
            minabs = std::min(minabs, std::fabs(d));
        }
    }
    const bool sci = maxabs >= 1e16 || (maxabs > 0 && minabs < 1e-4);
    auto same = [&](const char* text, double d) {
        const double back = std::strtod(text, nullptr);
        return f32 ? static_cast<float>(back) == static_cast<float>(d) : back == d;
    };
    std::vector<std::string> head(v.size()), tail(v.size());  // around the point (or 'e')
    std::size_t wh = 0, wt = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const double d = v[i];
        std::string t;
        if (std::isnan(d)) {
            t = "nan";
        } else if (std::isinf(d)) {
            t = d > 0 ? "inf" : "-inf";
        } else {
            char buf[64];
            for (int prec = 0; prec <= 8; ++prec) {
                std::snprintf(buf, sizeof buf, sci ? "%.*e" : "%.*f", prec, d);
                if (same(buf, d)) {
                    break;
                }
            }
            t = buf;
            if (!sci && t.find('.') == std::string::npos) {
                t += '.';
            }
            if (sci) {
                const std::size_t e = t.find('e');
                std::string mant = t.substr(0, e);
                if (mant.find('.') == std::string::npos) {
                    mant += '.';
                }
                t = mant + t.substr(e);
            }
        }
        const std::size_t dot = t.find('.');
        head[i] = dot == std::string::npos ? t : t.substr(0, dot);
        tail[i] = dot == std::string::npos ? "" : t.substr(dot);
        wh = std::max(wh, head[i].size());
        wt = std::max(wt, tail[i].size());
    }
    std::vector<std::string> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        out[i] = std::string(wh - head[i].size(), ' ') + head[i] + tail[i] +
                 std::string(wt - tail[i].size(), ' ');
    }
    return out;
}

/// Every item of `data` formatted as NumPy would inside an array (before alignment).
std::vector<std::string> format_items(const DType& dt, const std::vector<std::uint8_t>& data) {
    const std::int64_t isz = dt.itemsize();
    const auto n = static_cast<std::size_t>(static_cast<std::int64_t>(data.size()) / isz);
    std::vector<std::string> out;
    out.reserve(n);
    const bool real = dt.kind() == DType::Kind::float_ && (isz == 2 || isz == 4 || isz == 8);
    const bool cplx = dt.kind() == DType::Kind::complex_ && (isz == 8 || isz == 16);
    if (real || cplx) {
        std::vector<double> re, im;
        for (std::size_t i = 0; i < n; ++i) {
            const Value v = item_value(dt, data.data() + static_cast<std::int64_t>(i) * isz);
            if (real) {
                re.push_back(v.as<double>());
            } else {
                re.push_back(v[0].as<double>());
                im.push_back(v[1].as<double>());
            }
        }
        const bool f32 = (real && isz <= 4) || (cplx && isz == 8);
        std::vector<std::string> r = format_floats(re, f32);
        if (real) {
            return r;
        }
        std::vector<std::string> m = format_floats(im, f32);
        for (std::size_t i = 0; i < n; ++i) {
            auto trim = [](std::string t) {
                t.erase(0, t.find_first_not_of(' '));
                t.erase(t.find_last_not_of(' ') + 1);
                return t;
            };
            r[i] = trim(r[i]);
            std::string imag = trim(m[i]);
            const bool neg = !imag.empty() && imag[0] == '-';
            out.push_back(r[i] + (neg ? "-" : "+") + (neg ? imag.substr(1) : imag) + "j");
        }
        return out;
    }
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint8_t* p = data.data() + static_cast<std::int64_t>(i) * isz;
        const Value v = item_value(dt, p);
        switch (dt.kind()) {
            case DType::Kind::boolean:
                out.emplace_back(v.as<bool>() ? "True" : "False");
                break;
            case DType::Kind::bytes:
                out.push_back("b'" + v.as<std::string>() + "'");
                break;
            case DType::Kind::unicode:
                out.push_back("'" + v.as<std::string>() + "'");
                break;
            default:
                out.push_back(v.type() == Value::Type::string ? v.as<std::string>() : v.to_json());
        }
    }
    return out;
}

constexpr std::size_t kLineWidth = 75;  // NumPy's default linewidth

/// Appends `word` to a row of the innermost axis at nesting depth d: after a space, or on a new
/// line indented past the brackets when the line would pass NumPy's limit there (the line width
/// less one column per bracket that may close it).
void append_word(std::string& out, const std::string& word, std::size_t d) {
    const std::size_t line_start = out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1;
    if (out.size() - line_start + 1 + word.size() > kLineWidth - 1 - d) {
        out.erase(out.find_last_not_of(' ') + 1);  // as NumPy, no trailing blanks
        out += '\n';
        out.append(d + 1, ' ');
    } else {
        out += ' ';
    }
    out += word;
}

/// The printed array: items (C order over `shape`), with "..." after position `cut[d]` along
/// each summarized axis d (cut[d] < 0: none).
void print_nested(std::string& out,
                  const std::vector<std::string>& items,
                  const Shape& shape,
                  const std::vector<std::int64_t>& cut,
                  std::size_t width,
                  std::size_t d,
                  std::size_t& at) {
    auto item = [&] {
        const std::string& s = items[at++];
        return std::string(width - std::min(width, s.size()), ' ') + s;
    };
    out += '[';
    const bool innermost = d + 1 == shape.size();
    for (std::int64_t i = 0; i < shape[d]; ++i) {
        if (innermost) {
            if (i == 0) {
                out += item();
            } else {
                append_word(out, item(), d);
            }
            if (cut[d] >= 0 && i + 1 == cut[d]) {
                append_word(out, "...", d);
            }
            continue;
        }
        if (i > 0) {
            out.append(shape.size() - d - 1, '\n');
            out.append(d + 1, ' ');
        }
        print_nested(out, items, shape, cut, width, d + 1, at);
        if (cut[d] >= 0 && i + 1 == cut[d]) {
            out.append(shape.size() - d - 1, '\n');
            out.append(d + 1, ' ');
            out += "...";
        }
    }
    out += ']';
}

Value nested_json(const DType& dt,
                  const std::vector<std::uint8_t>& data,
                  const Shape& shape,
                  std::size_t d,
                  std::int64_t& at) {
    if (d == shape.size()) {
        return item_value(dt, data.data() + (at++) * dt.itemsize());
    }
    Value::Array a;
    for (std::int64_t i = 0; i < shape[d]; ++i) {
        a.push_back(nested_json(dt, data, shape, d + 1, at));
    }
    return Value(std::move(a));
}

}  // namespace

int cmd_show(const std::vector<std::string>& argv) {
    const Args a =
        Args::parse(argv, {"--slice", "--threshold", "--edgeitems", "--dtype", "--nthreads"},
                    {"--json", "--help"});
    if (a.has("--help")) {
        std::cout << kShowHelp;
        return 0;
    }
    if (a.positional.size() != 1) {
        throw ArgError("expected one PATH");
    }
    const AnyArray arr = AnyArray::open(a.positional[0], input_options(a));
    Resolved r;
    try {
        r = resolve(arr.shape(), parse_selection(a.get("--slice")));
    } catch (const UsageError& e) {
        throw ArgError(std::string("--slice: ") + e.what());
    }
    const std::int64_t threshold = a.get_int("--threshold", 1000, 0, INT64_MAX);
    const std::int64_t edge = a.get_int("--edgeitems", 3, 1, 1000000);
    const DType& dt = arr.dtype();

    if (a.has("--json")) {
        detail::require_memory(arr, static_cast<std::uint64_t>(r.size()), "show");
        std::vector<std::uint8_t> data(static_cast<std::size_t>(r.size() * arr.itemsize()));
        arr.read(r, data.data(), data.size());
        std::int64_t at = 0;
        std::cout << nested_json(dt, data, r.shape, 0, at).to_json() << "\n";
        return 0;
    }
    // Along each result axis: all positions, or the first and last `edge` when summarized.
    // Only the shown positions are ever listed (an axis may be 10^9 long, or the result empty).
    const bool summarize = r.size() > threshold;
    std::vector<std::int64_t> cut(r.shape.size(), -1);
    Shape shown = r.shape;
    std::uint64_t count = 1;
    for (std::size_t d = 0; d < r.shape.size(); ++d) {
        if (summarize && r.shape[d] > 2 * edge) {
            cut[d] = edge;
            shown[d] = 2 * edge;
        }
        if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(shown[d]), &count)) {
            throw ArgError("--edgeitems " + std::to_string(edge) + " shows too many elements");
        }
    }
    detail::require_memory(arr, count, "show");
    std::vector<std::uint8_t> data(static_cast<std::size_t>(count) *
                                   static_cast<std::size_t>(arr.itemsize()));
    if (count > 0) {
        // The array index of position k along array axis u of the selection.
        auto index = [&](std::size_t u, std::int64_t k) {
            return r.orthogonal() ? r.lists[u][static_cast<std::size_t>(k)]
                                  : r.box.start[u] + k * r.box.step[u];
        };
        // Axes the selection drops keep their one index; the others take the shown positions.
        std::vector<std::vector<std::int64_t>> idx(static_cast<std::size_t>(arr.ndim()));
        for (std::size_t u = 0; u < idx.size(); ++u) {
            idx[u] = {index(u, 0)};
        }
        for (std::size_t rd = 0; rd < r.dims.size(); ++rd) {
            if (r.dims[rd] < 0) {
                continue;  // a new axis: one position, no array axis
            }
            const auto u = static_cast<std::size_t>(r.dims[rd]);
            idx[u].clear();
            for (std::int64_t k = 0; k < shown[rd]; ++k) {
                const bool tail = cut[rd] >= 0 && k >= cut[rd];
                idx[u].push_back(index(u, tail ? r.shape[rd] - shown[rd] + k : k));
            }
        }
        arr.read_orthogonal(idx, data.data(), data.size());
    }
    const std::vector<std::string> items = format_items(dt, data);
    std::size_t width = 0;
    for (const std::string& s : items) {
        width = std::max(width, s.size());
    }
    if (r.shape.empty()) {
        std::cout << (items.empty() ? "" : items[0]) << "\n";
        return 0;
    }
    std::size_t at = 0;
    std::string out;
    print_nested(out, items, shown, cut, width, 0, at);
    std::cout << out << "\n";
    return 0;
}

int cmd_meta(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, {}, {"--json", "--delete", "--help"});
    if (a.has("--help")) {
        std::cout << kMetaHelp;
        return 0;
    }
    if (a.positional.empty() || a.positional.size() > 3) {
        throw ArgError("expected PATH [NAME [VALUE-JSON]]");
    }
    const std::string& path = a.positional[0];
    const bool writes = a.positional.size() == 3 || a.has("--delete");
    if (a.has("--delete") && a.positional.size() != 2) {
        throw ArgError("--delete needs PATH and NAME");
    }
    OpenOptions o;
    o.writable = writes;
    o.cache_bytes = 0;
    AnyArray arr = AnyArray::open(path, o);
    Attrs attrs = arr.attrs();
    if (a.positional.size() == 1) {
        auto shown = [&](const std::string& name) {
            try {
                return attrs.get(name).to_json();
            } catch (const FormatError&) {
                const auto raw = arr.vlmeta(name).value_or(std::vector<std::uint8_t>{});
                return Value::map({{"$not_msgpack",
                                    hex_of(raw.data(), static_cast<std::int64_t>(raw.size()))}})
                    .to_json();
            }
        };
        if (a.has("--json")) {
            std::cout << "{";
            bool first = true;
            for (const std::string& name : attrs.names()) {
                std::cout << (first ? "" : ", ") << json_string(name) << ": " << shown(name);
                first = false;
            }
            std::cout << "}\n";
        } else {
            for (const std::string& name : attrs.names()) {
                std::cout << name << " = " << shown(name) << "\n";
            }
        }
        return 0;
    }
    const std::string& name = a.positional[1];
    if (a.has("--delete")) {
        if (!attrs.erase(name)) {
            throw UsageError("\"" + path + "\": no attribute '" + name + "'");
        }
        return 0;
    }
    if (a.positional.size() == 2) {
        std::cout << attrs.get(name).to_json(2) << "\n";
        return 0;
    }
    Value v;
    try {
        v = Value::from_json(a.positional[2]);
    } catch (const UsageError& e) {
        throw ArgError(std::string("VALUE-JSON: ") + e.what());
    }
    attrs.set(name, v);
    return 0;
}

}  // namespace b2nd::cli
