#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A syslog TCP receiver (RFC 6587 octet counting) for fault tests: appends
each complete message to OUT as it arrives (no user-space buffering, so a
kill -9 loses only what the kernel held for it), drops a frame cut by the
end of a connection.  syslog_recv.py PORT OUT"""
import os, socket, sys

port, out = int(sys.argv[1]), sys.argv[2]
fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", port))
ls.listen(8)
while True:
    c, _ = ls.accept()
    buf = b""
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
    c.close()
