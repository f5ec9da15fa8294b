// Fuzz target: read arbitrary bytes as a python-blosc2 store (a .b2z archive or a .b2e embed
// frame): its keys, the embed map's windows, every leaf opened and read a little, the tree's
// and groups' attributes. Only b2nd::Error may escape.
#include <cstddef>
#include <cstdint>

#include <b2nd/error.hpp>
#include <b2nd/store.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const b2nd::Store s =
            b2nd::Store::open(b2nd::storage::memory_source(b2nd::ByteSpan(data, size)));
        int n = 0;
        for (const auto& e : s.entries()) {
            if (++n > 32) {
                break;
            }
            try {
                if (e.storage == b2nd::LeafStorage::none) {
                    (void)s.vlmeta(e.key);
                    continue;
                }
                (void)s.describe(e.key);
                b2nd::OpenOptions o;
                o.max_chunks = 1 << 12;
                o.cache_bytes = 0;
                const b2nd::AnyArray a = s.open_array(e.key, o);
                if (a.size() > 0 && a.nbytes() < (std::int64_t{1} << 20)) {
                    (void)a.read();
                }
            } catch (const b2nd::Error&) {
                // a bad leaf does not stop us from reading the others
            }
        }
        (void)s.vlmeta("/");
    } catch (const b2nd::Error&) {
        // expected for malformed input
    }
    return 0;
}
