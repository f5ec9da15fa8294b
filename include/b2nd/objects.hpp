// What python-blosc2 keeps in a frame besides a plain array: its object kinds.
//
// python-blosc2 4.x stores more than arrays in b2nd frames. Its `blosc2.open` looks at the
// metalayers, in this order, to decide what a frame holds (schunk.py, process_opened_object):
//   proxy-source  a Proxy: a partial local cache of another array (proxy.py)
//   b2o           a persisted object: a lazy expression ("lazyexpr"), a DSL function ("lazyudf"),
//                 a remote reference ("c2array"); its recipe is the vlmeta entry `b2o`
//   listarray, vlarray, batcharray    variable-length containers
//   LazyArray     the form lazy expressions (0) and UDFs (1) were saved in before 4.2; recipe in
//                 the vlmeta entry `_LazyArray`
//   b2tree, b2dict, b2embed           the embed.b2e frame of a TreeStore, DictStore, EmbedStore
// Anything else is a plain array (a b2nd or caterva metalayer) or a plain super-chunk (none).
//
// AnyArray::open and NDArray<T>::open read each kind as its values, or refuse it:
//   lazyexpr (both forms)  evaluated block by block from its operands (the carrier's own chunks
//                          are zeros and are never read);
//   proxy                  the fetched part reads; any other part raises an error naming it;
//   the rest               refused at open with an error naming the kind.
// OpenOptions::raw_objects opens the frame as stored instead (b2nd info, meta and verify do).
#pragma once

#include <string>

#include <b2nd/any_array.hpp>
#include <b2nd/params.hpp>

namespace b2nd {

class Value;
namespace storage {
class Frame;
}

enum class ObjectKind {
    ndarray,      ///< a plain array (b2nd or legacy caterva metalayer)
    schunk,       ///< a plain super-chunk (no array metalayer)
    proxy,        ///< "proxy-source": a Proxy's local cache
    lazyexpr,     ///< a persisted expression (b2o "lazyexpr", or legacy LazyArray = 0)
    udf,          ///< a persisted Python function (b2o "lazyudf", or legacy LazyArray = 1)
    c2array,      ///< b2o "c2array": a reference to a remote array
    b2object,     ///< b2o of a kind this library does not know
    listarray,    ///< "listarray"
    objectarray,  ///< "vlarray" (python's ObjectArray)
    batcharray,   ///< "batcharray"
    treestore,    ///< "b2tree": the embed.b2e of a TreeStore
    dictstore,    ///< "b2dict": the embed.b2e of a DictStore
    embedstore,   ///< "b2embed": an EmbedStore
};

/// "ndarray", "schunk", "proxy", "lazyexpr", "udf", "c2array", "b2object", "listarray",
/// "objectarray", "batcharray", "treestore", "dictstore", "embedstore".
const char* to_string(ObjectKind k) noexcept;

/// The kind of object a frame holds, by python-blosc2's rules (its metalayers, in its order).
/// \throws FormatError naming the file when a deciding metalayer cannot be read
ObjectKind object_kind(const storage::Frame& frame);

/// Whether AnyArray::open gives its values (ndarray, schunk, lazyexpr, proxy).
bool readable_kind(ObjectKind k) noexcept;

/// The Blosc2 object an attribute holds as msgpack ext 42 (Value::blosc2_object: python-blosc2
/// stores a whole array there), opened read-only over a copy of its frame.
/// \throws UsageError when `v` is not ext 42; FormatError naming it when its frame is damaged
AnyArray open_blosc2_object(const Value& v, const OpenOptions& o = {});

}  // namespace b2nd
