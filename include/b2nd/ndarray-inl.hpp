// NDArray<T>'s member definitions (ndarray.hpp holds the declarations and is the API reference).
#pragma once

#include <b2nd/ndarray.hpp>

namespace b2nd {

template <class T>
NDArray<T>::NDArray(AnyArray a) : a_(std::move(a)) {
    const DType want = dtype_of<T>();
    if (want.is_structured() && a_.dtype().is_structured()) {
        const std::string why = a_.dtype().layout_difference(want);
        if (!why.empty()) {
            throw UsageError("\"" + a_.name() +
                             "\": the struct does not match the records of dtype " +
                             a_.dtype().str() + ": " + why);
        }
    } else if (a_.dtype().native() != want.native()) {
        std::string msg = "\"" + a_.name() + "\": NDArray of dtype '" + want.str() +
                          "' cannot view an array of dtype '" + a_.dtype().str() + "'";
        if (!a_.dtype_note().empty()) {
            msg += " (" + a_.dtype_note() + ")";
        }
        throw UsageError(msg);
    }
    swap_ = a_.dtype().needs_byteswap();
}

template <class T>
NDArray<T> NDArray<T>::full(const std::string& path,
                            const Shape& shape,
                            const T& value,
                            CreateOptions o) {
    o.fill = Fill::value;
    o.fill_value.resize(sizeof(T));
    std::memcpy(o.fill_value.data(), &value, sizeof(T));
    return create(path, shape, o);
}

template <class T>
NDArray<T> NDArray<T>::create_from(const std::string& path,
                                   const Shape& shape,
                                   const T* data,
                                   std::size_t n,
                                   const CreateOptions& o) {
    return NDArray(
        AnyArray::create_from(path, dtype_of<T>(), shape,
                              {reinterpret_cast<const std::uint8_t*>(data), n * sizeof(T)}, o));
}

template <class T>
NDArray<T> NDArray<T>::create_from(const std::string& path,
                                   const Shape& shape,
                                   const std::vector<T>& data,
                                   const CreateOptions& o) {
    if constexpr (std::is_same_v<T, bool>) {
        // std::vector<bool> packs bits: one byte per element first.
        const std::vector<std::uint8_t> bytes(data.begin(), data.end());
        return NDArray(
            AnyArray::create_from(path, dtype_of<T>(), shape, {bytes.data(), bytes.size()}, o));
    } else {
        return create_from(path, shape, data.data(), data.size(), o);
    }
}

template <class T>
NDArray<T> NDArray<T>::create_in_memory_from(const Shape& shape,
                                             const std::vector<T>& data,
                                             const CreateOptions& o) {
    if constexpr (std::is_same_v<T, bool>) {
        const std::vector<std::uint8_t> bytes(data.begin(), data.end());
        return NDArray(
            AnyArray::create_in_memory_from(dtype_of<T>(), shape, {bytes.data(), bytes.size()}, o));
    } else {
        return NDArray(AnyArray::create_in_memory_from(
            dtype_of<T>(), shape,
            {reinterpret_cast<const std::uint8_t*>(data.data()), data.size() * sizeof(T)}, o));
    }
}

template <class T>
template <class... I>
T NDArray<T>::operator()(I... idx) const {
    static_assert((std::is_integral_v<I> && ...), "indices must be integers");
    const std::int64_t i[sizeof...(I) == 0 ? 1 : sizeof...(I)] = {
        static_cast<std::int64_t>(idx)...};
    if (static_cast<int>(sizeof...(I)) != a_.ndim()) {
        throw UsageError("\"" + a_.name() + "\": " + std::to_string(sizeof...(I)) +
                         " indices for an array of " + std::to_string(a_.ndim()) + " dimensions");
    }
    return element(i);
}

template <class T>
T NDArray<T>::at(const Shape& idx) const {
    if (static_cast<int>(idx.size()) != a_.ndim()) {
        throw UsageError("\"" + a_.name() + "\": " + std::to_string(idx.size()) +
                         " indices for an array of " + std::to_string(a_.ndim()) + " dimensions");
    }
    return element(idx.data());
}

template <class T>
std::vector<T> NDArray<T>::read_orthogonal(
    const std::vector<std::vector<std::int64_t>>& indices) const {
    B2ND_ALLOW_DEPRECATED_BEGIN
    const std::vector<std::uint8_t> bytes = a_.read_orthogonal(indices);
    B2ND_ALLOW_DEPRECATED_END
    return from_bytes(bytes, bytes.size() / sizeof(T));
}

template <class T>
std::vector<T> NDArray<T>::read_masked(const Mask& mask) const {
    const std::vector<std::uint8_t> bytes = a_.read_masked(mask);
    return from_bytes(bytes, bytes.size() / sizeof(T));
}

template <class T>
std::vector<T> NDArray<T>::read_points(const std::vector<Shape>& points) const {
    const std::vector<std::int64_t> flat = flatten(points);
    std::vector<std::uint8_t> bytes(points.size() * sizeof(T));
    a_.read_points(flat.data(), points.size(), bytes.data());
    return from_bytes(bytes, points.size());
}

template <class T>
void NDArray<T>::read(const Box& box, T* out) const {
    a_.read(box, out, static_cast<std::size_t>(box.size()) * sizeof(T));
    fix(out, box.size());
}

template <class T>
std::vector<T> NDArray<T>::read(const Box& box) const {
    detail::require_box(a_, box, "read");
    if constexpr (std::is_same_v<T, bool>) {
        // std::vector<bool> packs bits: read bytes, then convert.
        std::vector<std::uint8_t> bytes(static_cast<std::size_t>(box.size()));
        a_.read(box, bytes.data(), bytes.size());
        return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
        std::vector<T> out(static_cast<std::size_t>(box.size()));
        read(box, out.data());
        return out;
    }
}

template <class T>
void NDArray<T>::read(const Resolved& sel, T* out) const {
    a_.read(sel, out, static_cast<std::size_t>(sel.size()) * sizeof(T));
    fix(out, sel.size());
}

template <class T>
std::vector<T> NDArray<T>::read(const Selection& sel) const {
    std::vector<T> out;
    std::vector<std::uint8_t> bytes;  // bool only: std::vector<bool> packs bits
    a_.read_selection(sel, [&](const Resolved& r) {
        detail::require_memory(a_, static_cast<std::uint64_t>(r.size()), "read");
        if constexpr (std::is_same_v<T, bool>) {
            bytes.resize(static_cast<std::size_t>(r.size()));
            return static_cast<void*>(bytes.data());
        } else {
            out.resize(static_cast<std::size_t>(r.size()));
            return static_cast<void*>(out.data());
        }
    });
    if constexpr (std::is_same_v<T, bool>) {
        return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
        fix(out.data(), static_cast<std::int64_t>(out.size()));
        return out;
    }
}

template <class T>
void NDArray<T>::write(const Box& box, const std::vector<T>& data) {
    if constexpr (std::is_same_v<T, bool>) {
        const std::vector<std::uint8_t> bytes(data.begin(), data.end());
        a_.write(box, {bytes.data(), bytes.size()});
    } else {
        write(box, data.data(), data.size());
    }
}

template <class T>
void NDArray<T>::write(const Selection& sel, const std::vector<T>& data) {
    const std::vector<std::uint8_t> b = stored(data);
    a_.write(sel, {b.data(), b.size()});
}

template <class T>
void NDArray<T>::write(const Selection& sel, const T& value) {
    const std::vector<std::uint8_t> b = stored(std::vector<T>{value});
    a_.write(sel, {b.data(), b.size()}, Shape{});
}

template <class T>
void NDArray<T>::write(const Selection& sel, const std::vector<T>& data, const Shape& data_shape) {
    const std::vector<std::uint8_t> b = stored(data);
    a_.write(sel, {b.data(), b.size()}, data_shape);
}

template <class T>
void NDArray<T>::write_points(const std::vector<Shape>& points, const std::vector<T>& data) {
    const std::vector<std::int64_t> flat = flatten(points);
    const std::vector<std::uint8_t> b = stored(data);
    a_.write_points(flat.data(), points.size(), {b.data(), b.size()});
}

template <class T>
void NDArray<T>::write_orthogonal(const std::vector<std::vector<std::int64_t>>& indices,
                                  const std::vector<T>& data) {
    const std::vector<std::uint8_t> b = stored(data);
    B2ND_ALLOW_DEPRECATED_BEGIN
    a_.write_orthogonal(indices, {b.data(), b.size()});
    B2ND_ALLOW_DEPRECATED_END
}

template <class T>
void NDArray<T>::write_orthogonal(const std::vector<std::vector<std::int64_t>>& indices,
                                  const T& value) {
    const std::vector<std::uint8_t> b = stored(std::vector<T>{value});
    B2ND_ALLOW_DEPRECATED_BEGIN
    a_.write_orthogonal(indices, {b.data(), b.size()});
    B2ND_ALLOW_DEPRECATED_END
}

template <class T>
void NDArray<T>::write_masked(const Mask& mask, const std::vector<T>& data) {
    const std::vector<std::uint8_t> b = stored(data);
    a_.write_masked(mask, {b.data(), b.size()});
}

template <class T>
void NDArray<T>::append(int axis, const std::vector<T>& data) {
    const std::vector<std::uint8_t> b = stored(data);
    a_.append(axis, {b.data(), b.size()});
}

template <class T>
void NDArray<T>::insert(int axis, std::int64_t pos, const std::vector<T>& data) {
    const std::vector<std::uint8_t> b = stored(data);
    a_.insert(axis, pos, {b.data(), b.size()});
}

template <class T>
template <class Where>
void NDArray<T>::write_native(const Where& where, const T* data, std::size_t n) {
    const ByteSpan bytes(reinterpret_cast<const std::uint8_t*>(data), n * sizeof(T));
    if (!swap_) {
        a_.write(where, bytes);
        return;
    }
    std::vector<std::uint8_t> tmp(bytes.begin(), bytes.end());
    a_.dtype().byteswap(tmp.data(), static_cast<std::int64_t>(n));
    a_.write(where, {tmp.data(), tmp.size()});
}

template <class T>
std::vector<std::int64_t> NDArray<T>::flatten(const std::vector<Shape>& points) const {
    std::vector<std::int64_t> flat;
    flat.reserve(points.size() * dimension());
    for (const Shape& p : points) {
        if (p.size() != dimension()) {
            throw UsageError("\"" + a_.name() + "\": a point of " + std::to_string(p.size()) +
                             " coordinates for an array of " + std::to_string(dimension()) +
                             " dimensions");
        }
        flat.insert(flat.end(), p.begin(), p.end());
    }
    return flat;
}

template <class T>
std::vector<T> NDArray<T>::from_bytes(const std::vector<std::uint8_t>& bytes, std::size_t n) const {
    std::vector<T> out(n);
    if constexpr (std::is_same_v<T, bool>) {
        for (std::size_t i = 0; i < out.size(); ++i) {
            out[i] = bytes[i] != 0;
        }
    } else {
        if (!bytes.empty()) {
            std::memcpy(out.data(), bytes.data(), bytes.size());
        }
        fix(out.data(), static_cast<std::int64_t>(out.size()));
    }
    return out;
}

template <class T>
T NDArray<T>::element(const std::int64_t* idx) const {
    T v;
    a_.read_element(idx, &v);
    fix(&v, 1);
    return v;
}

template <class T>
void NDArray<T>::fix(T* p, std::int64_t n) const {
    if (swap_) {
        a_.dtype().byteswap(reinterpret_cast<std::uint8_t*>(p), n);
    }
    if constexpr (std::is_same_v<T, bool>) {
        auto* b = reinterpret_cast<unsigned char*>(p);
        for (std::int64_t i = 0; i < n; ++i) {
            b[i] = b[i] != 0 ? 1 : 0;
        }
    }
}

template <class T>
std::vector<std::uint8_t> NDArray<T>::stored(const std::vector<T>& data) const {
    if constexpr (std::is_same_v<T, bool>) {
        return std::vector<std::uint8_t>(data.begin(), data.end());
    } else {
        const auto* p = reinterpret_cast<const std::uint8_t*>(data.data());
        std::vector<std::uint8_t> b(p, p + data.size() * sizeof(T));
        if (swap_) {
            a_.dtype().byteswap(b.data(), static_cast<std::int64_t>(data.size()));
        }
        return b;
    }
}

}  // namespace b2nd
