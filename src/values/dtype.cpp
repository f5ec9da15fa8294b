// NumPy dtypes: the forms they print in (str: dtype.str, or python's str(dtype) for structured
// dtypes; npy_descr), fields, byte order. The parser of those forms is dtype_parse.cpp.
#include <algorithm>
#include <cctype>
#include <numeric>

#include <b2nd/dtype.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/checked_math.hpp>

#include "../detail/text.hpp"
#include "dtype_detail.hpp"

namespace b2nd {

using detail::num;

namespace {}  // namespace

namespace {

std::string shape_repr(const std::vector<std::int64_t>& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        s += (i > 0 ? ", " : "") + num(shape[i]);
    }
    return s + (shape.size() == 1 ? ",)" : ")");
}

std::int64_t field_count(const DType::Field& f) {
    return std::accumulate(f.shape.begin(), f.shape.end(), std::int64_t{1}, std::multiplies<>());
}

void reverse_units(std::uint8_t* p, std::int64_t n, std::int64_t unit) {
    for (std::int64_t k = 0; k < n; ++k) {
        std::reverse(p + k * unit, p + (k + 1) * unit);
    }
}

}  // namespace

DType DType::raw(std::int64_t itemsize) {
    return make(Kind::void_, itemsize, '|');
}

DType DType::make(Kind kind, std::int64_t itemsize, char byteorder) {
    DType d;
    d.kind_ = kind;
    d.itemsize_ = itemsize;
    d.byteorder_ = byteorder;
    return d;
}

const std::vector<DType::Field>& DType::fields() const noexcept {
    static const std::vector<Field> kNone;
    return fields_ ? *fields_ : kNone;
}

namespace {

/// numpy's short construction repr of a field's type (numpy/_core/_dtype.py,
/// _construction_repr(short=True)): what str(dtype) writes inside a structured dtype: '?',
/// 'u1', 'S3', 'V4', '<U2', '<M8[s]', '<f8'; a nested struct unquoted.
std::string field_repr(const DType& t) {
    if (t.is_structured()) {
        return t.str();
    }
    const std::string order = t.byteorder() == '|' ? "" : std::string(1, t.byteorder());
    switch (t.kind()) {
        case DType::Kind::boolean:
            return "'?'";
        case DType::Kind::bytes:
            return "'S" + num(t.itemsize()) + "'";
        case DType::Kind::void_:
            return "'V" + num(t.itemsize()) + "'";
        case DType::Kind::unicode:
            return "'" + order + "U" + num(t.itemsize() / 4) + "'";
        default:
            return "'" + order + t.str().substr(1) + "'";
    }
}

}  // namespace

std::string DType::str() const {
    if (kind_ == Kind::structured) {
        const auto& fs = fields();
        bool packed = !aligned_;  // numpy: an aligned struct is always the dict form
        std::int64_t offset = 0;
        for (const Field& f : fs) {
            packed = packed && f.offset == offset;
            offset += f.type->itemsize() * field_count(f);
        }
        packed = packed && offset == itemsize_;
        const auto format = [](const Field& f) {
            return f.shape.empty() ? field_repr(*f.type)
                                   : field_repr(*f.type) + ", " + shape_repr(f.shape);
        };
        std::string s;
        if (packed) {
            s = "[";
            for (std::size_t i = 0; i < fs.size(); ++i) {
                s += (i > 0 ? ", " : "") + std::string("(") + detail::python_repr(fs[i].name, "") +
                     ", " + format(fs[i]) + ")";
            }
            return s + "]";
        }
        s = "{'names': [";
        for (std::size_t i = 0; i < fs.size(); ++i) {
            s += (i > 0 ? ", " : "") + detail::python_repr(fs[i].name, "");
        }
        s += "], 'formats': [";
        for (std::size_t i = 0; i < fs.size(); ++i) {
            s += (i > 0 ? ", " : "") +
                 (fs[i].shape.empty() ? format(fs[i]) : "(" + format(fs[i]) + ")");
        }
        s += "], 'offsets': [";
        for (std::size_t i = 0; i < fs.size(); ++i) {
            s += (i > 0 ? ", " : "") + num(fs[i].offset);
        }
        return s + "], 'itemsize': " + num(itemsize_) + (aligned_ ? ", 'aligned': True}" : "}");
    }
    std::string s(1, byteorder_);
    s += static_cast<char>(kind_);
    s += num(kind_ == Kind::unicode ? itemsize_ / 4 : itemsize_);
    if (!unit_.empty()) {
        s += "[" + unit_ + "]";
    }
    return s;
}

