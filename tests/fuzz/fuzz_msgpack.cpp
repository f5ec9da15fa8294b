// Fuzz target: arbitrary bytes as one msgpack value (an attribute) and as JSON text (b2nd meta's
// input). Only b2nd::Error may escape; whatever decodes encodes again to a value equal to it.
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
        (void)v.to_json(2);
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
