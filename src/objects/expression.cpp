// python-blosc2's expression language: parser and column evaluator (expression.hpp).
#include "expression.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <b2nd/error.hpp>

#include "../detail/strings.hpp"

namespace b2nd::detail {

namespace {

enum class Fn : std::uint8_t {
    real1,    // a real function of one real
    real2,    // a real function of two reals
    abs,      // kind-preserving
    sign,     // kind-preserving
    square,   // kind-preserving
    maximum,  // promoted kind, NaN wins
    minimum,
    where,
};

struct Function {
    const char* name;
    int arity;
    Fn fn;
    double (*f1)(double) = nullptr;
    double (*f2)(double, double) = nullptr;
    float (*f1f)(float) = nullptr;  ///< the float32 form, where NumPy computes in float32
};

double d_sin(double x) {
    return std::sin(x);
}
double d_cos(double x) {
    return std::cos(x);
}
double d_tan(double x) {
    return std::tan(x);
}
double d_asin(double x) {
    return std::asin(x);
}
double d_acos(double x) {
    return std::acos(x);
}
double d_atan(double x) {
    return std::atan(x);
}
double d_sinh(double x) {
    return std::sinh(x);
}
double d_cosh(double x) {
    return std::cosh(x);
}
double d_tanh(double x) {
    return std::tanh(x);
}
double d_asinh(double x) {
    return std::asinh(x);
}
double d_acosh(double x) {
    return std::acosh(x);
}
double d_atanh(double x) {
    return std::atanh(x);
}
double d_exp(double x) {
    return std::exp(x);
}
double d_expm1(double x) {
    return std::expm1(x);
}
double d_log(double x) {
    return std::log(x);
}
double d_log10(double x) {
    return std::log10(x);
}
double d_log1p(double x) {
    return std::log1p(x);
}
double d_log2(double x) {
    return std::log2(x);
}
double d_sqrt(double x) {
    return std::sqrt(x);
}
double d_floor(double x) {
    return std::floor(x);
}
double d_ceil(double x) {
    return std::ceil(x);
}
double d_trunc(double x) {
    return std::trunc(x);
}
double d_rint(double x) {
    return std::nearbyint(x);
}
float f_sin(float x) {
    return std::sin(x);
}
float f_cos(float x) {
    return std::cos(x);
}
float f_tan(float x) {
    return std::tan(x);
}
float f_exp(float x) {
    return std::exp(x);
}
float f_log(float x) {
    return std::log(x);
}
float f_log10(float x) {
    return std::log10(x);
}
float f_sqrt(float x) {
    return std::sqrt(x);
}
float f_tanh(float x) {
    return std::tanh(x);
}
double d_atan2(double y, double x) {
    return std::atan2(y, x);
}
double d_hypot(double x, double y) {
    return std::hypot(x, y);
}
double d_pow(double x, double y) {
    return std::pow(x, y);
}
/// NumPy's fmod: the sign of the dividend.
double d_fmod(double x, double y) {
    return std::fmod(x, y);
}

const Function kFunctions[] = {
    {"sin", 1, Fn::real1, d_sin, nullptr, f_sin},
    {"cos", 1, Fn::real1, d_cos, nullptr, f_cos},
    {"tan", 1, Fn::real1, d_tan, nullptr, f_tan},
    {"arcsin", 1, Fn::real1, d_asin},
    {"arccos", 1, Fn::real1, d_acos},
    {"arctan", 1, Fn::real1, d_atan},
    {"sinh", 1, Fn::real1, d_sinh},
    {"cosh", 1, Fn::real1, d_cosh},
    {"tanh", 1, Fn::real1, d_tanh, nullptr, f_tanh},
    {"arcsinh", 1, Fn::real1, d_asinh},
    {"arccosh", 1, Fn::real1, d_acosh},
    {"arctanh", 1, Fn::real1, d_atanh},
    {"exp", 1, Fn::real1, d_exp, nullptr, f_exp},
    {"expm1", 1, Fn::real1, d_expm1},
    {"log", 1, Fn::real1, d_log, nullptr, f_log},
    {"log10", 1, Fn::real1, d_log10, nullptr, f_log10},
    {"log1p", 1, Fn::real1, d_log1p},
    {"log2", 1, Fn::real1, d_log2},
    {"sqrt", 1, Fn::real1, d_sqrt, nullptr, f_sqrt},
    {"floor", 1, Fn::real1, d_floor},
    {"ceil", 1, Fn::real1, d_ceil},
    {"trunc", 1, Fn::real1, d_trunc},
    {"rint", 1, Fn::real1, d_rint},
    {"arctan2", 2, Fn::real2, nullptr, d_atan2},
    {"hypot", 2, Fn::real2, nullptr, d_hypot},
    {"power", 2, Fn::real2, nullptr, d_pow},
    {"fmod", 2, Fn::real2, nullptr, d_fmod},
    {"abs", 1, Fn::abs},
    {"absolute", 1, Fn::abs},
    {"sign", 1, Fn::sign},
    {"square", 1, Fn::square},
    {"maximum", 2, Fn::maximum},
    {"minimum", 2, Fn::minimum},
    {"where", 3, Fn::where},
};

}  // namespace

// ---- parsing ----

class ExprParser {
public:
    explicit ExprParser(const std::string& text) : s_(text) { e_.text_ = text; }

