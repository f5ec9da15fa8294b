#include <algorithm>
#include <cctype>

#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>
#include <b2nd/selection.hpp>

#include "../detail/text.hpp"

namespace b2nd {

using detail::num;

namespace {

/// The indices the box takes along dimension d, in its order.
std::vector<std::int64_t> box_indices(const Box& box, std::size_t d) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(box.count.at(d)));
    for (std::size_t j = 0; j < v.size(); ++j) {
        v[j] = box.start[d] + static_cast<std::int64_t>(j) * box.step[d];
    }
    return v;
}

}  // namespace

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
    // The wrapped indices of each array dimension selected by a list.
    std::vector<std::optional<std::vector<std::int64_t>>> listed(shape.size());
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
            case DimIndex::Kind::list: {
                const std::int64_t n = shape[d];
                std::vector<std::int64_t> idx = e.indices();
                std::int64_t lo = n, hi = -1;
                for (std::int64_t& i : idx) {
                    if (i < -n || i >= n) {
                        throw UsageError("index " + num(i) + " in the list for dimension " +
                                         num(static_cast<std::int64_t>(d)) +
                                         " is out of range for its size " + num(n));
                    }
                    i = i < 0 ? i + n : i;
                    lo = std::min(lo, i);
                    hi = std::max(hi, i);
                }
                const auto len = static_cast<std::int64_t>(idx.size());
                r.box.start.push_back(len == 0 ? 0 : lo);
                r.box.count.push_back(len == 0 ? 0 : hi - lo + 1);
                r.box.step.push_back(1);
                r.shape.push_back(len);
                r.dims.push_back(static_cast<int>(d));
                listed[d] = std::move(idx);
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
    std::int64_t size = 1;
    for (std::int64_t e : r.shape) {
        if (format::mul_overflows(size, e, &size)) {
            throw UsageError("a selection of shape " + to_string(r.shape) +
                             ": its element count does not fit 64 bits");
        }
    }
    if (std::none_of(listed.begin(), listed.end(), [](const auto& l) { return l.has_value(); })) {
        return r;
    }
    r.lists.resize(shape.size());
    if (size == 0) {
        return r;  // nothing selected: no indices to keep
    }
    // Slices and integers become lists too. Their total length is bounded by ndim times the
    // result's size; refuse what would take gigabytes of indices before allocating any.
    std::uint64_t total = 0;
    for (std::size_t k = 0; k < shape.size(); ++k) {
        total += listed[k] ? listed[k]->size() : static_cast<std::uint64_t>(r.box.count[k]);
    }
    constexpr std::uint64_t kMaxIndices = std::uint64_t{1} << 28;
    if (total > kMaxIndices) {
        throw UsageError("an orthogonal selection of shape " + to_string(r.shape) + " needs " +
                         std::to_string(total) + " indices (more than " +
                         std::to_string(kMaxIndices) + ")");
    }
    for (std::size_t k = 0; k < shape.size(); ++k) {
        r.lists[k] = listed[k] ? std::move(*listed[k]) : box_indices(r.box, k);
    }
    return r;
}

std::vector<std::int64_t> Resolved::indices(std::size_t d) const {
    return orthogonal() ? lists.at(d) : box_indices(box, d);
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
                format::mul_overflows(v, 10, &v) || format::add_overflows(v, s[i] - '0', &v)) {
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
        // The next comma outside brackets ends the entry.
        std::size_t comma = pos;
        int depth = 0;
        for (; comma < text.size() && (depth > 0 || text[comma] != ','); ++comma) {
            if (text[comma] == '[') {
                if (++depth > 1) {
                    throw UsageError("selection \"" + std::string(text) +
                                     "\": index lists cannot be nested");
                }
            } else if (text[comma] == ']' && --depth < 0) {
                throw UsageError("selection \"" + std::string(text) + "\": unmatched ']'");
            }
        }
        if (depth != 0) {
            throw UsageError("selection \"" + std::string(text) + "\": unmatched '['");
        }
        const std::string_view entry = trim(text.substr(pos, comma - pos));
        pos = comma + 1;
        if (!entry.empty() && entry.front() == '[') {
            if (entry.back() != ']') {
                throw UsageError("selection entry \"" + std::string(entry) +
                                 "\": text after the index list");
            }
            const std::string_view body = trim(entry.substr(1, entry.size() - 2));
            if (body.empty()) {
                throw UsageError("selection entry " + num(static_cast<std::int64_t>(sel.size())) +
                                 ": the index list is empty");
            }
            std::vector<std::int64_t> list;
            std::size_t p = 0;
            while (p <= body.size()) {
                std::size_t c = body.find(',', p);
                if (c == std::string_view::npos) {
                    c = body.size();
                }
                const std::string_view item = trim(body.substr(p, c - p));
                p = c + 1;
                if (item.empty() && c == body.size() && !list.empty()) {
                    break;  // a trailing comma, as Python allows
                }
                const auto v = parse_int(item, entry);
                if (!v) {
                    throw UsageError("selection entry \"" + std::string(entry) +
                                     "\": an empty item in the index list");
                }
                list.push_back(*v);
            }
            sel.push_back(DimIndex::list(std::move(list)));
            continue;
        }
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
