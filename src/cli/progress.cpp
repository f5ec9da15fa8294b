#include "progress.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "../storage/sources/destination.hpp"
#include "cli.hpp"
#include <unistd.h>

namespace b2nd::cli {

bool ProgressBar::enabled() {
    const char* env = std::getenv("B2ND_PROGRESS");
    if (env != nullptr && *env != '\0') {
        return std::strcmp(env, "1") == 0;
    }
    return ::isatty(STDERR_FILENO) == 1;
}

ProgressBar::ProgressBar(std::string label, std::int64_t total, double bytes_per_unit)
    : label_(std::move(label)),
      total_(total),
      bytes_per_unit_(bytes_per_unit),
      on_(enabled() && total > 0),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

ProgressBar::~ProgressBar() {
    if (on_ && shown_ >= 0) {
        std::fprintf(stderr, "\r\033[K");  // clear the line
        std::fflush(stderr);
    }
}

void ProgressBar::update(std::int64_t done) {
    if (!on_) {
        return;
    }
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) {
        return;  // another thread is drawing
    }
    const auto now = std::chrono::steady_clock::now();
    if (done < total_ && shown_ >= 0 && now - last_ < std::chrono::milliseconds(100)) {
        return;
    }
    last_ = now;
    draw(done, done >= total_);
}

void ProgressBar::draw(std::int64_t done, bool final) {
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double frac = total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 1;
    const int width = 24;
    const int filled = static_cast<int>(frac * width);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(width, ' ');
    const double rate = secs > 0 ? static_cast<double>(done) * bytes_per_unit_ / secs : 0;
    std::string eta = "--:--";
    if (done > 0 && !final) {
        const auto left = static_cast<long>(secs / static_cast<double>(done) *
                                            static_cast<double>(total_ - done));
        char buf[32];
        std::snprintf(buf, sizeof buf, "%ld:%02ld", left / 60, left % 60);
        eta = buf;
    }
    // A rate over the first instants says nothing (a slab done in a microsecond is not TiB/s):
    // shown from half a second on, or at the end.
    const bool measured = secs >= 0.5 || (final && secs > 0);
    const std::string speed =
        measured ? human_bytes(static_cast<std::int64_t>(rate)) + "/s" : std::string("--/s");
    if (!measured) {
        eta = "--:--";
    }
    std::fprintf(stderr, "\r%s [%s] %3d%% %s ETA %s\033[K", label_.c_str(), bar.c_str(),
                 static_cast<int>(frac * 100), speed.c_str(), eta.c_str());
    std::fflush(stderr);
    shown_ = done;
}

void watch_uploads() {
    if (!ProgressBar::enabled()) {
        return;
    }
    // One bar per put (a file, or a prefix's objects), gone once all is up.
    static std::unique_ptr<ProgressBar> bar;
    static std::uint64_t bar_total = 0;
    storage::detail::set_upload_observer([](std::uint64_t done, std::uint64_t total) {
        if (!bar || bar_total != total) {
            bar = std::make_unique<ProgressBar>("upload", static_cast<std::int64_t>(total), 1.0);
            bar_total = total;
        }
        bar->update(static_cast<std::int64_t>(done));
        if (done >= total) {
            bar.reset();
        }
    });
}

}  // namespace b2nd::cli
