// The libcurl gate (http_client.hpp): batches of range requests on a curl multi handle.
//
// A batch's pieces are sorted per file and merged into requests (gaps up to merge_gap are
// fetched and dropped); up to max_in_flight requests run at once (HTTP/2 multiplexes them on one
// connection, HTTP/1.1 opens parallel keep-alive connections); the multi handles, with their
// connections, are pooled between batches. Each answer is checked while it arrives:
//  - 206 must carry exactly the range asked (Content-Range), of a file of the known size, with
//    the known ETag / Last-Modified: anything else means the file changed (or the server lies);
//  - 200 (a server that ignores Range) is read as the whole file: its length must be the known
//    size, the range is taken from the stream, and the transfer stops at the range's end;
//  - a body shorter than announced, a timeout, a dropped connection, 5xx, 408 and 429 are
//    transient: retried after backoff_ms, doubled each time, up to `retries` times;
//  - 404, 401, 403, 416 and the like are final. 412 (If-Match failed) means changed.
#include "http_client.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include <b2nd/error.hpp>

#include <curl/curl.h>

namespace b2nd::storage::detail {

namespace {

using Clock = std::chrono::steady_clock;

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string lower(std::string s) {
    for (char& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

std::string trim(const std::string& s) {
    std::size_t a = 0;
    std::size_t b = s.size();
    while (a < b && (s[a] == ' ' || s[a] == '\t')) {
        ++a;
    }
    while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r' || s[b - 1] == '\n')) {
        --b;
    }
    return s.substr(a, b - a);
}

std::string range_text(std::uint64_t a, std::uint64_t b) {
    return "bytes [" + std::to_string(a) + ", " + std::to_string(b) + ")";
}

/// One request: a range [a, b) of one file covering some of its pieces.
struct Transfer {
    FileRanges* file = nullptr;
    std::vector<std::size_t> pieces;  // indices into file->pieces, by offset
    std::uint64_t a = 0, b = 0;       // from the first range's start to the last one's end
    std::vector<std::pair<std::uint64_t, std::uint64_t>> subs;  // the ranges asked, in order
    bool may_end = false;
    int attempt = 0;
    Clock::time_point not_before{};

    // The current attempt.
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    char errbuf[CURL_ERROR_SIZE] = {};
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
        boundary.clear();
        in_part = false;
        part_head.clear();
        part_at = part_left = 0;
        covered.clear();
        errbuf[0] = '\0';
    }
    bool multi() const noexcept { return subs.size() > 1; }
};

}  // namespace

struct HttpClient::Pool {
    HttpOptions options;
    std::mutex mutex;
    std::vector<CURLM*> idle_multi;
    std::vector<CURL*> idle_easy;
    std::mutex id_mutex;  // identities learned from answers
    std::atomic<std::uint64_t> requests{0}, bytes{0}, retries{0};

    ~Pool() {
        for (CURL* e : idle_easy) {
            curl_easy_cleanup(e);
        }
        for (CURLM* m : idle_multi) {
            curl_multi_cleanup(m);
        }
    }
    CURLM* take_multi() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (!idle_multi.empty()) {
                CURLM* m = idle_multi.back();
                idle_multi.pop_back();
                return m;
            }
        }
        CURLM* m = curl_multi_init();
        if (m == nullptr) {
            throw HttpError("HTTP: cannot start a libcurl multi handle", 0);
        }
        curl_multi_setopt(m, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
        curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS,
                          static_cast<long>(options.max_in_flight));
        return m;
    }
    CURL* take_easy() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (!idle_easy.empty()) {
                CURL* e = idle_easy.back();
                idle_easy.pop_back();
                curl_easy_reset(e);
                return e;
            }
        }
        CURL* e = curl_easy_init();
        if (e == nullptr) {
            throw HttpError("HTTP: cannot start a libcurl handle", 0);
        }
        return e;
    }
    void give(CURLM* m, std::vector<CURL*>& easies) {
        std::lock_guard<std::mutex> lock(mutex);
        idle_multi.push_back(m);
        idle_easy.insert(idle_easy.end(), easies.begin(), easies.end());
        easies.clear();
    }
};

