// b2nd show of python-blosc2's variable-length containers: a UTF8Array (NAME.b2nd beside
// NAME.utf8.b2nd, or KEY and KEY.utf8 in a store), an ObjectArray, a BatchArray or a ListArray,
// printed as a JSON list of items (--slice a:b selects items a..b-1).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

#include <b2nd/containers.hpp>
#include <b2nd/error.hpp>
#include <b2nd/npy.hpp>
#include <b2nd/objects.hpp>
#include <b2nd/storage/http.hpp>
#include <b2nd/store.hpp>

#include "../detail/text.hpp"
#include "cli.hpp"

namespace b2nd::cli {

namespace fs = std::filesystem;

std::vector<std::int64_t> item_indices(const std::string& text, std::int64_t n) {
    std::vector<std::int64_t> out;
    if (text.empty()) {
        for (std::int64_t i = 0; i < n; ++i) {
            out.push_back(i);
        }
        return out;
    }
    std::vector<std::string> parts(1);
    for (char c : text) {
        if (c == ':') {
            parts.emplace_back();
        } else if (c != ' ') {
            parts.back() += c;
        }
    }
    const auto number = [&](const std::string& s) -> std::optional<std::int64_t> {
        if (s.empty()) {
            return std::nullopt;
        }
        std::size_t used = 0;
        std::int64_t v = 0;
        try {
            v = std::stoll(s, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != s.size()) {
            throw ArgError("--slice: '" + text + "' is not a slice of items (a:b or a:b:step)");
        }
        return v;
    };
    if (parts.size() > 3) {
        throw ArgError("--slice: '" + text + "' is not a slice of items (a:b or a:b:step)");
    }
    if (parts.size() == 1) {
        std::int64_t i = *number(parts[0]);
        const std::int64_t k = i < 0 ? i + n : i;
        if (k < 0 || k >= n) {
            throw ArgError("--slice: index " + parts[0] + " is out of range for " + detail::num(n) +
                           " items");
        }
        return {k};
    }
    const std::int64_t step = parts.size() == 3 ? number(parts[2]).value_or(1) : 1;
    if (step == 0) {
        throw ArgError("--slice: the step cannot be 0");
    }
    const auto bound = [&](std::optional<std::int64_t> v, std::int64_t dflt) {
        if (!v) {
            return dflt;
        }
        std::int64_t x = *v < 0 ? *v + n : *v;
        return step > 0 ? std::clamp<std::int64_t>(x, 0, n)
                        : std::clamp<std::int64_t>(x, -1, n - 1);
    };
    const std::int64_t start = bound(number(parts[0]), step > 0 ? 0 : n - 1);
    const std::int64_t stop = bound(number(parts[1]), step > 0 ? n : -1);
    for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        out.push_back(i);
    }
    return out;
}

namespace {

/// Items [lo, hi) of the container; the selected ones printed.
template <class Read>
void print_items(const std::vector<std::int64_t>& idx, const Read& read) {
    std::cout << '[';
    if (!idx.empty()) {
        const auto [lo, hi] = std::minmax_element(idx.begin(), idx.end());
        const std::vector<Value> items = read(*lo, *hi + 1);
        bool first = true;
        for (std::int64_t i : idx) {
            std::cout << (first ? "" : ", ")
                      << items[static_cast<std::size_t>(i - *lo)].to_python_json();
            first = false;
        }
    }
    std::cout << "]\n";
}

void print_strings(const UTF8Array& u, const std::string& slice) {
    const auto idx = item_indices(slice, u.size());
    print_items(idx, [&](std::int64_t lo, std::int64_t hi) {
        const Strings s = u.read(lo, hi);
        std::vector<Value> v;
        v.reserve(s.size());
        for (std::size_t i = 0; i < s.size(); ++i) {
            v.emplace_back(std::string(s[i]));
        }
        return v;
    });
}

}  // namespace

std::optional<UTF8Array> utf8_input(const std::string& path, const OpenOptions& o) {
    if (const auto ref = store_reference(path)) {
        const Store s = Store::open(ref->first, with_settings(OpenOptions{}));
        const StoreEntry* e = s.find(ref->second);
        if (e == nullptr || e->storage == LeafStorage::none ||
            s.find(ref->second + ".utf8") == nullptr) {
            return std::nullopt;
        }
        return UTF8Array::open(s, ref->second, o);
    }
    if (fs::path(path).extension() != ".b2nd") {
        return std::nullopt;
    }
    if (storage::is_url(path)) {
        // The bytes beside the offsets, if the server has them (one request when it has not).
        AnyArray bytes;
        try {
            bytes = AnyArray::open(UTF8Array::bytes_path_for(path), o);
        } catch (const RemoteError& e) {
            if (e.status() == 404 || e.status() == 403 || e.status() == 410) {
                return std::nullopt;
            }
            throw;
        }
        return UTF8Array::from_arrays(AnyArray::open(path, o), std::move(bytes));
    }
    std::error_code ec;
    if (fs::is_regular_file(path, ec) && fs::is_regular_file(UTF8Array::bytes_path_for(path), ec)) {
        return UTF8Array::open(path, o);
    }
    return std::nullopt;
}

bool show_items(const std::string& path, const Args& a, const OpenOptions& o) {
    std::optional<UTF8Array> strings = utf8_input(path, o);
    FramePtr raw;
    if (!strings) {
        if (const auto ref = store_reference(path)) {
            const Store s = Store::open(ref->first, with_settings(OpenOptions{}));
            const StoreEntry* e = s.find(ref->second);
            if (e == nullptr || e->storage == LeafStorage::none) {
                return false;  // open_input says what is wrong
            }
            raw = s.open_frame(ref->second);
        } else {
            std::error_code ec;
            if (!fs::is_regular_file(path, ec) && !fs::is_directory(path, ec)) {
                return false;
            }
            try {
                raw = std::make_shared<const storage::Frame>(
                    storage::Frame::open(path, with_settings(storage::OpenOptions{})));
            } catch (const Error&) {
                return false;  // not a frame: the array path says what it is
            }
        }
        if (!is_item_container(*raw)) {
            return false;
        }
    }
    if (a.has("--field")) {
        throw ArgError("--field: " + path + " holds items of variable length, not records");
    }
    if (strings) {
        print_strings(*strings, a.get("--slice"));
        return true;
    }
    const auto idx = item_indices(a.get("--slice"), container_size(raw));
    print_items(idx,
                [&](std::int64_t lo, std::int64_t hi) { return container_items(raw, lo, hi); });
    return true;
}

void export_strings(const UTF8Array& u, const std::string& slice, NpySink& out) {
    const std::vector<std::int64_t> idx = item_indices(slice, u.size());
    constexpr std::size_t kBatch = 1 << 16;  // strings read at a time
    // Each batch of selected strings, read as one run of the array's strings.
    const auto batches = [&](const auto& each) {
        for (std::size_t at = 0; at < idx.size(); at += kBatch) {
            const std::size_t end = std::min(idx.size(), at + kBatch);
            const auto [lo, hi] =
                std::minmax_element(idx.begin() + static_cast<std::ptrdiff_t>(at),
                                    idx.begin() + static_cast<std::ptrdiff_t>(end));
            const Strings s = u.read(*lo, *hi + 1);
            for (std::size_t k = at; k < end; ++k) {
                each(idx[k], std::string(s[static_cast<std::size_t>(idx[k] - *lo)]));
            }
        }
    };
    // NumPy's np.array(strings): '<U' as wide as the longest string, in code points.
    std::int64_t width = 1;
    batches([&](std::int64_t i, const std::string& text) {
        std::size_t bad = 0;
        const std::int64_t n = detail::utf8_decode(text, nullptr, &bad);
        if (n < 0) {
            throw FormatError(detail::quoted_path(u.bytes().path()) + ": string " + detail::num(i) +
                              " is not valid UTF-8 (byte " +
                              detail::num(static_cast<std::int64_t>(bad)) + " of it)");
        }
        width = std::max(width, n);
    });
    out.begin(DType::parse("<U" + std::to_string(width)), {static_cast<std::int64_t>(idx.size())});
    std::vector<std::uint8_t> item(static_cast<std::size_t>(4 * width));
    std::u32string cps;
    batches([&](std::int64_t, const std::string& text) {
        cps.clear();
        (void)detail::utf8_decode(text, &cps);
        std::fill(item.begin(), item.end(), 0);
        for (std::size_t k = 0; k < cps.size(); ++k) {
            const auto c = static_cast<std::uint32_t>(cps[k]);
            for (int b = 0; b < 4; ++b) {
                item[4 * k + static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(c >> (8 * b));
            }
        }
        out.write({item.data(), item.size()});
    });
    out.finish();
}

}  // namespace b2nd::cli
