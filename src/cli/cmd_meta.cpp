// b2nd meta PATH [NAME [VALUE-JSON]]
#include <cstdio>
#include <iostream>

#include <b2nd/any_array.hpp>
#include <b2nd/attrs.hpp>
#include <b2nd/error.hpp>
#include <b2nd/value.hpp>

#include "cli.hpp"

namespace b2nd::cli {

namespace {

const char* const kMetaHelp =
    "usage: b2nd meta PATH                  list the attributes (vlmeta) as NAME = JSON\n"
    "       b2nd meta PATH NAME             print one as JSON\n"
    "       b2nd meta PATH NAME VALUE-JSON  set one (stored as msgpack, as python-blosc2 does)\n"
    "       b2nd meta PATH NAME --delete    remove one\n"
    "\n"
    "Attributes are python-blosc2's vlmeta entries, one msgpack value each. Bytes are written\n"
    "{\"$bytes\": \"hex\"}; entries that are not msgpack are listed as hex.\n"
    "\n"
    "  --json    list as one JSON object\n"
    "\n"
    "examples:\n"
    "  b2nd meta t.b2nd units '\"K\"'\n"
    "  b2nd meta t.b2nd calib '{\"offset\": -273.15, \"factor\": 0.01}'\n";

std::string hex_of(const std::uint8_t* p, std::int64_t n) {
    std::string s;
    char buf[4];
    for (std::int64_t i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", p[i]);
        s += buf;
    }
    return s;
}

}  // namespace

int cmd_meta(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, {}, {"--json", "--delete", "--help"});
    if (a.has("--help")) {
        std::cout << kMetaHelp;
        return 0;
    }
    if (a.positional.empty() || a.positional.size() > 3) {
        throw ArgError("expected PATH [NAME [VALUE-JSON]]");
    }
    const std::string& path = a.positional[0];
    const bool writes = a.positional.size() == 3 || a.has("--delete");
    if (a.has("--delete") && a.positional.size() != 2) {
        throw ArgError("--delete needs PATH and NAME");
    }
    OpenOptions o;
    o.writable = writes;
    o.cache_bytes = 0;
    AnyArray arr = open_input(path, o);
    Attrs attrs = arr.attrs();
    if (a.positional.size() == 1) {
        auto shown = [&](const std::string& name) {
            try {
                return attrs.get(name).to_json();
            } catch (const FormatError&) {
                const auto raw = arr.vlmeta(name).value_or(std::vector<std::uint8_t>{});
                return Value::map({{"$not_msgpack",
                                    hex_of(raw.data(), static_cast<std::int64_t>(raw.size()))}})
                    .to_json();
            }
        };
        if (a.has("--json")) {
            std::cout << "{";
            bool first = true;
            for (const std::string& name : attrs.names()) {
                std::cout << (first ? "" : ", ") << json_string(name) << ": " << shown(name);
                first = false;
            }
            std::cout << "}\n";
        } else {
            for (const std::string& name : attrs.names()) {
                std::cout << name << " = " << shown(name) << "\n";
            }
        }
        return 0;
    }
    const std::string& name = a.positional[1];
    if (a.has("--delete")) {
        if (!attrs.erase(name)) {
            throw UsageError("\"" + path + "\": no attribute '" + name + "'");
        }
        return 0;
    }
    if (a.positional.size() == 2) {
        std::cout << attrs.get(name).to_json(2) << "\n";
        return 0;
    }
    Value v;
    try {
        v = Value::from_json(a.positional[2]);
    } catch (const UsageError& e) {
        throw ArgError(std::string("VALUE-JSON: ") + e.what());
    }
    attrs.set(name, v);
    return 0;
}

}  // namespace b2nd::cli
