#!/usr/bin/env python3
"""A reverse proxy that checks AWS Signature Version 4 on every request, for b2nd-cpp's S3
tests (Python's standard library only). s3rver checks access keys but not V4 signatures; this
checks them, with the secret of the one key it knows, and forwards what is signed right.

    sigv4_proxy.py --upstream http://127.0.0.1:PORT --key S3RVER --secret S3RVER

prints "PORT <n>" once it listens on 127.0.0.1. A request whose signature is missing or wrong
gets 403 with S3's SignatureDoesNotMatch (never echoing the secret); the others are forwarded
to the upstream as they came, and its answer returned. GET /_stats answers
{"requests": R, "checked": C, "parts": P}: requests seen, signatures verified, multipart
upload parts forwarded.

Faults, for the upload tests: GET /_faults?fail_part=N answers 500 (S3's InternalError) to
every upload of part N and later of any multipart upload; GET /_faults?delay_ms=D delays every
request by D ms before it is forwarded, or with &delay_from_part=N only the uploads of part N and
later (the others pass at once); GET /_faults resets them all.

Hostile listings, for the listing tests: GET /_faults?list_key=K adds an object of key K (as
given: absolute, with '..', anything) to every answer to a listing (list-type=2);
GET /_faults?list_loop=1 makes every listing answer say it is truncated, with a continuation
token that alternates between two values (a server whose listing never ends).
GET /_faults?redirect_to=URL answers every signed request with 307 to URL + its path (a server
that sends the client, and what it carries, to another host).
"""
import argparse
import hashlib
import hmac
import http.client
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATS = {"requests": 0, "checked": 0, "parts": 0}
FAULTS = {"fail_part": 0, "delay_ms": 0, "delay_from_part": 0, "list_key": "", "list_loop": 0,
          "redirect_to": ""}
LOCK = threading.Lock()


