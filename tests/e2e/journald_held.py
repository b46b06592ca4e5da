#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Run systemd-journald on a native socket this process holds, as systemd's
systemd-journald.socket does: the socket (/run/systemd/journal/socket) is
bound here and handed to journald as LISTEN_FDS=1, so datagrams queued in it
survive journald's death and are read by the next journald, as on a real
system.  journald's PID goes to PIDFILE; once it has exited, the next one
starts when PIDFILE.restart exists (which this removes).  SIGTERM ends
journald and this.
usage: journald_held.py JOURNALD PIDFILE"""
import os
import signal
import socket
import sys
import time

PATH = "/run/systemd/journal/socket"


def main(journald, pidfile):
    try:
        os.unlink(PATH)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(PATH)
    os.chmod(PATH, 0o666)
    restart = pidfile + ".restart"
    child = [0]

    def term(signum, frame):
        if child[0]:
            try:
                os.kill(child[0], signal.SIGTERM)
            except ProcessLookupError:
                pass
        sys.exit(0)

    signal.signal(signal.SIGTERM, term)
    while True:
        pid = os.fork()
        if pid == 0:
            os.dup2(s.fileno(), 3)
            os.set_inheritable(3, True)  # dup2 onto itself keeps close-on-exec
            env = dict(os.environ, LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.execve(journald, [journald], env)
        child[0] = pid
        with open(pidfile + ".tmp", "w") as f:
            f.write("%d\n" % pid)
        os.rename(pidfile + ".tmp", pidfile)
        os.waitpid(pid, 0)
        while not os.path.exists(restart):
            time.sleep(0.05)
        os.unlink(restart)


if __name__ == "__main__":
    main(*sys.argv[1:3])
