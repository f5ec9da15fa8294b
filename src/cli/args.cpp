// The tool's argument parser (Args: options, flags, positionals) and the options every command
// shares: compression, the input open options and the global settings.
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>

#include "cli.hpp"

namespace b2nd::cli {

Args Args::parse(const std::vector<std::string>& argv,
                 const std::vector<std::string>& with_value,
                 const std::vector<std::string>& flags) {
    Args a;
    auto known = [](const std::vector<std::string>& v, const std::string& s) {
        for (const auto& x : v) {
            if (x == s) {
                return true;
            }
        }
        return false;
    };
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string& s = argv[i];
        if (s.size() > 2 && s.compare(0, 2, "--") == 0) {
            std::string name = s, value;
            const std::size_t eq = s.find('=');
            if (eq != std::string::npos) {
                name = s.substr(0, eq);
                value = s.substr(eq + 1);
            }
            if (known(with_value, name)) {
                if (eq == std::string::npos) {
                    if (i + 1 >= argv.size()) {
                        throw ArgError(name + " needs a value");
                    }
                    value = argv[++i];
                }
            } else if (known(flags, name)) {
                if (eq != std::string::npos) {
                    throw ArgError(name + " takes no value");
                }
            } else {
                throw ArgError("unknown option " + name);
            }
            a.options[name] = value;
        } else {
            a.positional.push_back(s);
        }
    }
    return a;
}

std::string Args::get(const std::string& name, const std::string& dflt) const {
    const auto it = options.find(name);
    return it == options.end() ? dflt : it->second;
}

