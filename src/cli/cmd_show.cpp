// b2nd show PATH [--slice EXPR] [--json]: values as NumPy prints them, or as JSON, streamed.
#include <iostream>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/selection.hpp>

#include "cli.hpp"
#include "item_format.hpp"
#include "nested_printer.hpp"
#include "selection_stream.hpp"

namespace b2nd::cli {

namespace {

const char* const kShowHelp =
    "usage: b2nd show PATH [--slice EXPR] [--field NAME] [--json] [--threshold N]\n"
    "                 [--edgeitems N] [--dtype DTYPE]\n"
    "\n"
    "Prints the array, or a selection of it, as NumPy prints arrays: nested brackets, numbers\n"
    "aligned, and for more than --threshold elements (default 1000) only the first and last\n"
    "--edgeitems (default 3) of each long axis, with '...' between; only those are read.\n"
    "Output is written as it is read: any size takes little memory, and a closed pipe\n"
    "(b2nd show ... | head) stops it at once.\n"
    "\n"
    "  --slice EXPR   NumPy-style selection, e.g. '0, :, 100:200' or '[3,1,7], ::2'\n"
    "  --json         every selected value, as nested JSON arrays on one line (strict JSON:\n"
    "                 NaN and infinities are the strings \"NaN\", \"Infinity\", \"-Infinity\";\n"
    "                 complex numbers [re, im]; bytes strings of code points 0-255)\n"
    "  --field NAME   one field of a structured array ('pos.x' nested), over the selection\n"
    "                 (read whole into memory first)\n"
    "  --dtype DTYPE  read items as this NumPy dtype (same size), e.g. for legacy files\n"
    "\n"
    "python-blosc2's variable-length containers print as a JSON list of their items (strings,\n"
    "bytes as {\"$bytes\": \"hex\"}, tuples as lists), with or without --json; --slice a:b\n"
    "selects items a..b-1: a UTF8Array (NAME.b2nd with NAME.utf8.b2nd beside it; in a store\n"
    "KEY with KEY.utf8), an ObjectArray, a BatchArray (items over all batches) or a ListArray.\n"
    "\n"
    "example:\n"
    "  b2nd show t.b2nd --slice '0, :4, :4'\n";

constexpr std::int64_t kSlabBytes = 4 << 20;   // elements read at a time
constexpr std::size_t kCacheBytes = 16 << 20;  // blocks kept between slabs

}  // namespace

int cmd_show(const std::vector<std::string>& argv) {
    const Args a = Args::parse(
        argv, {"--slice", "--threshold", "--edgeitems", "--dtype", "--nthreads", "--field"},
        {"--json", "--help"});
    if (a.has("--help")) {
        std::cout << kShowHelp;
        return 0;
    }
    if (a.positional.size() != 1) {
        throw ArgError("expected one PATH");
    }
    OpenOptions o = input_options(a);
    o.cache_bytes = kCacheBytes;
    if (show_items(a.positional[0], a, o)) {
        return 0;
    }
    AnyArray arr = open_input(a.positional[0], o);
    const bool field = a.has("--field");
    if (field) {
        arr = field_input(arr, a);  // the selection is applied: the whole of it is shown
    }
    Resolved r;
    try {
        r = resolve(arr.shape(), field ? Selection{} : parse_selection(a.get("--slice")));
    } catch (const UsageError& e) {
        throw ArgError(std::string("--slice: ") + e.what());
    }
    const std::int64_t threshold = a.get_int("--threshold", 1000, 0, INT64_MAX);
    const std::int64_t edge = a.get_int("--edgeitems", 3, 1, INT64_MAX / 4);
    ItemFormat format(arr.dtype());
    const std::int64_t isz = arr.itemsize();

    if (a.has("--json")) {
        NestedPrinter p(std::cout, NestedPrinter::Style::json, r.shape, {});
        std::string token;
        for_each_slab(arr, r, Shown::all(r), kSlabBytes,
                      [&](const std::uint8_t* items, std::int64_t n) {
                          for (std::int64_t i = 0; i < n; ++i) {
                              token.clear();
                              format.json(token, items + i * isz);
                              p.item(token);
                          }
                      });
        p.finish();
        return 0;
    }
    // NumPy pads numbers to a common width: a first pass sees every value shown (kept when it
    // is one slab), the second prints.
    Shown shown;
    try {
        shown = r.size() > threshold ? Shown::summary(r, edge) : Shown::all(r);
    } catch (const UsageError& e) {
        throw ArgError(std::string("--edgeitems: ") + e.what());
    }
    std::vector<std::uint8_t> kept;
    const bool keep = shown.size() <= kSlabBytes / std::max<std::int64_t>(1, isz);
    for_each_slab(arr, r, shown, kSlabBytes, [&](const std::uint8_t* items, std::int64_t n) {
        format.observe(items, n);
        if (keep) {
            kept.assign(items, items + n * isz);
        }
    });
    NestedPrinter p(std::cout, NestedPrinter::Style::numpy, shown.shape, shown.cut);
    const auto print = [&](const std::uint8_t* items, std::int64_t n) {
        for (std::int64_t i = 0; i < n; ++i) {
            p.item(format.word(items + i * isz));
        }
    };
    if (keep) {
        print(kept.data(), shown.size());
    } else {
        for_each_slab(arr, r, shown, kSlabBytes, print);
    }
    p.finish();
    return 0;
}

}  // namespace b2nd::cli
