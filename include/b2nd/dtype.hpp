// NumPy data types as b2nd stores them: the dtype string of the b2nd metalayer ("<f4", "|S7",
// "<M8[ms]", "[('a', '<i4'), ('b', '<f8')]", ...), parsed, printed back, and checked against C++
// element types.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace b2nd {

struct DTypeAccess;

/// A NumPy dtype: kind, item size, byte order, and for structured dtypes their fields (each
/// with its dtype, offset and sub-array shape). parse() reads what NumPy's dtype.str and
/// dtype.descr give; str() writes what python-blosc2 stores.
class DType {
public:
    /// NumPy kind characters.
    enum class Kind : char {
        boolean = 'b',
        int_ = 'i',
        uint = 'u',
        float_ = 'f',
        complex_ = 'c',
        bytes = 'S',
        unicode = 'U',
        datetime = 'M',
        timedelta = 'm',
        void_ = 'V',
        structured = 'T',
    };

    /// One field of a structured dtype.
    struct Field {
        std::string name;                   ///< the field's name
        std::shared_ptr<const DType> type;  ///< its dtype
        std::vector<std::int64_t> shape;    ///< sub-array shape (empty for a scalar field)
        std::int64_t offset = 0;            ///< its byte offset in the item
    };

    /// Parses a NumPy dtype string (dtype.str, or str(dtype) for structured dtypes, list or
    /// dict form). \throws FormatError (malformed; offset = character position) or
    /// UnsupportedError (object, long double, ...).
    static DType parse(std::string_view s);
    /// Untyped bytes of the given size ("|V<n>").
    static DType raw(std::int64_t itemsize);
    /// A plain dtype from its parts (kind, itemsize, byte order '<', '>' or '|').
    static DType make(Kind kind, std::int64_t itemsize, char byteorder = '<');

    DType() = default;

    /// The kind of item (NumPy's kind character).
    Kind kind() const noexcept { return kind_; }
    /// Bytes per item.
    std::int64_t itemsize() const noexcept { return itemsize_; }
    /// '<', '>' or '|' (not applicable).
    char byteorder() const noexcept { return byteorder_; }
    /// Datetime/timedelta unit ("ms", "s", ...).
    const std::string& unit() const noexcept { return unit_; }
    /// The fields of a structured dtype (empty otherwise).
    const std::vector<Field>& fields() const noexcept;
    /// Whether it has fields.
    bool is_structured() const noexcept { return kind_ == Kind::structured; }
    /// One field of a structured dtype, found by name (field()).
    struct FieldPath {
        std::shared_ptr<const DType> type;  ///< its dtype
        std::vector<std::int64_t> shape;    ///< sub-array shape (empty for a scalar field)
        std::int64_t offset = 0;            ///< bytes from the element's start
    };
    /// The field `name` of a structured dtype; nested fields by names joined with '.'
    /// ("pos.x"; a name that holds a '.' itself is matched whole first). nullopt when absent.
    std::optional<FieldPath> field(std::string_view name) const;
    /// A structured dtype numpy made with align=True (its dict form says 'aligned': True).
    bool aligned() const noexcept { return aligned_; }

    /// The NumPy dtype string (round-trips what parse() accepted, in NumPy's spelling).
    std::string str() const;
    /// What a .npy header's 'descr' holds for it (numpy.lib.format): a quoted dtype string, or
    /// for a structured dtype the list form with ('', '|V&lt;n&gt;') entries for padding, which
    /// numpy.load reads (it refuses the dict form str() gives padded structs).
    std::string npy_descr() const;
    /// True when reading requires swapping bytes to this machine's order.
    bool needs_byteswap() const noexcept;
    /// The same dtype in this machine's byte order.
    DType native() const;
    /// Swaps `n` elements in place from this dtype's byte order to the other one (this
    /// machine's); a record's fields that are in this machine's order already stay.
    void byteswap(std::uint8_t* data, std::int64_t n) const noexcept;

    /// Why elements of this (stored) dtype cannot be read as `want`'s, "" when they can: for
    /// structured dtypes the record size and each field's name, offset, type (byte order aside)
    /// and sub-array shape, naming the first that differs ("field 'pos.y': the file has '<f4'
    /// at offset 12, the struct '<f8' at offset 16"); else the dtypes byte order aside.
    std::string layout_difference(const DType& want) const;

    /// Same dtype: kind, size, byte order, fields.
    bool operator==(const DType& o) const noexcept { return str() == o.str(); }
    /// Not the same dtype.
    bool operator!=(const DType& o) const noexcept { return !(*this == o); }

private:
    friend struct DTypeAccess;
    Kind kind_ = Kind::void_;
    std::int64_t itemsize_ = 0;
    char byteorder_ = '|';
    std::string unit_;
    std::shared_ptr<const std::vector<Field>> fields_;
    bool aligned_ = false;  ///< a structured dtype numpy made with align=True
};

/// The dtype of a C++ element type (this machine's byte order). Specialize dtype_traits for
/// your own trivially copyable types (e.g. a struct matching a structured dtype).
template <class T, class = void>
struct dtype_traits;  // no definition: NDArray<T> does not compile for unknown T

namespace detail {
DType native_dtype(DType::Kind kind, std::int64_t itemsize);
}

/// Built-in arithmetic types: bool, the integers, float and double.
template <class T>
struct dtype_traits<T, std::enable_if_t<std::is_arithmetic_v<T>>> {
    static_assert(!std::is_same_v<T, long double>, "long double has no portable dtype");
    /// T's dtype, in this machine's byte order.
    static DType get() {
        if constexpr (std::is_same_v<T, bool>) {
            return detail::native_dtype(DType::Kind::boolean, 1);
        } else if constexpr (std::is_floating_point_v<T>) {
            return detail::native_dtype(DType::Kind::float_, sizeof(T));
        } else if constexpr (std::is_signed_v<T>) {
            return detail::native_dtype(DType::Kind::int_, sizeof(T));
        } else {
            return detail::native_dtype(DType::Kind::uint, sizeof(T));
        }
    }
};

/// std::complex<float> and std::complex<double>.
template <class T>
struct dtype_traits<std::complex<T>, std::enable_if_t<std::is_floating_point_v<T>>> {
    static_assert(!std::is_same_v<T, long double>, "long double has no portable dtype");
    /// T's dtype, in this machine's byte order.
    static DType get() {
        return detail::native_dtype(DType::Kind::complex_, sizeof(std::complex<T>));
    }
};

/// dtype_traits<T>::get().
template <class T>
DType dtype_of() {
    static_assert(std::is_trivially_copyable_v<T>, "b2nd elements must be trivially copyable");
    return dtype_traits<T>::get();
}

}  // namespace b2nd