    Expression run() {
        e_.root_ = parse_or();
        skip();
        if (p_ != s_.size()) {
            fail("unexpected '" + std::string(1, s_[p_]) + "'");
        }
        return std::move(e_);
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw UsageError("expression '" + s_ + "': " + why + " at position " +
                         num(static_cast<std::int64_t>(p_)));
    }
    void skip() {
        while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_])) != 0) {
            ++p_;
        }
    }
    /// Consumes `tok` when it comes next (and, for one-character operators, is not the start
    /// of a longer one: '*' not '**', '/' not '//', '<' not '<=').
    bool take(const char* tok) {
        skip();
        const std::size_t n = std::char_traits<char>::length(tok);
        if (s_.compare(p_, n, tok) != 0) {
            return false;
        }
        if (n == 1 && p_ + 1 < s_.size()) {
            const char c = tok[0], d = s_[p_ + 1];
            if ((c == '*' && d == '*') || (c == '/' && d == '/') ||
                ((c == '<' || c == '>' || c == '=' || c == '!') && d == '=')) {
                return false;
            }
        }
        p_ += n;
        return true;
    }
    int add(ExprNode n) {
        if (++depth_guard_ > 100000) {
            fail("expression too large");
        }
        e_.nodes_.push_back(std::move(n));
        return static_cast<int>(e_.nodes_.size() - 1);
    }
    int binary(ExprOp op, int a, int b) {
        ExprNode n;
        n.op = op;
        n.args = {a, b};
        return add(std::move(n));
    }
    struct Depth {
        explicit Depth(ExprParser& p) : p_(p) {
            if (++p_.depth_ > 200) {
                p_.fail("nested too deeply");
            }
        }
        ~Depth() { --p_.depth_; }
        Depth(const Depth&) = delete;
        Depth& operator=(const Depth&) = delete;
        ExprParser& p_;
    };

    int parse_or() {
        const Depth d(*this);
        int a = parse_xor();
        while (take("|")) {
            a = binary(ExprOp::bit_or, a, parse_xor());
        }
        return a;
    }
    int parse_xor() {
        int a = parse_and();
        while (take("^")) {
            a = binary(ExprOp::bit_xor, a, parse_and());
        }
        return a;
    }
    int parse_and() {
        int a = parse_cmp();
        while (take("&")) {
            a = binary(ExprOp::bit_and, a, parse_cmp());
        }
        return a;
    }
    bool take_cmp(ExprOp& op) {
        static const std::pair<const char*, ExprOp> ops[] = {{"<=", ExprOp::le}, {">=", ExprOp::ge},
                                                             {"==", ExprOp::eq}, {"!=", ExprOp::ne},
                                                             {"<", ExprOp::lt},  {">", ExprOp::gt}};
        for (const auto& [tok, o] : ops) {
            if (take(tok)) {
                op = o;
                return true;
            }
        }
        return false;
    }
    int parse_cmp() {
        int a = parse_sum();
        ExprOp op{};
        if (take_cmp(op)) {
            a = binary(op, a, parse_sum());
            if (take_cmp(op)) {
                fail("chained comparisons are not supported (write (a < b) & (b < c))");
            }
        }
        return a;
    }
    int parse_sum() {
        int a = parse_term();
        for (;;) {
            if (take("+")) {
                a = binary(ExprOp::add, a, parse_term());
            } else if (take("-")) {
                a = binary(ExprOp::sub, a, parse_term());
            } else {
                return a;
            }
        }
    }
    int parse_term() {
        int a = parse_unary();
        for (;;) {
            if (take("//")) {
                a = binary(ExprOp::floordiv, a, parse_unary());
            } else if (take("*")) {
                a = binary(ExprOp::mul, a, parse_unary());
            } else if (take("/")) {
                a = binary(ExprOp::div, a, parse_unary());
            } else if (take("%")) {
                a = binary(ExprOp::mod, a, parse_unary());
            } else {
                return a;
            }
        }
    }
    int parse_unary() {
        const Depth d(*this);
        ExprNode n;
        if (take("-")) {
            n.op = ExprOp::neg;
        } else if (take("+")) {
            n.op = ExprOp::pos;
        } else if (take("~")) {
            n.op = ExprOp::invert;
        } else {
            return parse_power();
        }
        n.args = {parse_unary()};
        return add(std::move(n));
    }
    int parse_power() {
        const int a = parse_atom();
        if (take("**")) {
            return binary(ExprOp::pow, a, parse_unary());  // right-associative, as Python
        }
        return a;
    }
    int parse_number() {
        const std::size_t start = p_;
        bool real = false;
        while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_])) != 0) {
            ++p_;
        }
        if (p_ < s_.size() && s_[p_] == '.') {
            real = true;
            ++p_;
            while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_])) != 0) {
                ++p_;
            }
        }
        if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
            real = true;
            ++p_;
            if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) {
                ++p_;
            }
            if (p_ >= s_.size() || std::isdigit(static_cast<unsigned char>(s_[p_])) == 0) {
                fail("malformed number");
            }
            while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_])) != 0) {
                ++p_;
            }
        }
        if (p_ < s_.size() && (s_[p_] == 'j' || s_[p_] == 'J')) {
            fail("complex numbers are not supported");
        }
        if (p_ < s_.size() &&
            (std::isalpha(static_cast<unsigned char>(s_[p_])) != 0 || s_[p_] == '_')) {
            fail("malformed number");
        }
        const std::string t = s_.substr(start, p_ - start);
        if (t == ".") {
            fail("malformed number");
        }
        ExprNode n;
        errno = 0;
        if (real) {
            n.kind = VKind::real;
            n.real = std::strtod(t.c_str(), nullptr);
        } else {
            n.kind = VKind::integer;
            n.integer = std::strtoll(t.c_str(), nullptr, 10);
            if (errno == ERANGE) {
                fail("integer " + t + " does not fit 64 bits");
            }
        }
        return add(std::move(n));
    }
    int parse_atom() {
        skip();
        if (p_ >= s_.size()) {
            fail("unexpected end");
        }
        const char c = s_[p_];
        if (c == '(') {
            ++p_;
            const int a = parse_or();
            if (!take(")")) {
                fail("')' expected");
            }
            return a;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.') {
            return parse_number();
        }
        if (std::isalpha(static_cast<unsigned char>(c)) == 0 && c != '_') {
            fail("unexpected '" + std::string(1, c) + "'");
        }
        const std::size_t start = p_;
        while (p_ < s_.size() &&
               (std::isalnum(static_cast<unsigned char>(s_[p_])) != 0 || s_[p_] == '_')) {
            ++p_;
        }
        const std::string name = s_.substr(start, p_ - start);
        if (name == "True" || name == "False") {
            ExprNode n;
            n.kind = VKind::boolean;
            n.integer = name == "True" ? 1 : 0;
            return add(std::move(n));
        }
        if (name == "and" || name == "or" || name == "not") {
            p_ = start;
            fail("'" + name + "' is not supported (write & | ~)");
        }
        if (take("(")) {
            return parse_call(name, start);
        }
        ExprNode n;
        n.op = ExprOp::operand;
        const auto it = std::find(e_.names_.begin(), e_.names_.end(), name);
        n.operand = static_cast<int>(it - e_.names_.begin());
        if (it == e_.names_.end()) {
            e_.names_.push_back(name);
        }
        return add(std::move(n));
    }
    int parse_call(const std::string& name, std::size_t start) {
        ExprNode n;
        n.op = ExprOp::call;
        const std::size_t nf = sizeof(kFunctions) / sizeof(kFunctions[0]);
        for (std::size_t f = 0; f < nf; ++f) {
            if (name == kFunctions[f].name) {
                n.function = static_cast<int>(f);
            }
        }
        if (n.function < 0) {
            p_ = start;
            fail("unknown function '" + name + "'");
        }
        if (!take(")")) {
            do {
                n.args.push_back(parse_or());
            } while (take(","));
            if (!take(")")) {
                fail("')' expected");
            }
        }
        const int arity = kFunctions[static_cast<std::size_t>(n.function)].arity;
        if (static_cast<int>(n.args.size()) != arity) {
            p_ = start;
            fail(name + "() takes " + num(arity) + " argument" + (arity == 1 ? "" : "s") +
                 ", not " + num(static_cast<std::int64_t>(n.args.size())));
        }
        return add(std::move(n));
    }

    const std::string& s_;
    std::size_t p_ = 0;
    int depth_ = 0;
    std::int64_t depth_guard_ = 0;
    Expression e_;
};

Expression Expression::parse(const std::string& text) {
    return ExprParser(text).run();
}

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
        const Function& f = kFunctions[static_cast<std::size_t>(x.function)];
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
