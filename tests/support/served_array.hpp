// Test helper: a float32 array a.b2nd of shape (32, 64, 64) in chunks of (16, 32, 32), served by
// nginx on 127.0.0.1 from a temporary directory, with a second directory for caches. The tests
// of the persistent cache and of remote versions rewrite it under the server's feet.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "http_servers.hpp"
#include "temp_dir.hpp"
#include <fcntl.h>
#include <sys/stat.h>

namespace b2nd::test {

struct ServedArray {
    TempDir dir;  // served
    TempDir own;  // the caches
    std::unique_ptr<ServerProcess> server;
    bool stored = false;  // chunks stored uncompressed: every version has one size

    /// a.b2nd (again) with the values (i % 1013) / 4 + offset.
    void write(float offset) const {
        std::vector<float> v(32 * 64 * 64);
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i] = static_cast<float>(i % 1013) * 0.25f + offset;
        }
        CreateOptions co;
        co.chunk_shape = {16, 32, 32};
        co.block_shape = {8, 16, 16};
        co.compression.clevel = stored ? 0 : co.compression.clevel;
        co.overwrite = true;
        // One thread: chunks are then laid out in their order, so that two versions of stored
        // chunks have the same offsets index, hence the same size (parallel writers append
        // chunks as they finish, and the compressed index's size follows that order).
        co.nthreads = 1;
        AnyArray::create_from(
            dir / "a.b2nd", DType::parse("<f4"), {32, 64, 64},
            {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(float)}, co);
    }
    /// Another version of a.b2nd under the same size and modification time: nginx's ETag and
    /// Last-Modified stay the same. (Needs `stored`.)
    void rewrite_keeping_validators(float offset) const {
        const std::string path = dir / "a.b2nd";
        struct stat before {};
        REQUIRE(::stat(path.c_str(), &before) == 0);
        write(offset);
        struct stat after {};
        REQUIRE(::stat(path.c_str(), &after) == 0);
        REQUIRE(after.st_size == before.st_size);
        const timespec times[2] = {before.st_atim, before.st_mtim};
        REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
    }
    std::string url() const { return server->url("a.b2nd"); }
    /// Options with the persistent cache in `own` (bound 0: none).
    OpenOptions cached(std::uint64_t bound = 0) const {
        OpenOptions o;
        o.http_cache = own / "cache.b2nd";
        o.http_cache_bytes = bound;
        o.http.head_bytes = 1024;
        return o;
    }
    AnyArray local() const { return AnyArray::open(dir / "a.b2nd"); }
};

/// The array written and served, or null with `why` set (for B2ND_HTTP_FIXTURE).
inline std::unique_ptr<ServedArray> serve_array(std::string& why, bool stored = false) {
    auto s = std::make_unique<ServedArray>();
    s->stored = stored;
    s->write(0);
    s->server = nginx_or_why(s->dir.path(), why);
    return s->server ? std::move(s) : nullptr;
}

}  // namespace b2nd::test
