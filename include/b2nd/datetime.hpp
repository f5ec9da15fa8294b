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

namespace detail {
/// What Datetime and Timedelta share: NumPy's int64 ticks of Duration's unit, NaT by default
/// and equal to nothing (not even NaT, as NumPy compares).
template <class Self, class Duration, char Kind>
class Ticks {
    static_assert(std::is_same_v<typename Duration::rep, std::int64_t>, "NumPy's ticks are int64");

public:
    using duration = Duration;
    static constexpr char numpy_kind = Kind;  ///< 'M' datetime64, 'm' timedelta64

    static constexpr Self nat() noexcept { return Self(); }
    static constexpr Self from_ticks(std::int64_t t) noexcept {
        Self s;
        static_cast<Ticks&>(s).ticks_ = t;
        return s;
    }
    constexpr bool is_nat() const noexcept { return ticks_ == kNaT; }
    constexpr std::int64_t ticks() const noexcept { return ticks_; }
    friend constexpr bool operator==(Self a, Self b) noexcept {
        return !a.is_nat() && a.ticks() == b.ticks();
    }
    friend constexpr bool operator!=(Self a, Self b) noexcept { return !(a == b); }

protected:
    constexpr Ticks() noexcept = default;
    constexpr explicit Ticks(std::int64_t t) noexcept : ticks_(t) {}
    /// The ticks as a Duration. \throws UsageError naming `what` for NaT
    Duration checked(const char* what) const {
        if (is_nat()) {
            nat_error(what);
        }
        return Duration(ticks_);
    }

private:
    std::int64_t ticks_ = kNaT;
};

/// The dtype of a Datetime or Timedelta ('<M8[s]', '<m8[ms]'... in this machine's order).
template <class T>
DType ticks_dtype() {
    return DType::parse(std::string(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "<" : ">") +
                        T::numpy_kind + "8[" + numpy_unit<typename T::duration::period>() + "]");
}
}  // namespace detail

/// datetime64[unit]: a time point of Duration since the Unix epoch, or NaT.
template <class Duration>
class Datetime : public detail::Ticks<Datetime<Duration>, Duration, 'M'> {
public:
    using time_point =
        std::chrono::time_point<std::chrono::system_clock,
                                Duration>;  ///< std::chrono's time point of this Duration
    /// NaT.
    constexpr Datetime() noexcept = default;
    /// The time point `t`.
    constexpr explicit Datetime(time_point t) noexcept
        : detail::Ticks<Datetime, Duration, 'M'>(t.time_since_epoch().count()) {}
    /// \throws UsageError for NaT
    time_point time() const { return time_point(this->checked("Datetime::time()")); }
};

/// timedelta64[unit]: a Duration, or NaT.
template <class Duration>
class Timedelta : public detail::Ticks<Timedelta<Duration>, Duration, 'm'> {
public:
    /// NaT.
    constexpr Timedelta() noexcept = default;
    /// The duration `d`.
    constexpr explicit Timedelta(Duration d) noexcept
        : detail::Ticks<Timedelta, Duration, 'm'>(d.count()) {}
    /// \throws UsageError for NaT
    Duration value() const { return this->checked("Timedelta::value()"); }
};

template <class D>
/// Datetime<D> as datetime64[unit].
struct dtype_traits<Datetime<D>> {
    /// datetime64[unit] in this machine's byte order.
    static DType get() { return detail::ticks_dtype<Datetime<D>>(); }
};
template <class D>
/// Timedelta<D> as timedelta64[unit].
struct dtype_traits<Timedelta<D>> {
    /// timedelta64[unit] in this machine's byte order.
    static DType get() { return detail::ticks_dtype<Timedelta<D>>(); }
};

/// A datetime64 value of `unit` ("ns", "D", "Y", "10s"...) as NumPy prints it: ISO 8601 to the
/// unit's precision ("2026-02-22T03:07:28.461061497", "2016-06-01", "2026-02"), "NaT" for NaT.
/// Units NumPy knows: Y, M, W, D, h, m, s, ms, us, ns, ps, fs, as, with an optional multiple.
/// \throws UnsupportedError for any other unit
std::string datetime_text(std::int64_t ticks, const std::string& unit);

}  // namespace b2nd
