// Internal: what a commit of the engine asks of the layer that owns python-blosc2's semantics
// (objects/). Declared here, defined there (objects/derived.cpp), so that the engine calls it
// without including anything above it; the remote cache's layout is reached the same way
// (remote_cache.hpp: RemoteCache::open).
#pragma once

#include <functional>
#include <string>

#include <b2nd/storage/frame.hpp>

namespace b2nd::detail {

/// Before a commit that changes an array's data (frame `f`, named `where` in messages): adds to
/// `e` what the change does to data derived from the array (python-blosc2's query indexes marked
/// stale, its persisted query cache dropped), so that both land in one commit. Returns what to do
/// once the commit is on disk (remove files nothing names any more), or an empty function.
std::function<void()> derived_data_changes(const storage::Frame& f,
                                           storage::FrameEdit& e,
                                           const std::string& where);

}  // namespace b2nd::detail
