// b2nd append: the array of a .npy file appended to a b2nd array along an axis, through an
// Appender (each chunk row encoded once, nothing complete decoded).
#include <chrono>
#include <cstdio>
#include <iostream>

#include <b2nd/any_array.hpp>
#include <b2nd/appender.hpp>
#include <b2nd/error.hpp>
#include <b2nd/npy.hpp>

#include "../detail/text.hpp"
#include "cli.hpp"

namespace b2nd::cli {

namespace {

const char* const kAppendHelp =
    "usage: b2nd append PATH SRC.npy [--axis N] [--nthreads N]\n"
    "\n"
    "Appends the array in SRC.npy to the b2nd array PATH along --axis (default 0). SRC holds\n"
    "the array's shape with any extent along the axis (or the shape without the axis: one\n"
    "slab), in its dtype, C order. Each chunk row is encoded once, and only the array's last,\n"
    "partial row is read (docs/appending.md). A full row is committed as soon as it is made and\n"
    "the rest at the end: an interrupted append leaves the array as of its last commit, every\n"
    "element whole.\n"
    "\n"
    "example:\n"
    "  b2nd append run.b2nd frames_0042.npy\n"
    "  b2nd append series.b2nd step.npy --axis 1\n";

}  // namespace

int cmd_append(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, {"--axis", "--nthreads"}, {"--help"});
    if (a.has("--help")) {
        std::cout << kAppendHelp;
        return 0;
    }
    if (a.positional.size() != 2) {
        throw ArgError("expected PATH and SRC.npy");
    }
    const std::string& path = a.positional[0];
    const std::string& src_path = a.positional[1];
    OpenOptions o = with_settings(OpenOptions{});
    o.writable = true;
    o.nthreads = static_cast<int>(a.get_int("--nthreads", 0, 0, 1024));
    AnyArray arr = AnyArray::open(path, o);
    const int axis = static_cast<int>(a.get_int("--axis", 0, 0, arr.ndim() - 1));
    const NpyFile src = NpyFile::open(src_path, o);
    const NpyHeader& h = src.header();
    const std::string said = detail::quoted_path(src_path);
    if (h.dtype != arr.dtype()) {
        throw ArgError(said + " holds dtype " + h.dtype.str() + "; " + detail::quoted_path(path) +
                       " holds " + arr.dtype().str());
    }
    if (h.fortran_order && h.shape.size() > 1) {
        throw ArgError(said + " is in Fortran order; append takes C order (numpy's default)");
    }
    const auto ax = static_cast<std::size_t>(axis);
    Shape slab = arr.shape();
    slab.erase(slab.begin() + axis);
    Shape with_axis = h.shape;
    if (h.shape == slab) {
        with_axis.insert(with_axis.begin() + axis, 1);  // one slab
    }
    Shape others = with_axis;
    if (others.size() == arr.shape().size()) {
        others.erase(others.begin() + axis);
    }
    if (with_axis.size() != arr.shape().size() || others != slab) {
        throw ArgError(said + " has shape " + to_string(h.shape) + "; appending along axis " +
                       std::to_string(axis) + " of " + to_string(arr.shape()) +
                       " takes the shape " + to_string(slab) + " with any extent inserted at " +
                       std::to_string(axis) + " (or " + to_string(slab) + " itself)");
    }
    const auto t0 = std::chrono::steady_clock::now();
    AnyAppender app(arr, axis);
    app.push(src.data());
    app.close();
    char took[32];
    std::snprintf(took, sizeof took, "%.2f s",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::cout << redact_secrets(path) << ": " << to_string(app.array().shape()) << " "
              << arr.dtype().str() << ", " << with_axis[ax] << " appended along axis " << axis
              << ", " << took << "\n";
    return 0;
}

}  // namespace b2nd::cli
