// b2nd ls PATH [--json]: the keys of a python-blosc2 store, with their kind, shape, dtype,
// where they live and their size; HDF5 files, Zarr hierarchies and S3 prefixes through
// ls_hierarchy.cpp.
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <b2nd/ctable.hpp>
#include <b2nd/error.hpp>
#include <b2nd/store.hpp>

#include "../detail/text.hpp"
#include "cli.hpp"

namespace b2nd::cli {

using detail::printable;

namespace {

const char* const kLsHelp =
    "usage: b2nd ls STORE [--json] [--keys]\n"
    "       b2nd ls FILE.h5[:/GROUP] | DIR.zarr | s3://BUCKET[/PREFIX] [--json]\n"
    "\n"
    "Lists the keys of a python-blosc2 store: a TreeStore or DictStore (a .b2z zip file or a\n"
    ".b2d directory) or an EmbedStore (.b2e), sorted, one line each: the key, its kind (ndarray,\n"
    "schunk, group or c2array, and the object a leaf holds when it is not a plain array), its\n"
    "shape and dtype, where it lives (external: a file of the directory; member: a member of the\n"
    "zip; embedded: inside embed.b2e) and its size as stored. A TreeStore's groups are listed;\n"
    "its __vlmeta__ holders are not (b2nd meta STORE:/GROUP reads them).\n"
    "\n"
    "  --json   one JSON list, an object per key: key, kind, shape and dtype (arrays), storage,\n"
    "           object (a leaf's object kind when not ndarray), size\n"
    "\n"
    "  --keys   a CTable's keys as for any store, instead of its columns\n"
    "\n"
    "A CTable (python-blosc2's table: a store with /_meta, /_valid_rows and /_cols/NAME) is\n"
    "listed as a table: its live and physical rows, then each column's name, kind (nullable\n"
    "and how), stored dtype and key; --json gives the list of columns as {name, kind, dtype}\n"
    "(dtype null for utf8, dictionary and variable-length columns). Columns hold deleted rows\n"
    "as stored; STORE:/_valid_rows says which rows are live.\n"
    "\n"
    "A leaf is read as STORE:/KEY by every command that reads an array, e.g.\n"
    "  b2nd export data.b2z:/run1/temperature t.npy\n"
    "\n"
    "An HDF5 file (or FILE.h5:/GROUP) is listed recursively, as h5ls -r: groups, datasets\n"
    "(shape, dtype, chunks, size as stored), named types, and soft and external links with\n"
    "their targets (never followed). A Zarr group (v2 or v3) is listed as zarr's tree(): its\n"
    "groups and arrays (shape, dtype, chunks, the bytes of their chunk files). --json gives a\n"
    "list of {path, kind, shape, dtype, chunks, stored, note or target}.\n"
    "\n"
    "An S3 prefix or bucket (s3://BUCKET, s3://BUCKET/PREFIX/) is listed one level down, as\n"
    "'aws s3 ls': each object, and each prefix with the number of objects under it and what it\n"
    "holds (sparse frame, store, zarr, or prefix); --json gives {name, kind, objects}.\n"
    "Credentials and endpoint: the AWS_* variables (docs/remote.md).\n";

/// A CTable: its columns (--json: a list of {name, kind, dtype}; dtype null where a column is
/// not one fixed-width array), then its rows.
void list_table(const CTable& t, bool json) {
    std::ostringstream o;
    if (json) {
        o << "[";
        bool first = true;
        for (const CTableColumn& c : t.columns()) {
            o << (first ? "\n  " : ",\n  ") << "{\"name\": " << json_string(c.name)
              << ", \"kind\": " << json_string(c.kind)
              << ", \"dtype\": " << (c.dtype.empty() ? "null" : json_string(c.dtype)) << "}";
            first = false;
        }
        o << (first ? "]\n" : "\n]\n");
        std::cout << o.str();
        return;
    }
    o << "CTable: " << t.nrows() << " live rows of " << t.physical_rows() << ", "
      << t.columns().size() << " columns\n";
    for (const CTableColumn& c : t.columns()) {
        std::string kind = c.kind;
        if (c.nullable) {
            kind += " (nullable, " + c.null_storage + ")";
        }
        std::string stored = c.key;
        if (c.kind == "utf8") {
            stored += " + .utf8";
        } else if (c.kind == "dictionary") {
            stored += " + _dict";
        } else if (c.kind == "computed") {
            stored = "(computed, not stored)";
        }
        o << "  " << std::left << std::setw(16) << c.name << " " << std::setw(30) << kind << " "
          << std::setw(8) << c.dtype << " " << stored << "\n";
    }
    std::cout << o.str();
}

/// ls's storage names: a remote reference lives in the embed map.
const char* storage_name(LeafStorage s) {
    return s == LeafStorage::remote ? "embedded" : to_string(s);
}

}  // namespace

int cmd_ls(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, {}, {"--json", "--keys", "--help"});
    if (a.has("--help")) {
        std::cout << kLsHelp;
        return 0;
    }
    if (a.positional.size() != 1) {
        throw ArgError("expected one STORE, HDF5 file, Zarr group or S3 prefix");
    }
    const std::string& path = a.positional[0];
    if (path.empty()) {
        throw ArgError("the path is empty");
    }
    if (ls_hierarchy(path, a.has("--json"))) {
        return 0;
    }
    Store store;
    try {
        store = Store::open(path, with_settings(OpenOptions{}));
    } catch (const FormatError& e) {
        if (std::string(e.what()).find("an array, not a store") != std::string::npos) {
            throw FormatError(std::string(e.what()) + "; 'b2nd info " + path + "' describes it");
        }
        throw;
    }
    const bool json = a.has("--json");
    if (CTable::is_ctable(store) && !a.has("--keys")) {
        list_table(CTable::open(store), json);
        return 0;
    }
    std::ostringstream o;
    if (json) {
        o << "[";
    }
    bool first = true;
    int unreadable = 0;
    for (const StoreEntry& e : store.entries()) {
        bool leaf = e.storage != LeafStorage::none && e.storage != LeafStorage::remote;
        LeafInfo info;
        std::string error;
        if (leaf) {
            try {
                info = store.describe(e.key);
            } catch (const Error& x) {
                // One damaged leaf does not hide the others: listed with what is wrong.
                error = in_cli_terms(x.what());
                leaf = false;
                ++unreadable;
            }
        }
        const bool array = leaf && e.kind == "ndarray";
        const std::string object =
            leaf && info.object != ObjectKind::ndarray && info.object != ObjectKind::schunk
                ? to_string(info.object)
                : "";
        if (json) {
            o << (first ? "\n  " : ",\n  ") << "{\"key\": " << json_string(e.key)
              << ", \"kind\": " << json_string(e.kind);
            if (array) {
                o << ", \"shape\": [";
                for (std::size_t i = 0; i < info.shape.size(); ++i) {
                    o << (i > 0 ? ", " : "") << info.shape[i];
                }
                o << "], \"dtype\": " << json_string(info.dtype);
            }
            if (!object.empty()) {
                o << ", \"object\": " << json_string(object);
            }
            if (e.storage != LeafStorage::none) {
                o << ", \"storage\": " << json_string(storage_name(e.storage));
            }
            if (e.storage == LeafStorage::remote) {
                o << ", \"path\": " << json_string(e.remote_path)
                  << ", \"urlbase\": " << json_string(redact_secrets(e.urlbase));
            }
            if (leaf) {
                o << ", \"size\": " << info.cbytes;
            }
            if (!error.empty()) {
                o << ", \"error\": " << json_string(error);
            }
            o << "}";
        } else {
            std::string what = e.kind + (object.empty() ? "" : " (" + object + ")");
            std::string shape = array ? to_string(info.shape) + " " + info.dtype : "";
            if (e.storage == LeafStorage::remote) {
                shape = e.remote_path + " at " + redact_secrets(e.urlbase);
            }
            if (!error.empty()) {
                shape = "unreadable: " + error;
            }
            o << std::left << std::setw(24) << printable(e.key) << " " << std::setw(10)
              << printable(what) << " " << std::setw(22) << printable(shape) << " "
              << (e.storage == LeafStorage::none ? "" : storage_name(e.storage));
            if (leaf) {
                o << " " << human_bytes(info.cbytes);
            }
            o << "\n";
        }
        first = false;
    }
    if (json) {
        o << (first ? "]\n" : "\n]\n");
    }
    std::cout << o.str();
    if (unreadable > 0) {
        std::cout.flush();
        std::cerr << "b2nd ls: " << detail::quoted_path(path) << ": " << unreadable
                  << (unreadable == 1 ? " leaf" : " leaves") << " could not be read\n";
        return 1;
    }
    return 0;
}

}  // namespace b2nd::cli
