#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""An HTTP receiver that only counts: bench/outputs.sh's `http` kind.

    httpcount.py PORT

Listens on 127.0.0.1:PORT (HTTP/1.1, keep-alive, a thread per
connection; bodies with Content-Length, not chunked), answers every POST or
PUT with 200 and an empty body of the request's Content-Type (an empty
protobuf message is a valid OTLP ExportLogsServiceResponse), and on
SIGTERM/SIGINT prints "requests N bytes B" (B: the bodies' bytes as
sent, before any decompression) and exits.
"""
import http.server
import signal
import sys
import threading

count = {"requests": 0, "bytes": 0}
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        with lock:
            count["requests"] += 1
            count["bytes"] += len(body)
        self.send_response(200)
        self.send_header("Content-Type", self.headers.get("Content-Type") or "text/plain")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_PUT = do_POST

    def log_message(self, *args):
        pass


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)

    def stop(*_):
        with lock:
            print(f"requests {count['requests']} bytes {count['bytes']}", flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("ready", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
