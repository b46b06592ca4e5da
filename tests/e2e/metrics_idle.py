#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# metrics_idle.py PORT PID ROUNDS DEADLINE: the idle-connection attack on
# daemon.metrics, ROUNDS times.  A round opens 100 idle connections from
# 127.0.0.1 and waits until sluice (PID) has accepted what it will take;
# then
#   - a scrape from 127.0.0.2 must be answered while they are held (one
#     client cannot take every connection);
#   - sluice is stopped (SIGSTOP), all 100 closed, continued (SIGCONT), so
#     it sees every close in one go: the case that left the listener out
#     of libmicrohttpd's epoll set for good;
#   - a scrape from 127.0.0.1 must be answered.
# A scrape is curl, tried again until it is answered or DEADLINE seconds
# have passed: after the closes, libmicrohttpd may see a new connection
# before it has counted the old ones closed (a loaded machine, ASan) and
# refuse it at the per-address limit; what must hold is that the listener
# comes back, which before the fix it never did.  Exits non-zero naming
# the step.
import os, signal, socket, subprocess, sys, time

port, pid, rounds, deadline = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
N = 100


def accepted():
    """Connections to the port that PID has accepted (owns), and the
    listening socket's accept queue."""
    out = subprocess.run(["ss", "-Htanp", "( sport = :%d )" % port], capture_output=True,
                         text=True, check=True).stdout
    owned = queue = 0
    for line in out.splitlines():
        f = line.split()
        if f[0] == "LISTEN":
            queue = int(f[1])
        elif f[0] == "ESTAB" and ("pid=%d," % pid) in line:
            owned += 1
    return owned, queue


def scrape(src, what):
    end = time.monotonic() + deadline
    while True:
        left = max(1.0, end - time.monotonic())
        r = subprocess.run(["curl", "-sS", "--interface", src, "--max-time", "%.1f" % left,
                            "-o", "/dev/null", "-w", "%{http_code}",
                            "http://127.0.0.1:%d/metrics" % port], capture_output=True, text=True)
        if r.stdout == "200":
            return
        if time.monotonic() >= end:
            sys.exit("round %d: no answer to a scrape from %s %s within %g s (curl: %s %s)"
                     % (rnd, src, what, deadline, r.stdout, r.stderr.strip()))
        time.sleep(0.1)


for rnd in range(1, rounds + 1):
    socks = []
    for _ in range(N):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind(("127.0.0.1", 0))
        s.connect_ex(("127.0.0.1", port))
        socks.append(s)
    # sluice takes some (at most its limit) and refuses or queues the rest;
    # settled when it owns some and either owns many or has drained its queue
    end = time.monotonic() + deadline
    while True:
        owned, queue = accepted()
        if owned >= 4 and (owned >= 16 or queue == 0):
            break
        if time.monotonic() > end:
            sys.exit("round %d: sluice accepted %d connections, %d queued" % (rnd, owned, queue))
        time.sleep(0.05)
    scrape("127.0.0.2", "while 127.0.0.1 held %d connections" % owned)
    os.kill(pid, signal.SIGSTOP)
    try:
        for s in socks:
            s.close()
    finally:
        os.kill(pid, signal.SIGCONT)
    scrape("127.0.0.1", "after its %d connections were closed" % N)
    print("round %d: %d accepted and held, scraped beside them and after them" % (rnd, owned))
