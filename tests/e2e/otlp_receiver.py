# SPDX-License-Identifier: GPL-2.0-or-later
# A test OTLP/HTTP receiver on loopback: each POST's body is saved as
# DIR/NNNNNN.body and its path, headers and arrival time (monotonic) as
# DIR/NNNNNN.head (JSON), then answered 200 with an empty
# ExportLogsServiceResponse.  --fail N: the first N requests are answered
# 503 with Retry-After: RA seconds and not saved as bodies (their arrival
# is logged in DIR/failed.log).  --port P: listen there (0: any), the port
# written to DIR/port.  --status S: every request answered S (and saved);
# --rejected K: 200 answers carry partial_success.rejected_log_records = K.
# --tls CERT KEY: HTTPS; --client-ca FILE: and a client certificate
# signed by FILE required.  Runs until killed (the test stops it by PID).
#   otlp_receiver.py DIR [--port P] [--fail N] [--retry-after RA] [--status S] [--rejected K]
#                    [--tls CERT KEY [--client-ca FILE]]
import argparse, http.server, json, os, ssl, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("--port", type=int, default=0)
ap.add_argument("--fail", type=int, default=0)
ap.add_argument("--retry-after", type=int, default=1)
ap.add_argument("--status", type=int, default=200)
ap.add_argument("--rejected", type=int, default=0)
ap.add_argument("--tls", nargs=2)
ap.add_argument("--client-ca")
a = ap.parse_args()
seen = 0
lock = threading.Lock()


def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([v & 0x7f | 0x80])
        v >>= 7
    return out + bytes([v])


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        global seen
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        with lock:  # one thread per connection: each sender keeps its own alive
            seen += 1
            me = seen
        if me <= a.fail:
            with open(os.path.join(a.dir, "failed.log"), "a") as f:
                f.write("%f\n" % time.monotonic())
            self.send_response(503)
            self.send_header("Retry-After", str(a.retry_after))
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"busy")
            return
        base = os.path.join(a.dir, "%06d" % me)
        with open(base + ".body", "wb") as f:
            f.write(body)
        head = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                "t": time.monotonic()}
        with open(base + ".tmp", "w") as f:
            json.dump(head, f)
        os.rename(base + ".tmp", base + ".head")  # .head last: the request is complete
        ctype = self.headers.get("Content-Type", "")
        answer = b"{}" if "json" in ctype else b""
        if a.status != 200:
            answer = b"refused by the test"
        elif a.rejected and "json" in ctype:
            answer = json.dumps({"partialSuccess": {"rejectedLogRecords": str(a.rejected),
                                                    "errorMessage": "test rejects"}}).encode()
        elif a.rejected:  # ExportLogsServiceResponse{1: ExportLogsPartialSuccess{1: K, 2: msg}}
            msg = b"test rejects"
            ps = bytes([0x08]) + varint(a.rejected) + bytes([0x12, len(msg)]) + msg
            answer = bytes([0x0a, len(ps)]) + ps
        self.send_response(a.status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), H)
if a.tls:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.tls[0], a.tls[1])
    if a.client_ca:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(a.client_ca)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(os.path.join(a.dir, "port.tmp"), "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(os.path.join(a.dir, "port.tmp"), os.path.join(a.dir, "port"))
srv.serve_forever()
