// One range request of a batch: planned from the pieces, its answer read and checked
// (http_request.hpp).
//
// Each answer is checked while it arrives:
//  - 206 must carry exactly the range asked (Content-Range; for several ranges, parts that
//    cover them all), of a file of the known size, with the known ETag / Last-Modified: anything
//    else means the file changed (or the server lies);
//  - 200 (a server that ignores Range) is read as the whole file: its length must be the known
//    size, the range is taken from the stream, and the transfer stops at the range's end;
//  - 404, 401, 403, 416 and the like are final; 412 (If-Match failed) means changed; 5xx, 408,
//    429 are transient (the client retries them).
#include "http_request.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "../../detail/text.hpp"

namespace b2nd::storage::detail {

namespace {

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

/// Copies body bytes that lie at file offset `from` into the pieces they overlap.
void deliver(Request& t, std::uint64_t from, const char* data, std::size_t len) {
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
bool multipart(Request& t, const char* data, std::size_t len) {
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
bool all_covered(const Request& t) {
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

}  // namespace

std::string range_text(std::uint64_t a, std::uint64_t b) {
    return "bytes [" + std::to_string(a) + ", " + std::to_string(b) + ")";
}

std::string range_spec(const Request& r) {
    std::string range;
    for (const auto& [x, y] : r.subs) {
        range += (range.empty() ? "" : ",") + std::to_string(x) + "-" + std::to_string(y - 1);
    }
    return range;
}

void judge(Request& t, std::mutex& id_mutex) {
    t.started = true;
    const RemoteIdentity& id = *t.file->id;
    const auto refuse = [&](std::string why, bool changed, bool final) {
        t.problem = std::move(why);
        t.changed = changed;
        t.final = final;
    };
    std::lock_guard<std::mutex> lock(id_mutex);
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

void read_header(Request& r, const std::string& line) {
    Request* t = &r;
    if (line.rfind("HTTP/", 0) == 0) {
        // A new response (after a redirect, or a 100 Continue): forget the last one's headers.
        t->has_range = t->cr_total_known = t->has_length = false;
        t->boundary.clear();
        t->etag.clear();
        t->last_modified.clear();
        const std::size_t sp = line.find(' ');
        t->status = sp == std::string::npos ? 0 : std::strtol(line.c_str() + sp + 1, nullptr, 10);
        return;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) {
        return;
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
    return;
}

std::optional<std::string> xml_element(const std::string& xml,
                                       const std::string& tag,
                                       std::size_t from,
                                       std::size_t* at) {
    const std::string open = "<" + tag + ">", close = "</" + tag + ">";
    const std::size_t a = xml.find(open, from);
    if (a == std::string::npos) {
        return std::nullopt;
    }
    const std::size_t b = xml.find(close, a + open.size());
    if (b == std::string::npos) {
        return std::nullopt;
    }
    if (at != nullptr) {
        *at = b + close.size();
    }
    const std::string raw = xml.substr(a + open.size(), b - a - open.size());
    std::string out;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] != '&') {
            out += raw[i];
            continue;
        }
        const std::size_t semi = raw.find(';', i);
        const std::string ent = raw.substr(i + 1, semi == std::string::npos ? 0 : semi - i - 1);
        if (ent == "amp") {
            out += '&';
        } else if (ent == "lt") {
            out += '<';
        } else if (ent == "gt") {
            out += '>';
        } else if (ent == "quot") {
            out += '"';
        } else if (ent == "apos") {
            out += '\'';
        } else if (ent.size() > 1 && ent[0] == '#') {
            const unsigned long cp = ent[1] == 'x' ? std::strtoul(ent.c_str() + 2, nullptr, 16)
                                                   : std::strtoul(ent.c_str() + 1, nullptr, 10);
            if (cp > 0x10ffff) {
                out += '&';  // no character: kept as written
                continue;
            }
            b2nd::detail::append_utf8(out, static_cast<std::uint32_t>(cp));
        } else {
            out += '&';
            continue;
        }
        i = semi;
    }
    return out;
}

std::string server_error_text(const std::string& body) {
    const auto code = xml_element(body, "Code");
    const auto message = xml_element(body, "Message");
    if (!code && !message) {
        return {};
    }
    return " (" + code.value_or("") + (code && message ? ": " : "") + message.value_or("") + ")";
}

std::size_t read_body(Request& t, const char* data, std::size_t len, std::mutex& id_mutex) {
    if (!t.started) {
        judge(t, id_mutex);
    }
    if (!t.problem.empty()) {
        if (t.status >= 300 && t.error_body.size() < kErrorBodyKept) {
            t.error_body.append(data, std::min(len, kErrorBodyKept - t.error_body.size()));
        }
        return t.status >= 300 && t.status < 600 && t.pos + len < 65536 ? (t.pos += len, len) : 0;
    }
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

std::string check_complete(Request& t) {
    if (!t.boundary.empty()) {
        // (a range that may end early always goes alone, never in a multipart request)
        return all_covered(t) ? std::string()
                              : "a multipart/byteranges answer without every range asked";
    }
    const std::uint64_t end = t.origin + t.pos;
    const std::uint64_t want =
        t.status == 206 ? t.cr_last + 1 : (t.may_end ? std::min(t.b, end) : t.b);
    if (end < want || (t.status == 200 && !t.may_end && end < t.b)) {
        return "a short body: " + std::to_string(t.pos) + " bytes received";
    }
    for (std::size_t k : t.pieces) {
        HttpPiece& p = t.file->pieces[k];
        p.got = std::min(p.n, end > p.offset ? end - p.offset : 0);
    }
    return {};
}

namespace {

/// Splits the pieces of `file` into requests, merging those closer than `gap`.
void plan(FileRanges& file, std::uint64_t gap, std::vector<Request>& out) {
    std::vector<std::size_t> order(file.pieces.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
        order[k] = k;
    }
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        return file.pieces[x].offset < file.pieces[y].offset;
    });
    Request* cur = nullptr;
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
    for (Request& t : out) {
        t.subs = {{t.a, t.b}};
    }
}

/// Packs the small single-range requests of one file into requests of several ranges: at most
/// max_ranges each, over as many requests as may be in flight.
std::vector<Request> pack(std::vector<Request> planned, const HttpOptions& o) {
    constexpr std::uint64_t kSmall = 1 << 20;  // larger ranges keep a request (a stream) each
    std::vector<Request> small;
    std::vector<Request> out;
    std::vector<Request> riders;
    const auto all_riders = [](const Request& t) {
        return std::all_of(t.pieces.begin(), t.pieces.end(),
                           [&](std::size_t k) { return t.file->pieces[k].rider; });
    };
    for (Request& t : planned) {
        if (!t.may_end && all_riders(t) && planned.size() > 1) {
            riders.push_back(std::move(t));
        } else if (!t.may_end && t.b - t.a <= kSmall && o.max_ranges > 1) {
            small.push_back(std::move(t));
        } else {
            out.push_back(std::move(t));
        }
    }
    const std::size_t per =
        std::clamp<std::size_t>((small.size() + static_cast<std::size_t>(o.max_in_flight) - 1) /
                                    static_cast<std::size_t>(o.max_in_flight),
                                1, static_cast<std::size_t>(o.max_ranges));
    for (std::size_t k = 0; k < small.size(); k += per) {
        Request m = std::move(small[k]);
        for (std::size_t j = k + 1; j < std::min(k + per, small.size()); ++j) {
            m.subs.push_back(small[j].subs.front());
            m.pieces.insert(m.pieces.end(), small[j].pieces.begin(), small[j].pieces.end());
            m.b = small[j].b;
        }
        out.push_back(std::move(m));
    }
    // Riders join a request of several ranges' room (a small one first; a large one then
    // answers in parts), else go on their own.
    for (Request& r : riders) {
        Request* host = nullptr;
        for (Request& t : out) {
            const bool room = !t.may_end && t.subs.size() < static_cast<std::size_t>(o.max_ranges);
            if (room && (host == nullptr || t.b - t.a <= kSmall)) {
                host = &t;
            }
        }
        if (host == nullptr) {
            out.push_back(std::move(r));
            continue;
        }
        host->subs.push_back(r.subs.front());
        host->pieces.insert(host->pieces.end(), r.pieces.begin(), r.pieces.end());
        std::sort(host->subs.begin(), host->subs.end());
        std::sort(host->pieces.begin(), host->pieces.end(), [&](std::size_t x, std::size_t y) {
            return host->file->pieces[x].offset < host->file->pieces[y].offset;
        });
        host->a = host->subs.front().first;
        host->b = host->subs.back().second;
    }
    return out;
}

}  // namespace

std::vector<Request> plan_requests(FileRanges& file, const HttpOptions& o) {
    std::vector<Request> planned;
    plan(file, o.merge_gap, planned);
    return pack(std::move(planned), o);
}

}  // namespace b2nd::storage::detail
