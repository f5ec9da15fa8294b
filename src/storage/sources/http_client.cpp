// The libcurl gate (http_client.hpp): batches of range requests on a curl multi handle.
//
// A batch's pieces are planned into requests per file (http_request.hpp: merged ranges, several
// to a request); up to max_in_flight requests run at once (HTTP/2 multiplexes them on one
// connection, HTTP/1.1 opens parallel keep-alive connections); the multi handles, with their
// connections, are pooled between batches. Answers are checked as they arrive (http_request.cpp);
// a refused answer, a timeout, a dropped connection or a short body is retried after backoff_ms,
// doubled each time, up to `retries` times, unless retrying cannot help (404, a changed file, a
// server that fails verification...): then an HttpError naming URL, range, status and expectation.
#include "http_client.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include <b2nd/error.hpp>

#include "http_request.hpp"
#include <curl/curl.h>

namespace b2nd::storage::detail {

namespace {

using Clock = std::chrono::steady_clock;

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

/// A request and what libcurl needs of it.
struct Transfer : Request {
    explicit Transfer(Request&& r) : Request(std::move(r)) {}
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    char errbuf[CURL_ERROR_SIZE] = {};
};

}  // namespace

struct HttpClient::Pool {
    HttpOptions options;
    RequestSigning signing;
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
    void give(CURL* e) {
        std::lock_guard<std::mutex> lock(mutex);
        idle_easy.push_back(e);
    }
    void give(CURLM* m, std::vector<CURL*>& easies) {
        std::lock_guard<std::mutex> lock(mutex);
        idle_multi.push_back(m);
        idle_easy.insert(idle_easy.end(), easies.begin(), easies.end());
        easies.clear();
    }
};

namespace {

struct WriteContext {
    Transfer* t;
    HttpClient::Pool* pool;
};

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
    read_header(*static_cast<Transfer*>(user), std::string(data, size * n));
    return size * n;
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
    auto* ctx = static_cast<WriteContext*>(user);
    ctx->pool->bytes.fetch_add(size * n, std::memory_order_relaxed);
    return read_body(*ctx->t, data, size * n, ctx->pool->id_mutex);
}

std::string describe_curl(CURLcode rc, const char* errbuf) {
    std::string s = curl_easy_strerror(rc);
    if (errbuf != nullptr && errbuf[0] != '\0') {
        s += " (" + std::string(errbuf) + ")";
    }
    return s;
}

/// Whether a transport failure is one that retrying cannot mend.
bool hopeless(CURLcode rc) {
    return rc == CURLE_UNSUPPORTED_PROTOCOL || rc == CURLE_URL_MALFORMAT ||
           rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_TOO_MANY_REDIRECTS ||
           rc == CURLE_LOGIN_DENIED || rc == CURLE_PEER_FAILED_VERIFICATION ||
           rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CERTPROBLEM;
}

/// How a failed request ended, for its message: the server's answer ("HTTP 404; expected 206
/// Partial Content", or an answer of the right kind that then went wrong), the attempts made,
/// and whether its time (timeout_ms) ran out.
std::string outcome_text(const Transfer& t, const HttpOptions& o, bool out_of_time) {
    std::string s = t.status != 0 ? "HTTP " + std::to_string(t.status) : "no HTTP answer";
    if (t.status != 0 && t.status != 206 && server_error_text(t.error_body).empty()) {
        s += "; expected 206 Partial Content";
    }
    if (t.attempt > 0) {
        s += ", after " + std::to_string(t.attempt + 1) + " attempts";
    }
    const double took =
        std::chrono::duration<double>(Request::Clock::now() - t.first_start).count();
    char buf[96];
    std::snprintf(buf, sizeof buf, " in %.1f s", took);
    s += buf;
    if (out_of_time) {
        std::snprintf(buf, sizeof buf, "; its time, %g s in all, ran out",
                      static_cast<double>(o.timeout_ms) / 1000);
        s += buf;
    }
    return s;
}

/// What every request sets: its URL, protocols and redirects, its time (what is left until
/// `deadline`), the stall limit, the error buffer, the CA file.
void transport(CURL* e,
               const std::string& url,
               Request::Clock::time_point deadline,
               const HttpOptions& o,
               char* errbuf) {
    curl_easy_setopt(e, CURLOPT_URL, url.c_str());
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    // An attempt may take what is left of the request's time (HttpOptions::timeout_ms).
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Request::Clock::now())
            .count();
    const long attempt_ms = std::max<long>(1, static_cast<long>(left));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     std::min(attempt_ms, static_cast<long>(o.connect_timeout_ms)));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, attempt_ms);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
                     std::max(1L, static_cast<long>((o.stall_timeout_ms + 999) / 1000)));
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "b2nd-cpp");
    if (!o.ca_file.empty()) {
        curl_easy_setopt(e, CURLOPT_CAINFO, o.ca_file.c_str());
    }
}

