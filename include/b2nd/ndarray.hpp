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

/// An array of elements of type T (bool, the integers, float, double, std::complex, records
/// declared with b2nd::record, dates and durations of datetime.hpp): a typed handle over an
/// AnyArray, whose dtype must be T's (byte order aside: a foreign one is converted on read and
/// write). S and U string arrays are read through AnyArray (strings.hpp).
template <class T>
class NDArray {
    static_assert(std::is_trivially_copyable_v<T>, "b2nd elements must be trivially copyable");

public:
    using value_type = T;           ///< the element type (xtensor's name)
    using shape_type = Shape;       ///< the shape type (xtensor's name)
    using size_type = std::size_t;  ///< sizes (xtensor's name)

    NDArray() = default;
    /// Views `a` as T. \throws UsageError when T's dtype is not a's dtype (byte order aside)
    explicit NDArray(AnyArray a);

    /// Opens the array at `path` (or URL). \throws UsageError when T is not its dtype
    static NDArray open(const std::string& path, const OpenOptions& o = {}) {
        return NDArray(AnyArray::open(path, o));
    }
    /// A new array of zeros (or CreateOptions::fill), published at `path` in one step.
    static NDArray create(const std::string& path,
                          const Shape& shape,
                          const CreateOptions& o = {}) {
        return NDArray(AnyArray::create(path, dtype_of<T>(), shape, o));
    }
    /// A new array of `shape` filled with `value`.
    static NDArray full(const std::string& path,
                        const Shape& shape,
                        const T& value,
                        CreateOptions o = {});
    /// A new array holding `data` (C order).
    static NDArray create_from(const std::string& path,
                               const Shape& shape,
                               const T* data,
                               std::size_t n,
                               const CreateOptions& o = {});
    /// A new array holding `data` (C order).
    static NDArray create_from(const std::string& path,
                               const Shape& shape,
                               const std::vector<T>& data,
                               const CreateOptions& o = {});

    /// A writable array in memory (AnyArray::create_in_memory).
    static NDArray create_in_memory(const Shape& shape, const CreateOptions& o = {}) {
        return NDArray(AnyArray::create_in_memory(dtype_of<T>(), shape, o));
    }
    /// An in-memory array holding `data` (C order).
    static NDArray create_in_memory_from(const Shape& shape,
                                         const std::vector<T>& data,
                                         const CreateOptions& o = {});
    /// A read-only array over the bytes of a contiguous frame (to_cframe()), which must outlive
    /// it. \throws UsageError when T does not match the stored dtype
    static NDArray open_buffer(ByteSpan frame, const OpenOptions& o = {}) {
        return NDArray(AnyArray::open_buffer(frame, o));
    }
    /// See AnyArray::to_cframe() and save().
    std::vector<std::uint8_t> to_cframe() const { return a_.to_cframe(); }
    /// As AnyArray::save(), typed.
    NDArray save(const std::string& path, bool overwrite = false) const {
        return NDArray(a_.save(path, overwrite));
    }
    /// Whether it was made in memory.
    bool in_memory() const { return a_.in_memory(); }

    /// The array's shape.
    const Shape& shape() const { return a_.shape(); }
    /// The number of dimensions (AnyArray::ndim()).
    int ndim() const { return a_.ndim(); }
    /// ndim() in xtensor's dialect (its containers' name and type), for generic xtensor code.
    std::size_t dimension() const { return static_cast<std::size_t>(ndim()); }
    /// Elements in the array.
    std::size_t size() const { return static_cast<std::size_t>(a_.size()); }
    /// The shape of its chunks.
    const Shape& chunk_shape() const { return a_.chunk_shape(); }
    /// The shape of the blocks inside a chunk.
    const Shape& block_shape() const { return a_.block_shape(); }
    /// The stored dtype.
    const DType& dtype() const { return a_.dtype(); }
    /// The file or directory (or URL).
    const std::string& path() const { return a_.path(); }
    /// What messages call it (AnyArray::name()).
    const std::string& name() const { return a_.name(); }
    /// The untyped handle (same open array).
    AnyArray& any() noexcept { return a_; }
    /// The untyped handle (same open array).
    const AnyArray& any() const noexcept { return a_; }
    /// The untyped handle, where one is taken (b2nd::concatenate({a, b, c}, ...), b2nd::copy).
    operator const AnyArray&() const noexcept { return a_; }  // NOLINT(google-explicit-constructor)

    /// See AnyArray::refresh(), follows() and pinned().
    bool refresh() { return a_.refresh(); }
    /// See AnyArray::follows().
    bool follows() const { return a_.follows(); }
    /// See AnyArray::pinned().
    NDArray pinned() const { return NDArray(a_.pinned()); }

    /// One element; negative indices are not wrapped. \throws UsageError when out of range
    template <class... I>
    T operator()(I... idx) const;
    /// One element at coordinates `idx`.
    T at(const Shape& idx) const;

    /// Deprecated: an orthogonal selection (python-blosc2's `oindex`, one index list per
    /// dimension) is a Selection of DimIndex::list entries, read by read(Selection).
    [[deprecated("index lists are a Selection: read(Selection)")]] std::vector<T> read_orthogonal(
        const std::vector<std::vector<std::int64_t>>& indices) const;

