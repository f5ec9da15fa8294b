// python-blosc2's expression language: the column evaluator (expression.hpp; the parser is
// expression_parse.cpp, the functions expression_functions.cpp).
#include "expression.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "expression_functions.hpp"

namespace b2nd::detail {

// ---- evaluation ----

namespace {

bool is_real(const Column& c) {
    return c.kind == VKind::real;
}

/// The column's values as doubles (a view of its own, or converted into tmp).
const double* reals(const Column& c, std::size_t m, std::vector<double>& tmp) {
    if (is_real(c)) {
        return c.real.data();
    }
    tmp.resize(m);
    for (std::size_t k = 0; k < m; ++k) {
        tmp[k] = static_cast<double>(c.integer[k]);
    }
    return tmp.data();
}

std::size_t len(const Column& c, std::size_t n) {
    return c.scalar ? 1 : n;
}

/// NumPy's float32 rule for a real result of a and b: float32 with float32, or with a Python
/// number.
bool single_of(const Column& a, const Column& b) {
    return (a.single || a.weak) && (b.single || b.weak) && !(a.weak && b.weak);
}

void round_single(Column& c) {
    if (c.kind == VKind::real && c.single) {
        for (double& v : c.real) {
            v = static_cast<double>(static_cast<float>(v));
        }
    }
}

/// out[k] = f(a[k], b[k]) over m elements, where a scalar side repeats its one value.
template <class T, class U, class F>
void zip(const T* a, bool sa, const T* b, bool sb, U* out, std::size_t m, F f) {
    if (sa && !sb) {
        const T x = a[0];
        for (std::size_t k = 0; k < m; ++k) {
            out[k] = f(x, b[k]);
        }
    } else if (sb && !sa) {
        const T y = b[0];
        for (std::size_t k = 0; k < m; ++k) {
            out[k] = f(a[k], y);
        }
    } else {
        for (std::size_t k = 0; k < m; ++k) {
            out[k] = f(a[k], b[k]);
        }
    }
}

std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrap_sub(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}
/// Python's (and NumPy's) floor division and remainder of integers; by zero: 0, as NumPy.
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    if (b == 0) {
        return 0;
    }
    if (b == -1) {
        return wrap_sub(0, a);
    }
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) {
        --q;
    }
    return q;
}
std::int64_t floor_mod(std::int64_t a, std::int64_t b) {
    if (b == 0 || b == -1) {
        return 0;
    }
    std::int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) {
        r += b;
    }
    return r;
}
double real_mod(double a, double b) {
    double r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) {
        r += b;
    }
    return r;
}
std::int64_t int_pow(std::int64_t base, std::int64_t e, const std::string& text) {
    if (e < 0) {
        throw UsageError("expression '" + text +
                         "': integers to negative integer powers are not allowed (as NumPy)");
    }
    std::int64_t r = 1;
    while (e > 0) {
        if ((e & 1) != 0) {
            r = wrap_mul(r, base);
        }
        base = wrap_mul(base, base);
        e >>= 1;
    }
    return r;
}

class Evaluator {
public:
    Evaluator(const Expression& e,
              const std::vector<const Column*>& ops,
              std::size_t n,
              ExprWork& w)
        : e_(e), ops_(ops), n_(n), w_(w) {}

    const Column& node(int i) {
        const ExprNode& x = e_.nodes()[static_cast<std::size_t>(i)];
        if (x.op == ExprOp::operand) {
            return *ops_[static_cast<std::size_t>(x.operand)];
        }
        Column& out = w_.nodes[static_cast<std::size_t>(i)];
        switch (x.op) {
            case ExprOp::constant:
                out.kind = x.kind;
                out.scalar = true;
                out.weak = true;
                out.single = false;
                if (x.kind == VKind::real) {
                    out.real.assign(1, x.real);
                } else {
                    out.integer.assign(1, x.integer);
                }
                return out;
            case ExprOp::call:
                call(x, out);
                return out;
            case ExprOp::neg:
            case ExprOp::pos:
            case ExprOp::invert:
                unary(x, out);
                return out;
            default:
                binary(x, out);
                return out;
        }
    }

private:
    [[noreturn]] void refuse(const std::string& why) const {
        throw UsageError("expression '" + e_.text() + "': " + why);
    }

    /// p's m values rounded to float32, in tmp (which p may be).
    static const double* rounded(const double* p, std::size_t m, std::vector<double>& tmp) {
        tmp.resize(m);
        for (std::size_t k = 0; k < m; ++k) {
            tmp[k] = static_cast<double>(static_cast<float>(p[k]));
        }
        return tmp.data();
    }

