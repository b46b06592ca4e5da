#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A syslog TCP receiver (RFC 6587 octet counting) for fault tests: appends
each complete message to OUT as it arrives (no user-space buffering, so a
kill -9 loses only what the kernel held for it), drops a frame cut by the
end of a connection.  With CERT and KEY it speaks TLS (RFC 5425; Python's
ssl, OpenSSL: TLS 1.3 sends session tickets right after the handshake).
syslog_recv.py PORT OUT [CERT KEY]"""
import os, socket, ssl, sys

port, out = int(sys.argv[1]), sys.argv[2]
tls = None
if len(sys.argv) > 4:
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(sys.argv[3], sys.argv[4])
fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", port))
ls.listen(8)
while True:
    c, _ = ls.accept()
    buf = b""
    try:
        if tls:
            c = tls.wrap_socket(c, server_side=True)
        while True:
            d = c.recv(1 << 20)
            if not d:
                break
            buf += d
            msgs = []
            while True:
                sp = buf.find(b" ")
                if sp < 0:
                    break
                n = int(buf[:sp])
                if len(buf) < sp + 1 + n:
                    break
                msgs.append(buf[sp + 1:sp + 1 + n] + b"\n")
                buf = buf[sp + 1 + n:]
            if msgs:
                os.write(fd, b"".join(msgs))
    except (OSError, ssl.SSLError):	# a reset, or a session without close_notify
        pass
    c.close()
