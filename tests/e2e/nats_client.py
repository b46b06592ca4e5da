#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A small NATS client over the text protocol, independent of libnats, for
the nats output's tests: JetStream's API by request and reply.

  nats_client.py URL ready                      exit 0 when JetStream answers $JS.API.INFO
  nats_client.py URL create NAME SUBJECT REPLICAS DUP_WINDOW_S
  nats_client.py URL count NAME                 the stream's message count
  nats_client.py URL leader NAME                the server_name of the stream's leader
  nats_client.py URL dump NAME OUT              every message, oldest first, one JSON
                                                object a line: seq, subject, msg_id, data
URL is host:port.  A JetStream error answer is printed and exits 1.  With
NATS_TLS_CA set (and NATS_TLS_CERT, NATS_TLS_KEY for a client certificate)
the connection is upgraded to TLS after the server's INFO, as the protocol
does for a server that requires it.
"""
import base64
import json
import os
import socket
import ssl
import sys


class Nats:
    def __init__(self, hostport, timeout=5.0):
        host, port = hostport.rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)), timeout=timeout)
        self.f = self.s.makefile("rb")
        info = self.f.readline()
        if not info.startswith(b"INFO "):
            raise SystemExit("not a NATS server: %r" % info[:40])
        if os.environ.get("NATS_TLS_CA"):
            ctx = ssl.create_default_context(cafile=os.environ["NATS_TLS_CA"])
            if os.environ.get("NATS_TLS_CERT"):
                ctx.load_cert_chain(os.environ["NATS_TLS_CERT"], os.environ["NATS_TLS_KEY"])
            self.s = ctx.wrap_socket(self.s, server_hostname=host)
            self.f = self.s.makefile("rb")
        self.s.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,'
                       b'"no_responders":true,"protocol":1}\r\nPING\r\n')
        self.wait_pong()
        self.s.sendall(b"SUB _INBOX.t.* 1\r\n")
        self.n = 0

    def wait_pong(self):
        while True:
            line = self.f.readline()
            if not line:
                raise SystemExit("connection closed")
            if line.startswith(b"PONG"):
                return
            if line.startswith(b"-ERR"):
                raise SystemExit(line.decode().strip())

    def request(self, subject, payload):
        self.n += 1
        inbox = "_INBOX.t.%d" % self.n
        body = json.dumps(payload).encode() if payload is not None else b""
        self.s.sendall(b"PUB %s %s %d\r\n%s\r\n" % (subject.encode(), inbox.encode(), len(body), body))
        while True:
            line = self.f.readline()
            if not line:
                raise SystemExit("connection closed")
            if line.startswith(b"PING"):
                self.s.sendall(b"PONG\r\n")
                continue
            parts = line.split()
            if parts and parts[0] == b"MSG":       # MSG subj sid [reply] len
                data = self.f.read(int(parts[-1]) + 2)[:-2]
                if parts[1].decode() == inbox:
                    return json.loads(data)
            elif parts and parts[0] == b"HMSG":    # HMSG subj sid [reply] hlen tlen
                hlen, tlen = int(parts[-2]), int(parts[-1])
                raw = self.f.read(tlen + 2)
                if parts[1].decode() == inbox:
                    status = raw[:hlen].split(b"\r\n")[0]
                    raise SystemExit("no answer to %s: %s" % (subject, status.decode()))


def check(answer):
    if "error" in answer:
        print(json.dumps(answer["error"]), file=sys.stderr)
        sys.exit(1)
    return answer


def main():
    url, cmd = sys.argv[1], sys.argv[2]
    try:
        c = Nats(url)
    except OSError as e:
        raise SystemExit("%s: %s" % (url, e))
    if cmd == "ready":
        check(c.request("$JS.API.INFO", None))
    elif cmd == "create":
        name, subject, replicas, window = sys.argv[3:7]
        check(c.request("$JS.API.STREAM.CREATE." + name, {
            "name": name, "subjects": [subject], "num_replicas": int(replicas),
            "storage": "file", "duplicate_window": int(float(window) * 1e9)}))
    elif cmd == "count":
        print(check(c.request("$JS.API.STREAM.INFO." + sys.argv[3], None))["state"]["messages"])
    elif cmd == "leader":
        print(check(c.request("$JS.API.STREAM.INFO." + sys.argv[3], None))["cluster"]["leader"])
    elif cmd == "dump":
        name, out = sys.argv[3], sys.argv[4]
        state = check(c.request("$JS.API.STREAM.INFO." + name, None))["state"]
        with open(out, "w") as f:
            for seq in range(state["first_seq"], state["last_seq"] + 1):
                m = check(c.request("$JS.API.STREAM.MSG.GET." + name, {"seq": seq}))["message"]
                hdrs = base64.b64decode(m.get("hdrs", "")).decode()
                msg_id = None
                for h in hdrs.split("\r\n")[1:]:
                    k, _, v = h.partition(":")
                    if k.strip() == "Nats-Msg-Id":
                        msg_id = v.strip()
                data = base64.b64decode(m.get("data", "")).decode()
                f.write(json.dumps({"seq": m["seq"], "subject": m["subject"], "msg_id": msg_id,
                                    "data": data}) + "\n")
    else:
        raise SystemExit("unknown command " + cmd)


main()
