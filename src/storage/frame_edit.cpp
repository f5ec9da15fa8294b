// FrameEdit: the list of chunks a frame holds after an apply(), built by the caller.
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

#include "../detail/text.hpp"

namespace b2nd::storage {

using b2nd::detail::num;

void FrameEdit::keep(std::int64_t k) {
    slots_.push_back({Source::kept, k});
}

void FrameEdit::add_new(ByteSpan chunk) {
    slots_.push_back(fresh_slot(chunk));
}

void FrameEdit::add_staged(const StagedChunk& chunk) {
    slots_.push_back(staged_slot(chunk));
}

void FrameEdit::replace(std::int64_t pos, ByteSpan chunk) {
    check_position(pos, size() - 1);
    slots_[static_cast<std::size_t>(pos)] = fresh_slot(chunk);
}

void FrameEdit::replace(std::int64_t pos, const StagedChunk& chunk) {
    check_position(pos, size() - 1);
    slots_[static_cast<std::size_t>(pos)] = staged_slot(chunk);
}

void FrameEdit::insert(std::int64_t pos, ByteSpan chunk) {
    check_position(pos, size());
    slots_.insert(slots_.begin() + pos, fresh_slot(chunk));
}

void FrameEdit::erase(std::int64_t pos) {
    check_position(pos, size() - 1);
    slots_.erase(slots_.begin() + pos);
}

void FrameEdit::set_metalayer(const std::string& name, std::vector<std::uint8_t> content) {
    metalayers_.push_back({name, std::move(content), 0});
}

void FrameEdit::set_vlmeta(const std::string& name, std::vector<std::uint8_t> content) {
    vlmeta_.emplace_back(name, std::move(content));
}

void FrameEdit::erase_vlmeta(const std::string& name) {
    vlmeta_.emplace_back(name, std::nullopt);
}

FrameEdit::Slot FrameEdit::fresh_slot(ByteSpan chunk) {
    new_chunks_.push_back(chunk);
    return {Source::fresh, static_cast<std::int64_t>(new_chunks_.size()) - 1};
}

FrameEdit::Slot FrameEdit::staged_slot(const StagedChunk& chunk) {
    staged_.push_back(chunk);
    return {Source::staged, static_cast<std::int64_t>(staged_.size()) - 1};
}

void FrameEdit::check_position(std::int64_t pos, std::int64_t last) const {
    if (pos < 0 || pos > last) {
        throw UsageError("frame edit: position " + num(pos) + " out of range (" + num(size()) +
                         " chunks)");
    }
}

}  // namespace b2nd::storage