    void unary(const ExprNode& x, Column& out) {
        const Column& a = node(x.args[0]);
        const std::size_t m = len(a, n_);
        out.scalar = a.scalar;
        out.single = a.single;
        out.weak = a.weak;
        if (x.op == ExprOp::pos) {
            out.kind = a.kind;
            out.real = a.real;
            out.integer = a.integer;
            return;
        }
        if (x.op == ExprOp::invert) {
            if (is_real(a)) {
                refuse("'~' applies to booleans and integers, not to floats");
            }
            out.kind = a.kind;
            out.integer.resize(m);
            for (std::size_t k = 0; k < m; ++k) {
                out.integer[k] =
                    a.kind == VKind::boolean ? (a.integer[k] == 0 ? 1 : 0) : ~a.integer[k];
            }
            return;
        }
        if (is_real(a)) {
            out.kind = VKind::real;
            out.real.resize(m);
            for (std::size_t k = 0; k < m; ++k) {
                out.real[k] = -a.real[k];
            }
        } else {
            out.kind = VKind::integer;
            out.integer.resize(m);
            for (std::size_t k = 0; k < m; ++k) {
                out.integer[k] = wrap_sub(0, a.integer[k]);
            }
        }
    }

    /// a op b for two columns already evaluated, into out.
    void apply(ExprOp op, const Column& a, const Column& b, Column& out) {
        out.scalar = a.scalar && b.scalar;
        out.weak = a.weak && b.weak;
        out.single = false;
        const std::size_t m = out.scalar ? 1 : n_;
        const bool real = is_real(a) || is_real(b);
        const bool sa = a.scalar, sb = b.scalar;
        const auto as_reals = [&](const double*& pa, const double*& pb) {
            pa = reals(a, len(a, n_), w_.ta);
            pb = reals(b, len(b, n_), w_.tb);
        };
        switch (op) {
            case ExprOp::lt:
            case ExprOp::le:
            case ExprOp::gt:
            case ExprOp::ge:
            case ExprOp::eq:
            case ExprOp::ne: {
                out.kind = VKind::boolean;
                out.integer.resize(m);
                std::int64_t* o = out.integer.data();
                if (real) {
                    const double *pa = nullptr, *pb = nullptr;
                    as_reals(pa, pb);
                    if (single_of(a, b)) {  // compared in float32: the number rounded to it
                        pa = rounded(pa, len(a, n_), w_.ta);
                        pb = rounded(pb, len(b, n_), w_.tb);
                    }
                    compare(op, pa, sa, pb, sb, o, m);
                } else {
                    compare(op, a.integer.data(), sa, b.integer.data(), sb, o, m);
                }
                return;
            }
            case ExprOp::bit_and:
            case ExprOp::bit_or:
            case ExprOp::bit_xor: {
                if (real) {
                    refuse("'&', '|' and '^' apply to booleans and integers, not to floats");
                }
                out.kind = a.kind == VKind::boolean && b.kind == VKind::boolean ? VKind::boolean
                                                                                : VKind::integer;
                out.integer.resize(m);
                const std::int64_t *pa = a.integer.data(), *pb = b.integer.data();
                std::int64_t* o = out.integer.data();
                if (op == ExprOp::bit_and) {
                    zip(pa, sa, pb, sb, o, m, [](std::int64_t x, std::int64_t y) { return x & y; });
                } else if (op == ExprOp::bit_or) {
                    zip(pa, sa, pb, sb, o, m, [](std::int64_t x, std::int64_t y) { return x | y; });
                } else {
                    zip(pa, sa, pb, sb, o, m, [](std::int64_t x, std::int64_t y) { return x ^ y; });
                }
                return;
            }
            default:
                break;
        }
        if (real || op == ExprOp::div) {
            const double *pa = nullptr, *pb = nullptr;
            as_reals(pa, pb);
            out.kind = VKind::real;
            out.single = single_of(a, b);
            out.real.resize(m);
            double* o = out.real.data();
            struct Round {
                Column& c;
                ~Round() { round_single(c); }
            } round{out};
            switch (op) {
                case ExprOp::add:
                    zip(pa, sa, pb, sb, o, m, [](double x, double y) { return x + y; });
                    return;
                case ExprOp::sub:
                    zip(pa, sa, pb, sb, o, m, [](double x, double y) { return x - y; });
                    return;
                case ExprOp::mul:
                    zip(pa, sa, pb, sb, o, m, [](double x, double y) { return x * y; });
                    return;
                case ExprOp::div:
                    zip(pa, sa, pb, sb, o, m, [](double x, double y) { return x / y; });
                    return;
                case ExprOp::floordiv:
                    zip(pa, sa, pb, sb, o, m, [](double x, double y) { return std::floor(x / y); });
                    return;
                case ExprOp::mod:
                    zip(pa, sa, pb, sb, o, m, real_mod);
                    return;
                case ExprOp::pow:
                    if (sb && pb[0] == 2.0) {
                        zip(pa, sa, pb, sb, o, m, [](double x, double) { return x * x; });
                    } else {
                        zip(pa, sa, pb, sb, o, m,
                            [](double x, double y) { return std::pow(x, y); });
                    }
                    return;
                default:
                    refuse("internal: unknown operator");
            }
        }
        out.kind = VKind::integer;
        out.integer.resize(m);
        const std::int64_t *pa = a.integer.data(), *pb = b.integer.data();
        std::int64_t* o = out.integer.data();
        switch (op) {
            case ExprOp::add:
                zip(pa, sa, pb, sb, o, m, wrap_add);
                return;
            case ExprOp::sub:
                zip(pa, sa, pb, sb, o, m, wrap_sub);
                return;
            case ExprOp::mul:
                zip(pa, sa, pb, sb, o, m, wrap_mul);
                return;
            case ExprOp::floordiv:
                zip(pa, sa, pb, sb, o, m, floor_div);
                return;
            case ExprOp::mod:
                zip(pa, sa, pb, sb, o, m, floor_mod);
                return;
            case ExprOp::pow: {
                const std::string& t = e_.text();
                zip(pa, sa, pb, sb, o, m,
                    [&t](std::int64_t x, std::int64_t y) { return int_pow(x, y, t); });
                return;
            }
            default:
                refuse("internal: unknown operator");
        }
    }

