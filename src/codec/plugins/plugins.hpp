// Internal: the plugin codecs and filters b2nd-cpp brings (registry.hpp puts them in the table).
#pragma once

#include <string>
#include <vector>

#include <b2nd/codec/registry.hpp>

namespace b2nd::codec::plugins {

CodecPlugin ndlz();
/// ZFP accuracy, precision and rate (33-35); without libzfp, entries that refuse with
/// "built without ZFP".
std::vector<CodecPlugin> zfp();
FilterPlugin ndcell();
FilterPlugin ndmean();
FilterPlugin int_trunc();

/// "" when ctx carries a block shape of 1..max_ndim dims whose items fit the block, else why
/// not (`who` names the plugin).
std::string check_geometry(const BlockContext& ctx, const char* who, int max_ndim);
/// Throws FormatError when n bytes are not one block of ctx's geometry.
void require_block(const BlockContext& ctx, std::size_t n, const char* who);

}  // namespace b2nd::codec::plugins
