#!/usr/bin/python3
"""Throwaway HTTP/1.1 server for cronguard's tests (Python stdlib only).

Usage:
    /usr/bin/python3 http_server.py --log FILE [--port N] [--host 127.0.0.1]
        [--ready-file FILE]

--port 0 (the default) binds a free port.  Once listening, the port number is
written atomically to --ready-file and "http_server ready port=N" is printed
on stdout.  Runs until SIGTERM/SIGINT.  Keep-alive (HTTP/1.1), any method,
request bodies by Content-Length or chunked, Expect: 100-continue.

Request log (--log): one JSON object per request, one line each, written
and flushed before the response is sent (so once a client has its answer,
the line is in the file):
    {"seq": 1, "time": 1700000000.123456, "conn": 7,
     "method": "POST", "path": "/t0400-123/status=503", "query": "a=1",
     "headers": {"content-type": "application/json", "webhook-id": "..."},
     "body": "{...}", "status": 503}
Header names are lower-cased; repeated headers are joined with ", ".
"body" is the body decoded as UTF-8 (invalid bytes replaced); when the body
is not valid UTF-8, "body_base64" holds the exact bytes as well.  "status"
is the status the server answered (0 for drop=1).  "path" excludes the
query string, which is in "query" ("" when absent).

Fault injection by path segments of the form NAME=VALUE, anywhere in the
path, in any order; other segments are free (use them to name your test):
    status=NNN        answer NNN (default 200)
    retry-after=V     add "Retry-After: V" (seconds or an HTTP date; write
                      the date URL-encoded, it is decoded)
    delay=MS          wait MS milliseconds before answering (after logging)
    fail-first=N      the first N requests with the same key answer
                      fail-status instead; later ones answer status=
                      (default 200).  The key is the path with the
                      webhook-id header (else Idempotency-Key, else none).
    fail-status=NNN   status for fail-first failures (default 503)
    fail-match=TEXT   the first request with the same key whose body
                      contains TEXT (URL-decoded) answers fail-status
                      (one failing message among others)
    drop=1            log the request, then close the connection without
                      any response (a transport error for the client)
    close=1           answer, with "Connection: close", then close
    fail-rate=P       P percent of requests (at random) answer fail-status
    stall-rate=P      P percent of requests (at random) wait stall= MS
    stall=MS          milliseconds for stall-rate (default 30000)
    stall-first=MS    the first request to this path waits MS milliseconds
                      instead of delay= (one slow message among fast ones)
Examples:
    /t0410/status=503
    /t0410/status=429/retry-after=5
    /t0410/delay=3000
    /t0410/fail-first=2                 503, 503, then 200 per webhook-id
    /t0410/fail-first=1/fail-status=429/retry-after=1
    /t0410/status=400                   permanent failure
Response bodies are small JSON objects: {"ok": true} for 2xx, else
{"error": "injected", "status": NNN}.  Special path: GET /_health -> 200,
not logged.
"""

import argparse
import random
import base64
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class State:
    def __init__(self, logpath):
        self.lock = threading.Lock()
        self.log = open(logpath, "a", buffering=1) if logpath else None
        self.seq = 0
        self.conns = 0
        self.fail_counts = {}

    def next_conn(self):
        with self.lock:
            self.conns += 1
            return self.conns

    def record(self, rec):
        line = None
        with self.lock:
            self.seq += 1
            rec["seq"] = self.seq
            if self.log is not None:
                line = json.dumps(rec, ensure_ascii=False) + "\n"
                self.log.write(line)
                self.log.flush()

    def count_attempt(self, key):
        with self.lock:
            n = self.fail_counts.get(key, 0) + 1
            self.fail_counts[key] = n
            return n


STATE = None


def parse_faults(path):
    faults = {}
    for seg in path.split("/"):
        if "=" in seg:
            name, _, value = seg.partition("=")
            faults[name.lower()] = urllib.parse.unquote(value)
    return faults


def int_or(value, default):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "cronguard-test-http/1"
    sys_version = ""

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.conn_id = STATE.next_conn()

    def log_message(self, fmt, *args):
        pass

    def read_body(self):
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            chunks = []
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n",
                                                             b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)
            return b"".join(chunks)
        length = int_or(self.headers.get("Content-Length"), 0)
        return self.rfile.read(length) if length > 0 else b""

    def handle_any(self):
        raw_path, _, query = self.path.partition("?")
        if raw_path == "/_health":
            self.respond(200, {}, close=False)
            return
        body = self.read_body()
        headers = {}
        for name, value in self.headers.items():
            k = name.lower()
            headers[k] = headers[k] + ", " + value if k in headers else value
        faults = parse_faults(raw_path)
        status = int_or(faults.get("status"), 200)
        extra = {}
        if "fail-first" in faults:
            key = (raw_path, headers.get("webhook-id")
                   or headers.get("idempotency-key") or "")
            if STATE.count_attempt(key) <= int_or(faults["fail-first"], 0):
                status = int_or(faults.get("fail-status"), 503)
        if ("fail-match" in faults
                and faults["fail-match"].encode() in body
                and STATE.count_attempt(
                    ("fail-match", raw_path, headers.get("webhook-id")
                     or headers.get("idempotency-key") or "")) == 1):
            status = int_or(faults.get("fail-status"), 503)
        if random.random() * 100 < int_or(faults.get("fail-rate"), 0):
            status = int_or(faults.get("fail-status"), 503)
        if "retry-after" in faults:
            extra["Retry-After"] = faults["retry-after"]
        drop = faults.get("drop") == "1"

        rec = {
            "time": round(time.time(), 6),
            "conn": self.conn_id,
            "method": self.command,
            "path": raw_path,
            "query": query,
            "headers": headers,
            "body": body.decode("utf-8", "replace"),
            "status": 0 if drop else status,
        }
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            rec["body_base64"] = base64.b64encode(body).decode()
        STATE.record(rec)

        delay = int_or(faults.get("delay"), 0)
        if random.random() * 100 < int_or(faults.get("stall-rate"), 0):
            delay = int_or(faults.get("stall"), 30000)
        if ("stall-first" in faults
                and STATE.count_attempt(("stall-first", raw_path)) == 1):
            delay = int_or(faults["stall-first"], 0)
        if delay > 0:
            time.sleep(delay / 1000.0)
        if drop:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.respond(status, extra, close=faults.get("close") == "1")

    def respond(self, status, extra, close):
        if 200 <= status < 300:
            payload = {"ok": True}
        else:
            payload = {"error": "injected", "status": status}
        data = (json.dumps(payload) + "\n").encode()
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra.items():
            self.send_header(k, v)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.wfile.flush()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = handle_any
    do_OPTIONS = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024


def main():
    global STATE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log")
    ap.add_argument("--ready-file")
    args = ap.parse_args()

    STATE = State(args.log)
    server = Server((args.host, args.port), Handler)
    port = server.server_address[1]

    def stop(signum, frame):
        threading.Thread(target=server.shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    if args.ready_file:
        tmp = args.ready_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, args.ready_file)
    print("http_server ready port=%d" % port, flush=True)
    server.serve_forever(poll_interval=0.2)
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