std::optional<DType::FieldPath> DType::field(std::string_view name) const {
    for (const Field& f : fields()) {
        if (name == f.name) {
            return FieldPath{f.type, f.shape, f.offset};
        }
    }
    for (const Field& f : fields()) {
        if (f.shape.empty() && f.type->is_structured() && name.size() > f.name.size() + 1 &&
            name.substr(0, f.name.size()) == f.name && name[f.name.size()] == '.') {
            if (auto inner = f.type->field(name.substr(f.name.size() + 1))) {
                inner->offset += f.offset;
                return inner;
            }
        }
    }
    return std::nullopt;
}

std::string DType::npy_descr() const {
    if (kind_ != Kind::structured) {
        return "'" + str() + "'";
    }
    // numpy.lib.format writes dtype.descr: the list form, fields in offset order, the bytes no
    // field covers as ('', '|V<n>') entries, nested structs by their own descr.
    std::vector<const Field*> fs;
    for (const Field& f : fields()) {
        fs.push_back(&f);
    }
    std::stable_sort(fs.begin(), fs.end(),
                     [](const Field* a, const Field* b) { return a->offset < b->offset; });
    std::string s = "[";
    std::int64_t at = 0;
    const auto pad = [&](std::int64_t n) {
        s += (s.size() > 1 ? ", " : "") + std::string("('', '|V") + num(n) + "')";
    };
    for (const Field* f : fs) {
        if (f->offset < at) {
            return str();  // overlapping fields: no list form says it
        }
        if (f->offset > at) {
            pad(f->offset - at);
        }
        s += (s.size() > 1 ? ", " : "") + std::string("(") + detail::python_repr(f->name, "") +
             ", " + f->type->npy_descr();
        if (!f->shape.empty()) {
            s += ", " + shape_repr(f->shape);
        }
        s += ")";
        at = f->offset + f->type->itemsize() * field_count(*f);
    }
    if (itemsize_ > at) {
        pad(itemsize_ - at);
    }
    return s + "]";
}

bool DType::needs_byteswap() const noexcept {
    if (kind_ == Kind::structured) {
        return std::any_of(fields().begin(), fields().end(),
                           [](const Field& f) { return f.type->needs_byteswap(); });
    }
    return byteorder_ != '|' && byteorder_ != kNative;
}

DType DType::native() const {
    DType d = *this;
    if (kind_ == Kind::structured) {
        std::vector<Field> fs = fields();
        for (Field& f : fs) {
            f.type = std::make_shared<const DType>(f.type->native());
        }
        d.fields_ = std::make_shared<const std::vector<Field>>(std::move(fs));
    } else if (byteorder_ != '|') {
        d.byteorder_ = kNative;
    }
    return d;
}

void DType::byteswap(std::uint8_t* data, std::int64_t n) const noexcept {
    switch (kind_) {
        case Kind::int_:
        case Kind::uint:
        case Kind::float_:
        case Kind::datetime:
        case Kind::timedelta:
            if (itemsize_ > 1) {
                reverse_units(data, n, itemsize_);
            }
            return;
        case Kind::complex_:
            reverse_units(data, 2 * n, itemsize_ / 2);
            return;
        case Kind::unicode:
            reverse_units(data, n * (itemsize_ / 4), 4);
            return;
        case Kind::structured:
            // Only the fields in a foreign order: a record may mix orders ('>i4' beside '<i4').
            for (std::int64_t e = 0; e < n; ++e) {
                for (const Field& f : fields()) {
                    if (f.type->needs_byteswap()) {
                        f.type->byteswap(data + e * itemsize_ + f.offset, field_count(f));
                    }
                }
            }
            return;
        default:
            return;
    }
}

