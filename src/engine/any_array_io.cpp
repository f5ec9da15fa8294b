// AnyArray's reads and writes: boxes, selections (index lists, points, orthogonal indexing),
// fields; each is planned (select/) and handed to the engine (ArrayCore). Opening, creating,
// metadata and reshaping are in any_array.cpp.
#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>

#include "../detail/text.hpp"
#include "../select/box_plan.hpp"
#include "../select/strided_copy.hpp"
#include "array_core.hpp"
#include "engine_access.hpp"
#include "field_spec.hpp"
#include <unistd.h>

namespace b2nd {

using detail::num;

void detail::require_box(const AnyArray& a, const Box& box, const char* op) {
    a.core().require_box(box, op);
}

void detail::require_memory(const AnyArray& a, std::uint64_t elements, const char* op) {
    const auto isz = static_cast<std::uint64_t>(a.itemsize());
    std::uint64_t bytes = 0;
    const bool overflow = format::mul_overflows(elements, isz, &bytes);
    const auto pages = static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES));
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t ram = pages * page;
    if (overflow || bytes > ram) {
        throw UsageError(a.core().where() + ": cannot " + op + " a selection of " +
                         std::to_string(elements) + " elements into memory (" +
                         (overflow ? std::string("more than 2^64") : std::to_string(bytes)) +
                         " bytes; this machine has " + std::to_string(ram) + ")");
    }
}

void AnyArray::read(const Box& box, void* out, std::size_t out_bytes) const {
    const Reading r = reading();
    detail::ArrayCore& c = r.core;
    c.require_box(box, "read");
    const auto need =
        static_cast<std::uint64_t>(box.size()) * static_cast<std::uint64_t>(c.grid().itemsize());
    if (out_bytes != need) {
        throw UsageError(c.where() + ": reading " + box.str() + " needs a buffer of " +
                         std::to_string(need) + " bytes, not " + std::to_string(out_bytes));
    }
    c.read(detail::SelectionPlan::of_box(box), static_cast<std::uint8_t*>(out));
}

std::vector<std::uint8_t> AnyArray::read(const Box& box) const {
    const Reading r = reading();
    detail::ArrayCore& c = r.core;
    c.require_box(box, "read");
    std::vector<std::uint8_t> out(static_cast<std::size_t>(box.size() * c.grid().itemsize()));
    c.read(detail::SelectionPlan::of_box(box), out.data());
    return out;
}

std::vector<std::uint8_t> AnyArray::read(const Selection& sel) const {
    std::vector<std::uint8_t> out;
    read_selection(sel, [&](const Resolved& r) {
        detail::require_memory(*this, static_cast<std::uint64_t>(r.size()), "read");
        out.resize(static_cast<std::size_t>(r.size() * itemsize()));
        return static_cast<void*>(out.data());
    });
    return out;
}

detail::FieldSpec detail::field_spec(const AnyArray& a, const std::string& name) {
    const auto f = a.dtype().field(name);
    if (!f) {
        std::string names;
        for (const DType::Field& x : a.dtype().fields()) {
            names += (names.empty() ? "'" : ", '") + x.name + "'";
        }
        throw UsageError(
            detail::quoted_path(a.path()) + ": no field '" + name + "' in dtype " +
            a.dtype().str() +
            (names.empty() ? " (not a structured dtype)" : " (fields: " + names + ")"));
    }
    FieldSpec s{*f->type, f->shape, f->offset, f->type->itemsize()};
    for (const std::int64_t e : s.sub) {
        s.width *= e;
    }
    return s;
}

std::vector<std::uint8_t> AnyArray::read_field(const std::string& field,
                                               const Selection& sel,
                                               DType* field_dtype,
                                               Shape* result_shape) const {
    const detail::FieldSpec f = detail::field_spec(*this, field);
    const Reading r = reading();
    Resolved res = resolve(r.core.grid().shape(), sel);
    Shape shape = res.shape;
    shape.insert(shape.end(), f.sub.begin(), f.sub.end());
    std::uint64_t bytes = 0;
    if (format::mul_overflows(static_cast<std::uint64_t>(res.size()),
                              static_cast<std::uint64_t>(f.width), &bytes)) {
        bytes = UINT64_MAX;
    }
    const auto isz = static_cast<std::uint64_t>(itemsize());
    detail::require_memory(*this, bytes / isz + (bytes % isz != 0 ? 1 : 0), "read");
    std::vector<std::uint8_t> out(static_cast<std::size_t>(res.size() * f.width));
    if (f.width > 0 && res.size() > 0) {
        r.core.read(
            detail::SelectionPlan::of(std::move(res)).with_part({f.offset, f.width}, itemsize()),
            out.data());
    }
    if (field_dtype != nullptr) {
        *field_dtype = f.type;
    }
    if (result_shape != nullptr) {
        *result_shape = std::move(shape);
    }
    return out;
}