namespace {

/// Judges the headers once the body starts (or the transfer ends without one).
void judge(Transfer& t, HttpClient::Pool* pool) {
    t.started = true;
    const RemoteIdentity& id = *t.file->id;
    const auto refuse = [&](std::string why, bool changed, bool final) {
        t.problem = std::move(why);
        t.changed = changed;
        t.final = final;
    };
    std::lock_guard<std::mutex> lock(pool->id_mutex);
    // The identity this answer names.
    const bool other_version =
        id.known && ((!id.etag.empty() && !t.etag.empty() && t.etag != id.etag) ||
                     (!id.last_modified.empty() && !t.last_modified.empty() &&
                      t.last_modified != id.last_modified));
    if (t.status == 206) {
        if (!t.has_range && t.boundary.empty()) {
            return refuse("a 206 answer without Content-Range", false, false);
        }
        if (t.cr_total_known && id.known && t.cr_total != id.size) {
            return refuse("the file now has " + std::to_string(t.cr_total) + " bytes, not " +
                              std::to_string(id.size),
                          true, true);
        }
        if (other_version) {
            return refuse("the file changed on the server (ETag " + t.etag + ", Last-Modified " +
                              t.last_modified + ")",
                          true, true);
        }
        if (!t.boundary.empty()) {
            t.origin = 0;  // multipart/byteranges: each part says where it lies
            return;
        }
        // One range: the one asked; for several, one that holds them all (a server may merge).
        const bool exact = t.multi() ? t.cr_first <= t.a && t.cr_last + 1 >= t.b
                                     : t.cr_first == t.a && t.cr_last + 1 == t.b;
        const bool at_end = t.may_end && t.cr_first == t.a && t.cr_total_known &&
                            t.cr_last + 1 == t.cr_total && t.cr_last + 1 < t.b;
        if (!exact && !at_end) {
            return refuse("a 206 answer for bytes " + std::to_string(t.cr_first) + "-" +
                              std::to_string(t.cr_last) + " instead of " + std::to_string(t.a) +
                              "-" + std::to_string(t.b - 1),
                          false, false);
        }
        t.origin = t.cr_first;
    } else if (t.status == 200) {
        // The server ignores Range: the body is the whole file.
        if (id.known && t.has_length && t.length != id.size) {
            return refuse("the file now has " + std::to_string(t.length) + " bytes, not " +
                              std::to_string(id.size),
                          true, true);
        }
        if (other_version) {
            return refuse("the file changed on the server (ETag " + t.etag + ")", true, true);
        }
        if (!id.known && !t.has_length) {
            return refuse("a 200 answer with neither Content-Range nor Content-Length", false,
                          true);
        }
        t.origin = 0;
    } else if (t.status == 412) {
        return refuse("the file changed on the server (412 Precondition Failed)", true, true);
    } else if (t.status == 416) {
        if (t.cr_total_known && id.known && t.cr_total != id.size) {
            return refuse("the file now has " + std::to_string(t.cr_total) + " bytes, not " +
                              std::to_string(id.size) + " (416 Range Not Satisfiable)",
                          true, true);
        }
        return refuse("the range passes the end of the file (416 Range Not Satisfiable)", false,
                      true);
    } else {
        const bool transient =
            t.status >= 500 || t.status == 408 || t.status == 429 || t.status == 0;
        return refuse("HTTP status " + std::to_string(t.status), false, !transient);
    }
    if (!id.known) {
        RemoteIdentity& learn = *t.file->id;
        learn.known = true;
        learn.size = t.status == 206 ? (t.cr_total_known ? t.cr_total : 0) : t.length;
        learn.etag = t.etag;
        learn.last_modified = t.last_modified;
    }
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const std::string line(data, size * n);
    if (line.rfind("HTTP/", 0) == 0) {
        // A new response (after a redirect, or a 100 Continue): forget the last one's headers.
        t->has_range = t->cr_total_known = t->has_length = false;
        t->boundary.clear();
        t->etag.clear();
        t->last_modified.clear();
        const std::size_t sp = line.find(' ');
        t->status = sp == std::string::npos ? 0 : std::strtol(line.c_str() + sp + 1, nullptr, 10);
        return size * n;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) {
        return size * n;
    }
    const std::string key = lower(trim(line.substr(0, colon)));
    const std::string value = trim(line.substr(colon + 1));
    if (key == "content-range") {
        // bytes FIRST-LAST/TOTAL (or bytes */TOTAL with 416)
        unsigned long long first = 0, last = 0;
        const char* v = value.c_str();
        if (std::sscanf(v, "bytes %llu-%llu", &first, &last) == 2) {
            t->has_range = true;
            t->cr_first = first;
            t->cr_last = last;
        }
        const std::size_t slash = value.find('/');
        if (slash != std::string::npos && value.compare(slash + 1, 1, "*") != 0) {
            t->cr_total = std::strtoull(value.c_str() + slash + 1, nullptr, 10);
            t->cr_total_known = true;
        }
    } else if (key == "content-length") {
        t->has_length = true;
        t->length = std::strtoull(value.c_str(), nullptr, 10);
    } else if (key == "content-type") {
        const std::string v = lower(value);
        const std::size_t at = v.find("boundary=");
        if (v.rfind("multipart/byteranges", 0) == 0 && at != std::string::npos) {
            std::string b = value.substr(at + 9);
            b = b.substr(0, b.find(';'));
            if (b.size() >= 2 && b.front() == '"' && b.back() == '"') {
                b = b.substr(1, b.size() - 2);
            }
            t->boundary = b;
        }
    } else if (key == "etag") {
        t->etag = value;
    } else if (key == "last-modified") {
        t->last_modified = value;
    }
    return size * n;
}

/// Copies body bytes that lie at file offset `from` into the pieces they overlap.
void deliver(Transfer& t, std::uint64_t from, const char* data, std::size_t len) {
    const std::uint64_t to = from + len;
    for (std::size_t k : t.pieces) {
        HttpPiece& p = t.file->pieces[k];
        const std::uint64_t lo = std::max(from, p.offset);
        const std::uint64_t hi = std::min(to, p.offset + p.n);
        if (lo < hi) {
            std::memcpy(p.into + (lo - p.offset), data + (lo - from),
                        static_cast<std::size_t>(hi - lo));
        }
    }
}

/// Reads bytes of a multipart/byteranges body: "--BOUNDARY", part headers (Content-Range), a
/// blank line, the part's bytes; then the next delimiter, up to "--BOUNDARY--". False (with
/// t.problem set) for a body that does not parse.
bool multipart(Transfer& t, const char* data, std::size_t len) {
    const std::string delimiter = "--" + t.boundary;
    while (len > 0) {
        if (t.in_part) {
            const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(t.part_left, len));
            deliver(t, t.part_at, data, n);
            t.part_at += n;
            t.part_left -= n;
            data += n;
            len -= n;
            if (t.part_left == 0) {
                t.in_part = false;
                t.covered.back().second = t.part_at;
            }
            continue;
        }
        // Between parts: the delimiter line and the part's headers, a byte at a time (short).
        t.part_head.push_back(*data);
        ++data;
        --len;
        const std::size_t at = t.part_head.find(delimiter);
        if (at == std::string::npos) {
            if (t.part_head.size() > 4096) {
                t.problem = "a multipart/byteranges body without its delimiter";
                return false;
            }
            continue;
        }
        if (t.part_head.size() >= at + delimiter.size() + 2 &&
            t.part_head.compare(at + delimiter.size(), 2, "--") == 0) {
            t.part_head.clear();  // the closing delimiter: what follows is an epilogue
            continue;
        }
        const std::size_t end = t.part_head.find("\r\n\r\n", at);
        if (end == std::string::npos) {
            if (t.part_head.size() > 8192) {
                t.problem = "multipart/byteranges part headers too long";
                return false;
            }
            continue;
        }
        const std::string head = lower(t.part_head.substr(at, end - at));
        unsigned long long first = 0, last = 0, total = 0;
        const std::size_t cr = head.find("content-range:");
        if (cr == std::string::npos ||
            std::sscanf(head.c_str() + cr + 14, " bytes %llu-%llu/%llu", &first, &last, &total) !=
                3 ||
            last < first) {
            t.problem = "a multipart/byteranges part without a valid Content-Range";
            return false;
        }
        if (t.file->id->known && total != t.file->id->size) {
            t.problem = "the file now has " + std::to_string(total) + " bytes, not " +
                        std::to_string(t.file->id->size);
            t.changed = t.final = true;
            return false;
        }
        t.part_head.clear();
        t.in_part = true;
        t.part_at = first;
        t.part_left = last - first + 1;
        t.covered.emplace_back(first, first);
    }
    return true;
}

