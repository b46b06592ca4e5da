# SPDX-License-Identifier: GPL-2.0-or-later
"""Traffic of known shape for the conntrack tests, run inside a namespace.

  nfct_traffic.py flows            one TCP and one UDP flow over IPv4 and IPv6
  nfct_traffic.py burst N BASE     N UDP flows 127.0.0.1:BASE+i -> :6000, one
                                   50-byte datagram and a 70-byte reply each
"""
import socket
import sys
import threading

# family, address, tcp client port, tcp server port, udp client, udp server
FLOWS = [
    (socket.AF_INET, "127.0.0.1", 40001, 5001, 40002, 5002),
    (socket.AF_INET6, "::1", 40011, 5011, 40012, 5012),
]


def tcp_flow(fam, host, cport, sport):
    srv = socket.socket(fam, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, sport))
    srv.listen()

    def serve():
        c, _ = srv.accept()
        got = 0
        while got < 1000:
            d = c.recv(4096)
            if not d:
                break
            got += len(d)
        c.sendall(b"y" * 3000)
        c.close()

    t = threading.Thread(target=serve)
    t.start()
    c = socket.socket(fam, socket.SOCK_STREAM)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    c.bind((host, cport))
    c.connect((host, sport))
    c.sendall(b"x" * 1000)
    while c.recv(4096):
        pass
    c.close()
    t.join()
    srv.close()


def udp_flow(fam, host, cport, sport):
    srv = socket.socket(fam, socket.SOCK_DGRAM)
    srv.bind((host, sport))
    cli = socket.socket(fam, socket.SOCK_DGRAM)
    cli.bind((host, cport))
    for _ in range(3):
        cli.sendto(b"a" * 100, (host, sport))
    for _ in range(3):
        _, peer = srv.recvfrom(2000)
        srv.sendto(b"b" * 200, peer)
    for _ in range(3):
        cli.recvfrom(2000)


def burst(n, base):
    srv = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    srv.bind(("127.0.0.1", 6000))
    clients = []
    for i in range(n):
        c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        c.bind(("127.0.0.1", base + i))
        c.sendto(b"q" * 50, ("127.0.0.1", 6000))
        clients.append(c)
        _, peer = srv.recvfrom(100)
        srv.sendto(b"r" * 70, peer)
    for c in clients:
        c.recvfrom(100)


if __name__ == "__main__":
    if sys.argv[1] == "flows":
        for fam, host, tc, ts, uc, us in FLOWS:
            tcp_flow(fam, host, tc, ts)
            udp_flow(fam, host, uc, us)
    else:
        burst(int(sys.argv[2]), int(sys.argv[3]))
