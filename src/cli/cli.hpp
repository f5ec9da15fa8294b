// The `b2nd` command-line tool: shared argument handling.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/containers.hpp>
#include <b2nd/grid.hpp>
#include <b2nd/npy.hpp>
#include <b2nd/params.hpp>
#include <b2nd/storage/frame.hpp>

#include "../storage/outputs.hpp"

namespace b2nd::cli {

/// Bad command-line arguments (exit code 2).
struct ArgError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Positional arguments and --options of one command.
struct Args {
    std::vector<std::string> positional;
    std::map<std::string, std::string> options;  // "--flag" -> "" for flags

    /// Splits argv: options in `with_value` take the next argument (or "=value").
    static Args parse(const std::vector<std::string>& argv,
                      const std::vector<std::string>& with_value,
                      const std::vector<std::string>& flags);
    bool has(const std::string& name) const { return options.count(name) != 0; }
    std::string get(const std::string& name, const std::string& dflt = "") const;
    std::int64_t get_int(const std::string& name,
                         std::int64_t dflt,
                         std::int64_t lo,
                         std::int64_t hi) const;
    /// "4,5,6" -> {4, 5, 6}
    Shape get_shape(const std::string& name) const;
};

/// Applies --codec, --clevel and --filters (comma-separated, NAME or NAME:META, or none) to c;
/// true when any was given.
bool apply_compression_options(const Args& a, CompressionParams& c);
/// The help lines of --codec, --clevel and --filters (with the defaults, or without).
std::string compression_help(bool defaults);
/// `help` with its "@COMPRESSION@" line replaced by compression_help(defaults).
std::string with_compression_help(const char* help, bool defaults);

/// --max-chunks N, taken by main() from anywhere on the command line of any command: how many
/// chunks an array may have (open and create: the library's max_chunks options).
std::int64_t& max_chunks_setting();
/// --wait SECONDS, taken by main() likewise: how long a command waits for another writer of an
/// array it writes (else it exits 3, busy), in milliseconds.
int& lock_wait_setting();
/// --timeout SECONDS, likewise: the whole of each request to a URL, retries included, in ms.
int& http_timeout_setting();
/// --hdf5-external, likewise: HDF5 external links, external storage and virtual datasets
/// followed inside the file's directory (OpenOptions::hdf5_external).
bool& hdf5_external_setting();
/// --no-hdf5-plugins, likewise: libhdf5 loads no filter plugin (OpenOptions::hdf5_plugins).
bool& hdf5_plugins_setting();
/// `o` with the settings every command shares (--max-chunks, --wait, --timeout,
/// --hdf5-external, --no-hdf5-plugins): every open and create of the tool goes through it.
template <class Options>
Options with_settings(Options o) {
    o.max_chunks = max_chunks_setting();
    o.lock_wait_ms = lock_wait_setting();
    if constexpr (std::is_base_of_v<storage::OpenOptions, Options>) {
        o.http.timeout_ms = http_timeout_setting();
    }
    if constexpr (std::is_base_of_v<b2nd::OpenOptions, Options>) {
        o.hdf5_external = hdf5_external_setting();
        o.hdf5_plugins = hdf5_plugins_setting();
    }
    return o;
}

/// How a command that reads an array once opens it: --nthreads, --dtype, no block cache.
OpenOptions input_options(const Args& a);

/// --field NAME over --slice: the field's values as an array of their own in memory (numpy's
/// a[sel]['NAME']), for the commands that take --field. \throws ArgError naming the option
AnyArray field_input(const AnyArray& arr, const Args& a);

/// A UTF8Array named by `path`: NAME.b2nd beside NAME.utf8.b2nd (files, or URLs when the
/// server has both), or STORE:/KEY beside KEY.utf8; nullopt for anything else.
std::optional<UTF8Array> utf8_input(const std::string& path, const OpenOptions& o);

/// python's slice of n items: "a:b[:c]" or one index "i" (negatives from the end); all of them
/// for "". \throws ArgError
std::vector<std::int64_t> item_indices(const std::string& text, std::int64_t n);
/// b2nd export of a UTF8Array: the strings `slice` selects (item_indices) as NumPy's
/// np.array(strings) holds them, '<U' as wide as the longest (in code points), into `out`.
/// \throws FormatError for a string that is not valid UTF-8 (naming it)
void export_strings(const UTF8Array& u, const std::string& slice, NpySink& out);

/// b2nd show of a variable-length container (a UTF8Array pair, an ObjectArray, BatchArray or
/// ListArray): prints its items as a JSON list and returns true; false for anything else.
bool show_items(const std::string& path, const Args& a, const OpenOptions& o);

/// Refuses a path that is not a Blosc2 frame but a file another command reads, saying so
/// (a .npy: 'b2nd import' converts it). \throws FormatError
void check_input(const std::string& path);
/// "STORE:/key" (a leaf or group of a .b2z, .b2d or .b2e store): the store's path and the key,
/// when the part before ":/" exists and `path` itself does not; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> store_reference(const std::string& path);
/// check_input, then AnyArray::open; for STORE:/key the store's leaf (read-only: o.writable is
/// refused with an ArgError).
AnyArray open_input(const std::string& path, const OpenOptions& o);
/// b2nd ls of an HDF5 file or group, a Zarr hierarchy or an S3 prefix (printed, true); false for
/// what is none of them (a store).
bool ls_hierarchy(const std::string& path, bool json);
/// "a Zarr array" or "an HDF5 dataset" when `path` names one (read in place, not a frame); "".
std::string bridged_kind(const std::string& path);
/// Refuses a Zarr array or an HDF5 dataset where a command needs a frame. \throws ArgError
void refuse_bridged(const std::string& path);
/// The frame of an input, whatever it holds (python-blosc2's object kinds as stored): the
/// file's own, held in `own`, or a store leaf's, held by `leaf`.
/// With `verify_checksums` off, a frame whose checksum table is broken opens too (verify).
const storage::Frame& input_frame(const std::string& path,
                                  std::optional<storage::Frame>& own,
                                  AnyArray& leaf,
                                  bool verify_checksums = true);
/// --max-seconds S of the commands whose work a file's claims can make long (verify, diff):
/// when it has passed, they stop, report what they saw, and exit 4 unless they found a problem.
class Deadline {
public:
    /// From `a`'s --max-seconds (none when absent). \throws ArgError for a bad value
    explicit Deadline(const Args& a);
    /// Whether the time is up (checked between chunks or slabs).
    bool passed() const;
    /// "stopped at --max-seconds S: ", for the report.
    std::string reached() const;

private:
    double seconds_ = 0;  // 0: none
    std::chrono::steady_clock::time_point until_;
};
/// The exit code of a command stopped by its Deadline before the end, with nothing found.
constexpr int kExitStopped = 4;

/// What b2nd verify finds in a frame: every problem (checksum table, vlmetalayers, each chunk
/// that does not match its checksum or does not decode), the chunk count and sizes.
struct FrameCheck {
    std::vector<std::string> bad;
    std::int64_t bad_chunks = 0;
    std::int64_t chunks = 0;
    std::int64_t nbytes = 0;
    std::int64_t cbytes = 0;
    std::int64_t checked = 0;  // chunks checked: fewer than `chunks` when the deadline passed
};
/// Runs those checks on `frame` (opened without checksum verification), the array at `path`
/// or `leaf`, with a progress bar (cmd_verify.cpp).
FrameCheck check_frame(const std::string& path,
                       const storage::Frame& frame,
                       const AnyArray& leaf,
                       int nthreads,
                       const Deadline* deadline = nullptr);
/// Checks the output of a command that writes one before anything is read or written: refused
/// when it exists, unless `overwrite`, and then unless it is of `kind` (the library's rules,
/// storage/outputs.hpp: a link is written through, never a device, a read-only file, or a
/// directory holding anything else); always when it is one of `inputs` (the same file or
/// directory, also through links or '..'), holds one, or lies inside one. \throws ArgError
void check_output(const std::string& out,
                  const std::vector<std::string>& inputs,
                  bool overwrite,
                  detail::OutputKind kind);

/// One command of the tool: its name, its arguments and a line on what it does (the usage text
/// is made from the table), and what runs it (cmd_NAME.cpp).
struct Command {
    const char* name;
    const char* synopsis;  ///< arguments after the name
    const char* summary;
    int (*run)(const std::vector<std::string>& argv);
};
/// Every command, in the order --help lists them (commands.cpp).
const std::vector<Command>& commands();

int cmd_info(const std::vector<std::string>& argv);
int cmd_export(const std::vector<std::string>& argv);
/// Whether `out` names an output of another format (an HDF5 dataset, FILE.h5:/path).
bool bridge_output(const std::string& out);
/// b2nd export IN OUT for such an output (cmd_export_bridges.cpp).
int export_bridge(const Args& a, const std::string& in_path, const std::string& out);
int cmd_import(const std::vector<std::string>& argv);
int cmd_append(const std::vector<std::string>& argv);
int cmd_verify(const std::vector<std::string>& argv);
int cmd_checksum(const std::vector<std::string>& argv);
/// "checksums: current (...)", "checksums: none (...)": what b2nd checksum and info say.
const char* checksum_state_text(storage::ChecksumReport::State s);
/// How a covered frame's chunks are checked (its table version); empty when not covered.
std::string checksum_version_text(const storage::ChecksumReport& r);
/// "current", "stale", "broken", "none" (b2nd info --json).
const char* checksum_state_name(storage::ChecksumReport::State s);
int cmd_convert(const std::vector<std::string>& argv);
int cmd_compact(const std::vector<std::string>& argv);
int cmd_concat(const std::vector<std::string>& argv);
int cmd_show(const std::vector<std::string>& argv);
int cmd_meta(const std::vector<std::string>& argv);
int cmd_bench(const std::vector<std::string>& argv);
int cmd_diff(const std::vector<std::string>& argv);
int cmd_ls(const std::vector<std::string>& argv);
int cmd_pack(const std::vector<std::string>& argv);

/// Prints a command's error on stderr ("b2nd CMD: ...", in the tool's terms) and returns its
/// exit code: 2 bad arguments (ArgError, UsageError), 3 busy (LockError), 1 anything else (bad
/// data, a failed read).
int report(const std::string& cmd, const std::exception& e);

/// A library message in the tool's terms: the options it names become the flags that set them
/// ("OpenOptions::dtype" -> "--dtype").
std::string in_cli_terms(std::string msg);

/// The bytes a file, or the files under a directory, take; an object at a URL, its size (-1
/// when the server does not say).
std::int64_t disk_bytes(const std::string& path);
/// "512.0 MiB"
std::string human_bytes(std::int64_t n);
/// The one way every command states sizes: "1.4 MiB in 697.8 KiB (ratio 2.06)", from the
/// uncompressed bytes (shape x itemsize) and the bytes the chunks take (AnyArray::cbytes).
std::string sizes_text(std::int64_t nbytes, std::int64_t cbytes);
/// nbytes / cbytes with two decimals ("-" when nothing is stored).
std::string ratio_text(std::int64_t nbytes, std::int64_t cbytes);
/// JSON string literal.
std::string json_string(const std::string& s);

}  // namespace b2nd::cli
