// Fuzz target: arbitrary bytes as one msgpack value (an attribute) and as JSON text (b2nd meta's
// input). Only b2nd::Error may escape; whatever decodes encodes again to a value equal to it, and
// its JSON text is linear in the input's size.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <b2nd/error.hpp>
#include <b2nd/value.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const b2nd::Value v = b2nd::Value::from_msgpack(b2nd::ByteSpan(data, size));
        const auto bytes = v.to_msgpack();
        if (!(b2nd::Value::from_msgpack({bytes.data(), bytes.size()}) == v)) {
            std::abort();  // the encoder and the decoder disagree
        }
        // JSON of any decoded value is linear in its size (each level of nesting, at most 256,
        // costs two columns of indentation per line) and reads back as the same value.
        const std::string json = v.to_json(2);
        if (json.size() > 1024 + size * (64 + 2 * 256)) {
            std::abort();
        }
        if (!(b2nd::Value::from_json(json) == v)) {
            std::abort();
        }
    } catch (const b2nd::Error&) {
        // expected for malformed input
    }
    try {
        const b2nd::Value v =
            b2nd::Value::from_json(std::string(reinterpret_cast<const char*>(data), size));
        if (!(b2nd::Value::from_json(v.to_json()) == v)) {
            std::abort();
        }
    } catch (const b2nd::Error&) {
    }
    return 0;
}