/// How the request proves who sends it: the driver's own signing (S3's Signature Version 4,
/// with `payload` as the body's digest), else netrc and $B2ND_HTTP_BEARER.
void authenticate(CURL* e,
                  curl_slist*& headers,
                  const HttpOptions& o,
                  const RequestSigning& sign,
                  const char* payload) {
    if (sign.own) {
        // Keys are literal: "a/../b" is an object of its own, not "b".
        curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
        // A signed request follows no redirect: libcurl would send its own headers (the
        // session token, x-amz-security-token) to whatever host the answer names. S3 answers
        // a bucket in another region with its code (PermanentRedirect), reported as it is.
        curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
        if (!sign.sigv4.empty()) {
            curl_easy_setopt(e, CURLOPT_AWS_SIGV4, sign.sigv4.c_str());
            curl_easy_setopt(e, CURLOPT_USERNAME, sign.key_id.c_str());
            curl_easy_setopt(e, CURLOPT_PASSWORD, sign.secret.c_str());
            // The payload's digest, signed with the rest.
            headers = curl_slist_append(headers,
                                        ("x-amz-content-sha256: " + std::string(payload)).c_str());
            if (!sign.session_token.empty()) {
                headers = curl_slist_append(
                    headers, ("x-amz-security-token: " + sign.session_token).c_str());
            }
        }
        return;
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
}

/// SHA-256 of nothing: the payload digest of a request without a body.
constexpr const char* kEmptyPayload =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

void configure(Transfer& t, WriteContext& ctx, const HttpOptions& o, const RequestSigning& sign) {
    CURL* e = t.easy;
    const RemoteIdentity& id = *t.file->id;
    transport(e, t.file->url, t.deadline, o, t.errbuf);
    // HTTP/2 where TLS offers it: every request of a batch multiplexed on one connection
    // (waiting for it rather than opening more). Plain HTTP/1.1: a keep-alive connection per
    // request in flight.
    if (t.file->url.compare(0, 6, "https:") == 0) {
        curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    }
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 512L * 1024);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &ctx);
    authenticate(e, t.headers, o, sign, kEmptyPayload);
    curl_easy_setopt(e, CURLOPT_RANGE, range_spec(t).c_str());  // copied by libcurl
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

HttpClient::HttpClient(const HttpOptions& options, RequestSigning signing)
    : pool_(std::make_unique<Pool>()) {
    global_init();
    pool_->options = options;
    pool_->signing = std::move(signing);
    pool_->options.max_in_flight = std::max(1, options.max_in_flight);
    pool_->options.retries = std::max(0, options.retries);
}

HttpClient::~HttpClient() = default;

const HttpOptions& HttpClient::options() const noexcept {
    return pool_->options;
}

bool HttpClient::strong_etag() const noexcept {
    return pool_->signing.strong_etag;
}

TransferStats HttpClient::stats() const {
    return {pool_->requests.load(), pool_->bytes.load(), pool_->retries.load()};
}