/// Whether every range asked arrived whole in the parts of a multipart answer.
bool all_covered(const Transfer& t) {
    for (const auto& [a, b] : t.subs) {
        bool inside = false;
        for (const auto& [x, y] : t.covered) {
            inside = inside || (x <= a && b <= y);
        }
        if (!inside) {
            return false;
        }
    }
    return true;
}

struct WriteContext {
    Transfer* t;
    HttpClient::Pool* pool;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
    auto* ctx = static_cast<WriteContext*>(user);
    Transfer& t = *ctx->t;
    const std::size_t len = size * n;
    if (!t.started) {
        judge(t, ctx->pool);
    }
    if (!t.problem.empty()) {
        return t.status >= 300 && t.status < 600 && t.pos + len < 65536 ? (t.pos += len, len) : 0;
    }
    ctx->pool->bytes.fetch_add(len, std::memory_order_relaxed);
    if (!t.boundary.empty()) {
        t.pos += len;
        return multipart(t, data, len) ? len : 0;
    }
    const std::uint64_t from = t.origin + t.pos;
    const std::uint64_t to = from + len;
    t.pos += len;
    if (t.status == 206 && t.origin + t.pos > t.cr_last + 1) {
        t.problem = "more bytes than the Content-Range announced";
        return 0;
    }
    deliver(t, from, data, len);
    if (t.status == 200 && to >= t.b) {
        t.done_early = true;  // the rest of the file is not wanted
        return 0;
    }
    return len;
}

