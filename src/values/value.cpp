// b2nd::Value: the value itself and msgpack through msgpack-cxx (limits set from the input's
// size, so that a malformed length cannot make it allocate more than the bytes could hold). JSON
// is in value_json.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <b2nd/error.hpp>
#include <b2nd/value.hpp>

#include "../detail/text.hpp"
#include "value_detail.hpp"

#define MSGPACK_NO_BOOST 1
#include <msgpack.hpp>

namespace b2nd {

namespace {

Value from_object(const msgpack::object& o) {
    switch (o.type) {
        case msgpack::type::NIL:
            return {};
        case msgpack::type::BOOLEAN:
            return Value(o.via.boolean);
        case msgpack::type::POSITIVE_INTEGER:
            return Value(static_cast<std::uint64_t>(o.via.u64));
        case msgpack::type::NEGATIVE_INTEGER:
            return Value(static_cast<std::int64_t>(o.via.i64));
        case msgpack::type::FLOAT32:
        case msgpack::type::FLOAT64:
            return Value(o.via.f64);
        case msgpack::type::STR:
            return Value(std::string(o.via.str.ptr, o.via.str.size));
        case msgpack::type::BIN: {
            const auto* p = reinterpret_cast<const std::uint8_t*>(o.via.bin.ptr);
            return Value::binary(Value::Bytes(p, p + o.via.bin.size));
        }
        case msgpack::type::EXT: {
            const auto* p = reinterpret_cast<const std::uint8_t*>(o.via.ext.data());
            return Value::ext(o.via.ext.type(), Value::Bytes(p, p + o.via.ext.size));
        }
        case msgpack::type::ARRAY: {
            Value::Array a;
            a.reserve(o.via.array.size);
            for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
                a.push_back(from_object(o.via.array.ptr[i]));
            }
            return Value(std::move(a));
        }
        case msgpack::type::MAP: {
            Value::Map m;
            m.reserve(o.via.map.size);
            for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
                m.emplace_back(from_object(o.via.map.ptr[i].key),
                               from_object(o.via.map.ptr[i].val));
            }
            return Value::map(std::move(m));
        }
    }
    throw FormatError("unknown msgpack object type");
}

/// float64 as msgpack's 0xcb and 8 big-endian bytes, always (msgpack-cxx 4's pack_double writes
/// integral doubles as integers, which other readers then see as ints).
void pack_float64(msgpack::sbuffer& buf, double d) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &d, 8);
    char out[9];
    out[0] = static_cast<char>(0xcb);
    for (int i = 0; i < 8; ++i) {
        out[1 + i] = static_cast<char>((bits >> (56 - 8 * i)) & 0xff);
    }
    buf.write(out, sizeof out);
}

void pack_value(msgpack::sbuffer& buf, msgpack::packer<msgpack::sbuffer>& pk, const Value& v) {
    switch (v.type()) {
        case Value::Type::nil:
            pk.pack_nil();
            return;
        case Value::Type::boolean:
            if (v.as<bool>()) {
                pk.pack_true();
            } else {
                pk.pack_false();
            }
            return;
        case Value::Type::integer:
            if (v.is_negative()) {
                pk.pack_int64(v.as<std::int64_t>());
            } else {
                pk.pack_uint64(v.as<std::uint64_t>());
            }
            return;
        case Value::Type::real:
            pack_float64(buf, v.as<double>());
            return;
        case Value::Type::string: {
            const std::string& s = v.as<std::string>();
            std::size_t bad = 0;
            if (detail::utf8_decode(s, nullptr, &bad) < 0) {
                // msgpack's str is UTF-8: python-blosc2 could not read this one back.
                throw UsageError("the string " + detail::python_repr(s, "b", true) +
                                 " is not valid UTF-8 (byte " + std::to_string(bad) +
                                 "), which python-blosc2 cannot read; store it as bytes "
                                 "(Value::binary) or decode it first");
            }
            pk.pack_str(static_cast<std::uint32_t>(s.size()));
            pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
            return;
        }
        case Value::Type::binary:
            pk.pack_bin(static_cast<std::uint32_t>(v.bytes().size()));
            pk.pack_bin_body(reinterpret_cast<const char*>(v.bytes().data()),
                             static_cast<std::uint32_t>(v.bytes().size()));
            return;
        case Value::Type::ext:
            pk.pack_ext(v.bytes().size(), v.ext_type());
            pk.pack_ext_body(reinterpret_cast<const char*>(v.bytes().data()),
                             static_cast<std::uint32_t>(v.bytes().size()));
            return;
        case Value::Type::array:
            pk.pack_array(static_cast<std::uint32_t>(v.size()));
            for (const Value& e : v.array()) {
                pack_value(buf, pk, e);
            }
            return;
        case Value::Type::map:
            pk.pack_map(static_cast<std::uint32_t>(v.size()));
            for (const auto& [k, e] : v.entries()) {
                pack_value(buf, pk, k);
                pack_value(buf, pk, e);
            }
            return;
    }
}

}  // namespace

