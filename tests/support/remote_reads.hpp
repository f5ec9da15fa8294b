// Test helpers: a remote array read against its local copy, whole and by random boxes; the
// HttpError a remote read throws.
#pragma once

#include <random>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

namespace b2nd::test {

/// Random boxes of `shape` (at most 4), the same for both sides of a comparison.
inline std::vector<b2nd::Box> random_boxes(const b2nd::Shape& shape, std::mt19937& rng) {
    std::vector<b2nd::Box> boxes;
    for (int k = 0; k < 4; ++k) {
        b2nd::Box b;
        bool empty = false;
        for (std::int64_t n : shape) {
            if (n == 0) {
                empty = true;
                break;
            }
            const std::int64_t lo = std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng);
            const std::int64_t len = std::uniform_int_distribution<std::int64_t>(1, n - lo)(rng);
            b.start.push_back(lo);
            b.count.push_back(len);
            b.step.push_back(1);
        }
        if (!empty) {
            boxes.push_back(b);
        }
    }
    return boxes;
}

/// Reads `local` and `remote` whole and by random boxes; they must agree.
inline void same_reads(const b2nd::AnyArray& local,
                       const b2nd::AnyArray& remote,
                       std::mt19937& rng) {
    REQUIRE(remote.shape() == local.shape());
    REQUIRE(remote.dtype().str() == local.dtype().str());
    CHECK(remote.read() == local.read());
    for (const b2nd::Box& b : random_boxes(local.shape(), rng)) {
        INFO("box " << b.str());
        CHECK(remote.read(b) == local.read(b));
    }
}

/// The HttpError `f` throws (or fails the test).
template <class F>
b2nd::HttpError http_error(F&& f) {
    try {
        f();
    } catch (const b2nd::HttpError& e) {
        return e;
    }
    FAIL("no HttpError");
    throw std::logic_error("unreachable");
}

}  // namespace b2nd::test