namespace {

std::int64_t parse_int(const std::string& s, const std::string& what) {
    std::size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(s, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (s.empty() || used != s.size()) {
        throw ArgError(what + ": \"" + s + "\" is not an integer");
    }
    return v;
}

}  // namespace

std::int64_t Args::get_int(const std::string& name,
                           std::int64_t dflt,
                           std::int64_t lo,
                           std::int64_t hi) const {
    if (!has(name)) {
        return dflt;
    }
    const std::int64_t v = parse_int(get(name), name);
    if (v < lo || v > hi) {
        throw ArgError(name + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                       "]");
    }
    return v;
}

Shape Args::get_shape(const std::string& name) const {
    Shape s;
    const std::string text = get(name);
    std::size_t pos = 0;
    while (pos <= text.size() && !text.empty()) {
        std::size_t comma = text.find(',', pos);
        if (comma == std::string::npos) {
            comma = text.size();
        }
        const std::int64_t v = parse_int(text.substr(pos, comma - pos), name);
        if (v <= 0) {
            throw ArgError(name + ": sizes must be positive");
        }
        s.push_back(v);
        pos = comma + 1;
    }
    return s;
}

namespace {

/// A codec name as the tool accepts it: '-' and '_' alike, and python-blosc2's short names.
std::string codec_alias(std::string name) {
    for (char& ch : name) {
        ch = ch == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    if (name == "zfp_acc") {
        return "zfp_accuracy";
    }
    if (name == "zfp_prec") {
        return "zfp_precision";
    }
    return name;
}

}  // namespace

std::string compression_help(bool defaults) {
    return std::string("  --codec C[:P]    blosclz, lz4, lz4hc, zlib, zstd") +
           (defaults ? " (default zstd)" : "") +
           ", or a plugin with\n"
           "                   its parameter: ndlz:4|8 (2-d), zfp-accuracy:E (|error| <= 10^E),\n"
           "                   zfp-precision:P (bit planes), zfp-rate:R (percent of the size)\n"
           "  --clevel N       0-9" +
           (defaults ? " (default 1)" : "") +
           "\n"
           "  --filters LIST   comma-separated, applied in order: shuffle, bitshuffle, delta,\n"
           "                   trunc_prec:BITS, bytedelta, ndcell:S, ndmean:S, int_trunc:BITS,\n"
           "                   or none" +
           (defaults ? " (default shuffle)" : "") + "\n";
}

std::string with_compression_help(const char* help, bool defaults) {
    std::string text = help;
    const std::size_t at = text.find("@COMPRESSION@");
    if (at != std::string::npos) {
        text.replace(at, 13, compression_help(defaults));
    }
    return text;
}

bool apply_compression_options(const Args& a, CompressionParams& c) {
    if (a.has("--codec")) {
        std::string name = a.get("--codec");
        std::optional<std::int64_t> meta;
        const std::size_t colon = name.find(':');
        if (colon != std::string::npos) {
            meta = parse_int(name.substr(colon + 1), "--codec: parameter");
            name = name.substr(0, colon);
            if (*meta < -128 || *meta > 255) {
                throw ArgError("--codec: parameter " + std::to_string(*meta) +
                               " does not fit in a byte (-128..255)");
            }
        }
        const auto id = codec::parse_codec(codec_alias(name));
        if (!id) {
            throw ArgError("--codec: unknown codec '" + name + "'");
        }
        if (codec::is_builtin(*id) && meta) {
            throw ArgError("--codec: " + name + " takes no parameter");
        }
        if (!codec::is_builtin(*id) && !meta) {
            throw ArgError("--codec: " + name + " needs its parameter, as " + name + ":P");
        }
        c.codec = *id;
        c.codec_meta = static_cast<std::uint8_t>(meta.value_or(0));
        if (!codec::is_builtin(*id) && !a.has("--filters")) {
            c.filters.clear();  // the default SHUFFLE would only be refused (ZFP) or useless
        }
    }
    if (a.has("--clevel")) {
        c.clevel = static_cast<int>(a.get_int("--clevel", 1, 0, 9));
    }
    if (a.has("--filters")) {
        c.filters.clear();
        const std::string list = a.get("--filters");
        std::size_t pos = 0;
        while (pos <= list.size()) {
            std::size_t comma = list.find(',', pos);
            if (comma == std::string::npos) {
                comma = list.size();
            }
            std::string name = list.substr(pos, comma - pos);
            pos = comma + 1;
            std::uint8_t meta = 0;
            const std::size_t colon = name.find(':');
            if (colon != std::string::npos) {
                const std::string m = name.substr(colon + 1);
                name = name.substr(0, colon);
                const std::int64_t v = parse_int(m, "--filters: meta of " + name);
                if (v < -128 || v > 255) {
                    throw ArgError("--filters: meta " + m + " out of range");
                }
                meta = static_cast<std::uint8_t>(v);
            }
            if (name == "none") {
                continue;
            }
            const auto f = codec::parse_filter(name);
            if (!f) {
                throw ArgError("--filters: unknown filter '" + name + "'");
            }
            c.filters.push_back({*f, meta});
        }
        if (c.filters.size() > static_cast<std::size_t>(format::kChunkMaxFilters)) {
            throw ArgError("--filters: at most " + std::to_string(format::kChunkMaxFilters) +
                           " filters");
        }
    }
    return a.has("--codec") || a.has("--clevel") || a.has("--filters");
}

std::int64_t& max_chunks_setting() {
    static std::int64_t n = storage::kDefaultMaxChunks;
    return n;
}

int& lock_wait_setting() {
    static int ms = 0;
    return ms;
}

int& http_timeout_setting() {
    static int ms = storage::HttpOptions{}.timeout_ms;
    return ms;
}

bool& hdf5_external_setting() {
    static bool on = false;
    return on;
}

bool& hdf5_plugins_setting() {
    static bool on = true;
    return on;
}

OpenOptions input_options(const Args& a) {
    OpenOptions o = with_settings(OpenOptions{});
    o.nthreads = static_cast<int>(a.get_int("--nthreads", 0, 0, 1024));
    o.cache_bytes = 0;  // one pass over the data
    if (a.has("--dtype")) {
        try {
            o.dtype = DType::parse(a.get("--dtype"));
        } catch (const FormatError& e) {
            throw ArgError(std::string("--dtype: ") + e.what());
        }
    }
    return o;
}

}  // namespace b2nd::cli