Value Value::binary(Bytes b) {
    Value v;
    v.type_ = Type::binary;
    v.bytes_ = std::make_shared<Bytes>(std::move(b));
    return v;
}

Value Value::map(Map m) {
    Value v;
    v.type_ = Type::map;
    v.map_ = std::make_shared<Map>(std::move(m));
    return v;
}

Value Value::ext(std::int8_t type, Bytes data) {
    Value v;
    v.type_ = Type::ext;
    v.int_ = type;
    v.bytes_ = std::make_shared<Bytes>(std::move(data));
    return v;
}

Value Value::tuple(Array items) {
    items.insert(items.begin(), Value("__tuple__"));
    return Value(std::move(items));
}

Value Value::reference(const Value& map) {
    if (map.type() != Type::map) {
        throw UsageError(std::string("Value::reference: a reference is a map, not a ") +
                         map.type_name());
    }
    return ext(kReferenceExt, map.to_msgpack());
}

Value Value::blosc2_object(Bytes cframe) {
    return ext(kBlosc2ObjectExt, std::move(cframe));
}

bool Value::is_tuple() const noexcept {
    return type_ == Type::array && !array_->empty() && (*array_)[0].type_ == Type::string &&
           (*array_)[0].str_ == "__tuple__";
}

Value::Array Value::tuple_items() const {
    if (!is_tuple()) {
        mismatch("tuple");
    }
    return Array(array_->begin() + 1, array_->end());
}

Value Value::reference() const {
    if (!is_reference()) {
        mismatch("reference (ext 43)");
    }
    return from_msgpack({bytes_->data(), bytes_->size()}, "msgpack ext 43 value");
}

const char* Value::type_name() const noexcept {
    switch (type_) {
        case Type::nil:
            return "nil";
        case Type::boolean:
            return "bool";
        case Type::integer:
            return "integer";
        case Type::real:
            return "float";
        case Type::string:
            return "string";
        case Type::binary:
            return "bytes";
        case Type::array:
            return "array";
        case Type::map:
            return "map";
        case Type::ext:
            return "ext";
    }
    return "?";
}

void Value::mismatch(const char* want) const {
    // "an integer", "a string": the article of what was found and of what was wanted.
    const auto with_article = [](const std::string& what) {
        if (what == "bytes" || what == "nil") {
            return what;
        }
        return (std::string("aeiou").find(what[0]) != std::string::npos ? "an " : "a ") + what;
    };
    std::string shown;
    try {
        shown = to_json();
    } catch (const Error&) {
        shown = "...";
    }
    if (shown.size() > 40) {
        shown = shown.substr(0, 37) + "...";
    }
    throw UsageError("the value " + shown + " is " + with_article(type_name()) + ", not " +
                     with_article(want));
}

std::int64_t Value::int_value(std::int64_t lo, std::int64_t hi, const char* want) const {
    if (type_ != Type::integer) {
        mismatch(want);
    }
    if ((!negative_ && (int_ < 0 || int_ > hi)) || (negative_ && int_ < lo)) {
        throw UsageError("the value " + to_json() + " is out of the range [" + std::to_string(lo) +
                         ", " + std::to_string(hi) + "] of the type asked for");
    }
    return int_;
}

