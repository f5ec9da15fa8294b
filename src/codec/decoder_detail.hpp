// Internal: what the chunk decoder's two files share (chunk_check.cpp, chunk_decoder.cpp).
#pragma once

#include <cstdint>

#include <b2nd/codec/ids.hpp>
#include <b2nd/codec/registry.hpp>

namespace b2nd::codec::decoder_detail {

/// Whether decoding has something to undo for the filter in this slot (TRUNC_PREC and plugin
/// filters without a backward function have nothing).
inline bool undoes(std::uint8_t f, const FilterPlugin* plugin) {
    if (plugin != nullptr) {
        return static_cast<bool>(plugin->backward);
    }
    return f != 0 && f != static_cast<std::uint8_t>(Filter::trunc_prec);
}

}  // namespace b2nd::codec::decoder_detail
