// The b2nd tool: what commands check of the paths they read and write.
#include <cctype>
#include <cstdio>
#include <filesystem>

#include <b2nd/error.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/http.hpp>
#include <b2nd/store.hpp>

#include "../bridges/bridges.hpp"
#include "../bridges/hdf5_gate.hpp"
#include "../detail/text.hpp"
#include "../storage/outputs.hpp"
#include "cli.hpp"
#include <unistd.h>

namespace b2nd::cli {

namespace fs = std::filesystem;

void check_input(const std::string& path) {
    if (path.empty()) {
        throw ArgError("the path is empty");
    }
    std::error_code ec;
    const std::string store_hint =
        "; 'b2nd ls " + path + "' lists its keys, and a leaf reads as " + path + ":/KEY";
    if (fs::is_directory(path, ec) && fs::exists(fs::path(path) / "embed.b2e", ec) &&
        !fs::exists(fs::path(path) / "chunks.b2frame", ec)) {
        throw FormatError(detail::quoted_path(path) + ": this is a python-blosc2 store" +
                          store_hint);
    }
    if (!fs::is_regular_file(path, ec)) {
        return;  // a directory, or nothing: the library says what is wrong
    }
    std::uint8_t start[16] = {};
    std::size_t n = 0;
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
        n = std::fread(start, 1, sizeof start, f);
        std::fclose(f);
    }
    const std::string other = format::foreign_format({start, n});
    if (other == "a NumPy .npy file") {
        throw FormatError(detail::quoted_path(path) +
                          ": this is a NumPy .npy file, not a b2nd array; 'b2nd import " + path +
                          " OUT.b2nd' converts it");
    }
    if (other == "a zip archive") {
        throw FormatError(detail::quoted_path(path) + ": this is a zip archive, not a b2nd array" +
                          " (a python-blosc2 .b2z store? " + store_hint.substr(2) + ")");
    }
    if (!other.empty()) {
        const char* reader = other.compare(0, 8, "an HDF5 ") == 0
                                 ? " (b2nd reads its datasets as FILE.h5:/path/to/dataset)"
                             : other.compare(0, 9, "a netCDF ") == 0 ? " (ncdump reads it)"
                                                                     : "";
        throw FormatError(detail::quoted_path(path) + ": this is " + other + ", not a b2nd array" +
                          reader);
    }
}

std::optional<std::pair<std::string, std::string>> store_reference(const std::string& path) {
    if (storage::is_url(path)) {
        // A leaf of a remote store: URL.b2z:/KEY (a .b2d where the driver lists, a .b2e).
        for (const char* form : {".b2z:/", ".b2d:/", ".b2e:/"}) {
            const std::size_t p = path.find(form);
            if (p != std::string::npos) {
                return std::make_pair(path.substr(0, p + 4), path.substr(p + 5));
            }
        }
        return std::nullopt;
    }
    std::error_code ec;
    if (fs::exists(path, ec) || bridges::hdf5_location(path)) {
        return std::nullopt;  // a file, or an HDF5 dataset (FILE.h5:/path)
    }
    for (std::size_t p = path.find(":/"); p != std::string::npos; p = path.find(":/", p + 1)) {
        const std::string store = path.substr(0, p);
        if (!store.empty() && fs::exists(store, ec)) {
            return std::make_pair(store, path.substr(p + 1));
        }
    }
    return std::nullopt;
}

AnyArray open_input(const std::string& path, const OpenOptions& o) {
    if (bridges::hdf5_location(path)) {
        return AnyArray::open(path, o);  // FILE.h5:/dataset: the file is checked as HDF5
    }
    if (const auto ref = store_reference(path)) {
        if (o.writable) {
            throw ArgError(detail::quoted_path(path) +
                           ": a store's leaves are read-only here; 'b2nd export' or 'convert' "
                           "copy one out");
        }
        return Store::open(ref->first, with_settings(OpenOptions{})).open_array(ref->second, o);
    }
    check_input(path);
    return AnyArray::open(path, o);
}

std::string bridged_kind(const std::string& path) {
    if (bridges::is_zarr(path)) {
        return "a Zarr array";
    }
    return bridges::hdf5_location(path) ? "an HDF5 dataset" : "";
}

void refuse_bridged(const std::string& path) {
    if (const std::string kind = bridged_kind(path); !kind.empty()) {
        throw ArgError(
            detail::quoted_path(path) + ": " + kind +
            " (read in place), not a b2nd frame, which this command needs; 'b2nd verify' "
            "decodes its chunks, 'b2nd import' makes a b2nd array of it");
    }
}

const storage::Frame& input_frame(const std::string& path,
                                  std::optional<storage::Frame>& own,
                                  AnyArray& leaf,
                                  bool verify_checksums) {
    refuse_bridged(path);
    if (const auto ref = store_reference(path)) {
        OpenOptions raw = with_settings(OpenOptions{});
        raw.raw_objects = true;
        raw.cache_bytes = 0;
        raw.verify_checksums = verify_checksums;
        leaf = Store::open(ref->first, with_settings(OpenOptions{})).open_array(ref->second, raw);
        return leaf.frame();
    }
    check_input(path);
    storage::OpenOptions o = with_settings(storage::OpenOptions{});
    o.verify_checksums = verify_checksums;
    own.emplace(storage::is_url(path) ? storage::Frame::open_url(path, o)
                                      : storage::Frame::open(path, o));
    return *own;
}

