// NDArray<T>: a b2nd array of elements of type T, checked against the stored dtype, with values
// converted from the stored byte order. A thin template over AnyArray.
//
//   auto t = b2nd::NDArray<float>::open("temperature.b2nd");
//   float x = t(120, 40, 7);                         // one block decoded, then cached
//   std::vector<float> day = t.read({7, b2nd::Slice::all(), b2nd::Slice::all()});
#pragma once

#include <cstring>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>

namespace b2nd {

template <class T>
class NDArray {
    static_assert(std::is_trivially_copyable_v<T>, "b2nd elements must be trivially copyable");

public:
    using value_type = T;
    using shape_type = Shape;
    using size_type = std::size_t;

    NDArray() = default;
    /// Views `a` as T. \throws UsageError when T's dtype is not a's dtype (byte order aside)
    explicit NDArray(AnyArray a) : a_(std::move(a)) {
        const DType want = dtype_of<T>();
        if (a_.dtype().native() != want.native()) {
            std::string msg = "\"" + a_.path() + "\": NDArray of dtype '" + want.str() +
                              "' cannot view an array of dtype '" + a_.dtype().str() + "'";
            if (!a_.dtype_note().empty()) {
                msg += " (" + a_.dtype_note() + ")";
            }
            throw UsageError(msg);
        }
        swap_ = a_.dtype().needs_byteswap();
    }

    static NDArray open(const std::string& path, const OpenOptions& o = {}) {
        return NDArray(AnyArray::open(path, o));
    }
    static NDArray create(const std::string& path,
                          const Shape& shape,
                          const CreateOptions& o = {}) {
        return NDArray(AnyArray::create(path, dtype_of<T>(), shape, o));
    }
    /// A new array of `shape` filled with `value`.
    static NDArray full(const std::string& path,
                        const Shape& shape,
                        const T& value,
                        CreateOptions o = {}) {
        o.fill = Fill::value;
        o.fill_value.resize(sizeof(T));
        std::memcpy(o.fill_value.data(), &value, sizeof(T));
        return create(path, shape, o);
    }
    /// A new array holding `data` (C order).
    static NDArray create_from(const std::string& path,
                               const Shape& shape,
                               const T* data,
                               std::size_t n,
                               const CreateOptions& o = {}) {
        return NDArray(
            AnyArray::create_from(path, dtype_of<T>(), shape,
                                  {reinterpret_cast<const std::uint8_t*>(data), n * sizeof(T)}, o));
    }
    static NDArray create_from(const std::string& path,
                               const Shape& shape,
                               const std::vector<T>& data,
                               const CreateOptions& o = {}) {
        if constexpr (std::is_same_v<T, bool>) {
            // std::vector<bool> packs bits: one byte per element first.
            const std::vector<std::uint8_t> bytes(data.begin(), data.end());
            return NDArray(
                AnyArray::create_from(path, dtype_of<T>(), shape, {bytes.data(), bytes.size()}, o));
        } else {
            return create_from(path, shape, data.data(), data.size(), o);
        }
    }

    /// A writable array in memory (AnyArray::create_in_memory).
    static NDArray create_in_memory(const Shape& shape, const CreateOptions& o = {}) {
        return NDArray(AnyArray::create_in_memory(dtype_of<T>(), shape, o));
    }
    /// An in-memory array holding `data` (C order).
    static NDArray create_in_memory_from(const Shape& shape,
                                         const std::vector<T>& data,
                                         const CreateOptions& o = {}) {
        if constexpr (std::is_same_v<T, bool>) {
            const std::vector<std::uint8_t> bytes(data.begin(), data.end());
            return NDArray(AnyArray::create_in_memory_from(dtype_of<T>(), shape,
                                                           {bytes.data(), bytes.size()}, o));
        } else {
            return NDArray(AnyArray::create_in_memory_from(
                dtype_of<T>(), shape,
                {reinterpret_cast<const std::uint8_t*>(data.data()), data.size() * sizeof(T)}, o));
        }
    }
    /// A read-only array over the bytes of a contiguous frame (to_cframe()), which must outlive
    /// it. \throws UsageError when T does not match the stored dtype
    static NDArray open_buffer(ByteSpan frame, const OpenOptions& o = {}) {
        return NDArray(AnyArray::open_buffer(frame, o));
    }
    /// See AnyArray::to_cframe() and save().
    std::vector<std::uint8_t> to_cframe() const { return a_.to_cframe(); }
    NDArray save(const std::string& path, bool overwrite = false) const {
        return NDArray(a_.save(path, overwrite));
    }
    bool in_memory() const { return a_.in_memory(); }

    const Shape& shape() const { return a_.shape(); }
    std::size_t dimension() const { return static_cast<std::size_t>(a_.ndim()); }
    std::size_t size() const { return static_cast<std::size_t>(a_.size()); }
    const Shape& chunk_shape() const { return a_.chunk_shape(); }
    const Shape& block_shape() const { return a_.block_shape(); }
    const DType& dtype() const { return a_.dtype(); }
    const std::string& path() const { return a_.path(); }
    AnyArray& any() noexcept { return a_; }
    const AnyArray& any() const noexcept { return a_; }

