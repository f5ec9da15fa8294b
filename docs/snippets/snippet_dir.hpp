// Where the README's snippets run: a fresh directory under the system's temporary directory,
// the current directory while they run (the README names its files "temperature.b2nd"), removed
// with everything in it at the end.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

class SnippetDir {
public:
    SnippetDir() : before_(std::filesystem::current_path()) {
        std::string templ =
            (std::filesystem::temp_directory_path() / "b2nd-snippets-XXXXXX").string();
        if (::mkdtemp(templ.data()) == nullptr) {
            throw std::runtime_error("cannot create a temporary directory");
        }
        path_ = templ;
        std::filesystem::current_path(path_);
    }
    ~SnippetDir() {
        std::error_code ignored;
        std::filesystem::current_path(before_, ignored);
        std::filesystem::remove_all(path_, ignored);
    }
    SnippetDir(const SnippetDir&) = delete;
    SnippetDir& operator=(const SnippetDir&) = delete;
    const std::string& path() const noexcept { return path_; }

    /// Runs one section in a directory of its own (each README block starts afresh).
    template <class F>
    void section(const std::string& name, F&& fn) const {
        const std::filesystem::path dir = std::filesystem::path(path_) / name;
        std::filesystem::create_directory(dir);
        std::filesystem::current_path(dir);
        fn();
        std::filesystem::current_path(path_);
    }

private:
    std::filesystem::path before_;
    std::string path_;
};