void DTypeAccess::set_unit(DType& d, const std::string& u) {
    d.unit_ = u;
}

void DTypeAccess::set_fields(DType& d, std::vector<DType::Field> f) {
    d.fields_ = std::make_shared<const std::vector<DType::Field>>(std::move(f));
}

namespace {
std::string where_field(const std::string& prefix, const std::string& name) {
    return "field '" + prefix + name + "'";
}
std::string layout_diff(const DType& have,
                        const DType& want,
                        const std::string& prefix,
                        std::int64_t base) {
    if (have.itemsize() != want.itemsize()) {
        return (prefix.empty() ? std::string("the record")
                               : where_field("", prefix.substr(0, prefix.size() - 1))) +
               " is " + std::to_string(have.itemsize()) + " bytes in the file, " +
               std::to_string(want.itemsize()) + " in the struct";
    }
    const auto& hf = have.fields();
    const auto& wf = want.fields();
    for (std::size_t i = 0; i < std::max(hf.size(), wf.size()); ++i) {
        if (i >= wf.size()) {
            return where_field(prefix, hf[i].name) + ": the file has it, the struct does not";
        }
        if (i >= hf.size()) {
            return where_field(prefix, wf[i].name) + ": the struct has it, the file does not";
        }
        const DType::Field& h = hf[i];
        const DType::Field& w = wf[i];
        if (h.name != w.name) {
            return "field " + std::to_string(i) + ": the file's is '" + prefix + h.name +
                   "', the struct's '" + prefix + w.name + "'";
        }
        const bool nested = h.type->is_structured() && w.type->is_structured();
        if (h.offset != w.offset || h.shape != w.shape ||
            (!nested && h.type->native() != w.type->native())) {
            const auto text = [base](const DType::Field& f) {
                std::string t = "'" + f.type->str() + "'";
                if (!f.shape.empty()) {
                    t += " of shape (";
                    for (std::size_t k = 0; k < f.shape.size(); ++k) {
                        t += (k > 0 ? ", " : "") + std::to_string(f.shape[k]);
                    }
                    t += f.shape.size() == 1 ? ",)" : ")";
                }
                return t + " at offset " + std::to_string(base + f.offset);
            };
            return where_field(prefix, h.name) + ": the file has " + text(h) + ", the struct " +
                   text(w);
        }
        if (nested) {
            std::string d = layout_diff(*h.type, *w.type, prefix + h.name + ".", base + h.offset);
            if (!d.empty()) {
                return d;
            }
        }
    }
    return "";
}
}  // namespace

std::string DType::layout_difference(const DType& want) const {
    if (!is_structured() || !want.is_structured()) {
        return native() == want.native()
                   ? ""
                   : "dtype '" + str() + "' is not the struct's '" + want.str() + "'";
    }
    return layout_diff(*this, want, "", 0);
}

namespace detail {
DType record_dtype(const std::vector<std::string>& names,
                   const std::vector<std::string>& formats,
                   const std::vector<std::int64_t>& offsets,
                   std::int64_t itemsize) {
    std::string names_s, formats_s, offsets_s;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const char* sep = i == 0 ? "" : ", ";
        names_s += sep + detail::python_repr(names[i], "");
        formats_s += sep + formats[i];
        offsets_s += sep + std::to_string(offsets[i]);
    }
    const std::string s = "{'names': [" + names_s + "], 'formats': [" + formats_s +
                          "], 'offsets': [" + offsets_s +
                          "], 'itemsize': " + std::to_string(itemsize) + "}";
    try {
        return DType::parse(s);
    } catch (const FormatError& e) {
        throw UsageError("record description: " + std::string(e.what()) + " (as dtype " + s + ")");
    }
}

DType native_dtype(DType::Kind kind, std::int64_t itemsize) {
    const bool ordered = itemsize > 1 && kind != DType::Kind::boolean;
    return DType::make(kind, itemsize, ordered ? kNative : '|');
}
}  // namespace detail

}  // namespace b2nd