    /// See AnyArray::refresh(), follows() and pinned().
    bool refresh() { return a_.refresh(); }
    bool follows() const { return a_.follows(); }
    NDArray pinned() const { return NDArray(a_.pinned()); }

    /// One element; negative indices are not wrapped. \throws UsageError when out of range
    template <class... I>
    T operator()(I... idx) const {
        static_assert((std::is_integral_v<I> && ...), "indices must be integers");
        const std::int64_t i[sizeof...(I) == 0 ? 1 : sizeof...(I)] = {
            static_cast<std::int64_t>(idx)...};
        if (static_cast<int>(sizeof...(I)) != a_.ndim()) {
            throw UsageError("\"" + a_.path() + "\": " + std::to_string(sizeof...(I)) +
                             " indices for an array of " + std::to_string(a_.ndim()) +
                             " dimensions");
        }
        return element(i);
    }
    /// One element at coordinates `idx`.
    T at(const Shape& idx) const {
        if (static_cast<int>(idx.size()) != a_.ndim()) {
            throw UsageError("\"" + a_.path() + "\": " + std::to_string(idx.size()) +
                             " indices for an array of " + std::to_string(a_.ndim()) +
                             " dimensions");
        }
        return element(idx.data());
    }

    /// Deprecated: an orthogonal selection (python-blosc2's `oindex`, one index list per
    /// dimension) is a Selection of DimIndex::list entries, read by read(Selection).
    [[deprecated("index lists are a Selection: read(Selection)")]] std::vector<T> read_orthogonal(
        const std::vector<std::vector<std::int64_t>>& indices) const {
        B2ND_ALLOW_DEPRECATED_BEGIN
        const std::vector<std::uint8_t> bytes = a_.read_orthogonal(indices);
        B2ND_ALLOW_DEPRECATED_END
        return from_bytes(bytes, bytes.size() / sizeof(T));
    }

    /// a[mask]: the elements where `mask` (b2nd/mask.hpp) is true, in C order.
    std::vector<T> read_masked(const Mask& mask) const {
        const std::vector<std::uint8_t> bytes = a_.read_masked(mask);
        return from_bytes(bytes, bytes.size() / sizeof(T));
    }

    /// The elements at `points` (each of ndim coordinates), each touched block decoded once.
    std::vector<T> read_points(const std::vector<Shape>& points) const {
        const std::vector<std::int64_t> flat = flatten(points);
        std::vector<std::uint8_t> bytes(points.size() * sizeof(T));
        a_.read_points(flat.data(), points.size(), bytes.data());
        return from_bytes(bytes, points.size());
    }

