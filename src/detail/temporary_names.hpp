// Internal: the names of b2nd's temporaries, TARGET.b2nd-tmp-PID.HHHHHHHHHHHHHHHH (16 random
// hex digits), in one place: the writers that make them (storage/publish.hpp), the sweepers that
// recognise them, and the messages that name the target instead.
#pragma once

#include <cstddef>
#include <string>

namespace b2nd::detail {

inline constexpr const char* kTemporaryTag = ".b2nd-tmp-";
inline constexpr std::size_t kTemporaryRandomDigits = 16;

/// The length of a temporary's suffix (tag, process id, '.', random digits) starting at `at`
/// in `text`, or 0 when there is none.
inline std::size_t temporary_suffix_at(const std::string& text, std::size_t at) {
    const std::string tag = kTemporaryTag;
    if (text.compare(at, tag.size(), tag) != 0) {
        return 0;
    }
    std::size_t i = at + tag.size();
    const std::size_t digits = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        ++i;
    }
    if (i == digits || i - digits > 10 || i >= text.size() || text[i] != '.') {
        return 0;
    }
    const std::size_t hex = ++i;
    while (i < text.size() &&
           ((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f'))) {
        ++i;
    }
    return i - hex == kTemporaryRandomDigits ? i - at : 0;
}

}  // namespace b2nd::detail
