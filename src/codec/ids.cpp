#include <string>

#include <b2nd/codec/ids.hpp>

namespace b2nd::codec {

std::string_view compressor_name(Compressor c) noexcept {
    switch (c) {
        case Compressor::blosclz:
            return "blosclz";
        case Compressor::lz4:
            return "lz4";
        case Compressor::lz4hc:
            return "lz4hc";
        case Compressor::zlib:
            return "zlib";
        case Compressor::zstd:
            return "zstd";
    }
    return "unknown";
}

std::optional<Compressor> parse_compressor(std::string_view name) noexcept {
    for (Compressor c : {Compressor::blosclz, Compressor::lz4, Compressor::lz4hc, Compressor::zlib,
                         Compressor::zstd}) {
        if (compressor_name(c) == name) {
            return c;
        }
    }
    return std::nullopt;
}

std::optional<Compressor> compressor_from_code(std::uint8_t code) noexcept {
    switch (code) {
        case 0:
            return Compressor::blosclz;
        case 1:
            return Compressor::lz4;
        case 2:
            return Compressor::lz4hc;
        case 4:
            return Compressor::zlib;
        case 5:
            return Compressor::zstd;
        default:
            return std::nullopt;
    }
}

std::string filter_name(std::uint8_t id) {
    switch (static_cast<Filter>(id)) {
        case Filter::none:
            return "none";
        case Filter::shuffle:
            return "shuffle";
        case Filter::bitshuffle:
            return "bitshuffle";
        case Filter::delta:
            return "delta";
        case Filter::trunc_prec:
            return "trunc_prec";
        case Filter::bytedelta_legacy:
            return "bytedelta_legacy";
        case Filter::bytedelta:
            return "bytedelta";
    }
    return "filter" + std::to_string(id);
}

std::optional<Filter> parse_filter(std::string_view name) noexcept {
    for (Filter f : {Filter::none, Filter::shuffle, Filter::bitshuffle, Filter::delta,
                     Filter::trunc_prec, Filter::bytedelta}) {
        if (filter_name(static_cast<std::uint8_t>(f)) == name) {
            return f;
        }
    }
    return std::nullopt;
}

std::string comp_format_name(std::uint8_t format) {
    switch (static_cast<CompFormat>(format)) {
        case CompFormat::blosclz:
            return "blosclz";
        case CompFormat::lz4:
            return "lz4";
        case CompFormat::zlib:
            return "zlib";
        case CompFormat::zstd:
            return "zstd";
        case CompFormat::user_defined:
            return "user-defined";
        case CompFormat::schunk:
            return "schunk-defined";
    }
    return "format" + std::to_string(format);
}

std::string_view split_mode_name(SplitMode m) noexcept {
    switch (m) {
        case SplitMode::always:
            return "always";
        case SplitMode::never:
            return "never";
        case SplitMode::automatic:
            return "auto";
        case SplitMode::forward_compat:
            return "forward_compat";
    }
    return "unknown";
}

}  // namespace b2nd::codec
