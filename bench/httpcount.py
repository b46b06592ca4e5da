#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""An HTTP receiver that only counts: bench/outputs.sh's `http` and `otlp` kinds.

    httpcount.py PORT [otlp]

Listens on 127.0.0.1:PORT (HTTP/1.1, keep-alive, a thread per
connection; bodies with Content-Length, not chunked), answers every POST or
PUT with 200 and an empty body of the request's Content-Type (an empty
protobuf message is a valid OTLP ExportLogsServiceResponse, `{}` its
OTLP/JSON form), and on SIGTERM/SIGINT prints "requests N bytes B" (B: the
bodies' bytes as sent, before any decompression) and exits.

With `otlp` each body is an OTLP ExportLogsServiceRequest (protobuf, or
OTLP/JSON when the Content-Type says json; gzipped when Content-Encoding
says so) and the line goes on with "records R bad X": R the log records in
the bodies, counted by walking the protobuf's framing only (resource_logs
> scope_logs > log_records, each record skipped by its length, nothing in
it decoded), X the bodies that did not parse (answered 400, their records
not counted).
"""
import http.server
import json
import signal
import sys
import threading
import zlib

count = {"requests": 0, "bytes": 0, "records": 0, "bad": 0}
lock = threading.Lock()
OTLP = len(sys.argv) > 2 and sys.argv[2] == "otlp"


def pb_fields(b, i, end):
    """(field number, start, end) of each length-delimited field of the
    message b[i:end]; the other wire types are skipped.  ValueError when the
    framing is broken."""
    while i < end:
        tag = shift = 0
        while True:
            c = b[i]
            i += 1
            tag |= (c & 0x7f) << shift
            shift += 7
            if c < 0x80:
                break
        wt = tag & 7
        if wt == 0:
            while b[i] & 0x80:
                i += 1
            i += 1
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        elif wt == 2:
            n = shift = 0
            while True:
                c = b[i]
                i += 1
                n |= (c & 0x7f) << shift
                shift += 7
                if c < 0x80:
                    break
            if i + n > end:
                raise ValueError("field past its message")
            yield tag >> 3, i, i + n
            i += n
        else:
            raise ValueError("wire type %d" % wt)
    if i != end:
        raise ValueError("message overruns")


def otlp_records(body, ctype):
    """Log records of an ExportLogsServiceRequest."""
    if "json" in ctype:
        req = json.loads(body)
        return sum(len(sl.get("logRecords", [])) for rl in req.get("resourceLogs", [])
                   for sl in rl.get("scopeLogs", []))
    n = 0
    for f, a, z in pb_fields(body, 0, len(body)):          # ExportLogsServiceRequest
        if f == 1:                                           # resource_logs
            for f2, a2, z2 in pb_fields(body, a, z):
                if f2 == 2:                                  # scope_logs
                    n += sum(1 for f3, _, _ in pb_fields(body, a2, z2) if f3 == 2)  # log_records
    return n


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        ctype = self.headers.get("Content-Type") or "text/plain"
        status, recs = 200, 0
        if OTLP:
            try:
                raw = body
                if (self.headers.get("Content-Encoding") or "").lower() == "gzip":
                    raw = zlib.decompress(body, 31)
                recs = otlp_records(raw, ctype)
            except (ValueError, IndexError, zlib.error, AttributeError, TypeError):
                status = 400
        with lock:
            count["requests"] += 1
            count["bytes"] += len(body)
            count["records"] += recs
            count["bad"] += status != 200
        answer = b"{}" if OTLP and status == 200 and "json" in ctype else b""
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_PUT = do_POST

    def log_message(self, *args):
        pass


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)

    def stop(*_):
        with lock:
            line = f"requests {count['requests']} bytes {count['bytes']}"
            if OTLP:
                line += f" records {count['records']} bad {count['bad']}"
            print(line, flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("ready", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
