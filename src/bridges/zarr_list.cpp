// The members of a local Zarr hierarchy (list_zarr, `b2nd ls run.zarr`): groups and arrays under
// a directory, recursively, as zarr's tree() shows them. A directory is a member when it holds
// .zarray, .zgroup (v2) or zarr.json (v3); links that lead out of the listed directory are not
// followed, as reads refuse them.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <b2nd/bridges.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/sources.hpp>

#include "../detail/text.hpp"
#include "bridges.hpp"

namespace b2nd::bridges {

namespace {

/// Metadata files larger than this are refused (zarr.json of any real array is kilobytes).
constexpr std::uintmax_t kMaxMetadataBytes = std::uintmax_t{16} << 20;

/// The JSON of the metadata file `name` in the node directory `dir`, or nil when there is none.
/// As ZarrFiles reads arrays: a link leading out of the directory, a file that is not regular
/// or one larger than kMaxMetadataBytes is refused by name; the text is never quoted.
/// \throws FormatError
Value metadata_json(const std::filesystem::path& dir, const char* name) {
    namespace fs = std::filesystem;
    const fs::path file = dir / name;
    const std::string where = detail::quoted_path(file.string());
    std::error_code ec;
    const fs::file_status st = fs::status(file, ec);
    if (st.type() == fs::file_type::not_found) {
        return Value();
    }
    const std::string real = fs::canonical(file, ec).string();
    const std::string root = fs::canonical(dir, ec).string();
    if (ec || real.compare(0, root.size() + 1, root + "/") != 0) {
        throw FormatError(where + ": a link that leads out of the Zarr node's directory");
    }
    if (st.type() != fs::file_type::regular) {
        throw FormatError(where + ": not a regular file");
    }
    if (fs::file_size(file, ec) > kMaxMetadataBytes || ec) {
        throw FormatError(where + ": larger than " + detail::num(kMaxMetadataBytes >> 20) +
                          " MiB, which no Zarr metadata file is");
    }
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return Value::from_json(text.str());
    } catch (const Error& e) {
        throw FormatError(where + ": " + e.what());
    }
}

}  // namespace

ZarrNode zarr_node(const std::string& path) {
    namespace fs = std::filesystem;
    const fs::path dir(path);
    std::error_code ec;
    if (fs::exists(dir / ".zarray", ec)) {
        return {"array", 2};
    }
    if (fs::exists(dir / ".zgroup", ec)) {
        return {"group", 2};
    }
    const Value meta = metadata_json(dir, "zarr.json");
    if (meta.is_nil()) {
        return {"", 0};
    }
    const Value* node = meta.find("node_type");
    if (node != nullptr && node->type() == Value::Type::string) {
        return {node->as<std::string>(), 3};
    }
    return {"array", 3};  // read as one: its reader says what is wrong
}

}  // namespace b2nd::bridges

namespace b2nd {

namespace {

namespace fs = std::filesystem;

Shape shape_of(const Value& v) {
    Shape s;
    for (const Value& e : v.array()) {
        s.push_back(e.as<std::int64_t>());
    }
    return s;
}

std::string node_kind(const fs::path& dir) {
    return bridges::zarr_node(dir.string()).kind;
}

/// The bytes of the files under an array's directory but its metadata: its chunks as stored.
std::int64_t chunk_bytes(const fs::path& dir) {
    std::int64_t total = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (it->is_regular_file(ec) && name != ".zarray" && name != ".zattrs" &&
            name != "zarr.json") {
            total += static_cast<std::int64_t>(it->file_size(ec));
        }
    }
    return total;
}

void walk(const fs::path& dir,
          const std::string& rel,
          const std::string& real_root,
          std::vector<HierarchyEntry>& out) {
    std::vector<fs::path> children;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        children.push_back(e.path());
    }
    std::sort(children.begin(), children.end());
    for (const fs::path& child : children) {
        if (!fs::is_directory(child, ec)) {
            continue;
        }
        const std::string real = fs::canonical(child, ec).string();
        if (ec || real.compare(0, real_root.size() + 1, real_root + "/") != 0) {
            continue;  // a link out of the hierarchy
        }
        HierarchyEntry e;
        e.path = rel + "/" + child.filename().string();
        std::string kind;
        try {
            kind = node_kind(child);
        } catch (const Error& x) {
            // A damaged member does not hide the others: listed with what is wrong.
            e.kind = "unreadable";
            e.note = x.what();
            out.push_back(std::move(e));
            continue;
        }
        if (kind.empty()) {
            continue;
        }
        e.kind = kind;
        if (kind == "array") {
            try {
                const Value s = bridges::zarr_summary(child.string(), OpenOptions{});
                e.shape = shape_of(s["shape"]);
                e.dtype = s["dtype"].as<std::string>();
                e.chunks = shape_of(s["chunks"]);
                e.stored = chunk_bytes(child);
            } catch (const Error& x) {
                e.note = x.what();
            }
            out.push_back(std::move(e));
        } else {
            const std::string sub = e.path;
            out.push_back(std::move(e));
            walk(child, sub, real_root, out);
        }
    }
}

}  // namespace

Value::Map zarr_attributes(const std::string& given) {
    const std::string where = detail::quoted_path(given);
    const std::string path = bridges::zarr_root(given);
    const bridges::ZarrNode node =
        storage::is_url(path) ? bridges::ZarrNode{} : bridges::zarr_node(path);
    if (node.kind.empty()) {
        throw UsageError(where + ": no local Zarr group or array here");
    }
    const Value v = bridges::metadata_json(path, node.version == 2 ? ".zattrs" : "zarr.json");
    const Value* attrs = node.version == 2 ? &v : v.find("attributes");
    if (attrs == nullptr || attrs->type() != Value::Type::map) {
        return {};  // a v2 node without .zattrs, a v3 one without attributes
    }
    return attrs->entries();
}

std::vector<HierarchyEntry> list_zarr(const std::string& given) {
    const std::string where = detail::quoted_path(given);
    if (storage::is_url(given)) {
        throw UsageError(where +
                         ": a Zarr hierarchy is listed from a local directory; 'b2nd ls' lists "
                         "what an S3 prefix holds");
    }
    const std::string path = bridges::zarr_root(given);
    const std::string kind = node_kind(path);
    if (kind.empty()) {
        throw UsageError(where +
                         ": no Zarr group or array here (no .zgroup, .zarray or zarr.json)");
    }
    std::vector<HierarchyEntry> out;
    if (kind == "array") {
        // An array lists itself: its path is the root's.
        const Value s = bridges::zarr_summary(path, OpenOptions{});
        HierarchyEntry e;
        e.path = "/";
        e.kind = "array";
        e.shape = shape_of(s["shape"]);
        e.dtype = s["dtype"].as<std::string>();
        e.chunks = shape_of(s["chunks"]);
        e.stored = chunk_bytes(path);
        out.push_back(std::move(e));
        return out;
    }
    std::error_code ec;
    walk(path, "", fs::canonical(path, ec).string(), out);
    return out;
}

}  // namespace b2nd
