// Internal: the zip records python-blosc2's .b2z archives use (APPNOTE 6.3: local headers,
// central directory headers, the end record and its ZIP64 forms), shared by the reader (zip.cpp)
// and the writer (zip_writer.cpp).
#pragma once

#include <cstdint>

namespace b2nd::storage::zip_layout {

constexpr std::uint32_t kEndSig = 0x06054b50;
constexpr std::uint32_t kEnd64Sig = 0x06064b50;
constexpr std::uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr std::uint32_t kCentralSig = 0x02014b50;
constexpr std::uint32_t kLocalSig = 0x04034b50;
constexpr std::uint64_t kEndLen = 22;         // without the comment
constexpr std::uint64_t kMaxComment = 65535;  // so the end record lies in the last 65,557 bytes
constexpr std::uint64_t kEnd64LocatorLen = 20;
constexpr std::uint64_t kEnd64Len = 56;
constexpr std::uint64_t kCentralLen = 46;
constexpr std::uint64_t kLocalLen = 30;
constexpr std::uint32_t kMax32 = 0xffffffffU;
constexpr std::uint16_t kMax16 = 0xffffU;
constexpr std::uint16_t kZip64Extra = 0x0001;  // the ZIP64 extended information field
constexpr std::uint16_t kVersion20 = 20;       // stored members
constexpr std::uint16_t kVersion45 = 45;       // ZIP64
constexpr std::uint16_t kMadeByUnix = (3 << 8) | 20;

}  // namespace b2nd::storage::zip_layout
