// Internal: python-blosc2's object kinds attached to the engine (objects.hpp).
//   kind.cpp     which kind a frame holds
//   open.cpp     open_object: the origin a kind needs, or a refusal naming it
//   lazy.cpp     persisted expressions: operands resolved as python resolves them, blocks computed
//   proxy.cpp    proxy caches: blocks served where the fetched bitmaps say they are
//   proxy_cache.cpp  the persistent cache of arrays read over HTTP, in the Proxy layout
//   cache_directory.hpp  one bound for a directory of those caches, across processes
//   proxy_layout.hpp python-blosc2's Proxy layout, described once
#pragma once

#include <memory>
#include <string>

#include <b2nd/any_array.hpp>
#include <b2nd/params.hpp>

#include "../engine/block_origin.hpp"

namespace b2nd::detail {

class ArrayCore;

/// Attaches to `core` what its frame's object kind needs (unless o.raw_objects), or refuses the
/// kind with an UnsupportedError naming the file and the kind. Plain arrays are left as they are.
void open_object(ArrayCore& core, const OpenOptions& o);
/// Before a writable open of `path` (o.writable, not raw_objects): refuses a frame holding a
/// kind open_object would refuse, before anything is opened for writing, so that a refused open
/// leaves nothing behind (no lock file). Nothing for arrays, or for what does not open at all.
void check_object_before_writing(const std::string& path, const OpenOptions& o);

/// The blocks of a persisted expression (b2o lazyexpr, or legacy LazyArray 0) in `core`.
std::shared_ptr<const BlockOrigin> lazy_origin(const ArrayCore& core, const OpenOptions& o);
/// The fetched blocks of a proxy cache in `core`.
std::shared_ptr<const BlockOrigin> proxy_origin(const ArrayCore& core);

/// Whether a metalayer or vlmeta entry of this name makes a frame an object kind (b2o,
/// LazyArray, proxy-source and their recipes and bitmaps): a copy of an object's values, which is
/// a plain array, leaves them out.
bool object_metadata(const std::string& name);

/// Opens `path`'s leaf `key` (a TreeStore or DictStore): store operands of expressions.
AnyArray open_store_leaf(const std::string& path, const std::string& key, const OpenOptions& o);

}  // namespace b2nd::detail
