// Internal: what a writer may replace at the path it was given, and what the replacement keeps of
// the old one (its permissions and owner). One rule for the library's `overwrite` options and the
// tool's `--overwrite`:
//
// - an existing path is replaced only with `overwrite`, and only when it holds what the writer
//   makes (an array, an .npy file, a store): anything else is refused by name, so that a typo
//   never deletes a directory of results;
// - a symbolic link is written through (the file or directory it leads to is replaced, the link
//   stays), a link to nothing is refused;
// - devices, FIFOs and sockets are refused, and so is a read-only file;
// - the replacement keeps the old one's mode and, where the system allows, its owner.
#pragma once

#include <optional>
#include <string>

#include "sources/destination.hpp"
#include <sys/types.h>

namespace b2nd::detail {

/// What a writer makes at its target.
enum class OutputKind {
    array,  ///< a Blosc2 frame: a contiguous frame file or a sparse frame directory
    npy,    ///< a NumPy .npy file
    store,  ///< a python-blosc2 store: a .b2z zip, a .b2d directory or a .b2e frame
    hdf5,   ///< an HDF5 file (datasets are added to it)
    zarr,   ///< a Zarr array: a directory holding zarr.json or .zarray
};

/// "an array", "an .npy file", "a store"
const char* output_kind_name(OutputKind kind);

/// The path to publish at for the path a caller named (`target`, trailing slashes dropped): the
/// path itself, or for a symbolic link what it leads to. \throws UsageError, naming `where`, for
/// an existing target without `overwrite`, one that is not of `kind` (an empty file or directory
/// is of every kind), a read-only one, a device or other special file, a link to nothing.
std::string checked_output(const std::string& target,
                           OutputKind kind,
                           bool overwrite,
                           const std::string& where);

/// Why an existing path cannot be replaced by a new `kind` (empty: it can): what is there, in
/// the user's terms ("a directory holding \"notes.txt\", which is not part of an array").
std::string replacement_refusal(const std::string& path, OutputKind kind);

/// Throws the UsageError for replacing what is at `where` (it exists): without `overwrite`,
/// "already exists" (and `why` it could not be replaced anyway); with it, `why` when not empty.
void check_replacement(const std::string& where, const std::string& why, bool overwrite);

/// replacement_refusal for a URL's destination: what the object, or the objects under the
/// prefix, hold that `kind` may not replace (empty: it may).
std::string remote_replacement_refusal(const storage::detail::RemotePresence& p, OutputKind kind);

/// Whether `inner` is `outer`, or lies inside the directory `outer` (links and '..' resolved;
/// `inner` need not exist yet).
bool path_within(const std::string& inner, const std::string& outer);

/// A path with its symbolic links resolved when it is one (the file or directory it leads to),
/// else the path as given: where a rewrite puts its new file, so that the link stays a link.
std::string through_link(const std::string& path);

/// What a special file is, for messages ("a FIFO", "a character device"...); empty for regular
/// files, directories and links.
std::string special_kind(mode_t m);

/// The permission bits and owner of a file or directory, to give to what replaces it.
struct Ownership {
    unsigned dir_mode = 0;   ///< of the directory itself (or of the file)
    unsigned file_mode = 0;  ///< of the files inside a directory (its frame or store file)
    unsigned uid = 0, gid = 0;
};
/// What is at `path` now (links followed); nullopt when nothing is.
std::optional<Ownership> ownership_of(const std::string& path);
/// Gives `path` (a file, or a directory and everything in it) those modes and, where the
/// system allows, that owner. Where the group cannot be kept, the group's bits are dropped: a
/// replacement is never more open than what it replaces.
void give_ownership(const std::string& path, const Ownership& o) noexcept;
/// The same for an open file (a temporary made to replace `like`): nothing when `like` is
/// missing.
void take_ownership(int fd, const std::string& like) noexcept;

}  // namespace b2nd::detail
