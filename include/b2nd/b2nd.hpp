// b2nd-cpp: N-dimensional arrays in the Blosc2 b2nd format, memory-mapped and decoded lazily.
//
//   #include <b2nd/b2nd.hpp>
//   auto t = b2nd::open<float>("temperature.b2nd");
//   float x = t(120, 40, 7);
//   auto out = b2nd::create<double>("out.b2nd", t.shape());
#pragma once

#include <b2nd/any_array.hpp>
#include <b2nd/attrs.hpp>
#include <b2nd/bridges.hpp>
#include <b2nd/datetime.hpp>
#include <b2nd/dtype.hpp>
#include <b2nd/error.hpp>
#include <b2nd/grid.hpp>
#include <b2nd/mask.hpp>
#include <b2nd/memory.hpp>
#include <b2nd/ndarray.hpp>
#include <b2nd/npy.hpp>
#include <b2nd/ops.hpp>
#include <b2nd/parallel.hpp>
#include <b2nd/params.hpp>
#include <b2nd/record.hpp>
#include <b2nd/selection.hpp>
#include <b2nd/strings.hpp>
#include <b2nd/value.hpp>

namespace b2nd {

/// Opens an array as NDArray<T> (checking T against its dtype).
template <class T>
NDArray<T> open(const std::string& path, const OpenOptions& o = {}) {
    return NDArray<T>::open(path, o);
}

/// Opens an array of any dtype.
inline AnyArray open_any(const std::string& path, const OpenOptions& o = {}) {
    return AnyArray::open(path, o);
}

/// Creates an array of T (zeros unless options say otherwise).
template <class T>
NDArray<T> create(const std::string& path, const Shape& shape, const CreateOptions& o = {}) {
    return NDArray<T>::create(path, shape, o);
}

}  // namespace b2nd
