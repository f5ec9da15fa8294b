// NumPy's datetime64 text (datetime.hpp): ISO 8601 dates and times to the unit's precision.
#include <cctype>
#include <cstdlib>
#include <string>

#include <b2nd/datetime.hpp>
#include <b2nd/error.hpp>

namespace b2nd {

namespace detail {
void nat_error(const char* what) {
    throw UsageError(std::string(what) + ": the value is NaT (not a time)");
}
}  // namespace detail

namespace {

__extension__ using i128 = __int128;

i128 floor_div(i128 a, i128 b) {
    const i128 q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::string digits(i128 v, int width) {
    std::string s;
    const bool neg = v < 0;
    if (neg) {
        v = -v;
    }
    do {
        s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
        v /= 10;
    } while (v > 0);
    while (static_cast<int>(s.size()) < width) {
        s.insert(s.begin(), '0');
    }
    return neg ? "-" + s : s;
}

/// Year, month (1-12), day (1-31) of a day count since 1970-01-01 (proleptic Gregorian).
void civil_from_days(i128 z, i128& y, int& m, int& d) {
    z += 719468;
    const i128 era = floor_div(z, 146097);
    const auto doe = static_cast<std::int64_t>(z - era * 146097);  // [0, 146096]
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::int64_t mp = (5 * doy + 2) / 153;
    d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
    m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
    y = yoe + era * 400 + (m <= 2 ? 1 : 0);
}

std::string date_text(i128 days) {
    i128 y = 0;
    int m = 0, d = 0;
    civil_from_days(days, y, m, d);
    return digits(y, 4) + "-" + digits(m, 2) + "-" + digits(d, 2);
}

}  // namespace

std::string datetime_text(std::int64_t ticks, const std::string& unit) {
    if (ticks == kNaT) {
        return "NaT";
    }
    std::size_t at = 0;
    i128 mult = 1;
    if (at < unit.size() && std::isdigit(static_cast<unsigned char>(unit[at])) != 0) {
        // NumPy keeps a unit's multiple in an int32; more than that is no unit it writes.
        mult = 0;
        while (at < unit.size() && std::isdigit(static_cast<unsigned char>(unit[at])) != 0) {
            mult = mult * 10 + (unit[at++] - '0');
            if (mult > 0x7fffffff) {
                throw UnsupportedError("datetime64 unit '" + unit +
                                       "': a multiple beyond NumPy's int32");
            }
        }
    }
    const std::string base = unit.substr(at);
    const i128 v = i128{ticks} * mult;
    if (base == "Y") {
        return digits(1970 + v, 4);
    }
    if (base == "M") {
        const i128 y = 1970 + floor_div(v, 12);
        return digits(y, 4) + "-" + digits(v - floor_div(v, 12) * 12 + 1, 2);
    }
    if (base == "W") {
        return date_text(v * 7);
    }
    if (base == "D") {
        return date_text(v);
    }
    // Units within a day: ticks per second (0: coarser than seconds) and fraction digits.
    struct Fine {
        const char* name;
        i128 per_day;
        int fraction;
    };
    static const Fine kFine[] = {
        {"h", 24, -2},
        {"m", 1440, -1},
        {"s", 86400, 0},
        {"ms", i128{86400} * 1000, 3},
        {"us", i128{86400} * 1000000, 6},
        {"ns", i128{86400} * 1000000000, 9},
        {"ps", i128{86400} * 1000000000 * 1000, 12},
        {"fs", i128{86400} * 1000000000 * 1000000, 15},
        {"as", i128{86400} * 1000000000 * 1000000000, 18},
    };
    for (const Fine& f : kFine) {
        if (base != f.name) {
            continue;
        }
        const i128 nday = floor_div(v, f.per_day);
        i128 rest = v - nday * f.per_day;  // ticks into the day
        std::string s = date_text(nday) + "T";
        if (f.fraction == -2) {
            return s + digits(rest, 2);
        }
        if (f.fraction == -1) {
            return s + digits(rest / 60, 2) + ":" + digits(rest % 60, 2);
        }
        i128 per_second = 1;
        for (int k = 0; k < f.fraction; ++k) {
            per_second *= 10;
        }
        const i128 secs = rest / per_second;
        rest %= per_second;
        s += digits(secs / 3600, 2) + ":" + digits(secs / 60 % 60, 2) + ":" + digits(secs % 60, 2);
        if (f.fraction > 0) {
            s += "." + digits(rest, f.fraction);
        }
        return s;
    }
    throw UnsupportedError("datetime64 unit '" + unit + "' is not one NumPy knows");
}

}  // namespace b2nd
