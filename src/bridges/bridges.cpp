// What every bridge shares, with or without libhdf5 in the build: HDF5 locations as users
// spell them (hdf5_gate.hpp), the attributes an export carries (bridges.hpp).
#include "bridges.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <b2nd/attrs.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/sources.hpp>

#include "../detail/text.hpp"
#include "../objects/objects_detail.hpp"
#include "hdf5_gate.hpp"

namespace b2nd::bridges {

namespace fs = std::filesystem;

namespace {

bool hdf5_name(const std::string& file) {
    std::string lower;
    for (const char c : file) {
        lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    for (const char* ext : {".h5", ".hdf5", ".he5", ".nc"}) {
        const std::string e(ext);
        if (lower.size() > e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0) {
            return true;
        }
    }
    return false;
}

}  // namespace

bool hdf5_signature(const std::string& file) {
    // Where libhdf5 looks for a superblock: offset 0, then 512 and each power of two after it
    // (a user block: MATLAB 7.3 files start their HDF5 part at 512).
    std::error_code ec;
    if (storage::is_url(file) || !fs::is_regular_file(file, ec)) {
        return false;
    }
    const std::uint64_t size = fs::file_size(file, ec);
    std::FILE* f = ec ? nullptr : std::fopen(file.c_str(), "rb");
    if (f == nullptr) {
        return false;
    }
    // A Blosc2 frame (its header's magic in the first bytes) has no user block: one read.
    char head[16] = {};
    const std::size_t got = std::fread(head, 1, sizeof head, f);
    static const char magic[] = "b2frame";
    const bool frame = std::search(head, head + got, magic, magic + 7) != head + got;
    bool found = false;
    for (std::uint64_t at = 0; !frame && !found && at + 8 <= size; at = at == 0 ? 512 : at * 2) {
        char sig[8] = {};
        found = ::fseeko(f, static_cast<off_t>(at), SEEK_SET) == 0 &&
                std::fread(sig, 1, 8, f) == 8 && std::memcmp(sig, "\x89HDF\r\n\x1a\n", 8) == 0;
    }
    std::fclose(f);
    return found;
}

std::optional<Hdf5Location> hdf5_location(const std::string& spec) {
    const auto hdf5_file = [](const std::string& file) {
        return !file.empty() && (hdf5_name(file) || hdf5_signature(file));
    };
    if (storage::is_url(spec)) {
        // URL.h5 or URL.h5:/dataset (refused by name when opened or written: HDF5 is local).
        const std::size_t colon = spec.rfind(":/");
        if (colon != std::string::npos && hdf5_name(spec.substr(0, colon))) {
            return Hdf5Location{spec.substr(0, colon), spec.substr(colon + 1)};
        }
        return hdf5_name(spec) ? std::optional<Hdf5Location>(Hdf5Location{spec, ""}) : std::nullopt;
    }
    if (hdf5_file(spec)) {
        return Hdf5Location{spec, ""};
    }
    // FILE:/path or FILE:path (h5py's relative spelling): the last ':' after which FILE is an
    // HDF5 file (a file name may hold ':').
    for (std::size_t colon = spec.rfind(':'); colon != std::string::npos && colon > 0;
         colon = spec.rfind(':', colon - 1)) {
        if (hdf5_file(spec.substr(0, colon))) {
            std::string dataset = spec.substr(colon + 1);
            if (!dataset.empty() && dataset.front() != '/') {
                dataset.insert(0, "/");
            }
            return Hdf5Location{spec.substr(0, colon), dataset};
        }
    }
    return std::nullopt;
}

void copy_box(const std::uint8_t* src,
              const Shape& src_shape,
              const Shape& src_start,
              std::uint8_t* dst,
              const Shape& dst_shape,
              const Shape& count,
              std::size_t item) {
    const std::size_t nd = count.size();
    if (nd == 0) {
        std::memcpy(dst, src, item);
        return;
    }
    for (const std::int64_t c : count) {
        if (c <= 0) {
            return;
        }
    }
    std::int64_t idx[kMaxNdim] = {};
    const auto row = static_cast<std::size_t>(count[nd - 1]) * item;
    while (true) {
        std::int64_t so = 0, dof = 0;
        for (std::size_t d = 0; d < nd; ++d) {
            so = so * src_shape[d] + src_start[d] + idx[d];
            dof = dof * dst_shape[d] + idx[d];
        }
        std::memcpy(dst + static_cast<std::size_t>(dof) * item,
                    src + static_cast<std::size_t>(so) * item, row);
        std::size_t d = nd - 1;
        while (d-- > 0) {
            if (++idx[d] < count[d]) {
                break;
            }
            idx[d] = 0;
        }
        if (d == static_cast<std::size_t>(-1)) {
            return;
        }
    }
}

void zero_outside(const Box& region,
                  const Shape& block_shape,
                  std::size_t itemsize,
                  std::uint8_t* into) {
    const std::size_t nd = block_shape.size();
    bool whole = true;
    std::int64_t n = 1;
    for (std::size_t d = 0; d < nd; ++d) {
        whole = whole && region.count[d] == block_shape[d];
        n *= block_shape[d];
    }
    if (whole) {
        return;
    }
    // Row by row along the last axis: a row outside the region is zeroed whole, a row inside it
    // past the region's extent along that axis.
    const std::int64_t last = block_shape[nd - 1];
    const std::size_t row = static_cast<std::size_t>(last) * itemsize;
    const std::size_t kept = static_cast<std::size_t>(region.count[nd - 1]) * itemsize;
    std::int64_t idx[kMaxNdim] = {};
    for (std::int64_t r = 0; r < n / std::max<std::int64_t>(last, 1); ++r) {
        bool inside = true;
        for (std::size_t d = 0; d + 1 < nd; ++d) {
            inside = inside && idx[d] < region.count[d];
        }
        std::uint8_t* p = into + static_cast<std::size_t>(r) * row;
        if (!inside) {
            std::memset(p, 0, row);
        } else if (kept < row) {
            std::memset(p + kept, 0, row - kept);
        }
        for (std::size_t d = nd - 1; d-- > 0;) {
            if (++idx[d] < block_shape[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
}

Shape bounded_block(const Shape& chunk, std::int64_t itemsize) {
    Shape block = chunk;
    const std::size_t nd = block.size();
    // The bytes of one index of axis d: the product of the block's later extents.
    const auto inner = [&](std::size_t d) {
        std::uint64_t b = static_cast<std::uint64_t>(std::max<std::int64_t>(itemsize, 1));
        for (std::size_t k = d + 1; k < nd; ++k) {
            b *= static_cast<std::uint64_t>(std::max<std::int64_t>(block[k], 1));
        }
        return b;
    };
    const auto most = static_cast<std::uint64_t>(kMaxBridgedBlockBytes);
    for (std::size_t d = 0; d < nd; ++d) {
        const std::uint64_t row = inner(d);
        if (row <= most / static_cast<std::uint64_t>(std::max<std::int64_t>(block[d], 1))) {
            break;  // the block fits
        }
        if (row > most) {
            block[d] = 1;  // not even one index of this axis fits: cut the later axes too
            continue;
        }
        // Equal parts: as few as fit, each as large as the division leaves.
        const auto fit = static_cast<std::int64_t>(most / row);
        const std::int64_t parts = (block[d] + fit - 1) / fit;
        block[d] = (block[d] + parts - 1) / parts;
        break;
    }
    return block;
}

Value::Map user_attributes(const AnyArray& a) {
    Value::Map out;
    const Attrs attrs = a.attrs();
    for (const std::string& name : attrs.names()) {
        if (!detail::object_metadata(name)) {
            out.emplace_back(name, attrs.get(name));
        }
    }
    return out;
}

}  // namespace b2nd::bridges

namespace b2nd {

void export_hdf5(const AnyArray& a, const std::string& location, const Hdf5ExportOptions& o) {
    const auto at = bridges::hdf5_location(location);
    if (!at) {
        throw UsageError(
            detail::quoted_path(location) +
            ": not an HDF5 location (FILE.h5:/path/to/dataset; also .hdf5, .he5, .nc)");
    }
    bridges::export_hdf5(a, *at, o);
}

}  // namespace b2nd