    /// Reads a box into out (box.size() elements, C order).
    void read(const Box& box, T* out) const {
        a_.read(box, out, static_cast<std::size_t>(box.size()) * sizeof(T));
        fix(out, box.size());
    }
    std::vector<T> read(const Box& box) const {
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
    /// Reads a resolved selection (a box or index lists) into out (sel.size() elements).
    void read(const Resolved& sel, T* out) const {
        a_.read(sel, out, static_cast<std::size_t>(sel.size()) * sizeof(T));
        fix(out, sel.size());
    }
    /// Reads a selection (its result shape is resolve(shape(), sel).shape), resolved against the
    /// shape of the state it reads (which matters for an array that follows other writers).
    std::vector<T> read(const Selection& sel) const {
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
    std::vector<T> read(std::initializer_list<DimIndex> sel) const { return read(Selection(sel)); }
    /// The whole array (as it is in the state read).
    std::vector<T> read() const { return read(Selection{}); }

    /// Writes n = box.size() elements (C order) into box.
    void write(const Box& box, const T* data, std::size_t n) { write_native(box, data, n); }
    void write(const Box& box, const std::vector<T>& data) {
        if constexpr (std::is_same_v<T, bool>) {
            const std::vector<std::uint8_t> bytes(data.begin(), data.end());
            a_.write(box, {bytes.data(), bytes.size()});
        } else {
            write(box, data.data(), data.size());
        }
    }
    /// Writes n = sel.size() elements (C order of sel.shape) into a resolved selection.
    void write(const Resolved& sel, const T* data, std::size_t n) { write_native(sel, data, n); }
    /// Writes a selection (slices, integers, index lists): `data` in C order of its shape, or
    /// one value for all of it.
    void write(const Selection& sel, const std::vector<T>& data) {
        const std::vector<std::uint8_t> b = stored(data);
        a_.write(sel, {b.data(), b.size()});
    }
    void write(const Selection& sel, const T& value) {
        const std::vector<std::uint8_t> b = stored(std::vector<T>{value});
        a_.write(sel, {b.data(), b.size()}, Shape{});
    }
    /// Writes `data` of shape `data_shape`, broadcast (NumPy's rules) to the selection's shape.
    void write(const Selection& sel, const std::vector<T>& data, const Shape& data_shape) {
        const std::vector<std::uint8_t> b = stored(data);
        a_.write(sel, {b.data(), b.size()}, data_shape);
    }
    /// Writes `data[i]` at `points[i]` (each of ndim coordinates), or one value at every point.
    /// The last of repeated points wins.
    void write_points(const std::vector<Shape>& points, const std::vector<T>& data) {
        const std::vector<std::int64_t> flat = flatten(points);
        const std::vector<std::uint8_t> b = stored(data);
        a_.write_points(flat.data(), points.size(), {b.data(), b.size()});
    }
    void write_points(const std::vector<Shape>& points, const T& value) {
        write_points(points, std::vector<T>{value});
    }
    /// Deprecated: write(Selection, data) with DimIndex::list entries says the same.
    [[deprecated("index lists are a Selection: write(Selection, data)")]] void write_orthogonal(
        const std::vector<std::vector<std::int64_t>>& indices, const std::vector<T>& data) {
        const std::vector<std::uint8_t> b = stored(data);
        B2ND_ALLOW_DEPRECATED_BEGIN
        a_.write_orthogonal(indices, {b.data(), b.size()});
        B2ND_ALLOW_DEPRECATED_END
    }
    [[deprecated("index lists are a Selection: write(Selection, value)")]] void write_orthogonal(
        const std::vector<std::vector<std::int64_t>>& indices, const T& value) {
        const std::vector<std::uint8_t> b = stored(std::vector<T>{value});
        B2ND_ALLOW_DEPRECATED_BEGIN
        a_.write_orthogonal(indices, {b.data(), b.size()});
        B2ND_ALLOW_DEPRECATED_END
    }
    /// a[mask] = data (one value per true element, C order) or a[mask] = value.
    void write_masked(const Mask& mask, const std::vector<T>& data) {
        const std::vector<std::uint8_t> b = stored(data);
        a_.write_masked(mask, {b.data(), b.size()});
    }
    void write_masked(const Mask& mask, const T& value) {
        write_masked(mask, std::vector<T>{value});
    }
    /// Sets one element.
    void set(const Shape& idx, const T& value) {
        write(Box::region(idx, Shape(idx.size(), 1)), &value, 1);
    }

    void resize(const Shape& s) { a_.resize(s); }
    void append(int axis, const std::vector<T>& data) {
        const std::vector<std::uint8_t> b = stored(data);
        a_.append(axis, {b.data(), b.size()});
    }
    void insert(int axis, std::int64_t pos, const std::vector<T>& data) {
        const std::vector<std::uint8_t> b = stored(data);
        a_.insert(axis, pos, {b.data(), b.size()});
    }
    void remove(int axis, std::int64_t pos, std::int64_t count) { a_.remove(axis, pos, count); }

private:
    /// Writes n native values to `where` (a Box or a Resolved), in the stored byte order.
    template <class Where>
    void write_native(const Where& where, const T* data, std::size_t n) {
        const ByteSpan bytes(reinterpret_cast<const std::uint8_t*>(data), n * sizeof(T));
        if (!swap_) {
            a_.write(where, bytes);
            return;
        }
        std::vector<std::uint8_t> tmp(bytes.begin(), bytes.end());
        a_.dtype().byteswap(tmp.data(), static_cast<std::int64_t>(n));
        a_.write(where, {tmp.data(), tmp.size()});
    }
    /// Points' coordinates, one after another. \throws UsageError for a point of the wrong
    /// number of coordinates
    std::vector<std::int64_t> flatten(const std::vector<Shape>& points) const {
        std::vector<std::int64_t> flat;
        flat.reserve(points.size() * dimension());
        for (const Shape& p : points) {
            if (p.size() != dimension()) {
                throw UsageError("\"" + a_.path() + "\": a point of " + std::to_string(p.size()) +
                                 " coordinates for an array of " + std::to_string(dimension()) +
                                 " dimensions");
            }
            flat.insert(flat.end(), p.begin(), p.end());
        }
        return flat;
    }
    /// n stored elements as native values.
    std::vector<T> from_bytes(const std::vector<std::uint8_t>& bytes, std::size_t n) const {
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
    T element(const std::int64_t* idx) const {
        T v;
        a_.read_element(idx, &v);
        fix(&v, 1);
        return v;
    }
    /// Stored order to native, and bools normalized to 0/1 (any other byte would be UB as bool).
    void fix(T* p, std::int64_t n) const {
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
    /// The bytes of `data` in the stored byte order.
    std::vector<std::uint8_t> stored(const std::vector<T>& data) const {
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

    AnyArray a_;
    bool swap_ = false;
};

template <class T>
NDArray<T> AnyArray::as() const {
    return NDArray<T>(*this);
}

}  // namespace b2nd