std::string describe_curl(CURLcode rc, const char* errbuf) {
    std::string s = curl_easy_strerror(rc);
    if (errbuf != nullptr && errbuf[0] != '\0') {
        s += " (" + std::string(errbuf) + ")";
    }
    return s;
}

/// Splits the pieces of `file` into requests, merging those closer than `gap`.
void plan(FileRanges& file, std::uint64_t gap, std::deque<Transfer>& out) {
    std::vector<std::size_t> order(file.pieces.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
        order[k] = k;
    }
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        return file.pieces[x].offset < file.pieces[y].offset;
    });
    Transfer* cur = nullptr;
    for (std::size_t k : order) {
        const HttpPiece& p = file.pieces[k];
        if (p.n == 0) {
            continue;
        }
        if (cur != nullptr && !cur->may_end && !p.may_end && p.offset <= cur->b + gap) {
            cur->b = std::max(cur->b, p.offset + p.n);
            cur->pieces.push_back(k);
            continue;
        }
        out.emplace_back();
        cur = &out.back();
        cur->file = &file;
        cur->a = p.offset;
        cur->b = p.offset + p.n;
        cur->may_end = p.may_end;
        cur->pieces.push_back(k);
    }
    for (Transfer& t : out) {
        if (t.file == &file) {
            t.subs = {{t.a, t.b}};
        }
    }
}

/// Packs the small single-range requests of one file (those from `first` on) into requests of
/// several ranges: at most max_ranges each, over as many requests as may be in flight.
void pack(std::deque<Transfer>& out, std::size_t first, const HttpOptions& o) {
    constexpr std::uint64_t kSmall = 1 << 20;  // larger ranges keep a request (a stream) each
    std::vector<Transfer> small;
    std::vector<Transfer> keep;
    for (std::size_t k = first; k < out.size(); ++k) {
        Transfer& t = out[k];
        if (!t.may_end && t.b - t.a <= kSmall && o.max_ranges > 1) {
            small.push_back(std::move(t));
        } else {
            keep.push_back(std::move(t));
        }
    }
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
    for (Transfer& t : keep) {
        out.push_back(std::move(t));
    }
    if (small.empty()) {
        return;
    }
    const std::size_t per =
        std::clamp<std::size_t>((small.size() + static_cast<std::size_t>(o.max_in_flight) - 1) /
                                    static_cast<std::size_t>(o.max_in_flight),
                                1, static_cast<std::size_t>(o.max_ranges));
    for (std::size_t k = 0; k < small.size(); k += per) {
        Transfer m = std::move(small[k]);
        for (std::size_t j = k + 1; j < std::min(k + per, small.size()); ++j) {
            m.subs.push_back(small[j].subs.front());
            m.pieces.insert(m.pieces.end(), small[j].pieces.begin(), small[j].pieces.end());
            m.b = small[j].b;
        }
        out.push_back(std::move(m));
    }
}

