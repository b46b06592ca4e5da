# SPDX-License-Identifier: GPL-2.0-or-later
"""Traffic of known shape between two namespaces, for the flow tests.

  flow_traffic.py server READYFILE   in the server namespace (10.98.0.2, fd98::2)
  flow_traffic.py client             in the client namespace (10.98.0.1, fd98::1)

TCP 10.98.0.1:40001 -> :5001: three 100-byte writes (TCP_NODELAY, apart in
time), a 500-byte answer, close.  UDP 10.98.0.1:40002 -> :5002: four
100-byte datagrams, two 300-byte answers.  UDP [fd98::1]:40012 -> :5012:
two 100-byte datagrams, one 50-byte answer.
"""
import socket
import sys
import threading
import time

S4, C4, S6, C6 = "10.98.0.2", "10.98.0.1", "fd98::2", "fd98::1"


def server(ready):
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind((S4, 5001))
    tcp.listen()
    u4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u4.bind((S4, 5002))
    u6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    u6.bind((S6, 5012))

    def serve_tcp():
        c, _ = tcp.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        got = 0
        while got < 300:
            d = c.recv(4096)
            if not d:
                break
            got += len(d)
        c.sendall(b"y" * 500)
        c.shutdown(socket.SHUT_WR)
        while c.recv(4096):
            pass
        c.close()

    def serve_udp4():
        for i in range(4):
            _, peer = u4.recvfrom(2000)
            if i % 2:
                u4.sendto(b"b" * 300, peer)

    def serve_udp6():
        for i in range(2):
            _, peer = u6.recvfrom(2000)
        u6.sendto(b"d" * 50, peer)

    ts = [threading.Thread(target=f) for f in (serve_tcp, serve_udp4, serve_udp6)]
    for t in ts:
        t.start()
    open(ready, "w").close()
    for t in ts:
        t.join()


def client():
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.bind((C4, 40001))
    c.connect((S4, 5001))
    for _ in range(3):
        c.sendall(b"x" * 100)
        time.sleep(0.05)
    got = 0
    while True:
        d = c.recv(4096)
        if not d:
            break
        got += len(d)
    c.close()
    assert got == 500, got

    u4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u4.bind((C4, 40002))
    for _ in range(4):
        u4.sendto(b"a" * 100, (S4, 5002))
        time.sleep(0.01)
    for _ in range(2):
        u4.recvfrom(2000)

    u6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    u6.bind((C6, 40012))
    for _ in range(2):
        u6.sendto(b"c" * 100, (S6, 5012))
        time.sleep(0.01)
    u6.recvfrom(2000)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(sys.argv[2])
    else:
        client()
