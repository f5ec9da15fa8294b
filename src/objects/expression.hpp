// Internal: python-blosc2's expression language (numexpr's, as lazyexpr.py saves it), parsed
// into a tree and evaluated over columns of elements.
//
// Grammar (Python's precedence, lowest first):
//   or   := xor ('|' xor)*          xor := and ('^' and)*          and := cmp ('&' cmp)*
//   cmp  := sum (('<'|'<='|'>'|'>='|'=='|'!=') sum)?      (chained comparisons are refused)
//   sum  := term (('+'|'-') term)*  term := unary (('*'|'/'|'//'|'%') unary)*
//   unary:= ('-'|'+'|'~') unary | power             power := atom ('**' unary)?
//   atom := number | True | False | name | name '(' args ')' | '(' or ')'
// Values are booleans, integers (int64) or reals (double, or float32 precision where NumPy
// computes in float32); arithmetic promotes as NumPy does for these kinds; the caller casts the
// result to its dtype.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace b2nd::detail {

enum class ExprOp : std::uint8_t {
    constant,
    operand,
    neg,
    pos,
    invert,
    add,
    sub,
    mul,
    div,
    floordiv,
    mod,
    pow,
    lt,
    le,
    gt,
    ge,
    eq,
    ne,
    bit_and,
    bit_or,
    bit_xor,
    call,
};

/// The kind of an evaluated value.
enum class VKind : std::uint8_t { boolean, integer, real };

struct ExprNode {
    ExprOp op = ExprOp::constant;
    VKind kind = VKind::real;  ///< constant: its kind
    double real = 0;           ///< constant (real)
    std::int64_t integer = 0;  ///< constant (boolean, integer)
    int operand = -1;          ///< operand: index in Expression::names
    int function = -1;         ///< call: index in the function table
    std::vector<int> args;     ///< children (node indices)
};

class Expression {
public:
    /// \throws UsageError naming the text and the position where it is wrong
    static Expression parse(const std::string& text);

    const std::string& text() const noexcept { return text_; }
    /// The operand names it uses, in order of first use.
    const std::vector<std::string>& names() const noexcept { return names_; }
    const std::vector<ExprNode>& nodes() const noexcept { return nodes_; }
    int root() const noexcept { return root_; }

private:
    friend class ExprParser;
    std::string text_;
    std::vector<std::string> names_;
    std::vector<ExprNode> nodes_;
    int root_ = -1;
};

/// One evaluated value: `n` elements (or one, broadcast, when `scalar`).
struct Column {
    VKind kind = VKind::real;
    bool scalar = false;
    /// Reals of float32 precision: float32 operands and what NumPy computes from them in float32
    /// (float32 with float32 or with a Python number); kept as doubles rounded to float.
    bool single = false;
    /// A Python number of the expression (NumPy's "weak" scalars: they take the other side's type).
    bool weak = false;
    std::vector<double> real;
    std::vector<std::int64_t> integer;  ///< boolean (0/1) and integer
};

/// Where evaluate() keeps its intermediate columns: kept by the caller (one per thread) so that
/// their memory is allocated and touched once, not once per block.
struct ExprWork {
    std::vector<Column> nodes;
    std::vector<double> ta, tb, tc;
    std::vector<std::int64_t> ia, ib;
};

/// Evaluates `e` over n elements; operands[i] holds names()[i] (n elements or scalar). The
/// result lives in `work` until its next use.
/// \throws UsageError for an operation its operands' kinds do not have (bitwise on reals)
const Column& evaluate(const Expression& e,
                       const std::vector<const Column*>& operands,
                       std::size_t n,
                       ExprWork& work);

}  // namespace b2nd::detail
