#!/usr/bin/env python3
"""A small HTTP/1.1 file server that misbehaves on request, for b2nd-cpp's HTTP tests and
benchmarks (Python's standard library only).

    fault_server.py --root DIR [--port 0] [--delay-ms MS]

prints "PORT <n>" once it listens on 127.0.0.1. Files under DIR are served with Range (one
range per request), ETag, Last-Modified and If-Match. A URL's first segments choose a fault:

    /FILE                 served normally
    /delay/N/FILE         the first N requests wait 3 s before answering
    /drop/N/FILE          the first N answers stop halfway through the body (connection closed)
    /short/N/FILE         the first N answers announce the range but carry half of it
    /error/N/FILE         the first N requests get 503
    /wrongrange/N/FILE    the first N answers carry the bytes one past those asked
    /norange/FILE         Range is ignored: 200 and the whole file, always
    /silent/FILE          the request is read and never answered
    /stall/FILE           the headers of the answer (206) are sent, then nothing
    /change/N/FILE        after N requests, FILE.v2 is served in FILE's place (a new ETag)
    /flip/FILE            every request alternates FILE and FILE.v2
    /redirect/FILE        302 to /FILE

N counts the requests for that exact URL. --delay-ms adds a fixed latency before every answer
(the benchmarks' "far away" server). GET /_stats answers {"requests": R, "bytes": B} (body
bytes sent), GET /_reset zeroes them and the fault counters. GET /_headers answers the names
(lower case) of every request header seen so far, with how many requests carried each: what a
client sent to a host it was redirected to.
"""
import argparse
import email.utils
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNTED = {"delay", "drop", "short", "error", "wrongrange", "change"}
PLAIN = {"norange", "flip", "redirect", "silent", "stall"}


class State:
    lock = threading.Lock()
    counts = {}
    headers = {}
    requests = 0
    bytes = 0


def count(key):
    with State.lock:
        State.counts[key] = State.counts.get(key, 0) + 1
        State.requests += 1
        return State.counts[key]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as written, not 40 ms apart
    root = "."
    delay = 0.0

    def log_message(self, *args):  # quiet
        pass

    def send_body(self, data):
        self.wfile.write(data)
        with State.lock:
            State.bytes += len(data)

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.send_body(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/_headers":
            with State.lock:
                body = json.dumps(State.headers).encode()
            return self.answer(200, body, [("Content-Type", "application/json")])
        with State.lock:
            for name in self.headers.keys():
                State.headers[name.lower()] = State.headers.get(name.lower(), 0) + 1
        if path == "/_stats":
            with State.lock:
                body = json.dumps({"requests": State.requests, "bytes": State.bytes}).encode()
            return self.answer(200, body, [("Content-Type", "application/json")])
        if path == "/_reset":
            with State.lock:
                State.counts.clear()
                State.requests = 0
                State.bytes = 0
            return self.answer(200, b"{}")
        if self.delay:
            time.sleep(self.delay)
        segs = [s for s in path.split("/") if s]
        fault, n = None, 0
        if segs and segs[0] in COUNTED and len(segs) > 2:
            fault, n, segs = segs[0], int(segs[1]), segs[2:]
        elif segs and segs[0] in PLAIN and len(segs) > 1:
            fault, segs = segs[0], segs[1:]
        seen = count(path)
        active = fault in COUNTED and seen <= n
        if fault == "redirect":
            return self.answer(302, b"", [("Location", "/" + "/".join(segs))])
        if fault == "silent":
            time.sleep(3600)
            return None
        rel = "/".join(segs)
        file = os.path.join(self.root, rel)
        if fault == "change" and seen > n:
            file += ".v2"
        if fault == "flip" and seen % 2 == 0:
            file += ".v2"
        if ".." in segs or not os.path.isfile(file):
            return self.answer(404, b"not found")
        if fault == "delay" and active:
            time.sleep(3.0)
        st = os.stat(file)
        etag = '"%x-%x"' % (st.st_mtime_ns, st.st_size)
        modified = email.utils.formatdate(st.st_mtime, usegmt=True)
        size = st.st_size
        tags = [("ETag", etag), ("Last-Modified", modified), ("Accept-Ranges", "bytes")]
        if fault == "error" and active:
            return self.answer(503, b"try later")
        match = self.headers.get("If-Match")
        if match is not None and match != etag and match != "*":
            return self.answer(412, b"precondition failed", tags)
        first, last = 0, size - 1
        ranged = False
        spans = []
        spec = self.headers.get("Range")
        if spec and spec.startswith("bytes=") and fault != "norange":
            for one in spec[6:].split(","):
                a, _, b = one.strip().partition("-")
                if a == "":
                    f0, l0 = max(0, size - int(b)), size - 1
                else:
                    f0, l0 = int(a), min(int(b) if b else size - 1, size - 1)
                if f0 < size and f0 <= l0:
                    spans.append((f0, l0))
            if not spans:
                return self.answer(416, b"", tags + [("Content-Range", "bytes */%d" % size)])
            ranged = True
            first, last = spans[0]
        headers = list(tags)
        with open(file, "rb") as f:
            if len(spans) > 1:
                # Several ranges: a multipart/byteranges body, a part per range.
                parts = []
                for f0, l0 in spans:
                    f.seek(f0)
                    parts.append(b"\r\n--B2NDBOUNDARY\r\nContent-Type: application/octet-stream\r\n"
                                 b"Content-Range: bytes %d-%d/%d\r\n\r\n" % (f0, l0, size))
                    parts.append(f.read(l0 - f0 + 1))
                parts.append(b"\r\n--B2NDBOUNDARY--\r\n")
                body = b"".join(parts)
                headers.append(("Content-Type", "multipart/byteranges; boundary=B2NDBOUNDARY"))
            else:
                if fault == "wrongrange" and active and last + 1 < size:
                    first, last = first + 1, last + 1
                f.seek(first)
                body = f.read(last - first + 1)
                if ranged:
                    headers.append(("Content-Range", "bytes %d-%d/%d" % (first, last, size)))
        if fault == "short" and active:
            body = body[: len(body) // 2]
        self.send_response(206 if ranged else 200)
        for k, v in headers:
            self.send_header(k, v)
        if fault == "drop" and active:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.send_body(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if fault == "stall":
            self.wfile.flush()
            time.sleep(3600)
            return
        if self.command != "HEAD":
            self.send_body(body)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--delay-ms", type=float, default=0.0)
    args = p.parse_args()
    Handler.root = args.root
    Handler.delay = args.delay_ms / 1000.0
    ThreadingHTTPServer.request_queue_size = 128  # not 5: clients open 8+ connections at once
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print("PORT %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
