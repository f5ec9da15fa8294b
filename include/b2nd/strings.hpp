// Fixed-width string arrays (NumPy's S<n> bytes and U<n> UCS-4) as C++ strings.
//
//   auto codes = b2nd::AnyArray::open("codes.b2nd");           // dtype '<U6'
//   std::vector<std::string> s = b2nd::read_strings(codes);     // UTF-8
//   b2nd::write_strings(codes, b2nd::parse_selection("0:2"), {"Oslo", "Kyiv"});
//   auto out = b2nd::AnyArray::create_from("n.b2nd", b2nd::DType::parse("<U8"), {3},
//                                          b2nd::encode_strings(b2nd::DType::parse("<U8"), v));
//
// NumPy's rule: trailing NULs are padding, dropped on read (embedded NULs stay); a value shorter
// than the width is padded with NULs. S items are bytes as stored; U items are code points,
// given and returned as UTF-8 (std::string) or UTF-32 (std::u32string). A U array created with
// the default compression gets python-blosc2's default filters (SHUFFLE by 4-byte units).
#pragma once

#include <string>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/dtype.hpp>
#include <b2nd/selection.hpp>

namespace b2nd {

/// The selection's items, C order: S as bytes, U as UTF-8, trailing NULs dropped.
/// \throws UsageError for a dtype that is not S or U; FormatError naming the file and item for a
///         U item holding a value that is no code point
std::vector<std::string> read_strings(const AnyArray& a, const Selection& sel = {});
/// U items as UTF-32. \throws UsageError for a dtype that is not U
std::vector<std::u32string> read_u32strings(const AnyArray& a, const Selection& sel = {});

/// Items in the stored form of `dtype` (S<n> or U<n>, its byte order): S takes bytes, U takes
/// UTF-8. \throws UsageError naming the value that does not fit n (bytes for S, code points for
/// U) or is not UTF-8
std::vector<std::uint8_t> encode_strings(const DType& dtype,
                                         const std::vector<std::string>& values);
std::vector<std::uint8_t> encode_strings(const DType& dtype,
                                         const std::vector<std::u32string>& values);

/// Writes the selection's items (C order; one value for all) from strings.
/// \throws UsageError as encode_strings, and for a count that does not match the selection
void write_strings(AnyArray& a, const Selection& sel, const std::vector<std::string>& values);
void write_strings(AnyArray& a, const Selection& sel, const std::vector<std::u32string>& values);

}  // namespace b2nd