    /// a[mask]: the elements where `mask` (b2nd/mask.hpp) is true, in C order.
    std::vector<T> read_masked(const Mask& mask) const;

    /// The elements at `points` (each of ndim coordinates), each touched block decoded once.
    std::vector<T> read_points(const std::vector<Shape>& points) const;

    /// Reads a box into out (box.size() elements, C order).
    void read(const Box& box, T* out) const;
    /// The elements of `box`, C order.
    std::vector<T> read(const Box& box) const;
    /// Reads a resolved selection (a box or index lists) into out (sel.size() elements).
    void read(const Resolved& sel, T* out) const;
    /// Reads a selection (its result shape is resolve(shape(), sel).shape), resolved against the
    /// shape of the state it reads (which matters for an array that follows other writers).
    std::vector<T> read(const Selection& sel) const;
    /// The elements of a selection given in place, as read(Selection).
    std::vector<T> read(std::initializer_list<DimIndex> sel) const { return read(Selection(sel)); }
    /// The whole array (as it is in the state read).
    std::vector<T> read() const { return read(Selection{}); }
    /// One field of a structured array as NDArray<F> (AnyArray::field: a lazy view; nested
    /// names "pos.x"; its writes change that field only). \throws UsageError for an unknown
    /// field or one whose dtype is not F's
    template <class F>
    NDArray<F> field(const std::string& name) const {
        return NDArray<F>(a_.field(name));
    }

    /// Writes n = box.size() elements (C order) into box.
    void write(const Box& box, const T* data, std::size_t n) { write_native(box, data, n); }
    /// Writes `data` (box.size() elements, C order) into box.
    void write(const Box& box, const std::vector<T>& data);
    /// Writes n = sel.size() elements (C order of sel.shape) into a resolved selection.
    void write(const Resolved& sel, const T* data, std::size_t n) { write_native(sel, data, n); }
    /// Writes a selection (slices, integers, index lists): `data` in C order of its shape, or
    /// one value for all of it.
    void write(const Selection& sel, const std::vector<T>& data);
    /// Writes one value at every element of the selection.
    void write(const Selection& sel, const T& value);
    /// Writes `data` of shape `data_shape`, broadcast (NumPy's rules) to the selection's shape.
    void write(const Selection& sel, const std::vector<T>& data, const Shape& data_shape);
    /// Writes `data[i]` at `points[i]` (each of ndim coordinates), or one value at every point.
    /// The last of repeated points wins.
    void write_points(const std::vector<Shape>& points, const std::vector<T>& data);
    /// Writes one value at every point.
    void write_points(const std::vector<Shape>& points, const T& value) {
        write_points(points, std::vector<T>{value});
    }
    /// Deprecated: write(Selection, data) with DimIndex::list entries says the same.
    [[deprecated("index lists are a Selection: write(Selection, data)")]] void write_orthogonal(
        const std::vector<std::vector<std::int64_t>>& indices, const std::vector<T>& data);
    /// Deprecated: write(Selection, value) with DimIndex::list entries says the same.
    [[deprecated("index lists are a Selection: write(Selection, value)")]] void write_orthogonal(
        const std::vector<std::vector<std::int64_t>>& indices, const T& value);
    /// a[mask] = data (one value per true element, C order) or a[mask] = value.
    void write_masked(const Mask& mask, const std::vector<T>& data);
    /// a[mask] = value.
    void write_masked(const Mask& mask, const T& value) {
        write_masked(mask, std::vector<T>{value});
    }
    /// Sets one element.
    void set(const Shape& idx, const T& value) {
        write(Box::region(idx, Shape(idx.size(), 1)), &value, 1);
    }

    /// New shape: grows with the fill, or shrinks (AnyArray::resize).
    void resize(const Shape& s) { a_.resize(s); }
    /// Appends `data` along `axis` (its shape: the array's, with any length along axis).
    void append(int axis, const std::vector<T>& data);
    /// Inserts `data` along `axis` before position `pos`.
    void insert(int axis, std::int64_t pos, const std::vector<T>& data);
    /// Removes `count` positions along `axis` from `pos`.
    void remove(int axis, std::int64_t pos, std::int64_t count) { a_.remove(axis, pos, count); }

private:
    /// Writes n native values to `where` (a Box or a Resolved), in the stored byte order.
    template <class Where>
    void write_native(const Where& where, const T* data, std::size_t n);
    /// Points' coordinates, one after another. \throws UsageError for a point of the wrong
    /// number of coordinates
    std::vector<std::int64_t> flatten(const std::vector<Shape>& points) const;
    /// n stored elements as native values.
    std::vector<T> from_bytes(const std::vector<std::uint8_t>& bytes, std::size_t n) const;
    T element(const std::int64_t* idx) const;
    /// Stored order to native, and bools normalized to 0/1 (any other byte would be UB as bool).
    void fix(T* p, std::int64_t n) const;
    /// The bytes of `data` in the stored byte order.
    std::vector<std::uint8_t> stored(const std::vector<T>& data) const;

    AnyArray a_;
    bool swap_ = false;
};

template <class T>
NDArray<T> AnyArray::as() const {
    return NDArray<T>(*this);
}

}  // namespace b2nd

#include <b2nd/ndarray-inl.hpp>