namespace {

/// Index lists (one per dimension) into out, C order; the lists and the buffer's size checked.
void read_index_lists(const detail::ArrayCore& c,
                      const std::vector<std::vector<std::int64_t>>& lists,
                      void* out,
                      std::size_t out_bytes) {
    const std::uint64_t n = detail::OrthoPlan::count(lists, c.grid(), c.where());
    const std::uint64_t need = n * static_cast<std::uint64_t>(c.grid().itemsize());
    if (out_bytes != need) {
        throw UsageError(c.where() + ": an orthogonal selection of " + std::to_string(n) +
                         " elements needs a buffer of " + std::to_string(need) + " bytes, not " +
                         std::to_string(out_bytes));
    }
    c.read(detail::SelectionPlan::of_lists(lists), static_cast<std::uint8_t*>(out));
}

/// Index lists written from data (C order, or one element for all).
void write_index_lists(detail::ArrayCore& c,
                       const std::vector<std::vector<std::int64_t>>& lists,
                       ByteSpan data) {
    const auto isz = static_cast<std::uint64_t>(c.grid().itemsize());
    const std::uint64_t n = detail::OrthoPlan::count(lists, c.grid(), c.where());
    if (data.size() != n * isz && data.size() != isz) {
        throw UsageError(c.where() + ": writing an orthogonal selection of " + std::to_string(n) +
                         " elements needs " + std::to_string(n * isz) + " bytes of data (or " +
                         std::to_string(isz) + " for one value), not " +
                         std::to_string(data.size()));
    }
    const std::vector<std::int64_t> one(lists.size(), 0);  // one element for all
    c.write(detail::SelectionPlan::of_lists(lists), data.data(),
            data.size() == isz && n != 1 ? one.data() : nullptr);
}

}  // namespace

void AnyArray::read(const Resolved& sel, void* out, std::size_t out_bytes) const {
    if (sel.orthogonal()) {
        read_index_lists(reading().core, sel.lists, out, out_bytes);
    } else {
        read(sel.box, out, out_bytes);
    }
}

void AnyArray::write(const Resolved& sel, ByteSpan data) {
    if (sel.orthogonal()) {
        write_index_lists(core(), sel.lists, data);
    } else {
        write(sel.box, data);
    }
}

void AnyArray::read_selection(const Selection& sel,
                              const std::function<void*(const Resolved&)>& destination) const {
    reading()->read_selection(sel, destination);
}

void AnyArray::read_strided(const Box& box, void* out, const std::int64_t* strides) const {
    reading()->read(detail::SelectionPlan::of_box(box), static_cast<std::uint8_t*>(out), strides);
}

void AnyArray::read_element(const std::int64_t* idx, void* out) const {
    reading()->read_element(idx, static_cast<std::uint8_t*>(out));
}

void AnyArray::read_points(const std::int64_t* coords, std::size_t n, void* out) const {
    const Reading r = reading();
    r.core.read(detail::SelectionPlan::of_points(coords, n, r.core.grid().ndim()),
                static_cast<std::uint8_t*>(out));
}

void AnyArray::read_orthogonal(const std::vector<std::vector<std::int64_t>>& indices,
                               void* out,
                               std::size_t out_bytes) const {
    read_index_lists(reading().core, indices, out, out_bytes);
}

std::vector<std::uint8_t> AnyArray::read_orthogonal(
    const std::vector<std::vector<std::int64_t>>& indices) const {
    const detail::ArrayCore& c = core();
    const std::uint64_t n = detail::OrthoPlan::count(indices, c.grid(), c.where());
    detail::require_memory(*this, n, "read");
    std::vector<std::uint8_t> out(
        static_cast<std::size_t>(n * static_cast<std::uint64_t>(c.grid().itemsize())));
    read_index_lists(reading().core, indices, out.data(), out.size());
    return out;
}

