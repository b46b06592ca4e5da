#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Record real ctnetlink datagrams (run as root inside a namespace with
conntrack loaded, accounting and timestamps on: make-ct-messages.sh).

  capture-ct.py OUTDIR TRAFFIC_CMD...

Subscribes to the NEW, UPDATE and DESTROY conntrack groups, runs the
traffic command, dumps the table (IPCTNL_MSG_CT_GET + NLM_F_DUMP), flushes
it (conntrack -F: the destroy events) and writes every datagram the kernel
sent as OUTDIR/NN-KIND.nl, the bytes exactly as recv() returned them.
"""
import os
import select
import socket
import struct
import subprocess
import sys

NETLINK_NETFILTER = 12
NFNL_SUBSYS_CTNETLINK = 1
IPCTNL_MSG_CT_NEW, IPCTNL_MSG_CT_GET, IPCTNL_MSG_CT_DELETE = 0, 1, 2
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
NLMSG_DONE = 3


def drain(sock, out, kind, until_done=False):
    n = 0
    while True:
        r, _, _ = select.select([sock], [], [], 0.5)
        if not r:
            if until_done:
                sys.exit("capture-ct.py: dump did not finish")
            return n
        d = sock.recv(1 << 16)
        out.append((kind, d))
        n += 1
        if until_done and struct.unpack_from("=IH", d)[1] == NLMSG_DONE:
            return n
        if until_done:
            # the last message of a datagram tells whether the dump is done
            off = 0
            while off + 16 <= len(d):
                ln, ty = struct.unpack_from("=IH", d, off)
                if ty == NLMSG_DONE:
                    return n
                off += (ln + 3) & ~3


def main():
    outdir, cmd = sys.argv[1], sys.argv[2:]
    ev = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    ev.bind((0, 0))
    for group in (1, 2, 3):  # NFNLGRP_CONNTRACK_NEW, _UPDATE, _DESTROY
        ev.setsockopt(270, 1, group)  # SOL_NETLINK, NETLINK_ADD_MEMBERSHIP
    got = []
    subprocess.run(cmd, check=True)
    drain(ev, got, "event")
    dump = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    dump.bind((0, 0))
    req = struct.pack("=IHHII", 20, NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_GET,
                      NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + struct.pack("=BBH", 0, 0, 0)
    dump.send(req)
    drain(dump, got, "dump", until_done=True)
    subprocess.run(["conntrack", "-F"], check=True, stderr=subprocess.DEVNULL)
    drain(ev, got, "event")
    os.makedirs(outdir, exist_ok=True)
    for i, (kind, d) in enumerate(got):
        with open(os.path.join(outdir, "%02d-%s.nl" % (i, kind)), "wb") as f:
            f.write(d)
    print("%d datagrams" % len(got))


if __name__ == "__main__":
    main()
