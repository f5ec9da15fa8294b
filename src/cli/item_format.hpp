// The b2nd tool: array items as text, the way NumPy prints them inside an array, and as strict
// JSON tokens. Used by show and diff.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <b2nd/dtype.hpp>

namespace b2nd::cli {

/// The nearest IEEE half-precision value to d (ties to even), as a double; infinite beyond the
/// largest half.
double round_to_half(double d);

/// Formats the items of one dtype. NumPy pads numbers to a common width (floats aligned on the
/// point, in one notation for all), so text needs the values first: observe() every item that
/// will be printed, then word() each. JSON needs no pass.
class ItemFormat {
public:
    explicit ItemFormat(DType dtype);
    ItemFormat(ItemFormat&&) noexcept = default;

    /// Takes `n` items into account for word()'s widths and float notation.
    void observe(const std::uint8_t* items, std::int64_t n);
    /// One item as NumPy prints it in an array: numbers right-aligned (floats on the point),
    /// strings as Python's repr and unpadded, as NumPy leaves them; datetimes as quoted ISO
    /// text and timedeltas as integers ('NaT' for NaT), right-aligned; records as tuples.
    std::string word(const std::uint8_t* item) const;
    /// One item as a JSON token: numbers (floats with the fewest digits that read back as the
    /// same value of the item's precision; NaN and infinities as the strings "NaN", "Infinity"
    /// and "-Infinity"), true/false, strings (`S` bytes as code points 0-255), complex as
    /// [re, im], datetimes as ISO strings, timedeltas as integers (NaT: null), records as lists
    /// of their fields, other items as a hex string.
    void json(std::string& out, const std::uint8_t* item) const;

    /// What comparisons may take an item for: a real number (bool, integer, float; value()),
    /// a complex one (parts()), or only its bytes.
    enum class Number { none, real, complex };
    Number number() const noexcept;
    /// A real item's value; exact for every integer of up to 64 bits (long double).
    long double value(const std::uint8_t* item) const;
    /// A complex item's real and imaginary parts.
    std::pair<double, double> parts(const std::uint8_t* item) const;

private:
    /// Floats printed in one column, as NumPy's FloatingFormat (floatmode 'maxprec', precision
    /// 8): scientific notation for all when the largest magnitude is >= 1e8, the smallest
    /// nonzero one < 1e-4 or their ratio > 1000, else positional. Positional: each value with
    /// the fewest digits (at most 8 after the point, trailing zeros trimmed) that read back as
    /// the same value of its precision, blank-padded to align the points. Scientific: as many
    /// fraction digits as the longest such value needs, each value's own digits (NumPy's
    /// min_digits), one count of exponent digits for all. nan and inf right-aligned to the
    /// full width.
    class FloatColumn {
    public:
        FloatColumn(int bits, bool plus) : bits_(bits), plus_(plus) {}
        void observe(double d);
        std::string word(double d) const;

    private:
        struct Parts {
            std::string whole, fraction;  // around the point; whole carries the sign
            int exponent = 0;             // scientific only
        };
        /// The fewest digits (at most 8 after the point, then trailing zeros trimmed) that
        /// read back as d.
        Parts parts(double d, bool scientific) const;
        /// d in scientific notation with exactly `fraction` digits after the point, rounded
        /// from its exact value.
        Parts digits(double d, int fraction) const;
        Parts split(const std::string& text, bool trim) const;
        bool scientific() const noexcept;
        std::size_t left(bool scientific) const noexcept;  // width before the point

        int bits_;   // 16, 32 or 64: the precision values must read back in
        bool plus_;  // a '+' before positive values (imaginary parts)
        double max_abs_ = 0, min_abs_ = 0;
        bool any_nonzero_ = false;
        std::size_t special_width_ = 0;  // of "nan", "-inf", "+nan", ...
        std::size_t whole_[2] = {0, 0};  // widest whole part, per notation
        std::size_t fraction_[2] = {0, 0};
        std::size_t exponent_digits_ = 2;
    };

    /// A structured item: NumPy's tuple of its fields, each formatted over the whole array (a
    /// sub-array field as a list), or a JSON list.
    std::string record_word(const std::uint8_t* item) const;
    void record_json(std::string& out, const std::uint8_t* item) const;

    DType dtype_;
    std::vector<std::unique_ptr<ItemFormat>> fields_;  // structured dtypes: one per field
    int float_bits_ = 0;  // 16, 32, 64 for real and complex floats (per part); 0 otherwise
    FloatColumn reals_, imags_;
    bool any_false_ = false;
    std::size_t width_ = 0;  // integers and times: the widest
};

}  // namespace b2nd::cli
