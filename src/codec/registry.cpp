// The plugin table: 256 slots per kind, published with release stores and read lock-free.
// Entries are never removed or replaced, so a pointer handed out stays valid.
#include <array>
#include <atomic>
#include <memory>
#include <mutex>

#include <b2nd/codec/registry.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>

#include "plugins/plugins.hpp"

namespace b2nd::codec {

std::int64_t BlockContext::block_items() const noexcept {
    if (!has_geometry()) {
        return 0;
    }
    std::int64_t n = 1;
    for (int d = 0; d < ndim; ++d) {
        if (blockshape[d] < 0 || format::mul_overflows(n, blockshape[d], &n)) {
            return 0;
        }
    }
    return n;
}

namespace {

template <class P>
struct Slots {
    std::array<std::atomic<const P*>, 256> slot{};
    std::mutex write;
    std::vector<std::unique_ptr<P>> owned;

    void put(P p) {
        owned.push_back(std::make_unique<P>(std::move(p)));
        slot[owned.back()->id].store(owned.back().get(), std::memory_order_release);
    }
};

struct Table {
    Slots<CodecPlugin> codecs;
    Slots<FilterPlugin> filters;

    Table() {
        codecs.put(plugins::ndlz());
        for (CodecPlugin& p : plugins::zfp()) {
            codecs.put(std::move(p));
        }
        filters.put(plugins::ndcell());
        filters.put(plugins::ndmean());
        filters.put(plugins::int_trunc());
    }
};

Table& table() {
    static Table* t = new Table();  // never destroyed: decoders may run during static teardown
    return *t;
}

template <class P>
void add(Slots<P>& s, P p, const char* kind, bool complete) {
    const std::string what =
        std::string(kind) + " '" + p.name + "' (id " + std::to_string(p.id) + ")";
    if (p.id < kFirstUserId) {
        throw UsageError("register " + what + ": user ids are " + std::to_string(kFirstUserId) +
                         "..255; lower ids belong to Blosc and its registered plugins");
    }
    if (p.name.empty() || !complete) {
        throw UsageError("register " + what + ": a name and the " +
                         (std::string(kind) == "codec" ? "decode" : "forward") +
                         " function are required");
    }
    std::lock_guard<std::mutex> lock(s.write);
    if (s.slot[p.id].load(std::memory_order_acquire) != nullptr) {
        throw UsageError("register " + what + ": id " + std::to_string(p.id) +
                         " is already registered");
    }
    for (const auto& o : s.owned) {
        if (o->name == p.name) {
            throw UsageError("register " + what + ": the name is already used by id " +
                             std::to_string(o->id));
        }
    }
    s.put(std::move(p));
}

template <class P>
std::vector<const P*> list(const Slots<P>& s) {
    std::vector<const P*> out;
    for (const auto& e : s.slot) {
        if (const P* p = e.load(std::memory_order_acquire)) {
            out.push_back(p);
        }
    }
    return out;
}

}  // namespace

void register_codec(CodecPlugin plugin) {
    const bool complete = static_cast<bool>(plugin.decode);
    add(table().codecs, std::move(plugin), "codec", complete);
}

void register_filter(FilterPlugin plugin) {
    const bool complete = static_cast<bool>(plugin.forward);
    add(table().filters, std::move(plugin), "filter", complete);
}

const CodecPlugin* find_codec_plugin(std::uint8_t id) noexcept {
    return table().codecs.slot[id].load(std::memory_order_acquire);
}

const FilterPlugin* find_filter_plugin(std::uint8_t id) noexcept {
    return table().filters.slot[id].load(std::memory_order_acquire);
}

std::vector<const CodecPlugin*> codec_plugins() {
    return list(table().codecs);
}

std::vector<const FilterPlugin*> filter_plugins() {
    return list(table().filters);
}

bool has_zfp() noexcept {
#ifdef B2ND_HAVE_ZFP
    return true;
#else
    return false;
#endif
}

}  // namespace b2nd::codec