std::uint64_t Value::uint_value(std::uint64_t hi, const char* want) const {
    if (type_ != Type::integer) {
        mismatch(want);
    }
    const auto u = static_cast<std::uint64_t>(int_);
    if (negative_ || u > hi) {
        throw UsageError("the value " + to_json() + " is out of the range [0, " +
                         std::to_string(hi) + "] of the type asked for");
    }
    return u;
}

double Value::real_value() const {
    if (type_ == Type::real) {
        return real_;
    }
    if (type_ == Type::integer) {
        return negative_ ? static_cast<double>(int_)
                         : static_cast<double>(static_cast<std::uint64_t>(int_));
    }
    mismatch("float");
}

const Value& Value::operator[](std::size_t i) const {
    if (type_ != Type::array) {
        mismatch("array");
    }
    if (i >= array_->size()) {
        throw UsageError("index " + std::to_string(i) + " is out of an array of " +
                         std::to_string(array_->size()));
    }
    return (*array_)[i];
}

const Value& Value::operator[](const std::string& key) const {
    if (type_ != Type::map) {
        mismatch("map");
    }
    const Value* v = find(key);
    if (v == nullptr) {
        throw UsageError("the map has no key \"" + key + "\"");
    }
    return *v;
}

const Value* Value::find(const std::string& key) const noexcept {
    if (type_ != Type::map) {
        return nullptr;
    }
    for (const auto& [k, v] : *map_) {
        if (k.type_ == Type::string && k.str_ == key) {
            return &v;
        }
    }
    return nullptr;
}

std::size_t Value::size() const noexcept {
    if (type_ == Type::array) {
        return array_->size();
    }
    if (type_ == Type::map) {
        return map_->size();
    }
    return 0;
}

const Value::Array& Value::array() const {
    if (type_ != Type::array) {
        mismatch("array");
    }
    return *array_;
}

const Value::Map& Value::entries() const {
    if (type_ != Type::map) {
        mismatch("map");
    }
    return *map_;
}

const Value::Bytes& Value::bytes() const {
    if (type_ != Type::binary && type_ != Type::ext) {
        mismatch("bytes");
    }
    return *bytes_;
}

bool Value::operator==(const Value& o) const {
    if (type_ != o.type_) {
        return false;
    }
    switch (type_) {
        case Type::nil:
            return true;
        case Type::boolean:
            return int_ == o.int_;
        case Type::integer:
            return int_ == o.int_ && negative_ == o.negative_;
        case Type::real:
            return real_ == o.real_ || (std::isnan(real_) && std::isnan(o.real_));
        case Type::string:
            return str_ == o.str_;
        case Type::binary:
            return *bytes_ == *o.bytes_;
        case Type::ext:
            return int_ == o.int_ && *bytes_ == *o.bytes_;
        case Type::array:
            return *array_ == *o.array_;
        case Type::map:
            return *map_ == *o.map_;
    }
    return false;
}

std::vector<std::uint8_t> Value::to_msgpack() const {
    msgpack::sbuffer buf;
    msgpack::packer<msgpack::sbuffer> pk(buf);
    pack_value(buf, pk, *this);
    const auto* p = reinterpret_cast<const std::uint8_t*>(buf.data());
    return {p, p + buf.size()};
}

Value Value::from_msgpack(ByteSpan bytes, const std::string& what) {
    if (bytes.empty()) {
        throw FormatError(what + ": empty (no msgpack value)");
    }
    // No count can exceed the bytes there are: each element takes at least one.
    const std::size_t n = bytes.size();
    const msgpack::unpack_limit limit(n, n / 2, n, n, n, detail::kValueMaxDepth);
    std::size_t off = 0;
    msgpack::object_handle h;
    try {
        h = msgpack::unpack(reinterpret_cast<const char*>(bytes.data()), n, off, nullptr, nullptr,
                            limit);
    } catch (const std::exception& e) {
        throw FormatError(what + ": not a valid msgpack value (" + e.what() + ")");
    }
    if (off != n) {
        throw FormatError(what + ": " + std::to_string(n - off) +
                          " bytes follow its msgpack value");
    }
    return from_object(h.get());
}

}  // namespace b2nd
