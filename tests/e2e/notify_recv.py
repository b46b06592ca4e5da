#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# A systemd notify socket: receive sd_notify(3) datagrams on SOCKET (a path,
# or "@name" for an abstract one) and log each as "SECONDS KEY=VALUE|KEY=VALUE"
# (monotonic time) to LOG.  On the first READY=1 it also logs whether
# WATCH_FILE exists then ("EXISTS 1"/"EXISTS 0").  Exits after STOPPING=1
# plus a moment, or after TIMEOUT seconds.
import os, socket, sys, time

sock_name, log_path, watch_file, timeout = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + sock_name[1:] if sock_name.startswith("@") else sock_name)
out = open(log_path, "w", buffering=1)
out.write("BOUND\n")
end = time.monotonic() + timeout
ready_seen = False
while time.monotonic() < end:
    s.settimeout(max(0.01, end - time.monotonic()))
    try:
        msg = s.recv(4096).decode()
    except socket.timeout:
        break
    now = time.monotonic()
    if "READY=1" in msg.split("\n") and not ready_seen:
        ready_seen = True
        out.write("EXISTS %d\n" % os.path.exists(watch_file))
    out.write("%.6f %s\n" % (now, msg.replace("\n", "|")))
    if "STOPPING=1" in msg.split("\n"):
        end = min(end, now + 0.5)