    template <class T>
    static void compare(
        ExprOp op, const T* pa, bool sa, const T* pb, bool sb, std::int64_t* o, std::size_t m) {
        switch (op) {
            case ExprOp::lt:
                zip(pa, sa, pb, sb, o, m, [](T x, T y) -> std::int64_t { return x < y; });
                return;
            case ExprOp::le:
                zip(pa, sa, pb, sb, o, m, [](T x, T y) -> std::int64_t { return x <= y; });
                return;
            case ExprOp::gt:
                zip(pa, sa, pb, sb, o, m, [](T x, T y) -> std::int64_t { return x > y; });
                return;
            case ExprOp::ge:
                zip(pa, sa, pb, sb, o, m, [](T x, T y) -> std::int64_t { return x >= y; });
                return;
            case ExprOp::eq:
                zip(pa, sa, pb, sb, o, m, [](T x, T y) -> std::int64_t { return x == y; });
                return;
            default:
                zip(pa, sa, pb, sb, o, m, [](T x, T y) -> std::int64_t { return x != y; });
                return;
        }
    }

    void binary(const ExprNode& x, Column& out) {
        const Column& a = node(x.args[0]);
        const Column& b = node(x.args[1]);
        apply(x.op, a, b, out);
    }

    void call(const ExprNode& x, Column& out) {
        const Function& f = function(x.function);
        const Column& a = node(x.args[0]);
        switch (f.fn) {
            case Fn::real1: {
                const std::size_t m = len(a, n_);
                const double* pa = reals(a, m, w_.ta);
                out.kind = VKind::real;
                out.scalar = a.scalar;
                out.weak = a.weak;
                out.single = a.single;
                out.real.resize(m);
                if (out.single && f.f1f != nullptr) {
                    for (std::size_t k = 0; k < m; ++k) {
                        out.real[k] = static_cast<double>(f.f1f(static_cast<float>(pa[k])));
                    }
                    return;
                }
                for (std::size_t k = 0; k < m; ++k) {
                    out.real[k] = f.f1(pa[k]);
                }
                round_single(out);
                return;
            }
            case Fn::real2: {
                const Column& b = node(x.args[1]);
                out.scalar = a.scalar && b.scalar;
                const std::size_t m = out.scalar ? 1 : n_;
                const double* pa = reals(a, len(a, n_), w_.ta);
                const double* pb = reals(b, len(b, n_), w_.tb);
                out.kind = VKind::real;
                out.weak = a.weak && b.weak;
                out.single = single_of(a, b);
                out.real.resize(m);
                zip(pa, a.scalar, pb, b.scalar, out.real.data(), m, f.f2);
                round_single(out);
                return;
            }
            case Fn::abs:
            case Fn::sign:
            case Fn::square: {
                const std::size_t m = len(a, n_);
                out.scalar = a.scalar;
                out.weak = a.weak;
                out.single = a.single;
                out.kind = a.kind == VKind::boolean && f.fn != Fn::abs ? VKind::integer : a.kind;
                if (is_real(a)) {
                    out.real.resize(m);
                    for (std::size_t k = 0; k < m; ++k) {
                        const double v = a.real[k];
                        out.real[k] = f.fn == Fn::abs    ? std::fabs(v)
                                      : f.fn == Fn::sign ? (v > 0   ? 1.0
                                                            : v < 0 ? -1.0
                                                                    : v)
                                                         : v * v;
                    }
                } else {
                    out.integer.resize(m);
                    for (std::size_t k = 0; k < m; ++k) {
                        const std::int64_t v = a.integer[k];
                        out.integer[k] = f.fn == Fn::abs    ? (v < 0 ? wrap_sub(0, v) : v)
                                         : f.fn == Fn::sign ? (v > 0) - (v < 0)
                                                            : wrap_mul(v, v);
                    }
                }
                return;
            }
            case Fn::maximum:
            case Fn::minimum: {
                const Column& b = node(x.args[1]);
                out.scalar = a.scalar && b.scalar;
                const std::size_t m = out.scalar ? 1 : n_;
                const bool mx = f.fn == Fn::maximum;
                out.weak = a.weak && b.weak;
                out.single = single_of(a, b);
                if (is_real(a) || is_real(b)) {
                    const double* pa = reals(a, len(a, n_), w_.ta);
                    const double* pb = reals(b, len(b, n_), w_.tb);
                    out.kind = VKind::real;
                    out.real.resize(m);
                    zip(pa, a.scalar, pb, b.scalar, out.real.data(), m, [mx](double p, double q) {
                        if (std::isnan(p) || std::isnan(q)) {
                            return std::numeric_limits<double>::quiet_NaN();
                        }
                        return mx ? std::max(p, q) : std::min(p, q);
                    });
                } else {
                    out.kind = a.kind == VKind::boolean && b.kind == VKind::boolean
                                   ? VKind::boolean
                                   : VKind::integer;
                    out.integer.resize(m);
                    zip(a.integer.data(), a.scalar, b.integer.data(), b.scalar, out.integer.data(),
                        m, [mx](std::int64_t p, std::int64_t q) {
                            return mx ? std::max(p, q) : std::min(p, q);
                        });
                }
                return;
            }
            case Fn::where: {
                const Column& t = node(x.args[1]);
                const Column& e = node(x.args[2]);
                out.scalar = a.scalar && t.scalar && e.scalar;
                const std::size_t m = out.scalar ? 1 : n_;
                const std::size_t ca = a.scalar ? 0 : 1, ct = t.scalar ? 0 : 1,
                                  ce = e.scalar ? 0 : 1;
                const double* pc = reals(a, len(a, n_), w_.tc);
                out.weak = t.weak && e.weak;
                out.single = single_of(t, e);
                if (is_real(t) || is_real(e)) {
                    const double* pt = reals(t, len(t, n_), w_.ta);
                    const double* pe = reals(e, len(e, n_), w_.tb);
                    out.kind = VKind::real;
                    out.real.resize(m);
                    for (std::size_t k = 0; k < m; ++k) {
                        out.real[k] = pc[k * ca] != 0 ? pt[k * ct] : pe[k * ce];
                    }
                    round_single(out);
                } else {
                    out.kind = t.kind == VKind::boolean && e.kind == VKind::boolean
                                   ? VKind::boolean
                                   : VKind::integer;
                    out.integer.resize(m);
                    for (std::size_t k = 0; k < m; ++k) {
                        out.integer[k] = pc[k * ca] != 0 ? t.integer[k * ct] : e.integer[k * ce];
                    }
                }
                return;
            }
        }
    }

    const Expression& e_;
    const std::vector<const Column*>& ops_;
    std::size_t n_;
    ExprWork& w_;
};

}  // namespace

const Column& evaluate(const Expression& e,
                       const std::vector<const Column*>& operands,
                       std::size_t n,
                       ExprWork& work) {
    if (operands.size() != e.names().size()) {
        throw UsageError(
            "expression '" + e.text() + "': " + num(static_cast<std::int64_t>(operands.size())) +
            " operands for " + num(static_cast<std::int64_t>(e.names().size())) + " names");
    }
    work.nodes.resize(e.nodes().size());
    return Evaluator(e, operands, n, work).node(e.root());
}

}  // namespace b2nd::detail
