// The accumulators of the reductions (reduce.hpp): one per kind of reduction, each a state that
// takes rows of values and merges with another state. The numerics are described in reduce.hpp.
// Part of the reduction machinery that local (reduce.hpp) and MPI (b2nd/mpi.hpp) reductions share
// (namespace b2nd::reduction); not for direct use.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include <b2nd/mask.hpp>

namespace b2nd {

/// The accumulator of sum() and prod(): double for floats, int64 / uint64 for integers (bool
/// counts).
template <class T>
using sum_type_t =
    std::conditional_t<std::is_floating_point_v<T>,
                       double,
                       std::conditional_t<std::is_same_v<T, bool> || std::is_unsigned_v<T>,
                                          std::uint64_t,
                                          std::int64_t>>;

/// What to reduce over and how.
struct ReduceOptions {
    /// The axes reduced (negative count from the end); empty: all of them.
    std::vector<int> axes;
    /// Keep the reduced axes as dimensions of length 1.
    bool keepdims = false;
    /// Only elements where the mask is true take part (NumPy's where=).
    std::optional<Mask> where;
    /// Chunks in flight (0: the array's nthreads()).
    int nthreads = 0;
};

namespace reduction {

/// Keeps the reductions out of overload sets where a caller names T = void explicitly (xtensor's
/// own unqualified sum<T>(...) calls find them by argument-dependent lookup on b2nd types).
template <class T>
using if_element = std::enable_if_t<!std::is_void_v<T>, int>;

/// Neumaier's compensated sum in double.
struct CompensatedSum {
    double s = 0, c = 0;
    void add(double x) {
        const double t = s + x;
        c += std::abs(s) >= std::abs(x) ? (s - t) + x : (x - t) + s;
        s = t;
    }
    void merge(const CompensatedSum& o) {
        add(o.s);
        add(o.c);
    }
    double value() const { return s + c; }
};

/// The sum of n values in double, 8 independent lanes per run of 4096, runs compensated.
template <class T>
void add_row_compensated(CompensatedSum& st, const T* v, std::int64_t n) {
    for (std::int64_t first = 0; first < n; first += 4096) {
        const std::int64_t end = std::min(n, first + 4096);
        double p[8] = {};
        std::int64_t i = first;
        for (; i + 8 <= end; i += 8) {
            for (int l = 0; l < 8; ++l) {
                p[l] += static_cast<double>(v[i + l]);
            }
        }
        for (; i < end; ++i) {
            p[0] += static_cast<double>(v[i]);
        }
        st.add(((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7])));
    }
}

/// Integer arithmetic that wraps (through unsigned), as NumPy's does.
template <class A>
A wrap_add(A a, A b) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
}
template <class A>
A wrap_mul(A a, A b) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
}

// Each operation: a `state` with add(v, pos), add_row(v, n, pos0, pos_step) for n consecutive
// values, add_repeated(v, n, pos0), merge(later) and a result. `pos` is an element's C-order
// index over the reduced axes (what argmin/argmax return).

template <class T>
struct SumOp {
    using acc = sum_type_t<T>;
    using result = acc;
    struct state {
        std::conditional_t<std::is_floating_point_v<T>, CompensatedSum, acc> s{};
        void add(T v, std::int64_t) {
            if constexpr (std::is_floating_point_v<T>) {
                s.add(static_cast<double>(v));
            } else {
                s = wrap_add(s, static_cast<acc>(v));
            }
        }
        void add_row(const T* v, std::int64_t n, std::int64_t, std::int64_t) {
            if constexpr (std::is_floating_point_v<T>) {
                add_row_compensated(s, v, n);
            } else {
                acc p[8] = {};
                std::int64_t i = 0;
                for (; i + 8 <= n; i += 8) {
                    for (int l = 0; l < 8; ++l) {
                        p[l] = wrap_add(p[l], static_cast<acc>(v[i + l]));
                    }
                }
                for (; i < n; ++i) {
                    p[0] = wrap_add(p[0], static_cast<acc>(v[i]));
                }
                for (acc x : p) {
                    s = wrap_add(s, x);
                }
            }
        }
        void add_repeated(T v, std::int64_t n, std::int64_t) {
            if constexpr (std::is_floating_point_v<T>) {
                s.add(static_cast<double>(v) * static_cast<double>(n));
            } else {
                s = wrap_add(s, wrap_mul(static_cast<acc>(v), static_cast<acc>(n)));
            }
        }
        void merge(const state& o) {
            if constexpr (std::is_floating_point_v<T>) {
                s.merge(o.s);
            } else {
                s = wrap_add(s, o.s);
            }
        }
        result get() const {
            if constexpr (std::is_floating_point_v<T>) {
                return s.value();
            } else {
                return s;
            }
        }
    };
};

template <class T>
struct ProdOp {
    using acc = sum_type_t<T>;
    using result = acc;
    struct state {
        acc p = acc(1);
        void add(T v, std::int64_t) {
            if constexpr (std::is_floating_point_v<T>) {
                p *= static_cast<double>(v);
            } else {
                p = wrap_mul(p, static_cast<acc>(v));
            }
        }
        void add_row(const T* v, std::int64_t n, std::int64_t pos, std::int64_t) {
            for (std::int64_t i = 0; i < n; ++i) {
                add(v[i], pos);
            }
        }
        void add_repeated(T v, std::int64_t n, std::int64_t) {
            if constexpr (std::is_floating_point_v<T>) {
                p *= std::pow(static_cast<double>(v), static_cast<double>(n));
            } else {
                acc base = static_cast<acc>(v), r = acc(1);
                for (auto e = static_cast<std::uint64_t>(n); e > 0; e >>= 1) {
                    if ((e & 1) != 0) {
                        r = wrap_mul(r, base);
                    }
                    base = wrap_mul(base, base);
                }
                p = wrap_mul(p, r);
            }
        }
        void merge(const state& o) {
            if constexpr (std::is_floating_point_v<T>) {
                p *= o.p;
            } else {
                p = wrap_mul(p, o.p);
            }
        }
        result get() const { return p; }
    };
};

