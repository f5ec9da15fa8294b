// b2nd: look at, check and convert b2nd arrays.
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/value.hpp>
#include <b2nd/version.hpp>

#include "../storage/publish.hpp"
#include "cli.hpp"
#include <pthread.h>

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

std::string human_bytes(std::int64_t n) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = static_cast<double>(n);
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        ++u;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

std::int64_t disk_bytes(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        std::int64_t n = 0;
        for (const auto& e : fs::recursive_directory_iterator(path, ec)) {
            if (e.is_regular_file(ec)) {
                n += static_cast<std::int64_t>(e.file_size(ec));
            }
        }
        return n;
    }
    const auto n = fs::file_size(path, ec);
    return ec ? 0 : static_cast<std::int64_t>(n);
}

std::string ratio_text(std::int64_t nbytes, std::int64_t cbytes) {
    if (cbytes <= 0) {
        return "-";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f",
                  static_cast<double>(nbytes) / static_cast<double>(cbytes));
    return buf;
}

std::string sizes_text(std::int64_t nbytes, std::int64_t cbytes) {
    return human_bytes(nbytes) + " in " + human_bytes(cbytes) + " (ratio " +
           ratio_text(nbytes, cbytes) + ")";
}

Deadline::Deadline(const Args& a) {
    if (!a.has("--max-seconds")) {
        return;
    }
    const std::string t = a.get("--max-seconds");
    char* end = nullptr;
    seconds_ = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0' || !(seconds_ >= 0.001) || seconds_ > 1e7) {
        throw ArgError("--max-seconds needs seconds, from 0.001 to 10000000");
    }
    until_ = std::chrono::steady_clock::now() +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                 std::chrono::duration<double>(seconds_));
}

bool Deadline::passed() const {
    return seconds_ > 0 && std::chrono::steady_clock::now() >= until_;
}

std::string Deadline::reached() const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "stopped at --max-seconds %g: ", seconds_);
    return buf;
}

std::string json_string(const std::string& s) {
    return Value(s).to_json();
}

int report(const std::string& cmd, const std::exception& e) {
    std::cout.flush();
    if (dynamic_cast<const ArgError*>(&e) != nullptr) {
        std::cerr << "b2nd " << cmd << ": " << redact_secrets(e.what()) << " (see 'b2nd " << cmd
                  << " --help')\n";
        return 2;
    }
    const std::string text = in_cli_terms(redact_secrets(e.what()));
    if (dynamic_cast<const LockError*>(&e) != nullptr) {
        std::cerr << "b2nd " << cmd << ": busy: " << text << " (--wait SECONDS waits for it)\n";
        return 3;
    }
    std::cerr << "b2nd " << cmd << ": " << text << "\n";
    return dynamic_cast<const UsageError*>(&e) != nullptr ? 2 : 1;
}

std::string in_cli_terms(std::string msg) {
    static const std::pair<const char*, const char*> kTerms[] = {
        {"OpenOptions::max_chunks", "--max-chunks"},
        {"CreateOptions::max_chunks", "--max-chunks"},
        {"OpenOptions::dtype", "--dtype"},
        {"the overwrite option", "--overwrite"},
        {" (open it with raw_objects to change the stored frame)", ""},
        {"; give larger chunks, or raise both limits", "; give larger --chunks, or raise it"},
    };
    for (const auto& [lib, flag] : kTerms) {
        for (std::size_t at = msg.find(lib); at != std::string::npos;
             at = msg.find(lib, at + std::strlen(flag))) {
            msg.replace(at, std::strlen(lib), flag);
        }
    }
    return msg;
}

}  // namespace b2nd::cli

