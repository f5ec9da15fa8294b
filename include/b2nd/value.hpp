// b2nd::Value: one msgpack value (what python-blosc2 stores in each vlmeta entry and user
// metalayer), as a C++ value: nil, bool, integer, float, string, bytes, array or map. Converts to
// and from msgpack bytes (msgpack-cxx underneath, kept out of this header) and JSON text.
//
// clang-format off
//   b2nd::Value v = b2nd::Value::map({{"offset", -273.15}, {"valid", true}});
//   double off = v["offset"].as<double>();
//   std::vector<std::uint8_t> bytes = v.to_msgpack();
//   std::string text = v.to_json();            // {"offset": -273.15, "valid": true}
// clang-format on
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <b2nd/byte_span.hpp>

namespace b2nd {

/// A msgpack value, as python-blosc2 stores attributes (vlmeta), store metadata and object
/// recipes: nil, bool, integer, float, string, bytes, array, map or ext. Built from C++ values
/// implicitly (Value v = 3.5; Value::map(...)), read back with as<T>(), printed as JSON.
class Value {
public:
    /// What the value holds.
    enum class Type { nil, boolean, integer, real, string, binary, array, map, ext };
    using Array = std::vector<Value>;  ///< elements of an array
    /// Keys in their stored order (python dicts keep insertion order); keys are usually strings.
    using Map = std::vector<std::pair<Value, Value>>;
    using Bytes = std::vector<std::uint8_t>;  ///< payload of binary and ext values

    Value() = default;
    /// nil (Python's None).
    Value(std::nullptr_t) {}  // NOLINT: implicit by design, as the JSON-like literals below
    /// A boolean.
    Value(bool b) : type_(Type::boolean), int_(b ? 1 : 0) {}  // NOLINT
    template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
    /// An integer (any integral type but bool).
    Value(I i) : type_(Type::integer) {  // NOLINT
        if constexpr (std::is_signed_v<I>) {
            int_ = static_cast<std::int64_t>(i);
            negative_ = i < 0;
        } else {
            int_ = static_cast<std::int64_t>(static_cast<std::uint64_t>(i));
        }
    }
    /// A float (stored as float64).
    Value(double d) : type_(Type::real), real_(d) {}  // NOLINT
    /// A float (stored as float64).
    Value(float f) : type_(Type::real), real_(static_cast<double>(f)) {}  // NOLINT
    /// A string (UTF-8).
    Value(const char* s) : type_(Type::string), str_(s) {}  // NOLINT
    /// A string (UTF-8).
    Value(std::string s) : type_(Type::string), str_(std::move(s)) {}  // NOLINT
    /// An array (Value(Value::Array{1, "a", 2.5})).
    Value(Array a) : type_(Type::array), array_(std::make_shared<Array>(std::move(a))) {}  // NOLINT
    /// Raw bytes (msgpack bin).
    static Value binary(Bytes b);
    /// A map from (key, value) pairs, in this order.
    static Value map(Map m);
    /// A msgpack extension value of type `type`.
    static Value ext(std::int8_t type, Bytes data);

    // ---- python-blosc2's conventions (msgpack_utils.py, ref.py) ----
    /// A Python tuple: python-blosc2 writes it as a list headed by the string "__tuple__".
    static Value tuple(Array items);
    /// ext 43: a reference or recipe ({kind: urlpath | dictstore_key | c2array | lazyexpr |
    /// ref, version: 1, ...}), its map packed as msgpack.
    static Value reference(const Value& map);
    /// ext 42: a whole Blosc2 object (a contiguous frame: an array, a super-chunk...).
    static Value blosc2_object(Bytes cframe);
    static constexpr std::int8_t kBlosc2ObjectExt = 42;  ///< ext type of a whole Blosc2 object
    static constexpr std::int8_t kReferenceExt = 43;     ///< ext type of a reference or recipe
    /// A list headed by "__tuple__".
    bool is_tuple() const noexcept;
    /// A tuple's items (without the head). \throws UsageError when not a tuple
    Array tuple_items() const;
    /// An ext 43 value (a reference or recipe).
    bool is_reference() const noexcept { return type_ == Type::ext && ext_type() == kReferenceExt; }
    /// An ext 42 value (a whole Blosc2 object).
    bool is_blosc2_object() const noexcept {
        return type_ == Type::ext && ext_type() == kBlosc2ObjectExt;
    }
    /// An ext 43 value's map. \throws UsageError when not one; FormatError when its payload is
    /// not msgpack
    Value reference() const;

    /// What the value holds.
    Type type() const noexcept { return type_; }
    /// "nil", "bool", "integer", "float", "string", "bytes", "array", "map", "ext"
    const char* type_name() const noexcept;
    /// Whether it is nil.
    bool is_nil() const noexcept { return type_ == Type::nil; }
    /// An integer below zero (msgpack's negative integers).
    bool is_negative() const noexcept { return type_ == Type::integer && negative_; }

    /// The value as T: bool; any integer type (range-checked); float or double (from a float or
    /// an integer); std::string; Bytes (from bytes); std::vector<U>; std::map<std::string, U>;
    /// Value. \throws UsageError naming both types on a mismatch, or the value when out of range
    template <class T>
    T as() const;

