// In-memory arrays: a frame in a private directory on a RAM file system, owned by the array's
// core and removed with it, so that every code path of file-backed arrays (writes, resize,
// compaction, sparse frames) serves them unchanged. to_cframe and save copy chunks as stored.
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <b2nd/error.hpp>
#include <b2nd/ops.hpp>
#include <b2nd/storage/sources.hpp>

#include "../detail/text.hpp"
#include "../engine/array_core.hpp"
#include "../engine/block_origin.hpp"
#include "../engine/engine_access.hpp"
#include "../storage/publish.hpp"
#include <unistd.h>

namespace b2nd {

namespace {

namespace fs = std::filesystem;

const std::string kPrefix = "b2nd-mem-";

/// Where in-memory frames live: B2ND_MEMORY_DIR, else /dev/shm when writable, else the temporary
/// directory.
std::string memory_root() {
    if (const char* env = std::getenv("B2ND_MEMORY_DIR"); env != nullptr && *env != '\0') {
        return env;
    }
    if (::access("/dev/shm", W_OK | X_OK) == 0) {
        return "/dev/shm";
    }
    return fs::temp_directory_path().string();
}

/// Removes the directories of in-memory arrays whose process has died (b2nd-mem-PID-...).
void sweep_dead(const std::string& root) {
    std::error_code ec;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind(kPrefix, 0) != 0) {
            continue;
        }
        char* stop = nullptr;
        const long pid = std::strtol(name.c_str() + kPrefix.size(), &stop, 10);
        if (pid <= 0 || stop == nullptr || *stop != '-') {
            continue;
        }
        if (detail::process_gone(pid)) {
            std::error_code ignored;
            fs::remove_all(it->path(), ignored);
        }
    }
}

/// A new private directory, and the handle that removes it.
std::pair<std::string, std::shared_ptr<void>> scratch_dir() {
    const std::string root = memory_root();
    sweep_dead(root);
    std::string templ = root + "/" + kPrefix + std::to_string(::getpid()) + "-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
        throw IoError(
            "cannot make a directory for an in-memory array in " + detail::quoted_path(root),
            std::error_code(errno, std::generic_category()));
    }
    std::shared_ptr<void> guard(new std::string(templ), [](void* p) {
        const auto* dir = static_cast<std::string*>(p);
        std::error_code ignored;
        fs::remove_all(*dir, ignored);
        delete dir;
    });
    return {templ, guard};
}

}  // namespace

AnyArray AnyArray::create_in_memory(const DType& dtype,
                                    const Shape& shape,
                                    const CreateOptions& options) {
    auto [dir, guard] = scratch_dir();
    CreateOptions o = options;
    o.overwrite = false;
    o.locking = false;  // nobody else can open it
    o.durable = false;
    auto core = detail::ArrayCore::create(dir + (o.sparse ? "/array.b2frame" : "/array.b2nd"),
                                          dtype, shape, o);
    core->own_scratch(std::move(guard));
    return AnyArray(std::move(core));
}

bool AnyArray::in_memory() const {
    return core().in_memory();
}

std::vector<std::uint8_t> AnyArray::to_cframe() const {
    auto [dir, guard] = scratch_dir();
    CopyOptions o;
    o.sparse = false;
    o.nthreads = nthreads();
    const std::string file = dir + "/frame.b2nd";
    { const AnyArray written = copy(*this, file, o); }
    std::ifstream in(file, std::ios::binary);
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(fs::file_size(file)));
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!in) {
        throw IoError(detail::quoted_path(path()) + ": cannot read back its contiguous frame",
                      std::error_code(EIO, std::generic_category()));
    }
    return bytes;
}

AnyArray AnyArray::save(const std::string& path, bool overwrite) const {
    CopyOptions o;
    o.sparse = false;
    o.overwrite = overwrite;
    o.nthreads = nthreads();
    return copy(*this, path, o);
}

}  // namespace b2nd

namespace b2nd::detail {

AnyArray computed_array(
    const DType& dtype,
    const Shape& shape,
    const CreateOptions& grid,
    const Value::Map& attrs,
    const std::string& name,
    const OpenOptions& o,
    const std::function<std::shared_ptr<const BlockOrigin>(const Grid&)>& make) {
    // The carrier's frame, made in a private directory and read back: its chunks are never read.
    auto [dir, guard] = scratch_dir();
    auto bytes = std::make_shared<std::vector<std::uint8_t>>();
    try {
        CreateOptions co;
        co.chunk_shape = grid.chunk_shape;
        co.block_shape = grid.block_shape;
        co.compression.filters = {};
        co.overwrite = false;
        co.locking = false;
        co.durable = false;
        CopyOptions copy;
        copy.sparse = false;
        const std::string file = dir + "/carrier.b2nd";
        (void)ArrayCore::create(file, dtype, shape, co);
        std::ifstream in(file, std::ios::binary);
        bytes->resize(static_cast<std::size_t>(fs::file_size(file)));
        in.read(reinterpret_cast<char*>(bytes->data()),
                static_cast<std::streamsize>(bytes->size()));
        if (!in) {
            throw IoError(quoted_path(name) + ": cannot read back the frame that carries it",
                          std::error_code(EIO, std::generic_category()));
        }
    } catch (const Error&) {
        rethrow_renamed(dir + "/carrier.b2nd", name);  // the caller's name, not ours
    }
    AnyArray arr =
        AnyArray::open(storage::memory_source({bytes->data(), bytes->size()}, bytes, name), o);
    ArrayCore& core = EngineAccess::writable_core(arr);
    core.set_origin(make(arr.grid()));
    // The attributes, held in memory: any number of them (a frame holds at most 8192), each
    // found at once (8,000 HDF5 attributes took minutes as one commit each).
    if (!attrs.empty()) {
        auto held = std::make_shared<ArrayCore::HeldAttributes>();
        for (const auto& [k, v] : attrs) {
            if (k.type() != Value::Type::string) {
                continue;
            }
            const std::string key = k.as<std::string>();
            if (held->values.emplace(key, v.to_msgpack()).second) {
                held->names.push_back(key);
            }
        }
        core.hold_attributes(std::move(held));
    }
    return arr;
}

}  // namespace b2nd::detail
