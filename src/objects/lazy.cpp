// Persisted expressions (objects_detail.hpp): python-blosc2 saves `a + b` as an empty carrier
// array (zero chunks) whose vlmeta holds the recipe: the b2o form (4.2 and later: meta b2o
// {kind: lazyexpr}, vlmeta b2o {expression, operands: {name: Ref}}) or the legacy form (meta
// LazyArray = 0, vlmeta _LazyArray {expression, operands: {name: relative path}}). Its blocks are
// computed from the operands, block by block, in the carrier's grid.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/http.hpp>
#include <b2nd/value.hpp>

#include "../detail/memory.hpp"
#include "../detail/text.hpp"
#include "../engine/array_core.hpp"
#include "expression.hpp"
#include "objects_detail.hpp"

namespace fs = std::filesystem;

namespace b2nd::detail {

namespace {

/// Persisted expressions whose operands are persisted expressions nest; a cycle of files would
/// recurse forever.
constexpr int kMaxNesting = 16;
thread_local int tl_nesting = 0;

struct Operand {
    AnyArray array;
    std::vector<int> map;  ///< per result dimension: the operand's dimension, -1 when absent
    bool broadcast = false;
    VKind kind = VKind::real;
};

VKind kind_of(const DType& dt) {
    switch (dt.kind()) {
        case DType::Kind::boolean:
            return VKind::boolean;
        case DType::Kind::int_:
        case DType::Kind::uint:
            return VKind::integer;
        default:
            return VKind::real;
    }
}

bool supported(const DType& dt) {
    const std::int64_t s = dt.itemsize();
    switch (dt.kind()) {
        case DType::Kind::boolean:
            return s == 1;
        case DType::Kind::int_:
        case DType::Kind::uint:
            return s == 1 || s == 2 || s == 4 || s == 8;
        case DType::Kind::float_:
            return s == 4 || s == 8;
        default:
            return false;
    }
}

template <class T>
void load_as(const std::uint8_t* src, std::size_t n, Column& c) {
    if (c.kind == VKind::real) {
        c.real.resize(n);
        for (std::size_t k = 0; k < n; ++k) {
            T v;
            std::memcpy(&v, src + k * sizeof(T), sizeof(T));
            c.real[k] = static_cast<double>(v);
        }
    } else {
        c.integer.resize(n);
        for (std::size_t k = 0; k < n; ++k) {
            T v;
            std::memcpy(&v, src + k * sizeof(T), sizeof(T));
            c.integer[k] = static_cast<std::int64_t>(v);
        }
    }
}

/// n elements of dtype dt (native byte order) at src into column c (its kind already set).
void load_column(const DType& dt, const std::uint8_t* src, std::size_t n, Column& c) {
    const std::int64_t s = dt.itemsize();
    if (dt.kind() == DType::Kind::float_) {
        s == 4 ? load_as<float>(src, n, c) : load_as<double>(src, n, c);
    } else if (dt.kind() == DType::Kind::uint) {
        s == 1   ? load_as<std::uint8_t>(src, n, c)
        : s == 2 ? load_as<std::uint16_t>(src, n, c)
        : s == 4 ? load_as<std::uint32_t>(src, n, c)
                 : load_as<std::uint64_t>(src, n, c);
    } else if (dt.kind() == DType::Kind::boolean) {
        c.integer.resize(n);
        for (std::size_t k = 0; k < n; ++k) {
            c.integer[k] = src[k] != 0 ? 1 : 0;
        }
    } else {
        s == 1   ? load_as<std::int8_t>(src, n, c)
        : s == 2 ? load_as<std::int16_t>(src, n, c)
        : s == 4 ? load_as<std::int32_t>(src, n, c)
                 : load_as<std::int64_t>(src, n, c);
    }
}

/// NumPy's cast of a real to an integer type, without C++'s undefined behaviour: NaN and values
/// out of range give the type's minimum (what x86 NumPy gives).
template <class T>
T real_to_int(double v) {
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
    constexpr double end = 2.0 * static_cast<double>(std::numeric_limits<T>::max() / 2 + 1);
    if (v >= lo && v < end) {
        return static_cast<T>(v);
    }
    if constexpr (std::is_signed_v<T>) {
        return std::numeric_limits<T>::min();
    } else {
        // Negative values wrap through int64 as NumPy's cast does; the rest (NaN too) give 0.
        return v < 0 && v >= -9223372036854775808.0
                   ? static_cast<T>(static_cast<std::uint64_t>(static_cast<std::int64_t>(v)))
                   : T{0};
    }
}

template <class T>
void store_as(const Column& c, std::size_t k0, std::size_t n, std::uint8_t* dst) {
    const std::size_t step = c.scalar ? 0 : 1;
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = c.scalar ? 0 : k0 + k * step;
        T v;
        if constexpr (std::is_floating_point_v<T>) {
            v = c.kind == VKind::real ? static_cast<T>(c.real[i]) : static_cast<T>(c.integer[i]);
        } else {
            v = c.kind == VKind::real ? real_to_int<T>(c.real[i]) : static_cast<T>(c.integer[i]);
        }
        std::memcpy(dst + k * sizeof(T), &v, sizeof(T));
    }
}

/// Elements [k0, k0 + n) of c as dtype dt (native byte order) at dst.
void store_column(
    const Column& c, std::size_t k0, std::size_t n, const DType& dt, std::uint8_t* dst) {
    const std::int64_t s = dt.itemsize();
    if (dt.kind() == DType::Kind::float_) {
        s == 4 ? store_as<float>(c, k0, n, dst) : store_as<double>(c, k0, n, dst);
    } else if (dt.kind() == DType::Kind::boolean) {
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t i = c.scalar ? 0 : k0 + k;
            dst[k] = (c.kind == VKind::real ? c.real[i] != 0 : c.integer[i] != 0) ? 1 : 0;
        }
    } else if (dt.kind() == DType::Kind::uint) {
        s == 1   ? store_as<std::uint8_t>(c, k0, n, dst)
        : s == 2 ? store_as<std::uint16_t>(c, k0, n, dst)
        : s == 4 ? store_as<std::uint32_t>(c, k0, n, dst)
                 : store_as<std::uint64_t>(c, k0, n, dst);
    } else {
        s == 1   ? store_as<std::int8_t>(c, k0, n, dst)
        : s == 2 ? store_as<std::int16_t>(c, k0, n, dst)
        : s == 4 ? store_as<std::int32_t>(c, k0, n, dst)
                 : store_as<std::int64_t>(c, k0, n, dst);
    }
}

