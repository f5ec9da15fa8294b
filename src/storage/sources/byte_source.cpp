// The byte sources a frame reads through (include/b2nd/storage/byte_source.hpp): bytes held in
// memory (a mapping or a buffer), and windows of another source.
#include <algorithm>
#include <cstring>

#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>
#include <b2nd/storage/byte_source.hpp>

#include "../../detail/text.hpp"

namespace b2nd::storage {

namespace {

/// Throws unless [offset, offset + n) lies within `size` bytes of the source `name`.
void check_range(const std::string& name,
                 std::uint64_t size,
                 std::uint64_t offset,
                 std::uint64_t n) {
    std::uint64_t end = 0;
    if (format::add_overflows(offset, n, &end) || end > size) {
        throw FormatError(b2nd::detail::quoted_path(name) + ": bytes [" + std::to_string(offset) +
                              ", " + std::to_string(offset) + " + " + std::to_string(n) +
                              ") pass the end of its " + std::to_string(size) + " bytes",
                          offset);
    }
}

/// Bytes in memory: a mapping or a caller's buffer.
class MemorySource final : public ByteSource {
public:
    MemorySource(ByteSpan bytes, std::shared_ptr<const void> owner, std::string name)
        : bytes_(bytes), owner_(std::move(owner)), name_(std::move(name)) {}

    std::uint64_t size() const override { return bytes_.size(); }
    const std::string& name() const override { return name_; }
    SourceBytes read(std::uint64_t offset, std::uint64_t n) const override {
        check_range(name_, bytes_.size(), offset, n);
        return {bytes_.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(n)),
                owner_};
    }
    std::optional<SourceBytes> view() const override { return SourceBytes{bytes_, owner_}; }

private:
    ByteSpan bytes_;
    std::shared_ptr<const void> owner_;
    std::string name_;
};

class WindowSource final : public ByteSource {
public:
    WindowSource(std::shared_ptr<const ByteSource> whole,
                 std::uint64_t offset,
                 std::uint64_t size,
                 std::string name)
        : whole_(std::move(whole)), offset_(offset), size_(size), name_(std::move(name)) {}

    std::uint64_t size() const override { return size_; }
    const std::string& name() const override { return name_.empty() ? whole_->name() : name_; }
    SourceBytes read(std::uint64_t offset, std::uint64_t n) const override {
        check_range(name(), size_, offset, n);
        return whole_->read(offset_ + offset, n);
    }
    std::optional<SourceBytes> view() const override {
        std::optional<SourceBytes> all = whole_->view();
        if (all) {
            all->bytes = all->bytes.subspan(static_cast<std::size_t>(offset_),
                                            static_cast<std::size_t>(size_));
        }
        return all;
    }
    std::uint64_t offset_in_file() const noexcept override {
        return whole_->offset_in_file() + offset_;
    }
    bool remote() const noexcept override { return whole_->remote(); }
    void read_into(const std::vector<RangeInto>& ranges) const override {
        std::vector<RangeInto> moved(ranges);
        for (RangeInto& r : moved) {
            if (r.got != nullptr) {
                r.n = r.offset < size_ ? std::min(r.n, size_ - r.offset) : 0;
            } else {
                check_range(name(), size_, r.offset, r.n);
            }
            r.offset += offset_;
        }
        whole_->read_into(moved);
    }
    std::string stamp() const override { return whole_->stamp(); }
    TransferStats transfers() const override { return whole_->transfers(); }
    bool strong_identity() const noexcept override { return whole_->strong_identity(); }

private:
    std::shared_ptr<const ByteSource> whole_;
    std::uint64_t offset_, size_;
    std::string name_;
};

}  // namespace

std::shared_ptr<const ByteSource> ByteSource::sibling(const std::string&) const {
    return nullptr;
}

std::shared_ptr<const ByteSource> ByteSource::reopen() const {
    return nullptr;
}

void ByteSource::read_batch(const std::vector<SourceRanges*>& batch) const {
    for (SourceRanges* s : batch) {
        s->file->read_into(s->ranges);
    }
}

void read_many(std::vector<SourceRanges>& batch) {
    // One entry per source (the chunks of a contiguous frame share theirs): its ranges go out
    // together.
    for (std::size_t k = 1; k < batch.size();) {
        std::size_t same = 0;
        while (same < k && batch[same].file != batch[k].file) {
            ++same;
        }
        if (same < k) {
            batch[same].ranges.insert(batch[same].ranges.end(), batch[k].ranges.begin(),
                                      batch[k].ranges.end());
            batch.erase(batch.begin() + static_cast<std::ptrdiff_t>(k));
        } else {
            ++k;
        }
    }
    // Then one group per batch key (in the order of first appearance), each read by one of its
    // sources; sources without a key read alone.
    std::vector<bool> done(batch.size(), false);
    for (std::size_t k = 0; k < batch.size(); ++k) {
        if (done[k]) {
            continue;
        }
        const void* key = batch[k].file->batch_key();
        std::vector<SourceRanges*> group{&batch[k]};
        for (std::size_t j = k + 1; key != nullptr && j < batch.size(); ++j) {
            if (!done[j] && batch[j].file->batch_key() == key) {
                group.push_back(&batch[j]);
                done[j] = true;
            }
        }
        if (group.size() == 1) {
            batch[k].file->read_into(batch[k].ranges);
        } else {
            batch[k].file->read_batch(group);
        }
    }
}

void ByteSource::read_into(const std::vector<RangeInto>& ranges) const {
    for (const RangeInto& r : ranges) {
        std::uint64_t n = r.n;
        if (r.got != nullptr) {
            n = r.offset < size() ? std::min(n, size() - r.offset) : 0;
            *r.got = n;
        }
        const SourceBytes b = read(r.offset, n);
        if (n > 0) {
            std::memcpy(r.into, b.bytes.data(), static_cast<std::size_t>(n));
        }
    }
}

std::shared_ptr<const ByteSource> mapped_source(std::shared_ptr<const MappedFile> file) {
    if (!file) {
        throw UsageError("mapped_source: no file");
    }
    const ByteSpan bytes = file->bytes();
    std::string name = file->path();
    return std::make_shared<MemorySource>(bytes, std::move(file), std::move(name));
}

std::shared_ptr<const ByteSource> memory_source(ByteSpan bytes,
                                                std::shared_ptr<const void> owner,
                                                std::string name) {
    return std::make_shared<MemorySource>(bytes, std::move(owner), std::move(name));
}

std::shared_ptr<const ByteSource> window_source(std::shared_ptr<const ByteSource> whole,
                                                std::uint64_t offset,
                                                std::uint64_t size,
                                                std::string name) {
    if (!whole) {
        throw UsageError("window_source: no source");
    }
    std::uint64_t end = 0;
    if (format::add_overflows(offset, size, &end) || end > whole->size()) {
        throw UsageError(b2nd::detail::quoted_path(whole->name()) + ": a window [" +
                         std::to_string(offset) + ", " + std::to_string(offset) + " + " +
                         std::to_string(size) + ") passes the end of its " +
                         std::to_string(whole->size()) + " bytes");
    }
    return std::make_shared<WindowSource>(std::move(whole), offset, size, std::move(name));
}

}  // namespace b2nd::storage