def hmac256(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def expected_signature(method, raw_path, headers, secret):
    """The signature the request should carry, or None when it is not V4-signed."""
    auth = headers.get("authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return None, None
    fields = dict(part.strip().split("=", 1) for part in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    scope = fields["Credential"].split("/", 1)[1]  # date/region/service/aws4_request
    date, region, service, _ = scope.split("/")
    signed = fields["SignedHeaders"].split(";")
    path, _, query = raw_path.partition("?")
    pairs = sorted(urllib.parse.parse_qsl(query, keep_blank_values=True))
    canonical_query = "&".join(urllib.parse.quote(k, safe="-_.~") + "=" +
                               urllib.parse.quote(v, safe="-_.~") for k, v in pairs)
    canonical_headers = "".join(
        name + ":" + " ".join(headers.get(name, "").split()) + "\n" for name in signed)
    payload = headers.get("x-amz-content-sha256", hashlib.sha256(b"").hexdigest())
    canonical = "\n".join([method, path, canonical_query, canonical_headers,
                           ";".join(signed), payload])
    to_sign = "\n".join(["AWS4-HMAC-SHA256", headers.get("x-amz-date", ""), scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = hmac256(("AWS4" + secret).encode(), date)
    key = hmac256(hmac256(hmac256(key, region), service), "aws4_request")
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest(), fields["Signature"]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.handle_any("GET")

    def do_HEAD(self):
        self.handle_any("HEAD")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_POST(self):
        self.handle_any("POST")

    def do_DELETE(self):
        self.handle_any("DELETE")

    def reply(self, status, body, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self, method):
        if self.path == "/_stats":
            with LOCK:
                body = json.dumps(STATS).encode()
            self.reply(200, body, [("Content-Type", "application/json")])
            return
        if self.path.startswith("/_faults"):
            q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
            with LOCK:
                FAULTS["fail_part"] = int(q.get("fail_part", "0"))
                FAULTS["delay_ms"] = int(q.get("delay_ms", "0"))
                FAULTS["delay_from_part"] = int(q.get("delay_from_part", "0"))
                FAULTS["list_key"] = q.get("list_key", "")
                FAULTS["list_loop"] = int(q.get("list_loop", "0"))
                FAULTS["redirect_to"] = q.get("redirect_to", "")
            self.reply(200, b"{}", [("Content-Type", "application/json")])
            return
        with LOCK:
            STATS["requests"] += 1
            faults = dict(FAULTS)
        length = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(length) if length else b""
        lower = {k.lower(): v for k, v in self.headers.items()}
        want, got = expected_signature(method, self.path, lower, self.server.secret)
        if want is None or not hmac.compare_digest(want, got):
            self.reply(403, b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>"
                            b"SignatureDoesNotMatch</Code><Message>The request signature we "
                            b"calculated does not match the signature you provided.</Message>"
                            b"</Error>", [("Content-Type", "application/xml")])
            return
        with LOCK:
            STATS["checked"] += 1
        if faults["redirect_to"]:
            self.reply(307, b"", [("Location", faults["redirect_to"] + self.path)])
            return
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
        part = int(query["partNumber"]) if method == "PUT" and "partNumber" in query else 0
        if faults["delay_ms"] and (not faults["delay_from_part"] or
                                   part >= faults["delay_from_part"]):
            time.sleep(faults["delay_ms"] / 1000.0)
        if part:
            if faults["fail_part"] and part >= faults["fail_part"]:
                self.reply(500, b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>"
                                b"InternalError</Code><Message>Injected by the test proxy."
                                b"</Message></Error>", [("Content-Type", "application/xml")])
                return
            with LOCK:
                STATS["parts"] += 1
        listing = method == "GET" and query.get("list-type") == "2"
        path = self.path
        token = query.get("continuation-token", "")
        if listing and faults["list_loop"] and token:
            # The upstream knows no such token: it is asked for the first page again.
            split = urllib.parse.urlsplit(self.path)
            rest = [(k, v) for k, v in urllib.parse.parse_qsl(split.query, keep_blank_values=True)
                    if k != "continuation-token"]
            path = split.path + "?" + urllib.parse.urlencode(rest)
        up = http.client.HTTPConnection(self.server.upstream.hostname, self.server.upstream.port,
                                        timeout=60)
        try:
            up.request(method, path, body=body,
                       headers={k: v for k, v in self.headers.items()
                                if k.lower() not in ("connection", "keep-alive")})
            r = up.getresponse()
            data = r.read()
            if listing and r.status == 200:
                data = hostile_listing(data, faults, token)
            keep = [(k, v) for k, v in r.getheaders()
                    if k.lower() not in ("connection", "keep-alive", "transfer-encoding",
                                         "content-length")]
            self.reply(r.status, data, keep)
        finally:
            up.close()


def hostile_listing(data, faults, token):
    """A ListObjectsV2 answer with the listing faults applied."""
    text = data.decode("utf-8")
    end = text.rfind("</ListBucketResult>")
    if end < 0:
        return data
    extra = ""
    if faults["list_key"]:
        key = (faults["list_key"].replace("&", "&amp;").replace("<", "&lt;")
               .replace(">", "&gt;"))
        extra += ("<Contents><Key>%s</Key><Size>100</Size><ETag>&quot;0&quot;</ETag>"
                  "<StorageClass>STANDARD</StorageClass></Contents>" % key)
    if faults["list_loop"]:
        for tag in ("IsTruncated", "NextContinuationToken"):
            start = text.find("<%s>" % tag)
            if start >= 0:
                stop = text.find("</%s>" % tag, start) + len("</%s>" % tag)
                text = text[:start] + text[stop:]
        end = text.rfind("</ListBucketResult>")
        extra += ("<IsTruncated>true</IsTruncated><NextContinuationToken>%s"
                  "</NextContinuationToken>" % ("b" if token == "a" else "a"))
    return (text[:end] + extra + text[end:]).encode("utf-8")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--upstream", required=True)
    p.add_argument("--secret", required=True)
    p.add_argument("--port", type=int, default=0)
    a = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.daemon_threads = True
    server.upstream = urllib.parse.urlparse(a.upstream)
    server.secret = a.secret
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
