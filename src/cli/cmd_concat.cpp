// b2nd concat: arrays joined along an axis, or stacked along a new one.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/ops.hpp>
#include <b2nd/storage/frame.hpp>

#include "cli.hpp"
#include "copy_args.hpp"
#include "progress.hpp"

namespace b2nd::cli {

namespace {

const char* const kConcatHelp =
    "usage: b2nd concat OUT IN... [--axis N] [--stack] [options]\n"
    "\n"
    "Writes the arrays IN... joined along axis N (default 0; negative counts from the end), as\n"
    "numpy.concatenate, or with --stack along a new axis N, as numpy.stack. They must have one\n"
    "dtype, and equal extents on the other axes. Chunks, blocks, compression and frame kind are\n"
    "the first input's unless given; chunks of the inputs that line up with the result's are\n"
    "copied as stored.\n"
    "\n"
    "  --codec, --clevel, --filters, --chunks, --blocks, --sframe, --cframe, --no-meta,\n"
    "  --verify, --overwrite, --nthreads   as for 'b2nd convert'\n"
    "\n"
    "example:\n"
    "  b2nd concat year.b2nd jan.b2nd feb.b2nd mar.b2nd --axis 0\n";

}  // namespace

int cmd_concat(const std::vector<std::string>& argv) {
    std::vector<std::string> values = kCopyValues;
    values.push_back("--axis");
    std::vector<std::string> flags = kCopyFlags;
    flags.push_back("--stack");
    const Args a = Args::parse(argv, values, flags);
    if (a.has("--help")) {
        std::cout << kConcatHelp;
        return 0;
    }
    if (a.positional.size() < 2) {
        throw ArgError("expected OUT and at least one IN");
    }
    const OpenOptions io = input_options(a);
    check_output(a.positional[0], {a.positional.begin() + 1, a.positional.end()},
                 a.has("--overwrite"), detail::OutputKind::array);
    std::vector<AnyArray> ins;
    for (std::size_t i = 1; i < a.positional.size(); ++i) {
        ins.push_back(open_input(a.positional[i], io));
    }
    const auto axis = static_cast<int>(a.get_int("--axis", 0, -64, 64));
    const std::string& out = a.positional[0];
    const CopyOptions o = copy_options(a, ins.front(), out);
    const bool stacked = a.has("--stack");
    const std::int64_t chunk_bytes = ins.front().grid().chunk_nbytes();
    return run_copy(stacked ? "stack" : "concat", out, o, chunk_bytes, [&](const CopyOptions& co) {
        return stacked ? stack(ins, axis, out, co) : concatenate(ins, axis, out, co);
    });
}

}  // namespace b2nd::cli
