#include <string>

#include <b2nd/codec/ids.hpp>
#include <b2nd/codec/registry.hpp>

namespace b2nd::codec {

std::string_view codec_name(Codec c) noexcept {
    switch (c) {
        case Codec::blosclz:
            return "blosclz";
        case Codec::lz4:
            return "lz4";
        case Codec::lz4hc:
            return "lz4hc";
        case Codec::zlib:
            return "zlib";
        case Codec::zstd:
            return "zstd";
        default:
            break;
    }
    if (const CodecPlugin* p = find_codec_plugin(static_cast<std::uint8_t>(c))) {
        return p->name;
    }
    return "unknown";
}

std::optional<Codec> parse_codec(std::string_view name) noexcept {
    for (Codec c : {Codec::blosclz, Codec::lz4, Codec::lz4hc, Codec::zlib, Codec::zstd}) {
        if (codec_name(c) == name) {
            return c;
        }
    }
    for (const CodecPlugin* p : codec_plugins()) {
        if (p->name == name) {
            return static_cast<Codec>(p->id);
        }
    }
    return std::nullopt;
}

std::optional<Codec> codec_from_code(std::uint8_t code) noexcept {
    switch (code) {
        case 0:
            return Codec::blosclz;
        case 1:
            return Codec::lz4;
        case 2:
            return Codec::lz4hc;
        case 4:
            return Codec::zlib;
        case 5:
            return Codec::zstd;
        default:
            return find_codec_plugin(code) != nullptr
                       ? std::optional<Codec>(static_cast<Codec>(code))
                       : std::nullopt;
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
        default:
            break;
    }
    if (const FilterPlugin* p = find_filter_plugin(id)) {
        return p->name;
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
    for (const FilterPlugin* p : filter_plugins()) {
        if (p->name == name) {
            return static_cast<Filter>(p->id);
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
