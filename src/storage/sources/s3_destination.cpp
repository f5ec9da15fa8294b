// s3:// as a destination (destination.hpp): a contiguous frame, an .npy or a .b2z is one object,
// put in one request or streamed from the local temporary as a multipart upload, and seen only
// once complete. A sparse frame, a .b2d store or a Zarr array is a prefix: its chunk and leaf
// objects go first,
// several at once, its index objects last, then what the old one had and the new one has not
// is removed.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include <b2nd/error.hpp>
#include <b2nd/storage/open_options.hpp>
#include <b2nd/storage/s3.hpp>

#include "../../detail/text.hpp"
#include "destination.hpp"
#include "s3_objects.hpp"

namespace b2nd::storage::detail {

namespace fs = std::filesystem;

namespace {

/// What indexes the other objects of a prefix, put after them: a frame's chunks.b2frame, a
/// store's embed.b2e, a Zarr array's metadata (a reader finds the array only once its chunks are
/// there).
bool is_index(const fs::path& p) {
    const fs::path n = p.filename();
    return n == "chunks.b2frame" || n == "embed.b2e" || n == "zarr.json" || n == ".zarray" ||
           n == ".zattrs";
}

/// Lock files of frames and stores: part of a local array's life, never of what is published.
bool is_companion(const std::string& name) {
    return name.size() >= 7 && name.compare(name.size() - 7, 7, ".b2lock") == 0;
}

UploadObserver& observer() {
    static UploadObserver o;
    return o;
}

/// Counts what one put sends, across its threads, for the observer.
class Sent {
public:
    explicit Sent(std::uint64_t total) : total_(total) {}
    void operator()(std::uint64_t n) {
        if (!observer()) {
            return;
        }
        std::lock_guard<std::mutex> lock(m_);
        done_ += n;
        observer()(done_, total_);
    }

private:
    std::mutex m_;
    std::uint64_t done_ = 0;
    std::uint64_t total_;
};

class S3Destination final : public Destination {
public:
    S3Destination(const std::string& url, const OpenOptions& o)
        : objects_(url, o.s3, o.http), key_(s3_bucket_key(url).second) {
        while (!key_.empty() && key_.back() == '/') {
            key_.pop_back();
        }
    }

    RemotePresence present() const override {
        RemotePresence p;
        p.object = objects_.size(key_).has_value();
        if (p.object) {
            p.head = objects_.first_bytes(key_, 64);
        }
        for (const S3Listed& l : objects_.list(key_ + "/")) {
            p.under.push_back(l.key.substr(key_.size() + 1));
        }
        return p;
    }

    void put(const std::string& local, const RemotePresence& before, bool only_new) const override {
        std::set<std::string> made;
        if (!fs::is_directory(local)) {
            Sent sent(fs::file_size(local));
            objects_.put_file(key_, local, only_new, std::uint64_t{8} << 20, 3,
                              [&](std::uint64_t n) { sent(n); });
        } else {
            std::vector<fs::path> files;
            for (const auto& e : fs::recursive_directory_iterator(local)) {
                if (e.is_regular_file() && !is_companion(e.path().filename().string())) {
                    files.push_back(fs::relative(e.path(), local));
                }
            }
            // Indexes after what they index: the deepest first, the store's or frame's own last.
            std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
                const auto rank = [](const fs::path& p) {
                    return std::make_pair(is_index(p),
                                          is_index(p) ? -std::distance(p.begin(), p.end()) : 0);
                };
                return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
            });
            std::uint64_t total = 0;
            for (const fs::path& f : files) {
                total += fs::file_size(fs::path(local) / f);
            }
            Sent sent(total);
            const auto first_index = std::find_if(files.begin(), files.end(), is_index);
            put_all(local, {files.begin(), first_index}, sent);
            for (auto it = first_index; it != files.end(); ++it) {
                objects_.put_file(key_ + "/" + it->string(), (fs::path(local) / *it).string(),
                                  false, std::uint64_t{8} << 20, 3,
                                  [&](std::uint64_t n) { sent(n); });
            }
            for (const fs::path& f : files) {
                made.insert(f.string());
            }
        }
        // What the old one had that the new one has not.
        if (before.object && !made.empty()) {
            objects_.remove(key_);
        }
        for (const std::string& name : before.under) {
            if (made.count(name) == 0) {
                objects_.remove(key_ + "/" + name);
            }
        }
    }

private:
    /// Puts `files` (relative to `local`), a few at once.
    void put_all(const std::string& local, const std::vector<fs::path>& files, Sent& sent) const {
        std::atomic<std::size_t> next{0};
        std::atomic<bool> failed{false};
        std::mutex m;
        std::exception_ptr error;
        const auto work = [&] {
            try {
                for (std::size_t i = next++; i < files.size() && !failed; i = next++) {
                    objects_.put_file(key_ + "/" + files[i].string(),
                                      (fs::path(local) / files[i]).string(), false,
                                      std::uint64_t{8} << 20, 1, [&](std::uint64_t n) { sent(n); });
                }
            } catch (...) {
                failed = true;
                std::lock_guard<std::mutex> lock(m);
                if (!error) {
                    error = std::current_exception();
                }
            }
        };
        std::vector<std::thread> threads;
        for (std::size_t t = 1; t < std::min<std::size_t>(kInFlight, files.size()); ++t) {
            threads.emplace_back(work);
        }
        work();
        for (std::thread& t : threads) {
            t.join();
        }
        if (error) {
            std::rethrow_exception(error);
        }
    }

    static constexpr std::size_t kInFlight = 4;
    S3Objects objects_;
    std::string key_;
};

}  // namespace

void set_upload_observer(UploadObserver o) {
    observer() = std::move(o);
}

std::vector<std::string> s3_list(const std::string& url, const OpenOptions& o) {
    // s3://BUCKET or s3://BUCKET/ lists the whole bucket.
    std::string trimmed = url;
    while (trimmed.size() > 5 && trimmed.back() == '/') {
        trimmed.pop_back();
    }
    const bool whole = trimmed.find('/', 5) == std::string::npos;
    const std::string key_url = whole ? trimmed + "/-" : url;  // any key: only its bucket counts
    const S3Objects objects(key_url, o.s3, o.http);
    std::string prefix = whole ? std::string() : s3_bucket_key(url).second;
    while (!prefix.empty() && prefix.back() == '/') {
        prefix.pop_back();
    }
    std::vector<std::string> names;
    const std::string under = prefix.empty() ? std::string() : prefix + "/";
    for (const S3Listed& l : objects.list(under)) {
        if (l.key.compare(0, under.size(), under) != 0) {
            throw b2nd::FormatError("\"" + redacted_url(url) + "\": its listing names the key \"" +
                                    b2nd::detail::printable(l.key) + "\", which is not under it");
        }
        names.push_back(l.key.substr(under.size()));
    }
    return names;
}

std::unique_ptr<Destination> s3_destination(const std::string& url, const OpenOptions& o) {
    return std::make_unique<S3Destination>(url, o);
}

}  // namespace b2nd::storage::detail
