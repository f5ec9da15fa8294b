// A frame's metadata as read: the metalayers (in the header) and the vlmetalayers (in the
// trailer, each a compressed chunk, decoded when asked for).
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/error.hpp>

#include "frame_impl.hpp"

namespace b2nd::storage {

namespace {

/// A vlmetalayer's decoded size is capped: a hostile trailer must not cause a huge allocation.
constexpr std::int64_t kMaxVlmetaBytes = std::int64_t{1} << 30;

}  // namespace

const std::vector<format::Metalayer>& Frame::metalayers() const noexcept {
    return impl_->header.metalayers;
}

const format::Metalayer* Frame::metalayer(const std::string& name) const noexcept {
    return impl_->header.metalayer(name);
}

std::vector<std::string> Frame::vlmeta_names() const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    std::vector<std::string> names;
    for (const auto& m : impl_->vlmeta) {
        names.push_back(m.name);
    }
    return names;
}

std::optional<std::vector<std::uint8_t>> Frame::vlmeta(const std::string& name) const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    const Impl& f = *impl_;
    for (const auto& m : f.vlmeta) {
        if (m.name == name) {
            try {
                return codec::decode_chunk(m.content, 1, kMaxVlmetaBytes);
            } catch (const FormatError& e) {
                // The content's place in the file: the trailer ends the frame.
                rethrow_with_context(e, f.where() + ": vlmetalayer '" + name + "'",
                                     f.base + f.header.frame_len - f.trailer_len + m.offset);
            }
        }
    }
    return std::nullopt;
}

ChecksumReport Frame::checksums() const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    const detail::Checks& c = impl_->checks;
    return {c.state(), c.problems(), c.carried() ? c.version() : 0, c.table_bytes()};
}

std::string Frame::check_chunk(std::int64_t i) const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    const Impl& f = *impl_;
    const StoredChunk c = f.chunk_unlocked(i);
    const std::string why = f.checks.mismatch(static_cast<std::size_t>(i), c.bytes, c.record);
    if (why.empty()) {
        return why;
    }
    return FormatError(f.chunk_context(i, c.file) + ": " + why, c.offset).what();
}

}  // namespace b2nd::storage
