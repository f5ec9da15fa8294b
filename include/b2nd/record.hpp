// C++ structs as NumPy structured dtypes: describe a struct once, then NDArray<S> reads and
// writes records, checked against the stored dtype field by field.
//
//   #pragma pack(push, 1)                       // python's structured dtypes are packed
//   struct Vec { double x, y; };
//   struct Particle { std::int32_t id; Vec pos; bool flag; float v[3]; };
//   #pragma pack(pop)
//   template <> struct b2nd::record<Vec> {
//       static auto fields() { return b2nd::fields(b2nd::field("x", &Vec::x),
//                                                  b2nd::field("y", &Vec::y)); }
//   };
//   template <> struct b2nd::record<Particle> {
//       static auto fields() {
//           return b2nd::fields(b2nd::field("id", &Particle::id), b2nd::field("pos",
//           &Particle::pos),
//                               b2nd::field("flag", &Particle::flag), b2nd::field("v",
//                               &Particle::v));
//       }
//   };
//   auto parts = b2nd::NDArray<Particle>::open("particles.b2nd");   // checked here
//   double x = parts(3).pos.x;
//
// The dtype of S is NumPy's dict form (names, formats, offsets, itemsize = sizeof(S)): members
// not described are padding. A member's type gives its format: arithmetic types, complex,
// Datetime/Timedelta (datetime.hpp) and any type with dtype_traits; a described struct nests;
// a C array or std::array is a sub-array field (T[2][3]: shape (2, 3)); char[N] and
// std::array<char, N> are bytes 'S<N>', char32_t[N] is 'U<N>'.
// Opening checks every field's name, offset, type (byte order aside: foreign orders are
// converted, as for scalars) and sub-array shape, and the record's size; a mismatch is a
// UsageError naming the first field that differs (say, an aligned struct against python's
// packed dtype: pack the struct, or make the array with numpy's align=True).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <b2nd/dtype.hpp>

namespace b2nd {

/// Specialize with `static auto fields()` returning b2nd::fields(b2nd::field(...), ...).
template <class S>
struct record;

/// One described member: its name and member pointer.
template <class S, class M>
struct RecordField {
    const char* name;  ///< the field's name
    M S::*member;      ///< the member it maps to
};
template <class S, class M>
constexpr RecordField<S, M> field(const char* name, M S::*member) noexcept {
    return {name, member};
}
template <class... F>
constexpr std::tuple<F...> fields(F... f) noexcept {
    return std::tuple<F...>(f...);
}

namespace detail {

template <class S, class = void>
struct is_record : std::false_type {};
template <class S>
struct is_record<S, std::void_t<decltype(record<S>::fields())>> : std::true_type {};

/// A record's dtype from its fields' names, formats (each a Python literal: a quoted dtype
/// string, a nested dtype's list or dict, or a sub-array's "(format, (shape,))") and offsets:
/// NumPy's dict form, parsed. \throws UsageError when the fields overlap or pass the end
DType record_dtype(const std::vector<std::string>& names,
                   const std::vector<std::string>& formats,
                   const std::vector<std::int64_t>& offsets,
                   std::int64_t itemsize);

template <class M>
struct member_format;

template <class M>
std::string format_of() {
    return member_format<M>::get();
}

/// The shape suffix "(2, 3)" of nested C arrays, and their innermost element.
template <class M>
struct array_parts {
    using element = M;
    static void shape(std::string&) {}
};
template <class E, std::size_t N>
struct array_parts<E[N]> {
    using element = typename array_parts<E>::element;
    static void shape(std::string& s) {
        s += (s.empty() ? "" : ", ") + std::to_string(N);
        array_parts<E>::shape(s);
    }
};
template <class E, std::size_t N>
struct array_parts<std::array<E, N>> {
    using element = typename array_parts<E>::element;
    static void shape(std::string& s) {
        s += (s.empty() ? "" : ", ") + std::to_string(N);
        array_parts<E>::shape(s);
    }
};

template <class M>
struct member_format {
    static std::string get() {
        using E = typename array_parts<M>::element;
        constexpr std::size_t n = sizeof(M) / sizeof(E);
        if constexpr (std::is_same_v<M, E>) {
            return quote(dtype_traits<M>::get().str());
        } else if constexpr (std::is_same_v<E, char> &&
                             (std::rank_v<M> == 1 || std::is_same_v<M, std::array<char, n>>)) {
            return "'S" + std::to_string(n) + "'";  // bytes (a one-dimensional char array)
        } else if constexpr (std::is_same_v<E, char32_t> &&
                             (std::rank_v<M> == 1 || std::is_same_v<M, std::array<char32_t, n>>)) {
            return std::string(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "'<" : "'>") + "U" +
                   std::to_string(n) + "'";
        } else {
            std::string shape;
            array_parts<M>::shape(shape);
            return "(" + quote(dtype_traits<E>::get().str()) + ", (" + shape +
                   (shape.find(',') == std::string::npos ? ",))" : "))");
        }
    }
    static std::string quote(const std::string& s) {
        return s.front() == '[' || s.front() == '{' ? s : "'" + s + "'";
    }
};

/// Where member `m` lies in S, in bytes (S is never constructed).
template <class S, class M>
std::int64_t member_offset(M S::*m) noexcept {
    union Probe {
        char none;
        S s;
        Probe() : none(0) {}
        ~Probe() {}
    };
    static const Probe probe;
    const auto* base = reinterpret_cast<const unsigned char*>(&probe);
    // The built-in & (no reference bound: a packed struct's member may be misaligned).
    const auto* at = reinterpret_cast<const unsigned char*>(&(probe.s.*m));
    return static_cast<std::int64_t>(at - base);
}

}  // namespace detail

/// A described struct's dtype (NumPy's dict form, itemsize sizeof(S)).
template <class S>
struct dtype_traits<S, std::enable_if_t<detail::is_record<S>::value>> {
    static DType get() {
        static_assert(std::is_trivially_copyable_v<S>, "a record must be trivially copyable");
        std::vector<std::string> names, formats;
        std::vector<std::int64_t> offsets;
        std::apply(
            [&](const auto&... f) {
                ((names.emplace_back(f.name),
                  formats.push_back(
                      detail::format_of<std::remove_cv_t<
                          std::remove_reference_t<decltype(std::declval<S>().*f.member)>>>()),
                  offsets.push_back(detail::member_offset(f.member))),
                 ...);
            },
            record<S>::fields());
        return detail::record_dtype(names, formats, offsets, static_cast<std::int64_t>(sizeof(S)));
    }
};

}  // namespace b2nd
