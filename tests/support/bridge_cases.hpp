// The bridges corpus (corpus_dir()/bridges: HDF5 files by h5py, Zarr v2 arrays by zarr-python,
// Zarr v3 arrays checked by zarrita; damaged copies; the values each holds as .npy) as cases.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <b2nd/shape.hpp>

#include "files.hpp"
#include "json.hpp"

namespace b2nd::test {

struct BridgeCase {
    std::string name;
    std::string src;     ///< absolute (FILE.h5:/path for HDF5)
    std::string expect;  ///< absolute .npy ("" for must-fail cases)
    Json entry;          ///< the manifest's entry
};

inline std::string bridges_dir() {
    return corpus_dir() + "/bridges";
}

/// Whether the bridges corpus is there (tests skip, saying so, without it).
inline bool have_bridges() {
    return !corpus_dir().empty() && std::filesystem::exists(bridges_dir() + "/manifest.json");
}

/// The manifest's cases of `kinds` (hdf5, zarr2, zarr3, export, fail).
inline std::vector<BridgeCase> bridge_cases(const std::vector<std::string>& kinds) {
    std::vector<BridgeCase> out;
    const std::string root = bridges_dir();
    const Json m = load_json_file(root + "/manifest.json");
    for (const Json& c : m["cases"].as_array()) {
        if (std::find(kinds.begin(), kinds.end(), c["kind"].as_string()) == kinds.end()) {
            continue;
        }
        const std::string src = c.has("src") ? root + "/" + c["src"].as_string() : "";
        const std::string expect = c.has("expect") ? root + "/" + c["expect"].as_string()
                                   : c.has("npy")  ? root + "/" + c["npy"].as_string()
                                                   : "";
        out.push_back({c["name"].as_string(), src, expect, c});
    }
    return out;
}

/// The case named `name`. \throws std::runtime_error when there is none
inline BridgeCase bridge_case(const std::string& name) {
    for (const BridgeCase& c : bridge_cases({"hdf5", "zarr2", "zarr3", "export", "fail"})) {
        if (c.name == name) {
            return c;
        }
    }
    throw std::runtime_error("no bridges case " + name);
}

inline Shape json_shape(const Json& j) {
    Shape s;
    for (const Json& e : j.as_array()) {
        s.push_back(e.as_int());
    }
    return s;
}

}  // namespace b2nd::test
