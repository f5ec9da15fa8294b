// b2nd meta PATH [NAME [VALUE]]: attributes (vlmeta) listed, read, set and deleted; metalayers
// listed and read.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include <b2nd/any_array.hpp>
#include <b2nd/attrs.hpp>
#include <b2nd/bridges.hpp>
#include <b2nd/error.hpp>
#include <b2nd/store.hpp>
#include <b2nd/value.hpp>

#include "../bridges/bridges.hpp"
#include "../bridges/hdf5_gate.hpp"
#include "../detail/text.hpp"
#include "cli.hpp"

namespace b2nd::cli {

namespace {

const char* const kMetaHelp =
    "usage: b2nd meta PATH                  list attributes (vlmeta) and metalayers, a line each:\n"
    "                                       'vlmeta NAME = JSON' or 'metalayer NAME = JSON'\n"
    "       b2nd meta PATH NAME             print one as JSON (an attribute, else a metalayer)\n"
    "       b2nd meta PATH NAME VALUE       set an attribute (stored as msgpack, as\n"
    "                                       python-blosc2 does)\n"
    "       b2nd meta PATH NAME --delete    remove an attribute\n"
    "\n"
    "Attributes are python-blosc2's vlmeta entries, one msgpack value each; they can be set and\n"
    "removed. Metalayers (b2nd, and any a writer added) are fixed when the array is created and\n"
    "can only be read. In JSON, bytes are {\"$bytes\": \"hex\"}, NaN and infinities\n"
    "{\"$float\": \"NaN\"}; entries that are not msgpack are shown as hex. python-blosc2's\n"
    "conventions: tuples are arrays, references and recipes (msgpack ext 43) {\"$ref\": {...}},\n"
    "whole Blosc2 objects (ext 42) {\"$blosc2\": {\"shape\", \"dtype\", ...}}.\n"
    "\n"
    "In a python-blosc2 store, PATH is STORE:/KEY for a leaf, STORE:/ for the tree's\n"
    "attributes and STORE:/GROUP for a group's (read-only).\n"
    "\n"
    "An HDF5 file (FILE.h5: the root group's attributes, netCDF's global ones), group or\n"
    "dataset (FILE.h5:/path), and a Zarr group or array, list their own attributes, read-only,\n"
    "as 'attribute NAME = JSON' (--json: {\"attributes\": {...}}).\n"
    "\n"
    "VALUE is JSON text, or @FILE to read it from a file, or - to read it from standard input.\n"
    "\n"
    "  --string  VALUE (or the file, or the input) is a plain string, not JSON\n"
    "  --json    list as one JSON object: {\"vlmeta\": {...}, \"metalayers\": {...}}\n"
    "\n"
    "examples:\n"
    "  b2nd meta t.b2nd units K --string\n"
    "  b2nd meta t.b2nd calib '{\"offset\": -273.15, \"factor\": 0.01}'\n"
    "  b2nd meta t.b2nd grid @grid.json\n";

std::string hex_of(const std::vector<std::uint8_t>& b) {
    std::string s;
    char buf[4];
    for (const std::uint8_t x : b) {
        std::snprintf(buf, sizeof buf, "%02x", x);
        s += buf;
    }
    return s;
}

/// An entry's msgpack as JSON, or {"$not_msgpack": "hex"} when it is not msgpack.
std::string shown(const std::vector<std::uint8_t>& raw, int indent = -1) {
    try {
        return Value::from_msgpack({raw.data(), raw.size()}).urls_redacted().to_python_json(indent);
    } catch (const FormatError&) {
        return Value::map({{"$not_msgpack", hex_of(raw)}}).to_json(indent);
    }
}

/// VALUE's text: the argument, or a file's content (@FILE), or standard input (-).
std::string value_text(const std::string& arg) {
    if (arg == "-") {
        // What a shell's `$(...)` drops too: the newline that ends the last line.
        std::string text(std::istreambuf_iterator<char>(std::cin), {});
        if (!text.empty() && text.back() == '\n') {
            text.pop_back();
            if (!text.empty() && text.back() == '\r') {
                text.pop_back();
            }
        }
        return text;
    }
    if (arg.size() > 1 && arg[0] == '@') {
        std::ifstream f(arg.substr(1), std::ios::binary);
        if (!f) {
            throw ArgError("VALUE: cannot read " + detail::quoted_path(arg.substr(1)));
        }
        return std::string(std::istreambuf_iterator<char>(f), {});
    }
    return arg;
}

/// The attributes of a store's tree or group (STORE:/ or STORE:/group).
/// Prints attributes as meta does (all, one by name, or --json), under `label` ("vlmeta" for
/// b2nd and stores, "attribute" for HDF5 and Zarr).
int print_attributes(const std::vector<std::pair<std::string, Value>>& items,
                     const Args& a,
                     const std::string& label) {
    if (a.positional.size() == 2) {
        for (const auto& [n, v] : items) {
            if (n == a.positional[1]) {
                std::cout << v.urls_redacted().to_python_json(2) << "\n";
                return 0;
            }
        }
        throw ArgError(detail::quoted_path(a.positional[0]) + ": no attribute '" + a.positional[1] +
                       "'");
    }
    if (a.has("--json")) {
        std::string out = "{\"" + (label == "vlmeta" ? label : label + "s") + "\": {";
        for (std::size_t i = 0; i < items.size(); ++i) {
            out += (i > 0 ? ", " : "") + json_string(items[i].first) + ": " +
                   items[i].second.urls_redacted().to_python_json();
        }
        std::cout << out << "}}\n";
        return 0;
    }
    for (const auto& [n, v] : items) {
        std::cout << label << std::string(label.size() < 10 ? 10 - label.size() : 1, ' ')
                  << detail::printable(n) << " = " << v.urls_redacted().to_python_json() << "\n";
    }
    return 0;
}

/// meta of an HDF5 file, group or dataset, or a Zarr group or array: their own attributes
/// (read-only here), no b2nd metalayer.
int print_bridged(const std::string& path, bool writes, const Args& a) {
    if (writes) {
        throw ArgError(detail::quoted_path(path) +
                       ": HDF5 and Zarr attributes are read-only here ('b2nd import' makes a "
                       "b2nd array, whose attributes meta sets)");
    }
    const Value::Map attrs = bridges::is_zarr(path) ? zarr_attributes(path) : hdf5_attributes(path);
    std::vector<std::pair<std::string, Value>> items;
    for (const auto& [k, v] : attrs) {
        items.emplace_back(k.type() == Value::Type::string ? k.as<std::string>() : k.to_json(), v);
    }
    return print_attributes(items, a, "attribute");
}

}  // namespace

int cmd_meta(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, {}, {"--json", "--delete", "--string", "--help"});
    if (a.has("--help")) {
        std::cout << kMetaHelp;
        return 0;
    }
    if (a.positional.empty() || a.positional.size() > 3) {
        throw ArgError("expected PATH [NAME [VALUE]]");
    }
    const std::string& path = a.positional[0];
    if (a.positional.size() >= 2 && a.positional[1].empty()) {
        throw ArgError("an attribute needs a name (NAME is empty)");
    }
    const bool writes = a.positional.size() == 3 || a.has("--delete");
    if (a.has("--delete") && a.positional.size() != 2) {
        throw ArgError("--delete needs PATH and NAME");
    }
    if (a.has("--string") && a.positional.size() != 3) {
        throw ArgError("--string goes with a VALUE to set");
    }
    OpenOptions o = with_settings(OpenOptions{});
    o.writable = writes;
    o.cache_bytes = 0;
    o.raw_objects = true;  // an object kind's frame as stored: its recipe is in its metadata
    if (const auto ref = store_reference(path)) {
        // STORE:/ and STORE:/group: the tree's or a group's attributes; STORE:/leaf: the leaf's.
        const Store store = Store::open(ref->first, with_settings(OpenOptions{}));
        const StoreEntry* e = store.find(ref->second);
        if (e == nullptr || e->storage == LeafStorage::none) {
            if (writes) {
                throw ArgError(detail::quoted_path(path) +
                               ": a store's attributes are read-only here");
            }
            return print_attributes(store.vlmeta(ref->second), a, "vlmeta");
        }
    }
    if (bridges::is_zarr(path) || bridges::hdf5_location(path)) {
        return print_bridged(path, writes, a);
    }
    AnyArray arr = open_input(path, o);
    const std::vector<std::string> vnames = arr.vlmeta_names();
    const std::vector<std::string> mnames = arr.metalayer_names();
    const auto has = [](const std::vector<std::string>& names, const std::string& n) {
        return std::find(names.begin(), names.end(), n) != names.end();
    };
    if (a.positional.size() == 1) {
        if (a.has("--json")) {
            std::string out = "{\"vlmeta\": {";
            for (std::size_t i = 0; i < vnames.size(); ++i) {
                out += (i > 0 ? ", " : "") + json_string(vnames[i]) + ": " +
                       shown(*arr.vlmeta(vnames[i]));
            }
            out += "}, \"metalayers\": {";
            for (std::size_t i = 0; i < mnames.size(); ++i) {
                out += (i > 0 ? ", " : "") + json_string(mnames[i]) + ": " +
                       shown(*arr.metalayer(mnames[i]));
            }
            std::cout << out << "}}\n";
        } else {
            for (const std::string& name : vnames) {
                std::cout << "vlmeta    " << detail::printable(name) << " = "
                          << shown(*arr.vlmeta(name)) << "\n";
            }
            for (const std::string& name : mnames) {
                std::cout << "metalayer " << detail::printable(name) << " = "
                          << shown(*arr.metalayer(name)) << "\n";
            }
        }
        return 0;
    }
    const std::string& name = a.positional[1];
    const std::string quoted = detail::quoted_path(path);
    if (a.has("--delete")) {
        if (!has(vnames, name)) {
            throw ArgError(quoted + ": no attribute '" + name + "'" +
                           (has(mnames, name) ? " ('" + name +
                                                    "' is a metalayer: metalayers cannot be "
                                                    "removed)"
                                              : ""));
        }
        (void)arr.attrs().erase(name);
        return 0;
    }
    if (a.positional.size() == 2) {
        if (has(vnames, name)) {
            std::cout << arr.attrs().get(name).urls_redacted().to_python_json(2) << "\n";
        } else if (has(mnames, name)) {
            std::cout << metalayer_value(arr, name).urls_redacted().to_python_json(2) << "\n";
        } else {
            throw ArgError(quoted + ": no attribute or metalayer '" + name + "'");
        }
        return 0;
    }
    const std::string text = value_text(a.positional[2]);
    Value v;
    if (a.has("--string")) {
        v = Value(text);
    } else {
        try {
            v = Value::from_json(text);
        } catch (const UsageError& e) {
            throw ArgError(std::string("VALUE: ") + e.what() +
                           " (for a plain string, add --string)");
        }
    }
    arr.attrs().set(name, v);
    return 0;
}

}  // namespace b2nd::cli
