// The records corpus (corpus_dir()/records, python-blosc2's structured, string, datetime and
// container files) as the tests walk it: its directory and its manifest's cases of some kinds.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "files.hpp"
#include "json.hpp"

namespace b2nd::test {

struct RecordCases {
    std::string dir;          ///< corpus_dir() + "/records"
    std::vector<Json> cases;  ///< the manifest's cases of the kinds asked for, in its order
};

/// Call after a B2ND_SKIP for a missing corpus.
inline RecordCases record_cases(std::initializer_list<const char*> kinds) {
    RecordCases r{corpus_dir() + "/records", {}};
    const Json m = load_json_file(r.dir + "/manifest.json");
    for (const Json& c : m["cases"].as_array()) {
        for (const char* k : kinds) {
            if (c["kind"].as_string() == k) {
                r.cases.push_back(c);
                break;
            }
        }
    }
    return r;
}

}  // namespace b2nd::test