void configure(Transfer& t, WriteContext& ctx, const HttpOptions& o) {
    CURL* e = t.easy;
    const RemoteIdentity& id = *t.file->id;
    curl_easy_setopt(e, CURLOPT_URL, t.file->url.c_str());
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.connect_timeout_ms));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(o.request_timeout_ms));
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
                     std::max(1L, static_cast<long>((o.stall_timeout_ms + 999) / 1000)));
    // HTTP/2 where TLS offers it: every request of a batch multiplexed on one connection
    // (waiting for it rather than opening more). Plain HTTP/1.1: a keep-alive connection per
    // request in flight.
    if (t.file->url.compare(0, 6, "https:") == 0) {
        curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    }
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 512L * 1024);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.errbuf);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &ctx);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "b2nd-cpp");
    if (!o.ca_file.empty()) {
        curl_easy_setopt(e, CURLOPT_CAINFO, o.ca_file.c_str());
    }
    if (o.netrc) {
        curl_easy_setopt(e, CURLOPT_NETRC, static_cast<long>(CURL_NETRC_OPTIONAL));
        if (const char* f = std::getenv("NETRC"); f != nullptr && *f != '\0') {
            curl_easy_setopt(e, CURLOPT_NETRC_FILE, f);
        }
    }
    if (const char* token = std::getenv("B2ND_HTTP_BEARER"); token != nullptr && *token != '\0') {
        curl_easy_setopt(e, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BEARER));
        curl_easy_setopt(e, CURLOPT_XOAUTH2_BEARER, token);
    }
    std::string range;
    for (const auto& [x, y] : t.subs) {
        range += (range.empty() ? "" : ",") + std::to_string(x) + "-" + std::to_string(y - 1);
    }
    curl_easy_setopt(e, CURLOPT_RANGE, range.c_str());  // copied by libcurl
    // The version we read: a server that honours preconditions answers 412 when it is gone.
    if (id.known && !id.etag.empty() && id.etag.rfind("W/", 0) != 0) {
        t.headers = curl_slist_append(t.headers, ("If-Match: " + id.etag).c_str());
    } else if (id.known && !id.last_modified.empty()) {
        t.headers =
            curl_slist_append(t.headers, ("If-Unmodified-Since: " + id.last_modified).c_str());
    }
    t.headers = curl_slist_append(t.headers, "Accept-Encoding: identity");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.headers);
}

}  // namespace

HttpClient::HttpClient(const HttpOptions& options) : pool_(std::make_unique<Pool>()) {
    global_init();
    pool_->options = options;
    pool_->options.max_in_flight = std::max(1, options.max_in_flight);
    pool_->options.retries = std::max(0, options.retries);
}

HttpClient::~HttpClient() = default;

const HttpOptions& HttpClient::options() const noexcept {
    return pool_->options;
}

TransferStats HttpClient::stats() const {
    return {pool_->requests.load(), pool_->bytes.load(), pool_->retries.load()};
}