namespace {

/// Takes --max-chunks N, --wait SECONDS and --timeout SECONDS out of `args` (either spelled NAME
/// VALUE or NAME=VALUE) into the settings. \throws ArgError
void take_global_options(std::vector<std::string>& args) {
    for (std::size_t i = 0; i < args.size();) {
        const std::string& s = args[i];
        const std::string name = s.substr(0, s.find('='));
        if (name != "--max-chunks" && name != "--wait" && name != "--timeout") {
            ++i;
            continue;
        }
        std::string value;
        std::size_t used = 1;
        if (name.size() < s.size()) {
            value = s.substr(name.size() + 1);
        } else if (i + 1 < args.size()) {
            value = args[i + 1];
            used = 2;
        }
        char* end = nullptr;
        if (name == "--max-chunks") {
            const long long n = std::strtoll(value.c_str(), &end, 10);
            if (value.empty() || *end != '\0' || n < 1) {
                throw b2nd::cli::ArgError("--max-chunks needs a positive integer");
            }
            b2nd::cli::max_chunks_setting() = n;
        } else {
            const double t = std::strtod(value.c_str(), &end);
            const double lo = name == "--wait" ? 0 : 0.001;
            if (value.empty() || *end != '\0' || !(t >= lo) || t > 86400) {
                throw b2nd::cli::ArgError(name + " needs seconds, from " +
                                          (name == "--wait" ? "0" : "0.001") + " to 86400");
            }
            (name == "--wait" ? b2nd::cli::lock_wait_setting()
                              : b2nd::cli::http_timeout_setting()) = static_cast<int>(t * 1000);
        }
        args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
                   args.begin() + static_cast<std::ptrdiff_t>(i + used));
    }
}

/// The tool's usage, from the command table: a long synopsis gets a line of its own.
std::string usage() {
    std::string u =
        "usage: b2nd COMMAND [ARGS]\n"
        "\n"
        "Look at, check and convert b2nd arrays (Blosc2 frames with the b2nd metalayer).\n"
        "\n"
        "commands:\n";
    for (const b2nd::cli::Command& c : b2nd::cli::commands()) {
        std::string head = std::string("  ") + c.name + " " + c.synopsis;
        if (head.size() > 33) {
            u += head + "\n" + std::string(34, ' ');
        } else {
            u += head + std::string(34 - head.size(), ' ');
        }
        u += std::string(c.summary) + "\n";
    }
    u += "\n"
         "Every command also takes:\n"
         "  --max-chunks N   arrays of more chunks than N are refused (default 16777216, 2^24:\n"
         "                   an index of 128 MiB); raise it for larger ones\n"
         "  --wait SECONDS   wait that long for another writer of an array this command\n"
         "                   writes to close (default 0: exit 3 at once)\n"
         "  --timeout SECONDS  the whole of each request to an http(s) URL, retries included\n"
         "                   (default 60): a server that does not answer fails after it\n"
         "\n"
         "Run 'b2nd COMMAND --help' for the options of a command.\n"
         "\n"
         "Exit codes: 0 success; 1 bad or unreadable data (a corrupt or truncated file, a\n"
         "failed read, arrays that differ for diff); 2 bad arguments (usage, a path that may\n"
         "not be written); 3 busy: another process holds the array for writing (--wait).\n";
    return u;
}

}  // namespace

namespace {

/// SIGINT, SIGTERM and SIGHUP are taken by one thread of their own (blocked in every other
/// thread, which inherit the mask from main): it removes the command's temporaries (outputs
/// being built, a compaction's new file), then lets the signal end the process as it would have
/// (the shell sees the signal).
void handle_signals() {
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) {
        return;
    }
    std::thread([] {
        int sig = 0;
        if (sigwait(&set, &sig) != 0) {
            return;
        }
        b2nd::detail::remove_registered_temporaries();
        std::signal(sig, SIG_DFL);
        pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
        std::raise(sig);
        std::_Exit(128 + sig);  // not reached: the signal ends the process
    }).detach();
}

}  // namespace

int main(int argc, char** argv) {
    handle_signals();
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::cerr << usage();
        return 2;
    }
    const std::string cmd = args.front();
    args.erase(args.begin());
    // Options every command takes, wherever they stand.
    try {
        take_global_options(args);
    } catch (const b2nd::cli::ArgError& e) {
        std::cerr << "b2nd " << cmd << ": " << e.what() << " (see 'b2nd --help')\n";
        return 2;
    }
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        std::cout << usage();
        return 0;
    }
    if (cmd == "--version") {
        std::cout << "b2nd " << B2ND_VERSION_STRING << "\n";
        return 0;
    }
    try {
        for (const b2nd::cli::Command& c : b2nd::cli::commands()) {
            if (cmd == c.name) {
                return c.run(args);
            }
        }
        std::cerr << "b2nd: unknown command '" << cmd << "'\n\n" << usage();
        return 2;
    } catch (const std::exception& e) {
        return b2nd::cli::report(cmd, e);
    }
}