void AnyArray::write_points(const std::int64_t* coords, std::size_t n, ByteSpan data) {
    detail::ArrayCore& c = core();
    const auto isz = static_cast<std::uint64_t>(c.grid().itemsize());
    if (data.size() != n * isz && data.size() != isz) {
        throw UsageError(c.where() + ": writing " + std::to_string(n) + " points needs " +
                         std::to_string(n * isz) + " bytes of data (or " + std::to_string(isz) +
                         " for one value), not " + std::to_string(data.size()));
    }
    const std::int64_t one = 0;  // one element for every point
    c.write(detail::SelectionPlan::of_points(coords, n, c.grid().ndim()), data.data(),
            data.size() == isz && n != 1 ? &one : nullptr);
}

void AnyArray::write_orthogonal(const std::vector<std::vector<std::int64_t>>& indices,
                                ByteSpan data) {
    write_index_lists(core(), indices, data);
}

void AnyArray::write(const Box& box, ByteSpan data) {
    detail::ArrayCore& c = core();
    c.require_box(box, "write");
    const auto need =
        static_cast<std::uint64_t>(box.size()) * static_cast<std::uint64_t>(c.grid().itemsize());
    if (data.size() != need) {
        throw UsageError(c.where() + ": writing " + box.str() + " needs " + std::to_string(need) +
                         " bytes of data, not " + std::to_string(data.size()));
    }
    c.write(detail::SelectionPlan::of_box(box), data.data());
}

void AnyArray::write(const Selection& sel, ByteSpan data, const std::optional<Shape>& data_shape) {
    detail::ArrayCore& c = core();
    const Resolved r = resolve(c.grid().shape(), sel);
    const std::int64_t isz = c.grid().itemsize();
    const std::int64_t n = r.size();
    Shape ds;
    if (data_shape) {
        ds = *data_shape;
    } else if (data.size() == static_cast<std::uint64_t>(isz) && n != 1) {
        ds = {};  // one value for every element
    } else {
        ds = r.shape;
    }
    std::int64_t dn = 1;
    for (std::int64_t e : ds) {
        if (e < 0 || format::mul_overflows(dn, e, &dn)) {
            throw UsageError(c.where() + ": data of shape " + to_string(ds) + " is not valid");
        }
    }
    if (data.size() != static_cast<std::uint64_t>(dn) * static_cast<std::uint64_t>(isz)) {
        throw UsageError(
            c.where() + ": writing a selection of shape " + to_string(r.shape) + " needs " +
            std::to_string(static_cast<std::uint64_t>(dn) * static_cast<std::uint64_t>(isz)) +
            " bytes of data of shape " + to_string(ds) + (data_shape ? "" : " (or one element)") +
            ", not " + std::to_string(data.size()));
    }
    // NumPy's broadcasting: the data's dimensions align with the selection's last ones; each is
    // equal or 1. The byte stride of the data along each result dimension (0: broadcast).
    if (ds.size() > r.shape.size()) {
        throw UsageError(c.where() + ": data of shape " + to_string(ds) +
                         " does not broadcast to the selection's shape " + to_string(r.shape));
    }
    std::vector<std::int64_t> stride(r.shape.size(), 0);
    std::int64_t st = isz;
    for (std::size_t k = ds.size(); k-- > 0;) {
        const std::size_t rk = r.shape.size() - ds.size() + k;
        if (ds[k] != r.shape[rk] && ds[k] != 1) {
            throw UsageError(c.where() + ": data of shape " + to_string(ds) +
                             " does not broadcast to the selection's shape " + to_string(r.shape) +
                             " (dimension " + num(static_cast<int>(rk)) + ")");
        }
        stride[rk] = ds[k] == 1 ? 0 : st;
        st *= ds[k];
    }
    if (n == 0) {
        return;
    }
    // The plan's data strides, one per array dimension: the result's, where a result
    // dimension walks one (integer-selected dimensions and new axes have extent 1).
    std::vector<std::int64_t> plan_stride(c.grid().shape().size(), 0);
    for (std::size_t k = 0; k < r.dims.size(); ++k) {
        if (r.dims[k] >= 0) {
            plan_stride[static_cast<std::size_t>(r.dims[k])] = stride[k];
        }
    }
    // A box walks the data with these strides (broadcasting costs no copy); index lists gather
    // broadcast data into C order first.
    c.write(detail::SelectionPlan::of(r), data.data(), plan_stride.data());
}

}  // namespace b2nd