/// Count, mean and sum of squared deviations (Welford within rows, Chan across).
template <class T>
struct MomentsOp {
    struct state {
        std::int64_t n = 0;
        double mean = 0, m2 = 0;
        void add(T v, std::int64_t) {
            ++n;
            const double x = static_cast<double>(v);
            const double d = x - mean;
            mean += d / static_cast<double>(n);
            m2 += d * (x - mean);
        }
        void add_row(const T* v, std::int64_t n_, std::int64_t, std::int64_t) {
            if (n_ == 0) {
                return;
            }
            CompensatedSum s;
            add_row_compensated(s, v, n_);
            state row;
            row.n = n_;
            row.mean = s.value() / static_cast<double>(n_);
            for (std::int64_t i = 0; i < n_; ++i) {
                const double d = static_cast<double>(v[i]) - row.mean;
                row.m2 += d * d;
            }
            merge(row);
        }
        void add_repeated(T v, std::int64_t n_, std::int64_t) {
            state r;
            r.n = n_;
            r.mean = static_cast<double>(v);
            merge(r);
        }
        void merge(const state& o) {
            if (o.n == 0) {
                return;
            }
            if (n == 0) {
                *this = o;
                return;
            }
            const double na = static_cast<double>(n), nb = static_cast<double>(o.n);
            const double d = o.mean - mean;
            n += o.n;
            mean += d * nb / (na + nb);
            m2 += o.m2 + d * d * na * nb / (na + nb);
        }
    };
};

template <class T>
struct MeanOp {
    using result = double;
    struct state {
        CompensatedSum s;
        std::int64_t n = 0;
        void add(T v, std::int64_t) {
            s.add(static_cast<double>(v));
            ++n;
        }
        void add_row(const T* v, std::int64_t n_, std::int64_t, std::int64_t) {
            add_row_compensated(s, v, n_);
            n += n_;
        }
        void add_repeated(T v, std::int64_t n_, std::int64_t) {
            s.add(static_cast<double>(v) * static_cast<double>(n_));
            n += n_;
        }
        void merge(const state& o) {
            s.merge(o.s);
            n += o.n;
        }
        result get() const {
            return n == 0 ? std::numeric_limits<double>::quiet_NaN()
                          : s.value() / static_cast<double>(n);
        }
    };
};

/// any (All = false) or all (All = true).
template <class T, bool All>
struct TruthOp {
    using result = bool;
    struct state {
        bool b = All;
        void add(T v, std::int64_t) { b = All ? (b && v != T(0)) : (b || v != T(0)); }
        void add_row(const T* v, std::int64_t n, std::int64_t pos, std::int64_t) {
            for (std::int64_t i = 0; i < n && b == All; ++i) {
                add(v[i], pos);
            }
        }
        void add_repeated(T v, std::int64_t n, std::int64_t pos) {
            if (n > 0) {
                add(v, pos);
            }
        }
        void merge(const state& o) { b = All ? (b && o.b) : (b || o.b); }
        result get() const { return b; }
    };
};

template <class T>
struct CountOp {
    using result = std::int64_t;
    struct state {
        std::int64_t c = 0;
        void add(T v, std::int64_t) { c += v != T(0) ? 1 : 0; }
        void add_row(const T* v, std::int64_t n, std::int64_t, std::int64_t) {
            std::int64_t k = 0;
            for (std::int64_t i = 0; i < n; ++i) {
                k += v[i] != T(0) ? 1 : 0;
            }
            c += k;
        }
        void add_repeated(T v, std::int64_t n, std::int64_t) { c += v != T(0) ? n : 0; }
        void merge(const state& o) { c += o.c; }
        result get() const { return c; }
    };
};

/// The smallest (Larger = false) or largest element and its position; NaN wins, then the
/// earliest position.
template <class T, bool Larger>
struct ArgOp {
    struct state {
        T best{};
        std::int64_t pos = -1;
        static bool nan(T v) {
            if constexpr (std::is_floating_point_v<T>) {
                return std::isnan(v);
            } else {
                return false;
            }
        }
        /// Whether (v, p) goes before the current best.
        bool better(T v, std::int64_t p) const {
            if (pos < 0) {
                return true;
            }
            if (nan(best) || nan(v)) {
                return nan(v) && (!nan(best) || p < pos);
            }
            if (v == best) {
                return p < pos;
            }
            return Larger ? best < v : v < best;
        }
        void add(T v, std::int64_t p) {
            if (better(v, p)) {
                best = v;
                pos = p;
            }
        }
        void add_row(const T* v, std::int64_t n, std::int64_t p0, std::int64_t step) {
            for (std::int64_t i = 0; i < n; ++i) {
                add(v[i], p0 + i * step);
            }
        }
        void add_repeated(T v, std::int64_t n, std::int64_t p0) {
            if (n > 0) {
                add(v, p0);
            }
        }
        void merge(const state& o) {
            if (o.pos >= 0) {
                add(o.best, o.pos);
            }
        }
    };
};

}  // namespace reduction
}  // namespace b2nd