AnyArray field_input(const AnyArray& arr, const Args& a) {
    Selection sel;
    try {
        sel = parse_selection(a.get("--slice"));
    } catch (const UsageError& e) {
        throw ArgError(std::string("--slice: ") + e.what());
    }
    DType dtype;
    Shape shape;
    std::vector<std::uint8_t> values;
    try {
        values = arr.read_field(a.get("--field"), sel, &dtype, &shape);
    } catch (const UsageError& e) {
        throw ArgError(std::string("--field: ") + e.what());
    }
    return AnyArray::create_in_memory_from(dtype, shape, {values.data(), values.size()});
}

namespace {

/// Refuses an output named as a store's leaf (STORE.b2d:/key, locally or on S3): commands that
/// write one array write a file, and "runs.b2d:/run3/t" would otherwise become an object or a
/// file of that literal name. \throws ArgError saying how a leaf is added
void refuse_leaf_output(const std::string& out) {
    std::string lower = out;
    for (char& c : lower) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    for (const char* form : {".b2z:/", ".b2d:/", ".b2e:/"}) {
        const std::size_t p = lower.find(form);
        if (p == std::string::npos) {
            continue;
        }
        const std::string store = out.substr(0, p + 4);
        const std::string key = out.substr(p + 6);
        std::string how;
        if (form[3] == 'd') {
            how = "a .b2d store's leaves are its files: write " + store + "/" + key + ".b2nd";
        } else {
            how = "a ." + std::string(form + 1, 3) + " store changes as a whole: 'b2nd pack " +
                  store +
                  " DIR.b2d' unpacks it, a leaf is written into DIR.b2d, and 'b2nd pack' "
                  "packs it again";
        }
        throw ArgError(detail::quoted_path(out) + ": names a leaf of the store \"" + store +
                       "\"; this command writes one array as a file, not into a store (" + how +
                       "; programs use Store::set)");
    }
}

}  // namespace

void check_output(const std::string& out,
                  const std::vector<std::string>& inputs,
                  bool overwrite,
                  detail::OutputKind kind) {
    refuse_leaf_output(out);
    const std::string where = detail::quoted_path(out);
    std::error_code ec;
    const bool there = fs::exists(fs::symlink_status(out, ec));
    if (storage::is_url(out)) {
        // What is at the destination, under the rules of local outputs, said before any work
        // (a conversion can take hours). The writers enforce the same rules when they publish;
        // this only says it sooner, as the local checks below do.
        const auto dest = storage::detail::open_destination(out, with_settings(OpenOptions{}));
        const storage::detail::RemotePresence present = dest->present();
        if (!present.empty()) {
            detail::check_replacement(where, detail::remote_replacement_refusal(present, kind),
                                      overwrite);
        }
    }
    for (const std::string& given : inputs) {
        if (storage::is_url(given) || storage::is_url(out)) {
            // An object, or a prefix of objects, is an input when one URL names it or holds the
            // other (s3://B/x.b2frame holds s3://B/x.b2frame/chunks.b2frame).
            const auto trim = [](std::string u) {
                while (!u.empty() && u.back() == '/') {
                    u.pop_back();
                }
                return u;
            };
            const std::string in =
                trim(store_reference(given) ? store_reference(given)->first : given);
            const std::string o = trim(out);
            const auto holds = [](const std::string& a, const std::string& b) {
                return b.size() > a.size() && b.compare(0, a.size(), a) == 0 && b[a.size()] == '/';
            };
            if (in == o || holds(o, in)) {
                throw ArgError(where + " is or holds the input \"" + given +
                               "\"; write to another URL (even --overwrite does not replace an "
                               "input)");
            }
            continue;
        }
        const auto ref = store_reference(given);
        const std::string in = ref ? ref->first : given;
        std::error_code e2;
        if (there && fs::equivalent(in, out, e2)) {
            throw ArgError(
                where + " is the input \"" + given +
                "\"; write to another path (even --overwrite does not replace an input)");
        }
        if (detail::path_within(in, out)) {
            throw ArgError(where + " holds the input \"" + given +
                           "\"; write to another path (even --overwrite does not replace what "
                           "holds an input)");
        }
        if (detail::path_within(out, in)) {
            throw ArgError(where + " is inside the input \"" + given + "\"; write to another path");
        }
    }
    if (!there) {
        return;
    }
    try {
        (void)detail::checked_output(out, kind, true, where);
    } catch (const UsageError& e) {
        throw ArgError(e.what());
    }
    if (!overwrite) {
        throw ArgError(where + " exists; --overwrite replaces it");
    }
}

}  // namespace b2nd::cli
