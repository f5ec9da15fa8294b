#include <cerrno>
#include <system_error>

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/file_mapping.hpp>
#include <boost/interprocess/mapped_region.hpp>

#include <b2nd/error.hpp>
#include <b2nd/storage/mapped_file.hpp>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace b2nd::storage {

namespace bip = boost::interprocess;

struct MappedFile::Impl {
    bip::file_mapping mapping;
    bip::mapped_region region;
};

MappedFile::MappedFile(std::string path, std::unique_ptr<Impl> impl, ByteSpan bytes)
    : path_(std::move(path)), impl_(std::move(impl)), bytes_(bytes) {}

MappedFile::~MappedFile() = default;

void MappedFile::prefetch(ByteSpan range) noexcept {
    if (range.empty()) {
        return;
    }
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(range.data()) & ~(page - 1);
    const auto end = reinterpret_cast<std::uintptr_t>(range.data()) + range.size();
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the page that holds the range's first byte
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED);
}

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        throw IoError("cannot open \"" + path + "\"",
                      std::error_code(errno, std::generic_category()));
    }
    if (!S_ISREG(st.st_mode)) {
        throw IoError("\"" + path + "\" is not a regular file",
                      std::make_error_code(std::errc::invalid_argument));
    }
    auto impl = std::make_unique<Impl>();
    ByteSpan bytes;
    if (st.st_size > 0) {
        try {
            impl->mapping = bip::file_mapping(path.c_str(), bip::read_only);
            impl->region = bip::mapped_region(impl->mapping, bip::read_only);
        } catch (const bip::interprocess_exception& e) {
            throw IoError("cannot map \"" + path + "\" (" + e.what() + ")",
                          std::error_code(e.get_native_error(), std::system_category()));
        }
        bytes = ByteSpan(static_cast<const std::uint8_t*>(impl->region.get_address()),
                         impl->region.get_size());
    }
    return std::shared_ptr<const MappedFile>(new MappedFile(path, std::move(impl), bytes));
}

}  // namespace b2nd::storage
