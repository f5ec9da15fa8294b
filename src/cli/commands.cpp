// The tool's command table: main.cpp dispatches through it and prints its usage from it.
#include "cli.hpp"

namespace b2nd::cli {

const std::vector<Command>& commands() {
    static const std::vector<Command> table = {
        {"info", "PATH... [--json]", "shape, dtype, chunks, codec, sizes, metadata", cmd_info},
        {"export", "PATH OUT.npy [--slice S | --points P | --mask M]",
         "the array, a selection, points or a[mask] as .npy", cmd_export},
        {"import", "IN.npy PATH [options]", "a .npy file as a new b2nd array", cmd_import},
        {"append", "PATH SRC.npy [--axis N]", "append a .npy file's array along an axis",
         cmd_append},
        {"verify", "PATH", "check the structure, the checksums and decode every chunk", cmd_verify},
        {"checksum", "[add] PATH", "whether a file carries checksums; add them to one",
         cmd_checksum},
        {"diff", "A B [--rtol R --atol T]", "compare shapes, dtypes and values (exit 1: differ)",
         cmd_diff},
        {"convert", "IN OUT [options]", "copy with other codec, filters, chunks, frame kind",
         cmd_convert},
        {"concat", "OUT IN... [--axis N]", "join arrays along an axis (--stack: a new axis)",
         cmd_concat},
        {"compact", "PATH", "remove the dead space updates left in a file", cmd_compact},
        {"show", "PATH [--slice S] [--json]", "print values as NumPy does (summarized when large)",
         cmd_show},
        {"meta", "PATH [NAME [VALUE]]", "list or get attributes and metalayers, set attributes",
         cmd_meta},
        {"bench", "PATH", "time full, slice, point and box reads, in GB/s", cmd_bench},
        {"ls", "STORE [--json]", "the keys of a python-blosc2 store (.b2z, .b2d, .b2e)", cmd_ls},
        {"pack", "SRC OUT", "convert a python-blosc2 store between .b2d and .b2z", cmd_pack},
    };
    return table;
}

}  // namespace b2nd::cli