    /// Array element i / map entry `key` (a string key). \throws UsageError when absent
    const Value& operator[](std::size_t i) const;
    /// Map entry `key` (a string key). \throws UsageError when absent
    const Value& operator[](const std::string& key) const;
    /// The map's value for `key`, or null when absent (or not a map).
    const Value* find(const std::string& key) const noexcept;
    /// Elements of an array, entries of a map; 0 for the rest.
    std::size_t size() const noexcept;
    /// The elements of an array. \throws UsageError when not an array
    const Array& array() const;
    /// The entries of a map, in stored order. \throws UsageError when not a map
    const Map& entries() const;
    const Bytes& bytes() const;  ///< binary and ext payloads
    /// The ext type of an ext value.
    std::int8_t ext_type() const noexcept { return static_cast<std::int8_t>(int_); }

    /// Same type and content (maps: same entries in the same order).
    bool operator==(const Value& o) const;
    /// Not the same value.
    bool operator!=(const Value& o) const { return !(*this == o); }

    /// msgpack, as python-blosc2 writes it (the smallest integer encodings, float64, str8+,
    /// bin for bytes).
    std::vector<std::uint8_t> to_msgpack() const;
    /// Decodes exactly one msgpack value filling `bytes`. \throws FormatError naming `what`
    /// (malformed, truncated, trailing bytes, nested deeper than 256)
    static Value from_msgpack(ByteSpan bytes, const std::string& what = "msgpack value");

    /// Strict JSON text, linear in the value's size. Values JSON has no form for are tagged
    /// objects that from_json reads back: bytes {"$bytes": "hex"}, ext {"$ext": type, "$bytes":
    /// "hex"}, NaN and infinities {"$float": "NaN" | "Infinity" | "-Infinity"}, and a map with a
    /// key that is not a string (or that looks like one of these tags) {"$map": [[key, value],
    /// ...]}. indent < 0: one line. \throws UsageError when nested deeper than 256 levels
    std::string to_json(int indent = -1) const;
    /// A copy for showing: the entries of maps whose key names a secret (auth_token, password,
    /// ...) become "<redacted>", and strings lose what redact_secrets (error.hpp) removes.
    Value redacted() const;
    /// A copy for showing a file's own metadata: strings lose the credentials redact_secrets
    /// removes (a URL's user information and query, bearer tokens), but no entry is judged by
    /// its key's name (python-blosc2's index `token` is a hash, not a credential).
    Value urls_redacted() const;
    /// Parses JSON (and the forms to_json writes; also bare NaN, Infinity and -Infinity, as
    /// Python's json writes them). Integers stay integers; numbers with a fraction or exponent
    /// become floats. \throws UsageError naming where the text is wrong, or nesting deeper than 256
    static Value from_json(const std::string& text);
    /// JSON as python-blosc2 users read its values (b2nd meta prints this): tuples as arrays,
    /// ext 43 as {"$ref": {...its map...}}, ext 42 as {"$blosc2": {"shape": [...], "dtype":
    /// "...", "chunks", "blocks", "cbytes"}} (what its frame holds), bytes as {"$bytes": "hex"}.
    /// from_json reads {"$ref": ...} back as ext 43; tuples come back as lists.
    std::string to_python_json(int indent = -1) const;

private:
    Value redacted_as(bool by_name) const;
    [[noreturn]] void mismatch(const char* want) const;
    std::int64_t int_value(std::int64_t lo, std::int64_t hi, const char* want) const;
    std::uint64_t uint_value(std::uint64_t hi, const char* want) const;
    double real_value() const;

    Type type_ = Type::nil;
    std::int64_t int_ = 0;   // bool, integer (bits of a uint64 when !negative_), ext type
    bool negative_ = false;  // integer: int_ is a negative int64 (else read as uint64)
    double real_ = 0;
    std::string str_;
    std::shared_ptr<const Array> array_;
    std::shared_ptr<const Map> map_;
    std::shared_ptr<const Bytes> bytes_;
};

namespace detail {
template <class T>
struct ValueAs;
}

template <class T>
T Value::as() const {
    if constexpr (std::is_same_v<T, Value>) {
        return *this;
    } else if constexpr (std::is_same_v<T, bool>) {
        if (type_ != Type::boolean) {
            mismatch("bool");
        }
        return int_ != 0;
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        return static_cast<T>(
            int_value(std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), "integer"));
    } else if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(uint_value(std::numeric_limits<T>::max(), "unsigned integer"));
    } else if constexpr (std::is_floating_point_v<T>) {
        return static_cast<T>(real_value());
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (type_ != Type::string) {
            mismatch("string");
        }
        return str_;
    } else if constexpr (std::is_same_v<T, Bytes>) {
        if (type_ != Type::binary) {
            mismatch("bytes");
        }
        return *bytes_;
    } else {
        return detail::ValueAs<T>::get(*this);
    }
}

namespace detail {
template <class U>
struct ValueAs<std::vector<U>> {
    static std::vector<U> get(const Value& v) {
        std::vector<U> out;
        for (const Value& e : v.array()) {
            out.push_back(e.as<U>());
        }
        return out;
    }
};
template <class U>
struct ValueAs<std::map<std::string, U>> {
    static std::map<std::string, U> get(const Value& v) {
        std::map<std::string, U> out;
        for (const std::pair<Value, Value>& kv : v.entries()) {
            const Value& key = kv.first;
            const Value& e = kv.second;
            out.emplace(key.as<std::string>(), e.as<U>());
        }
        return out;
    }
};
}  // namespace detail

}  // namespace b2nd