void HttpClient::fetch(std::vector<FileRanges>& files) const {
    const HttpOptions& o = pool_->options;
    std::deque<Transfer> all;  // stable addresses
    for (FileRanges& f : files) {
        for (Request& r : plan_requests(f, o)) {
            all.emplace_back(std::move(r));
        }
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
                if (t->attempt == 0) {
                    t->first_start = now;
                    t->deadline = now + std::chrono::milliseconds(std::max(1, o.timeout_ms));
                }
                t->errbuf[0] = '\0';
                contexts.push_back({t, pool_.get()});
                configure(*t, contexts.back(), o, pool_->signing);
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
                    judge(*t, pool_->id_mutex);  // an empty body
                }
                std::string why = t->problem;
                if (!why.empty()) {
                    why += server_error_text(t->error_body);
                }
                bool final = t->final;
                if (why.empty() &&
                    !(rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && t->done_early))) {
                    why = describe_curl(rc, t->errbuf);
                    final = hopeless(rc);
                }
                if (why.empty()) {
                    why = check_complete(*t);
                    if (why.empty()) {
                        continue;  // every byte asked for (or to the file's end) arrived
                    }
                }
                const auto wait = std::chrono::milliseconds(std::min<std::int64_t>(
                    static_cast<std::int64_t>(o.backoff_ms) << t->attempt, 10'000));
                const bool in_time = Clock::now() + wait < t->deadline;
                if (!final && t->attempt < o.retries && in_time) {
                    ++t->attempt;
                    pool_->retries.fetch_add(1, std::memory_order_relaxed);
                    t->not_before = Clock::now() + wait;
                    waiting.push_back(t);
                    continue;
                }
                throw HttpError(
                    "\"" + (t->file->name.empty() ? redacted_url(t->file->url) : t->file->name) +
                        "\": " + range_text(t->a, t->b) + ": " + why + " (" +
                        outcome_text(*t, o, !final && !in_time) + ")",
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

namespace {

constexpr std::size_t kMaxAnswer = std::size_t{1} << 20;

/// An exchange under way: the request's body as it is sent.
struct Exchanging {
    Exchange* x;
    std::size_t sent = 0;
};

std::size_t exchange_header(char* data, std::size_t size, std::size_t n, void* user) {
    Exchange& x = *static_cast<Exchanging*>(user)->x;
    const std::string line(data, size * n);
    if (line.rfind("HTTP/", 0) == 0) {  // a new answer (after a redirect or a 100)
        x.etag.clear();
        x.length = 0;
    }
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char& ch : name) {
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        }
        const std::size_t a = line.find_first_not_of(" \t", colon + 1);
        const std::size_t b = line.find_last_not_of(" \t\r\n");
        const std::string value = a == std::string::npos || b < a ? "" : line.substr(a, b + 1 - a);
        if (name == "etag") {
            x.etag = value;
        } else if (name == "content-length") {
            x.length = std::strtoull(value.c_str(), nullptr, 10);
        }
    }
    return size * n;
}

std::size_t exchange_body(char* data, std::size_t size, std::size_t n, void* user) {
    Exchange& x = *static_cast<Exchanging*>(user)->x;
    const std::size_t len = size * n;
    x.answer.append(data, std::min(len, kMaxAnswer - std::min(kMaxAnswer, x.answer.size())));
    return len;
}

std::size_t exchange_read(char* into, std::size_t size, std::size_t n, void* user) {
    auto& s = *static_cast<Exchanging*>(user);
    const std::size_t k = std::min(size * n, s.x->body_size - s.sent);
    if (k > 0) {
        std::memcpy(into, s.x->body + s.sent, k);
    }
    s.sent += k;
    return k;
}

int exchange_seek(void* user, curl_off_t offset, int origin) {
    auto& s = *static_cast<Exchanging*>(user);
    if (origin != SEEK_SET || offset < 0 || static_cast<std::size_t>(offset) > s.x->body_size) {
        return CURL_SEEKFUNC_CANTSEEK;
    }
    s.sent = static_cast<std::size_t>(offset);
    return CURL_SEEKFUNC_OK;
}

}  // namespace

void HttpClient::exchange(Exchange& x) const {
    const HttpOptions& o = pool_->options;
    CURL* e = pool_->take_easy();
    struct Back {
        Pool& pool;
        CURL* e;
        ~Back() { pool.give(e); }
    } back{*pool_, e};
    const Clock::time_point start = Clock::now();
    const Clock::time_point deadline = start + std::chrono::milliseconds(std::max(1, o.timeout_ms));
    const bool sends = x.method == "PUT" || x.method == "POST";
    for (int attempt = 0;; ++attempt) {
        if (attempt > 0) {
            curl_easy_reset(e);
        }
        char errbuf[CURL_ERROR_SIZE] = {};
        curl_slist* headers = nullptr;
        Exchanging state{&x};
        transport(e, x.url, deadline, o, errbuf);
        // A body is not digested (S3 takes UNSIGNED-PAYLOAD): parts of 8 MiB and more would
        // cost a SHA-256 pass each; TLS protects them on the way.
        authenticate(e, headers, o, pool_->signing, sends ? "UNSIGNED-PAYLOAD" : kEmptyPayload);
        for (const std::string& h : x.headers) {
            headers = curl_slist_append(headers, h.c_str());
        }
        headers = curl_slist_append(headers, "Expect:");  // no wait for a 100 Continue
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, exchange_header);
        curl_easy_setopt(e, CURLOPT_HEADERDATA, &state);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, exchange_body);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &state);
        if (x.method == "HEAD") {
            curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
        } else if (x.method == "PUT") {
            curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
            curl_easy_setopt(e, CURLOPT_READFUNCTION, exchange_read);
            curl_easy_setopt(e, CURLOPT_READDATA, &state);
            curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, exchange_seek);
            curl_easy_setopt(e, CURLOPT_SEEKDATA, &state);
            curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(x.body_size));
        } else if (x.method == "POST") {
            curl_easy_setopt(e, CURLOPT_POST, 1L);
            static const char nothing[] = "";
            const void* fields = x.body != nullptr ? static_cast<const void*>(x.body) : nothing;
            curl_easy_setopt(e, CURLOPT_POSTFIELDS, fields);
            curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(x.body_size));
        } else if (x.method != "GET") {
            curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, x.method.c_str());
        }
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
        x.status = 0;
        x.answer.clear();
        x.etag.clear();
        x.length = 0;
        const CURLcode rc = curl_easy_perform(e);
        curl_slist_free_all(headers);
        pool_->requests.fetch_add(1, std::memory_order_relaxed);
        pool_->bytes.fetch_add(state.sent + x.answer.size(), std::memory_order_relaxed);
        long code = 0;
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
        x.status = rc == CURLE_OK ? code : 0;
        const bool transient = rc != CURLE_OK || code >= 500 || code == 429;
        if (!transient) {
            return;
        }
        const auto wait = std::chrono::milliseconds(
            std::min<std::int64_t>(static_cast<std::int64_t>(o.backoff_ms) << attempt, 10'000));
        const bool in_time = Clock::now() + wait < deadline;
        if (!hopeless(rc) && attempt < o.retries && in_time) {
            pool_->retries.fetch_add(1, std::memory_order_relaxed);
            std::this_thread::sleep_for(wait);
            continue;
        }
        if (rc == CURLE_OK) {
            return;  // a server error, for the caller to report with what the server said
        }
        char took[64];
        std::snprintf(took, sizeof took, " in %.1f s",
                      std::chrono::duration<double>(Clock::now() - start).count());
        throw HttpError("\"" + (x.name.empty() ? redacted_url(x.url) : x.name) + "\": " + x.method +
                            ": " + describe_curl(rc, errbuf) + " (no HTTP answer, " +
                            std::to_string(attempt + 1) + " attempts" + took +
                            (in_time ? "" : "; its time ran out") + ")",
                        0);
    }
}

}  // namespace b2nd::storage::detail
