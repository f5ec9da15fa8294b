// Where a Zarr array's files are, and how they are read (zarr_files.hpp).
#include "zarr_files.hpp"

#include <filesystem>

#include <b2nd/error.hpp>
#include <b2nd/storage/sources.hpp>

#include "../detail/text.hpp"

namespace b2nd::bridges {

namespace fs = std::filesystem;
using detail::num;

std::string zarr_joined(const std::string& root, const std::string& key) {
    if (!root.empty() && root.back() == '/') {
        return root + key;
    }
    return root + "/" + key;
}

ZarrFiles::ZarrFiles(std::string root, storage::OpenOptions options)
    : root_(std::move(root)), url_(storage::is_url(root_)), options_(std::move(options)) {
    if (!url_) {
        std::error_code ec;
        real_root_ = fs::canonical(root_, ec).string();
    }
}

std::shared_ptr<const storage::ByteSource> ZarrFiles::open(const std::string& key) const {
    const std::string path = zarr_joined(root_, key);
    try {
        if (!url_) {
            std::error_code ec;
            const fs::file_status st = fs::status(path, ec);
            if (ec || st.type() == fs::file_type::not_found) {
                return nullptr;
            }
            const std::string real = fs::canonical(path, ec).string();
            if (ec || real_root_.empty() ||
                real.compare(0, real_root_.size() + 1, real_root_ + "/") != 0) {
                throw FormatError(detail::quoted_path(path) +
                                  ": a link that leads out of the Zarr array's directory; "
                                  "its files are read only inside it");
            }
            if (st.type() != fs::file_type::regular) {
                throw FormatError(detail::quoted_path(path) + ": not a regular file");
            }
            if (fs::file_size(path, ec) == 0 && !ec) {
                return storage::memory_source({}, nullptr, path);
            }
        }
        return storage::open_source(path, options_);
    } catch (const RemoteError& e) {
        if (e.not_found()) {
            return nullptr;
        }
        throw;
    } catch (const IoError& e) {
        if (e.code() == std::errc::no_such_file_or_directory) {
            return nullptr;
        }
        throw;
    }
}

std::optional<std::string> ZarrFiles::text(const std::string& key) const {
    const auto src = open(key);
    if (!src) {
        return std::nullopt;
    }
    const std::uint64_t n = src->size();
    if (n > kMaxZarrMetadataBytes) {
        throw FormatError(detail::quoted_path(zarr_joined(root_, key)) + ": " +
                          num(static_cast<std::int64_t>(n)) +
                          " bytes, too large for Zarr metadata");
    }
    const storage::SourceBytes b = src->read(0, n);
    return std::string(reinterpret_cast<const char*>(b.bytes.data()), b.bytes.size());
}

}  // namespace b2nd::bridges
