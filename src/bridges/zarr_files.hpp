// Internal: where a Zarr array's files are (a local directory or a URL) and how they are read:
// local files only inside the array's directory once their links are resolved, metadata files
// bounded (zarr_files.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/open_options.hpp>

namespace b2nd::bridges {

/// Metadata files are small; a larger one is not metadata.
inline constexpr std::uint64_t kMaxZarrMetadataBytes = std::uint64_t{64} << 20;

/// `key` under `root` (a directory or a URL).
std::string zarr_joined(const std::string& root, const std::string& key);

/// Where a Zarr array's files are: a local directory or a URL.
class ZarrFiles {
public:
    ZarrFiles(std::string root, storage::OpenOptions options);

    /// The file `key` under the array, or null when there is none. A local file is read only
    /// when it is a regular file inside the array's directory once its links are resolved: a
    /// link to another file (/etc/passwd as .zarray, another array's chunk) is refused by name.
    std::shared_ptr<const storage::ByteSource> open(const std::string& key) const;

    /// The whole text of a metadata file, or nothing when there is none.
    std::optional<std::string> text(const std::string& key) const;

    const std::string& root() const noexcept { return root_; }

private:
    std::string root_;
    bool url_;
    storage::OpenOptions options_;
    std::string real_root_;  // local: the directory with its links resolved
};

}  // namespace b2nd::bridges