void HttpClient::fetch(std::vector<FileRanges>& files) const {
    const HttpOptions& o = pool_->options;
    std::deque<Transfer> all;  // stable addresses
    for (FileRanges& f : files) {
        const std::size_t first = all.size();
        plan(f, o.merge_gap, all);
        pack(all, first, o);
    }
    if (all.empty()) {
        return;
    }
    std::deque<Transfer*> waiting;
    for (Transfer& t : all) {
        waiting.push_back(&t);
    }
    std::deque<WriteContext> contexts;
    CURLM* multi = pool_->take_multi();
    std::vector<CURL*> easies;  // handed back to the pool at the end
    std::vector<Transfer*> running;
    const auto finish = [&] {
        for (Transfer* t : running) {
            curl_multi_remove_handle(multi, t->easy);
            curl_slist_free_all(t->headers);
            t->headers = nullptr;
        }
        running.clear();
        for (Transfer& t : all) {
            curl_slist_free_all(t.headers);
            t.headers = nullptr;
        }
        pool_->give(multi, easies);
    };
    try {
        while (!waiting.empty() || !running.empty()) {
            // Start what may start.
            const Clock::time_point now = Clock::now();
            for (std::size_t k = 0; k < waiting.size() &&
                                    running.size() < static_cast<std::size_t>(o.max_in_flight);) {
                Transfer* t = waiting[k];
                if (t->not_before > now) {
                    ++k;
                    continue;
                }
                waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(k));
                if (t->easy == nullptr) {
                    t->easy = pool_->take_easy();
                    easies.push_back(t->easy);
                } else {
                    curl_easy_reset(t->easy);
                }
                curl_slist_free_all(t->headers);
                t->headers = nullptr;
                t->reset_attempt();
                contexts.push_back({t, pool_.get()});
                configure(*t, contexts.back(), o);
                curl_easy_setopt(t->easy, CURLOPT_PRIVATE, t);
                curl_multi_add_handle(multi, t->easy);
                running.push_back(t);
            }
            int still = 0;
            curl_multi_perform(multi, &still);
            int left = 0;
            while (CURLMsg* m = curl_multi_info_read(multi, &left)) {
                if (m->msg != CURLMSG_DONE) {
                    continue;
                }
                Transfer* t = nullptr;
                curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
                const CURLcode rc = m->data.result;
                curl_multi_remove_handle(multi, t->easy);
                running.erase(std::find(running.begin(), running.end(), t));
                pool_->requests.fetch_add(1, std::memory_order_relaxed);
                if (!t->started && t->problem.empty() && rc == CURLE_OK) {
                    long code = 0;
                    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
                    t->status = code;
                    judge(*t, pool_.get());  // an empty body
                }
                std::string why = t->problem;
                bool final = t->final;
                if (why.empty() &&
                    !(rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && t->done_early))) {
                    why = describe_curl(rc, t->errbuf);
                    final = rc == CURLE_UNSUPPORTED_PROTOCOL || rc == CURLE_URL_MALFORMAT ||
                            rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_TOO_MANY_REDIRECTS ||
                            rc == CURLE_LOGIN_DENIED || rc == CURLE_PEER_FAILED_VERIFICATION ||
                            rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CERTPROBLEM;
                }
                if (why.empty() && !t->boundary.empty()) {
                    if (all_covered(*t)) {
                        continue;  // (no range that may end early goes with others)
                    }
                    why = "a multipart/byteranges answer without every range asked";
                }
                if (why.empty()) {
                    // Complete: every byte asked for (or to the file's end) arrived.
                    const std::uint64_t end = t->origin + t->pos;
                    const std::uint64_t want = t->status == 206
                                                   ? t->cr_last + 1
                                                   : (t->may_end ? std::min(t->b, end) : t->b);
                    if (end < want || (t->status == 200 && !t->may_end && end < t->b)) {
                        why = "a short body: " + std::to_string(t->pos) + " bytes received";
                    } else {
                        for (std::size_t k : t->pieces) {
                            HttpPiece& p = t->file->pieces[k];
                            p.got = std::min(p.n, end > p.offset ? end - p.offset : 0);
                        }
                        continue;
                    }
                }
                if (!final && t->attempt < o.retries) {
                    ++t->attempt;
                    pool_->retries.fetch_add(1, std::memory_order_relaxed);
                    const auto wait = std::chrono::milliseconds(std::min<std::int64_t>(
                        static_cast<std::int64_t>(o.backoff_ms) << (t->attempt - 1), 10'000));
                    t->not_before = Clock::now() + wait;
                    waiting.push_back(t);
                    continue;
                }
                const std::string status =
                    t->status != 0 ? "HTTP " + std::to_string(t->status) : "no HTTP answer";
                throw HttpError(
                    "\"" + redacted_url(t->file->url) + "\": " + range_text(t->a, t->b) + ": " +
                        why + " (" + status + "; expected 206 Partial Content" +
                        (t->attempt > 0 ? ", after " + std::to_string(t->attempt + 1) + " attempts"
                                        : "") +
                        ")",
                    static_cast<int>(t->status), t->changed);
            }
            if (!running.empty()) {
                curl_multi_poll(multi, nullptr, 0, 50, nullptr);
            } else if (!waiting.empty()) {
                Clock::time_point next = waiting.front()->not_before;
                for (Transfer* t : waiting) {
                    next = std::min(next, t->not_before);
                }
                std::this_thread::sleep_until(next);
            }
        }
    } catch (...) {
        finish();
        throw;
    }
    finish();
}

}  // namespace b2nd::storage::detail
