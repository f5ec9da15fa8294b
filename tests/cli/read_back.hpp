// Reads back what `b2nd export` wrote with independent readers: read_back.py (h5py,
// zarr-python) and read_back.mjs (zarrita).
#pragma once

#include <string>

#include "../support/cli_tool.hpp"
#include "run.hpp"

namespace b2nd::test {

/// Runs read_back.py (h5py, zarr-python; `tool` python3) or read_back.mjs (zarrita; `tool`
/// node): "ok", "skip" when the reader is not installed, or why the output differs.
inline std::string read_back(const std::string& tool,
                             const std::string& kind,
                             const std::string& path,
                             const std::string& expect,
                             const std::string& chunks,
                             const std::string& inner,
                             const std::string& attrs) {
    std::string cmd;
    if (tool == "node") {
        cmd = "node " + q(B2ND_READ_BACK_NODE) + " " + q(path) + " " + q(expect) + " " + q(chunks) +
              " " + q(inner) + " " + q(attrs) + " 2>&1";
    } else {
        cmd = b2nd::test::python3() + " " + q(B2ND_READ_BACK) + " " + kind + " " + q(path) + " " +
              q(expect) + " " + q(chunks) + " " + q(attrs) + " 2>&1";
    }
    int st = 0;
    std::string out = b2nd::test::command_text(cmd, &st);
    if (st == 77 || st == 127) {
        return "skip";
    }
    while (!out.empty() && out.back() == '\n') {
        out.pop_back();
    }
    return out;
}

}  // namespace b2nd::test
