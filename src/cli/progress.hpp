// The `b2nd` tool's progress bar: on stderr when it is a terminal, nothing otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace b2nd::cli {

/// A progress bar for `total` units of work (`bytes_per_unit` uncompressed bytes each, for the
/// rate), redrawn at most ten times a second: "convert [#####     ] 52% 1.2 GiB/s ETA 0:03".
/// update() may be called from any thread. Cleared when destroyed.
class ProgressBar {
public:
    ProgressBar(std::string label, std::int64_t total, double bytes_per_unit);
    /// Shown only when B2ND_PROGRESS is "1", or unset and stderr is a terminal.
    static bool enabled();
    ~ProgressBar();
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;

    void update(std::int64_t done);

private:
    void draw(std::int64_t done, bool final);

    std::string label_;
    std::int64_t total_;
    double bytes_per_unit_;
    bool on_;
    std::chrono::steady_clock::time_point start_, last_;
    std::int64_t shown_ = -1;
    std::mutex mutex_;
};

/// Draws an "upload" bar while what a command wrote is put on S3 (its parts and objects
/// counted as they are up), when bars are enabled.
void watch_uploads();

}  // namespace b2nd::cli
