// Where the examples put their files: a fresh directory under the system's temporary directory,
// removed with everything in it when the example ends; or a directory the user names, kept.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

class ExampleDir {
public:
    /// A directory to keep (created if missing): its files stay when the example ends.
    explicit ExampleDir(const std::string& keep) : path_(keep), keep_(true) {
        std::filesystem::create_directories(path_);
    }
    ExampleDir() {
        std::string templ =
            (std::filesystem::temp_directory_path() / "b2nd-example-XXXXXX").string();
        if (::mkdtemp(templ.data()) == nullptr) {
            throw std::runtime_error("cannot create a temporary directory");
        }
        path_ = templ;
    }
    ~ExampleDir() {
        if (!keep_) {
            std::error_code ignored;
            std::filesystem::remove_all(path_, ignored);
        }
    }
    ExampleDir(const ExampleDir&) = delete;
    ExampleDir& operator=(const ExampleDir&) = delete;

    /// The path of `name` in the directory.
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }
    const std::string& path() const noexcept { return path_; }
    bool kept() const noexcept { return keep_; }

private:
    std::string path_;
    bool keep_ = false;
};
