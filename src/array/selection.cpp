#include <cctype>

#include <b2nd/error.hpp>
#include <b2nd/selection.hpp>

#include "../detail/strings.hpp"

namespace b2nd {

using detail::num;

Resolved resolve(const Shape& shape, const Selection& sel) {
    const auto ndim = static_cast<std::int64_t>(shape.size());
    std::int64_t explicit_dims = 0;
    int ellipses = 0;
    for (const DimIndex& e : sel) {
        if (e.kind() == DimIndex::Kind::ellipsis) {
            ++ellipses;
        } else if (e.kind() != DimIndex::Kind::newaxis) {
            ++explicit_dims;
        }
    }
    if (ellipses > 1) {
        throw UsageError("a selection can hold only one ellipsis");
    }
    if (explicit_dims > ndim) {
        throw UsageError("too many indices: " + num(explicit_dims) + " for an array of shape " +
                         to_string(shape));
    }
    Resolved r;
    std::size_t d = 0;
    auto add_slice = [&](const Slice& s) {
        const std::int64_t n = shape[d];
        if (s.step == 0 || s.step == INT64_MIN) {
            throw UsageError("slice step " + num(s.step) + " in dimension " +
                             num(static_cast<std::int64_t>(d)));
        }
        // Python's slice.indices.
        auto norm = [&](std::optional<std::int64_t> v, std::int64_t dflt, std::int64_t lo,
                        std::int64_t hi) {
            if (!v) {
                return dflt;
            }
            std::int64_t x = *v;
            if (x < 0) {
                x = x < -n ? lo : x + n;
            }
            return x < lo ? lo : (x > hi ? hi : x);
        };
        std::int64_t start, count;
        if (s.step > 0) {
            start = norm(s.start, 0, 0, n);
            const std::int64_t stop = norm(s.stop, n, 0, n);
            count = stop > start ? (stop - start - 1) / s.step + 1 : 0;
        } else {
            start = norm(s.start, n - 1, -1, n - 1);
            const std::int64_t stop = norm(s.stop, -1, -1, n - 1);
            count = start > stop ? (start - stop - 1) / -s.step + 1 : 0;
        }
        r.box.start.push_back(count == 0 ? 0 : start);
        r.box.count.push_back(count);
        r.box.step.push_back(s.step);
        r.shape.push_back(count);
        r.dims.push_back(static_cast<int>(d));
        ++d;
    };
    for (const DimIndex& e : sel) {
        switch (e.kind()) {
            case DimIndex::Kind::index: {
                const std::int64_t n = shape[d];
                std::int64_t i = e.index();
                if (i < -n || i >= n) {
                    throw UsageError("index " + num(i) + " is out of range for dimension " +
                                     num(static_cast<std::int64_t>(d)) + " of size " + num(n));
                }
                i = i < 0 ? i + n : i;
                r.box.start.push_back(i);
                r.box.count.push_back(1);
                r.box.step.push_back(1);
                ++d;
                break;
            }
            case DimIndex::Kind::slice:
                add_slice(e.slice());
                break;
            case DimIndex::Kind::strided: {
                Box one;
                one.start = {e.index()};
                one.count = {e.count()};
                one.step = {e.slice().step};
                const std::string why = check_box({shape[d]}, one);
                if (!why.empty()) {
                    throw UsageError("dimension " + num(static_cast<std::int64_t>(d)) + ": " + why);
                }
                r.box.start.push_back(e.count() == 0 ? 0 : e.index());
                r.box.count.push_back(e.count());
                r.box.step.push_back(e.slice().step);
                r.shape.push_back(e.count());
                r.dims.push_back(static_cast<int>(d));
                ++d;
                break;
            }
            case DimIndex::Kind::newaxis:
                r.shape.push_back(1);
                r.dims.push_back(-1);
                break;
            case DimIndex::Kind::ellipsis:
                for (std::int64_t k = 0; k < ndim - explicit_dims; ++k) {
                    add_slice(Slice::all());
                }
                break;
        }
    }
    while (d < shape.size()) {
        add_slice(Slice::all());
    }
    return r;
}

Selection parse_selection(std::string_view text) {
    Selection sel;
    auto trim = [](std::string_view s) {
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) {
            s.remove_prefix(1);
        }
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
            s.remove_suffix(1);
        }
        return s;
    };
    auto parse_int = [&](std::string_view s,
                         std::string_view entry) -> std::optional<std::int64_t> {
        s = trim(s);
        if (s.empty()) {
            return std::nullopt;
        }
        std::size_t i = 0;
        const bool neg = s[0] == '-';
        if (s[0] == '-' || s[0] == '+') {
            ++i;
        }
        if (i == s.size()) {
            throw UsageError("selection entry \"" + std::string(entry) + "\": \"" + std::string(s) +
                             "\" is not an integer");
        }
        std::int64_t v = 0;
        for (; i < s.size(); ++i) {
            if (std::isdigit(static_cast<unsigned char>(s[i])) == 0 ||
                __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v)) {
                throw UsageError("selection entry \"" + std::string(entry) + "\": \"" +
                                 std::string(s) + "\" is not a 64-bit integer");
            }
        }
        return neg ? -v : v;
    };
    if (trim(text).empty()) {
        return sel;
    }
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t comma = text.find(',', pos);
        if (comma == std::string_view::npos) {
            comma = text.size();
        }
        const std::string_view entry = trim(text.substr(pos, comma - pos));
        pos = comma + 1;
        if (entry == "...") {
            sel.push_back(DimIndex::ellipsis());
            continue;
        }
        if (entry == "None" || entry == "newaxis") {
            sel.push_back(DimIndex::newaxis());
            continue;
        }
        const std::size_t c1 = entry.find(':');
        if (c1 == std::string_view::npos) {
            const auto v = parse_int(entry, entry);
            if (!v) {
                throw UsageError("empty selection entry in \"" + std::string(text) + "\"");
            }
            sel.emplace_back(*v);
            continue;
        }
        const std::size_t c2 = entry.find(':', c1 + 1);
        if (c2 != std::string_view::npos && entry.find(':', c2 + 1) != std::string_view::npos) {
            throw UsageError("selection entry \"" + std::string(entry) +
                             "\" has more than two ':'");
        }
        Slice s;
        s.start = parse_int(entry.substr(0, c1), entry);
        s.stop =
            parse_int(entry.substr(c1 + 1, c2 == std::string_view::npos ? std::string_view::npos
                                                                        : c2 - c1 - 1),
                      entry);
        if (c2 != std::string_view::npos) {
            const auto step = parse_int(entry.substr(c2 + 1), entry);
            s.step = step.value_or(1);
            if (s.step == 0) {
                throw UsageError("selection entry \"" + std::string(entry) +
                                 "\": the step cannot be 0");
            }
        }
        sel.emplace_back(s);
    }
    return sel;
}

}  // namespace b2nd
