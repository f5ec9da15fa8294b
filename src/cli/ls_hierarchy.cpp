// b2nd ls on what is not a python-blosc2 store: the members of an HDF5 file or group, of a Zarr
// hierarchy, and what an S3 prefix (or a whole bucket) holds.
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include <b2nd/bridges.hpp>
#include <b2nd/storage/sources.hpp>

#include "../bridges/bridges.hpp"
#include "../bridges/hdf5_gate.hpp"
#include "../detail/text.hpp"
#include "cli.hpp"

namespace b2nd::cli {

using detail::printable;

namespace {

std::string json_shape(const Shape& s) {
    std::string t = "[";
    for (std::size_t i = 0; i < s.size(); ++i) {
        t += (i > 0 ? ", " : "") + std::to_string(s[i]);
    }
    return t + "]";
}

void print_entries(const std::vector<HierarchyEntry>& entries, bool json) {
    std::ostringstream o;
    if (json) {
        o << "[";
        bool first = true;
        for (const HierarchyEntry& e : entries) {
            o << (first ? "\n  " : ",\n  ") << "{\"path\": " << json_string(e.path)
              << ", \"kind\": " << json_string(e.kind);
            if (e.kind == "dataset" || e.kind == "array") {
                o << ", \"shape\": " << json_shape(e.shape)
                  << ", \"dtype\": " << (e.dtype.empty() ? "null" : json_string(e.dtype))
                  << ", \"chunks\": " << (e.chunks.empty() ? "null" : json_shape(e.chunks));
            }
            if (e.stored >= 0) {
                o << ", \"stored\": " << e.stored;
            }
            if (!e.note.empty()) {
                o << ", \"" << (e.kind.find("link") != std::string::npos ? "target" : "note")
                  << "\": " << json_string(e.note);
            }
            o << "}";
            first = false;
        }
        o << (first ? "]\n" : "\n]\n");
        std::cout << o.str();
        return;
    }
    for (const HierarchyEntry& e : entries) {
        std::string what;
        if (e.kind == "dataset" || e.kind == "array") {
            what = to_string(e.shape) + " " + (e.dtype.empty() ? "(unmapped)" : e.dtype);
            if (!e.chunks.empty()) {
                what += " chunks " + to_string(e.chunks);
            }
        }
        o << std::left << std::setw(32) << printable(e.path) << " " << std::setw(13)
          << printable(e.kind) << " " << printable(what);
        if (e.stored >= 0) {
            o << " " << human_bytes(e.stored);
        }
        if (!e.note.empty()) {
            o << (e.kind.find("link") != std::string::npos ? " -> " : " (") << printable(e.note)
              << (e.kind.find("link") != std::string::npos ? "" : ")");
        }
        o << "\n";
    }
    std::cout << o.str();
}

/// What a name under an S3 prefix is, by what it holds (a directory's files) or its extension.
std::string object_kind(const std::string& name, const std::vector<std::string>& inside) {
    const auto holds = [&](const char* file) {
        for (const std::string& f : inside) {
            if (f == file) {
                return true;
            }
        }
        return false;
    };
    const auto ends = [&](const char* ext) {
        const std::string e(ext);
        return name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0;
    };
    if (!inside.empty()) {
        if (holds("chunks.b2frame")) {
            return "sparse frame";
        }
        if (holds("embed.b2e")) {
            return "store";
        }
        if (holds("zarr.json") || holds(".zarray") || holds(".zgroup")) {
            return "zarr";
        }
        return "prefix";
    }
    if (ends(".b2nd") || ends(".b2frame") || ends(".b2f")) {
        return "frame";
    }
    if (ends(".b2z") || ends(".b2e")) {
        return "store";
    }
    if (ends(".npy")) {
        return "npy";
    }
    if (ends(".h5") || ends(".hdf5") || ends(".nc")) {
        return "hdf5";
    }
    return "object";
}

void list_prefix(const std::string& url, bool json) {
    std::string base = url;
    while (!base.empty() && base.back() == '/') {
        base.pop_back();
    }
    // The names one level down: an object, or a prefix with the files it holds.
    std::map<std::string, std::vector<std::string>> top;
    for (const std::string& name : storage::list_under(base, with_settings(OpenOptions{}))) {
        const std::size_t slash = name.find('/');
        auto& inside = top[slash == std::string::npos ? name : name.substr(0, slash + 1)];
        if (slash != std::string::npos) {
            inside.push_back(name.substr(slash + 1));
        }
    }
    std::ostringstream o;
    o << (json ? "[" : "");
    bool first = true;
    for (const auto& [name, inside] : top) {
        const std::string kind =
            object_kind(name.back() == '/' ? name.substr(0, name.size() - 1) : name, inside);
        if (json) {
            o << (first ? "\n  " : ",\n  ") << "{\"name\": " << json_string(name)
              << ", \"kind\": " << json_string(kind);
            if (!inside.empty()) {
                o << ", \"objects\": " << inside.size();
            }
            o << "}";
        } else {
            o << std::left << std::setw(32) << printable(name) << " " << std::setw(12) << kind;
            if (!inside.empty()) {
                o << " " << inside.size() << (inside.size() == 1 ? " object" : " objects");
            }
            o << "\n";
        }
        first = false;
    }
    o << (json ? (first ? "]\n" : "\n]\n") : "");
    std::cout << o.str();
}

bool store_name(std::string url) {
    while (!url.empty() && url.back() == '/') {
        url.pop_back();
    }
    for (const char* ext : {".b2z", ".b2d", ".b2e"}) {
        const std::string e(ext);
        if (url.size() > e.size() && url.compare(url.size() - e.size(), e.size(), e) == 0) {
            return true;
        }
    }
    return false;
}

}  // namespace

bool ls_hierarchy(const std::string& path, bool json) {
    if (storage::is_url(path)) {
        if (store_name(path) || storage::driver_name(path) != "S3") {
            return false;  // a store (listed by the store), or a driver that cannot list
        }
        list_prefix(path, json);
        return true;
    }
    if (bridges::hdf5_location(path)) {
        print_entries(list_hdf5(path), json);
        return true;
    }
    if (bridges::is_zarr(path)) {
        print_entries(list_zarr(path), json);
        return true;
    }
    return false;
}

}  // namespace b2nd::cli
