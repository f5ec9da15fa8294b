// python-blosc2's expression language: the parser (expression.hpp).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "expression.hpp"
#include "expression_functions.hpp"

namespace b2nd::detail {

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
        n.function = find_function(name);
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
        const int arity = function(n.function).arity;
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

}  // namespace b2nd::detail
