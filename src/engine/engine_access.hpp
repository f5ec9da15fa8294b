// Internal: the engine behind an AnyArray, for the library's own layers (ops/, the engine's
// interface for b2nd::mpi, tests). AnyArray names this class as a friend and nothing more.
#pragma once

#include <b2nd/any_array.hpp>

#include "array_core.hpp"

namespace b2nd {

/// A read's hold on the engine (AnyArray::reading(): refreshed first when following, the lock
/// file's shared lock held with lock_reads); any_array.cpp and any_array_io.cpp use it.
struct AnyArray::Reading {
    detail::ArrayCore& core;
    storage::Frame::ReadLock lock;
    detail::ArrayCore* operator->() const noexcept { return &core; }
};

class EngineAccess {
public:
    /// \throws UsageError for an empty handle
    static const detail::ArrayCore& core(const AnyArray& a) { return a.core(); }
    static detail::ArrayCore& writable_core(AnyArray& a) { return a.core(); }
    /// Reads `plan` of `a` as AnyArray's reads do (refreshing first when `a` follows others).
    static void read(const AnyArray& a, const detail::SelectionPlan& plan, std::uint8_t* out);
    static AnyArray wrap(std::shared_ptr<detail::ArrayCore> core) {
        return AnyArray(std::move(core));
    }
};

}  // namespace b2nd