/// What one thread keeps between blocks (allocated and touched once). Leased per block
/// (LeasePool): an operand that is itself a persisted expression makes its blocks on the same
/// thread, inside the outer block's load_operand, with a workspace of its own.
struct Workspace {
    std::vector<Column> operands;
    std::vector<const Column*> views;  ///< the operands as evaluate() takes them
    std::vector<std::uint8_t> raw;
    std::vector<std::uint8_t> expanded;  ///< a broadcast operand's elements
    ExprWork work;
};

thread_local LeasePool<Workspace> tl_workspaces;

class LazyOrigin : public BlockOrigin {
public:
    LazyOrigin(std::string where, Grid grid, DType dtype, Expression expr, std::vector<Operand> ops)
        : where_(std::move(where)),
          grid_(std::move(grid)),
          dtype_(std::move(dtype)),
          expr_(std::move(expr)),
          ops_(std::move(ops)) {}

    const char* kind() const noexcept override { return "lazyexpr"; }
    bool computes() const noexcept override { return true; }
    void require(std::int64_t, std::int64_t) const override {}

    void make_block(std::int64_t ci, std::int64_t block, std::uint8_t* into) const override {
        const int nd = grid_.ndim();
        const std::int64_t isz = grid_.itemsize();
        // The block's place in the array and the part of it inside the array.
        const Box region = block_region(grid_, ci, block);
        const std::int64_t* start = region.start.data();
        const std::int64_t* count = region.count.data();
        const std::int64_t n = region.size();
        const auto bytes = static_cast<std::size_t>(grid_.block_nbytes());
        if (n != grid_.block_items()) {
            std::memset(into, 0, bytes);
        }
        if (n == 0) {
            return;
        }
        const std::shared_ptr<Workspace> leased = tl_workspaces.lease();
        Workspace& ws = *leased;
        ws.operands.resize(ops_.size());
        ws.views.resize(ops_.size());
        for (std::size_t i = 0; i < ops_.size(); ++i) {
            load_operand(ops_[i], start, count, static_cast<std::size_t>(n), ws, ws.operands[i]);
            ws.views[i] = &ws.operands[i];
        }
        const Column& r = evaluate(expr_, ws.views, static_cast<std::size_t>(n), ws.work);
        // Rows of the region into the block (C order over the block's shape).
        const std::int64_t row = count[nd - 1];
        std::int64_t idx[kMaxNdim] = {};
        for (std::int64_t k = 0; k < n; k += row) {
            std::int64_t off = 0;
            for (int d = 0; d < nd; ++d) {
                off = off * grid_.block_shape()[static_cast<std::size_t>(d)] + idx[d];
            }
            std::uint8_t* dst = into + off * isz;
            store_column(r, static_cast<std::size_t>(k), static_cast<std::size_t>(row), dtype_,
                         dst);
            if (dtype_.needs_byteswap()) {
                dtype_.byteswap(dst, row);
            }
            for (int d = nd - 2; d >= 0; --d) {
                if (++idx[d] < count[d]) {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

private:
    /// The operand's values over the result region start/count, broadcast to its n elements
    /// in C order (or one scalar element for a 0-d operand).
    void load_operand(const Operand& op,
                      const std::int64_t* start,
                      const std::int64_t* count,
                      std::size_t n,
                      Workspace& ws,
                      Column& c) const {
        const int nd = grid_.ndim();
        const AnyArray& a = op.array;
        const int ond = a.ndim();
        const DType& dt = a.dtype();
        c.kind = op.kind;
        c.weak = false;
        c.single = dt.kind() == DType::Kind::float_ && dt.itemsize() == 4;
        Box box;
        box.start.assign(static_cast<std::size_t>(ond), 0);
        box.count.assign(static_cast<std::size_t>(ond), 1);
        box.step.assign(static_cast<std::size_t>(ond), 1);
        for (int d = 0; d < nd; ++d) {
            const int j = op.map[static_cast<std::size_t>(d)];
            if (j >= 0 && a.shape()[static_cast<std::size_t>(j)] != 1) {
                box.start[static_cast<std::size_t>(j)] = start[d];
                box.count[static_cast<std::size_t>(j)] = count[d];
            }
        }
        const auto m = static_cast<std::size_t>(box.size());
        ws.raw.resize(m * static_cast<std::size_t>(dt.itemsize()));
        a.read(box, ws.raw.data(), ws.raw.size());
        if (dt.needs_byteswap()) {
            dt.byteswap(ws.raw.data(), static_cast<std::int64_t>(m));
        }
        if (ond == 0 || m == 1) {
            c.scalar = true;
            load_column(dt, ws.raw.data(), 1, c);
            return;
        }
        c.scalar = false;
        if (!op.broadcast) {
            load_column(dt, ws.raw.data(), n, c);
            return;
        }
        // Broadcast: result element (C order over count) takes the operand's element at the
        // dims it has (strides 0 where it has extent 1 or lacks the dimension).
        std::int64_t stride[kMaxNdim] = {};
        std::int64_t s = 1;
        for (int j = ond - 1; j >= 0; --j) {
            for (int d = 0; d < nd; ++d) {
                if (op.map[static_cast<std::size_t>(d)] == j) {
                    stride[d] = box.count[static_cast<std::size_t>(j)] > 1 ? s : 0;
                }
            }
            s *= box.count[static_cast<std::size_t>(j)];
        }
        const auto isz = static_cast<std::size_t>(dt.itemsize());
        std::vector<std::uint8_t>& expanded = ws.expanded;
        expanded.resize(n * isz);
        std::int64_t idx[kMaxNdim] = {};
        for (std::size_t k = 0; k < n; ++k) {
            std::int64_t off = 0;
            for (int d = 0; d < nd; ++d) {
                off += idx[d] * stride[d];
            }
            std::memcpy(expanded.data() + k * isz,
                        ws.raw.data() + static_cast<std::size_t>(off) * isz, isz);
            for (int d = nd - 1; d >= 0; --d) {
                if (++idx[d] < count[d]) {
                    break;
                }
                idx[d] = 0;
            }
        }
        load_column(dt, expanded.data(), n, c);
    }

    std::string where_;
    Grid grid_;
    DType dtype_;
    Expression expr_;
    std::vector<Operand> ops_;  ///< in the order of expr_.names()
};

/// Where a persisted expression's operands are looked for: the carrier's directory, or for a
/// carrier opened by URL the URL's directory on the same server (never a local file).
struct OperandBase {
    bool remote = false;
    std::string dir;  // a directory path, or a URL ending in '/'
};

OperandBase base_of(const ArrayCore& core, const OpenOptions& o) {
    if (!o.objects_dir.empty()) {
        return {storage::is_url(o.objects_dir), o.objects_dir};
    }
    const storage::Frame& f = core.frame();
    if (f.remote()) {
        const std::string url = f.name();  // the URL, without credentials or query
        return {true, url.substr(0, url.rfind('/') + 1)};
    }
    const std::string& p = f.path();
    return {false, p.empty() ? std::string(".") : fs::path(p).parent_path().string()};
}

/// The operand `urlpath` names, relative to the carrier: a relative path (python-blosc2 writes
/// '../trees/t.b2z' for a sibling directory) from its directory, locally or on its server. An
/// absolute path is a file on the carrier's server for a URL carrier, and refused for a local
/// one; a URL is refused for both: a downloaded or served carrier cannot name the client's
/// files, nor send its requests elsewhere. OpenOptions::operands_anywhere lifts both refusals.
/// `refuse` builds the error.
template <typename Refuse>
std::string resolve(const OperandBase& base,
                    const std::string& urlpath,
                    const OpenOptions& o,
                    const Refuse& refuse) {
    if (storage::is_url(urlpath)) {
        if (!o.operands_anywhere) {
            throw refuse("is the URL " + storage::redacted_url(urlpath) +
                         ", not a path relative to the carrier; OpenOptions::operands_anywhere "
                         "follows it");
        }
        return urlpath;
    }
    const fs::path p = fs::path(urlpath).lexically_normal();
    if (base.remote) {
        if (p.is_absolute()) {  // a file of the carrier's server
            const std::size_t host = base.dir.find("://") + 3;
            return base.dir.substr(0, base.dir.find('/', host)) + p.generic_string();
        }
        return base.dir + p.generic_string();
    }
    if (p.is_absolute() && !o.operands_anywhere) {
        throw refuse("is the absolute path \"" + urlpath +
                     "\"; operands are looked for relative to the carrier "
                     "(OpenOptions::operands_anywhere follows absolute paths, as python-blosc2 "
                     "does)");
    }
    return (p.is_absolute() ? p : fs::path(base.dir) / p).lexically_normal().string();
}

/// A Ref payload (ref.py) or its ext-43 wrapping, as a map.
Value ref_map(const Value& v) {
    if (v.type() == Value::Type::ext && v.ext_type() == 43) {
        const Value::Bytes& b = v.bytes();
        return Value::from_msgpack({b.data(), b.size()}, "operand reference");
    }
    return v;
}

}  // namespace

std::shared_ptr<const BlockOrigin> lazy_origin(const ArrayCore& core, const OpenOptions& o) {
    const std::string where = core.where();
    const storage::Frame& f = core.frame();
    const auto fail = [&](const std::string& why) -> UnsupportedError {
        return UnsupportedError(where +
                                ": a persisted python-blosc2 expression (lazyexpr): " + why);
    };
    const bool legacy = f.metalayer("b2o") == nullptr;
    const char* entry = legacy ? "_LazyArray" : "b2o";
    const auto raw = f.vlmeta(entry);
    if (!raw) {
        throw fail(std::string("its recipe (vlmeta '") + entry + "') is missing");
    }
    const Value recipe =
        Value::from_msgpack({raw->data(), raw->size()}, where + ": vlmeta '" + entry + "'");
    const Value* text = recipe.find("expression");
    const Value* operands = recipe.find("operands");
    if (text == nullptr || text->type() != Value::Type::string || operands == nullptr ||
        operands->type() != Value::Type::map) {
        throw fail(std::string("vlmeta '") + entry +
                   "' lacks a string 'expression' and a map 'operands'");
    }
    if (!legacy) {
        const Value* version = recipe.find("version");
        if (version == nullptr || version->type() != Value::Type::integer ||
            version->as<std::int64_t>() != 1) {
            throw fail("recipe version " + (version ? version->to_json() : std::string("none")) +
                       " (this library reads version 1)");
        }
    }
    Expression expr = Expression::parse(text->as<std::string>());
    if (tl_nesting >= kMaxNesting) {
        throw fail("operands nest more than " + num(kMaxNesting) +
                   " persisted expressions deep (a cycle of files?)");
    }
    const OperandBase base = base_of(core, o);
    OpenOptions oo;
    oo.http = o.http;
    oo.operands_anywhere = o.operands_anywhere;
    oo.nthreads = 1;     // the carrier's reads run blocks in parallel already
    oo.cache_bytes = 0;  // each operand block is read once per result block, which the
                         // carrier's own cache keeps
    const Grid& g = core.grid();
    const int nd = g.ndim();
    std::vector<Operand> ops;
    ++tl_nesting;
    struct Unnest {
        ~Unnest() { --tl_nesting; }
    } unnest;
    for (const std::string& name : expr.names()) {
        const Value* v = operands->find(name);
        if (v == nullptr) {
            throw fail("the expression '" + expr.text() + "' names '" + name +
                       "', which is not one of its operands");
        }
        Operand op;
        const Value r = ref_map(*v);
        const auto refuse = [&](const std::string& why) {
            return fail("operand '" + name + "' " + why);
        };
        try {
            if (r.type() == Value::Type::string) {  // legacy: a path relative to the carrier
                op.array = AnyArray::open(resolve(base, r.as<std::string>(), o, refuse), oo);
            } else if (r.type() == Value::Type::map) {
                const Value* kind = r.find("kind");
                const std::string k = kind != nullptr && kind->type() == Value::Type::string
                                          ? kind->as<std::string>()
                                          : (r.find("urlbase") != nullptr ? "c2array" : "");
                const Value* up = r.find("urlpath");
                if (k == "urlpath" && up != nullptr && up->type() == Value::Type::string) {
                    op.array = AnyArray::open(resolve(base, up->as<std::string>(), o, refuse), oo);
                } else if (k == "dictstore_key" && up != nullptr &&
                           up->type() == Value::Type::string && r.find("key") != nullptr) {
                    OpenOptions so = oo;
                    so.objects_dir.clear();
                    op.array = open_store_leaf(resolve(base, up->as<std::string>(), o, refuse),
                                               r["key"].as<std::string>(), so);
                } else if (k == "c2array") {
                    throw fail("operand '" + name + "' is a remote Caterva2 array (" + r.to_json() +
                               "); this library does not fetch it");
                } else {
                    throw fail("operand '" + name +
                               "' is a reference this library does not know: " + r.to_json());
                }
            } else {
                throw fail("operand '" + name +
                           "' is neither a path nor a reference: " + r.to_json());
            }
        } catch (const IoError& e) {
            throw IoError(where + ": operand '" + name + "' of the persisted expression '" +
                              expr.text() + "' cannot be opened: " + e.what(),
                          e.code());
        }
        const AnyArray& a = op.array;
        if (!supported(a.dtype())) {
            throw fail("operand '" + name + "' has dtype '" + a.dtype().str() +
                       "'; expressions here take booleans, integers and float32/float64");
        }
        if (a.ndim() > nd) {
            throw fail("operand '" + name + "' of shape " + to_string(a.shape()) +
                       " has more dimensions than the result " + to_string(g.shape()));
        }
        op.kind = kind_of(a.dtype());
        op.map.assign(static_cast<std::size_t>(nd), -1);
        for (int j = 0; j < a.ndim(); ++j) {
            const int d = j + nd - a.ndim();
            const std::int64_t e = a.shape()[static_cast<std::size_t>(j)];
            op.map[static_cast<std::size_t>(d)] = j;
            if (e != g.shape()[static_cast<std::size_t>(d)]) {
                if (e != 1) {
                    throw fail("operand '" + name + "' of shape " + to_string(a.shape()) +
                               " does not broadcast to the result's shape " + to_string(g.shape()));
                }
                op.broadcast = true;
            }
        }
        op.broadcast = op.broadcast || a.ndim() < nd;
        ops.push_back(std::move(op));
    }
    if (!supported(core.dtype())) {
        throw fail("its dtype '" + core.dtype().str() +
                   "' is not one this library evaluates (booleans, integers, float32/float64)");
    }
    return std::make_shared<LazyOrigin>(where, g, core.dtype(), std::move(expr), std::move(ops));
}

}  // namespace b2nd::detail
