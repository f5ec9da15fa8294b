// What 'b2nd convert' and 'b2nd concat' share: their options, read into CopyOptions, and a copy
// run with a progress bar and a summary line.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/ops.hpp>

#include "cli.hpp"

namespace b2nd::cli {

/// The options of a copy that take a value, and the flags.
extern const std::vector<std::string> kCopyValues;
extern const std::vector<std::string> kCopyFlags;

/// The CopyOptions the command line asks for (sources' settings where nothing is given). The
/// frame kind is --sframe or --cframe, else OUT's extension (.b2frame: sparse, .b2nd: contiguous),
/// else the first source's.
CopyOptions copy_options(const Args& a, const AnyArray& first, const std::string& out);

/// Runs `op` with a progress bar over the result's chunks and prints what was written.
int run_copy(const char* label,
             const std::string& out,
             CopyOptions o,
             std::int64_t chunk_bytes,
             const std::function<AnyArray(const CopyOptions&)>& op);

}  // namespace b2nd::cli
