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
#include <b2nd/storage/sources.hpp>
#include <b2nd/value.hpp>
#include <b2nd/version.hpp>

#include "../detail/text.hpp"
#include "../storage/publish.hpp"
#include "cli.hpp"
#include "progress.hpp"
#include <pthread.h>
#include <unistd.h>

namespace b2nd::cli {

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
    if (b2nd::storage::is_url(path)) {
        // An object's size, as its server says it (a prefix of objects: their listing's sum is
        // not had here, -1).
        try {
            return static_cast<std::int64_t>(
                b2nd::storage::open_source(path, with_settings(b2nd::OpenOptions{}))->size());
        } catch (const b2nd::Error&) {
            return -1;
        }
    }
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
    // Messages quote names from files and servers (attribute names, S3 keys): their control
    // characters are escaped, never sent to the terminal.
    if (dynamic_cast<const ArgError*>(&e) != nullptr) {
        std::cerr << "b2nd " << cmd << ": " << detail::printable(redact_secrets(e.what()), true)
                  << " (see 'b2nd " << cmd << " --help')\n";
        return 2;
    }
    const std::string text = detail::printable(in_cli_terms(redact_secrets(e.what())), true);
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
        {"OpenOptions::hdf5_external (b2nd --hdf5-external)", "--hdf5-external"},
        {"OpenOptions::hdf5_plugins", "--no-hdf5-plugins"},
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

/// Takes --max-chunks N, --wait SECONDS and --timeout SECONDS (either spelled NAME VALUE or
/// NAME=VALUE), --hdf5-external and --no-hdf5-plugins out of `args` into the settings.
/// \throws ArgError
void take_global_options(std::vector<std::string>& args) {
    for (std::size_t i = 0; i < args.size();) {
        const std::string& s = args[i];
        if (s == "--hdf5-external" || s == "--no-hdf5-plugins") {
            (s == "--hdf5-external" ? b2nd::cli::hdf5_external_setting()
                                    : b2nd::cli::hdf5_plugins_setting()) = s == "--hdf5-external";
            args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
            continue;
        }
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
        "Where an array is read, PATH may also be a python-blosc2 store's leaf (STORE.b2z:/KEY),\n"
        "an HDF5 dataset (FILE.h5:/path; any file with HDF5's signature: .nc, .nxs, .mat...),\n"
        "a Zarr v2/v3 array (DIR.zarr, DIR.zarr/group/array), or a URL: https://... or\n"
        "s3://BUCKET/KEY. Outputs may be s3:// URLs too (not HDF5). S3 is reached as the AWS\n"
        "CLI reaches it: AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,\n"
        "AWS_SESSION_TOKEN, AWS_PROFILE and ~/.aws/{credentials,config}; AWS_NO_SIGN_REQUEST=YES\n"
        "for public buckets.\n"
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
         "  --hdf5-external  follow HDF5 external links, external storage and virtual\n"
         "                   datasets to regular files in the HDF5 file's directory (refused\n"
         "                   by default: they can name any file you can read)\n"
         "  --no-hdf5-plugins  load no HDF5 filter plugin: datasets whose filters are not\n"
         "                   libhdf5's own, LZF or Blosc are refused\n"
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
    // A command that fails because a signal's thread took its temporaries away (an upload
    // aborted) waits for that thread to end the process by the signal.
    const auto unless_ending = [] {
        while (b2nd::detail::process_ending()) {
            ::pause();
        }
    };
    b2nd::cli::watch_uploads();
    try {
        for (const b2nd::cli::Command& c : b2nd::cli::commands()) {
            if (cmd == c.name) {
                const int rc = c.run(args);
                unless_ending();
                return rc;
            }
        }
        std::cerr << "b2nd: unknown command '" << cmd << "'\n\n" << usage();
        return 2;
    } catch (const std::exception& e) {
        unless_ending();
        return b2nd::cli::report(cmd, e);
    }
}
