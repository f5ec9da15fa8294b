// Internal: one range request of a batch (http_client.cpp runs them on libcurl): the ranges it
// asks of one file, planned from the batch's pieces, and its answer, read and checked as it
// arrives. libcurl is not seen here: the client hands in header lines and body bytes.
//
// Planning: a file's pieces are sorted and merged into ranges (gaps up to merge_gap fetched and
// dropped); small ranges then go several to a request (up to max_ranges), spread over the
// requests that may be in flight. Checking: see judge() and check_complete().
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "http_client.hpp"

namespace b2nd::storage::detail {

/// One request: ranges of one file (merged from its pieces), and its answer as it arrives.
struct Request {
    using Clock = std::chrono::steady_clock;

    FileRanges* file = nullptr;
    std::vector<std::size_t> pieces;  // indices into file->pieces, by offset
    std::uint64_t a = 0, b = 0;       // from the first range's start to the last one's end
    std::vector<std::pair<std::uint64_t, std::uint64_t>> subs;  // the ranges asked, in order
    bool may_end = false;
    int attempt = 0;
    Clock::time_point not_before{};
    /// When the request gives up, its retries included (HttpOptions::timeout_ms from its first
    /// start); unset until then.
    Clock::time_point deadline{};
    Clock::time_point first_start{};

    // The current attempt's answer.
    long status = 0;  // of the last response header block (redirects start new ones)
    bool has_range = false;
    std::uint64_t cr_first = 0, cr_last = 0, cr_total = 0;
    bool cr_total_known = false;
    bool has_length = false;
    std::uint64_t length = 0;
    std::string etag, last_modified;
    bool started = false;      // the body's first bytes were judged
    std::uint64_t origin = 0;  // file offset of the body's first byte
    std::uint64_t pos = 0;     // body bytes received
    bool done_early = false;   // a 200's body was cut once the range was had
    std::string problem;       // why the answer was refused (set by the callbacks)
    std::string error_body;    // the start of a refused answer's body (an S3 error's XML)
    bool changed = false;      // ... because the file is another version
    bool final = false;        // ... and retrying cannot help
    // A multipart/byteranges answer: its boundary, the parser's state, the parts received.
    std::string boundary;
    bool in_part = false;       // reading a part's bytes (else: a delimiter and part headers)
    std::string part_head;      // bytes of the delimiter and headers read so far
    std::uint64_t part_at = 0;  // file offset of the part's next byte
    std::uint64_t part_left = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> covered;  // parts received

    void reset_attempt() {
        status = 0;
        has_range = cr_total_known = has_length = started = done_early = changed = final = false;
        cr_first = cr_last = cr_total = length = origin = pos = 0;
        etag.clear();
        last_modified.clear();
        problem.clear();
        error_body.clear();
        boundary.clear();
        in_part = false;
        part_head.clear();
        part_at = part_left = 0;
        covered.clear();
    }
    bool multi() const noexcept { return subs.size() > 1; }
};

/// The requests that fetch `file`'s pieces.
std::vector<Request> plan_requests(FileRanges& file, const HttpOptions& o);
/// The Range header's value: "a-b,c-d,..." (inclusive ends).
std::string range_spec(const Request& r);
/// "bytes [a, b)", for messages.
std::string range_text(std::uint64_t a, std::uint64_t b);

/// Reads one header line of the answer (a status line starts a new answer: after a redirect).
void read_header(Request& r, const std::string& line);
/// Judges the headers once the body starts (or the answer ends without one): sets r.problem
/// (with r.changed, r.final) when the answer is refused; learns the file's identity from the
/// first answer (`id_mutex` guards identities).
void judge(Request& r, std::mutex& id_mutex);

/// How much of an error answer's body is kept (Request::error_body).
constexpr std::size_t kErrorBodyKept = 4096;

/// The text of the first <tag>...</tag> in `xml` at or after `from` (XML entities decoded);
/// nullopt when there is none. `at` gets the position after it.
std::optional<std::string> xml_element(const std::string& xml,
                                       const std::string& tag,
                                       std::size_t from = 0,
                                       std::size_t* at = nullptr);

/// What an error answer's body says, as S3 (and servers speaking its dialect) put it: " (Code:
/// Message)", or "" when it holds neither.
std::string server_error_text(const std::string& body);
/// Takes body bytes into the pieces; returns how many it took (fewer than `len`: stop the
/// transfer, with r.problem set, or r.done_early for a 200 whose range is had).
std::size_t read_body(Request& r, const char* data, std::size_t len, std::mutex& id_mutex);
/// After the transfer ended without a transport error: "" when every byte asked arrived (the
/// pieces' `got` set), else why not.
std::string check_complete(Request& r);

}  // namespace b2nd::storage::detail
