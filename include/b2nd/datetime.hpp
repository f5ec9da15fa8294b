// NumPy's datetime64 and timedelta64 as C++ values: time points and durations of the stored
// unit, with NaT (not a time) a distinct value.
//
//   using Seconds = b2nd::Datetime<std::chrono::seconds>;        // datetime64[s]
//   auto t = b2nd::NDArray<Seconds>::open("times.b2nd");          // checked: '<M8[s]'
//   Seconds first = t(0);
//   if (!first.is_nat()) { std::chrono::sys_seconds tp = first.time(); ... }
//   auto d = b2nd::NDArray<b2nd::Timedelta<std::chrono::milliseconds>>::open("lags.b2nd");
//
// The unit is the Duration's: ns, us, ms, s, m (minutes), h, D (b2nd::days), W (b2nd::weeks).
// Values are the int64 ticks NumPy stores (since 1970-01-01T00:00 for a Datetime), NaT the int64
// minimum. datetime_text() prints a value as NumPy does.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <ratio>
#include <string>
#include <type_traits>

#include <b2nd/dtype.hpp>
#include <b2nd/error.hpp>

namespace b2nd {

/// NumPy's NaT: the int64 minimum.
inline constexpr std::int64_t kNaT = std::numeric_limits<std::int64_t>::min();

using days = std::chrono::duration<std::int64_t, std::ratio<86400>>;
using weeks = std::chrono::duration<std::int64_t, std::ratio<604800>>;

namespace detail {
template <class Period>
constexpr const char* numpy_unit() {
    if constexpr (std::is_same_v<Period, std::nano>) {
        return "ns";
    } else if constexpr (std::is_same_v<Period, std::micro>) {
        return "us";
    } else if constexpr (std::is_same_v<Period, std::milli>) {
        return "ms";
    } else if constexpr (std::is_same_v<Period, std::ratio<1>>) {
        return "s";
    } else if constexpr (std::is_same_v<Period, std::ratio<60>>) {
        return "m";
    } else if constexpr (std::is_same_v<Period, std::ratio<3600>>) {
        return "h";
    } else if constexpr (std::is_same_v<Period, std::ratio<86400>>) {
        return "D";
    } else if constexpr (std::is_same_v<Period, std::ratio<604800>>) {
        return "W";
    } else {
        static_assert(std::is_same_v<Period, void>,
                      "NumPy units: ns, us, ms, s, minutes, hours, b2nd::days, b2nd::weeks");
        return "";
    }
}
[[noreturn]] void nat_error(const char* what);
}  // namespace detail

/// datetime64[unit]: a time point of Duration since the Unix epoch, or NaT.
template <class Duration>
class Datetime {
    static_assert(std::is_same_v<typename Duration::rep, std::int64_t>, "NumPy's ticks are int64");

public:
    using duration = Duration;
    using time_point = std::chrono::time_point<std::chrono::system_clock, Duration>;

    /// NaT.
    constexpr Datetime() noexcept = default;
    constexpr explicit Datetime(time_point t) noexcept : ticks_(t.time_since_epoch().count()) {}
    static constexpr Datetime nat() noexcept { return Datetime(); }
    static constexpr Datetime from_ticks(std::int64_t t) noexcept {
        Datetime d;
        d.ticks_ = t;
        return d;
    }
    constexpr bool is_nat() const noexcept { return ticks_ == kNaT; }
    constexpr std::int64_t ticks() const noexcept { return ticks_; }
    /// \throws UsageError for NaT
    time_point time() const {
        if (is_nat()) {
            detail::nat_error("Datetime::time()");
        }
        return time_point(Duration(ticks_));
    }
    /// NaT equals nothing, not even NaT (as NumPy compares).
    friend constexpr bool operator==(Datetime a, Datetime b) noexcept {
        return !a.is_nat() && a.ticks_ == b.ticks_;
    }
    friend constexpr bool operator!=(Datetime a, Datetime b) noexcept { return !(a == b); }

private:
    std::int64_t ticks_ = kNaT;
};

/// timedelta64[unit]: a Duration, or NaT.
template <class Duration>
class Timedelta {
    static_assert(std::is_same_v<typename Duration::rep, std::int64_t>, "NumPy's ticks are int64");

public:
    using duration = Duration;
    constexpr Timedelta() noexcept = default;  // NaT
    constexpr explicit Timedelta(Duration d) noexcept : ticks_(d.count()) {}
    static constexpr Timedelta nat() noexcept { return Timedelta(); }
    static constexpr Timedelta from_ticks(std::int64_t t) noexcept {
        Timedelta d;
        d.ticks_ = t;
        return d;
    }
    constexpr bool is_nat() const noexcept { return ticks_ == kNaT; }
    constexpr std::int64_t ticks() const noexcept { return ticks_; }
    /// \throws UsageError for NaT
    Duration value() const {
        if (is_nat()) {
            detail::nat_error("Timedelta::value()");
        }
        return Duration(ticks_);
    }
    friend constexpr bool operator==(Timedelta a, Timedelta b) noexcept {
        return !a.is_nat() && a.ticks_ == b.ticks_;
    }
    friend constexpr bool operator!=(Timedelta a, Timedelta b) noexcept { return !(a == b); }

private:
    std::int64_t ticks_ = kNaT;
};

template <class D>
struct dtype_traits<Datetime<D>> {
    static DType get() {
        return DType::parse(std::string(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "<" : ">") +
                            "M8[" + detail::numpy_unit<typename D::period>() + "]");
    }
};
template <class D>
struct dtype_traits<Timedelta<D>> {
    static DType get() {
        return DType::parse(std::string(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "<" : ">") +
                            "m8[" + detail::numpy_unit<typename D::period>() + "]");
    }
};

/// A datetime64 value of `unit` ("ns", "D", "Y", "10s"...) as NumPy prints it: ISO 8601 to the
/// unit's precision ("2026-02-22T03:07:28.461061497", "2016-06-01", "2026-02"), "NaT" for NaT.
/// Units NumPy knows: Y, M, W, D, h, m, s, ms, us, ns, ps, fs, as, with an optional multiple.
/// \throws UnsupportedError for any other unit
std::string datetime_text(std::int64_t ticks, const std::string& unit);

}  // namespace b2nd
