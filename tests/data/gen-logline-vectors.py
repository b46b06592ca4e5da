#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Record what the running kernel's LOG target prints for crafted packets.

Writes tests/data/logline-kernel.txt, the vectors tests/unit/test_logline.c
checks plugins/common/logline_fmt.c against.  Needs root: it builds two
network namespaces joined by a veth pair, sends hand-made Ethernet frames
from one into the other (AF_PACKET), logs them there with nft `log` rules
using several flag sets, and reads the printk lines from /dev/kmsg.
net.netfilter.nf_log_all_netns is set to 1 while it runs and restored.

Each output line is tab-separated:
  flags family in out hwtype hwhdr hwproto mark uid gid packet expected
("-" = field absent; hex for hwhdr, packet; the expected text runs to the
end of the line, trailing spaces included).

Usage: sudo python3 tests/data/gen-logline-vectors.py [OUTPUT]
"""
import os
import socket
import struct
import subprocess
import sys
import time

PID = os.getpid()
NSA, NSB = f"llgA{PID}", f"llgB{PID}"
TAG = f"L{PID % 100000}"
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "logline-kernel.txt")

# prefix -> (kernel log flags, family override or None)
RULES = {
    "a": 0x00,
    "b": 0x07,      # tcp sequence,options + ip options
    "c": 0x20,      # ether
    "d": 0x00,      # after meta mark set 0x2a
    "e": 0x08,      # skuid (output)
    "f": 0x2f,      # all (output)
    "g": 0x00,      # netdev ingress
    "h": 0x00,      # arp
    "i": 0x20,      # arp, ether
}


def sh(*args, check=True, **kw):
    return subprocess.run(list(args), check=check, **kw)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ip4(proto, payload, src="10.77.0.1", dst="10.77.0.2", tos=0, ttl=64, ident=0x1234, frag=0x4000,
        opts=b"", tot=None):
    ihl = 5 + len(opts) // 4
    tot = tot if tot is not None else 20 + len(opts) + len(payload)
    h = struct.pack("!BBHHHBBH4s4s", (4 << 4) | ihl, tos, tot, ident, frag, ttl, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst)) + opts
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload


def ip6(nh, payload, src="fd77::1", dst="fd77::2", tc=0, flow=0, hlim=64):
    w = (6 << 28) | (tc << 20) | flow
    return struct.pack("!IHBB16s16s", w, len(payload), nh, hlim, socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + payload


def udp(sp, dp, data=b"hello"):
    return struct.pack("!HHHH", sp, dp, 8 + len(data), 0) + data


def tcp(sp, dp, seq=1000, ack=0, flags=0x02, win=64240, urg=0, opts=b"", res=0, data=b""):
    doff = 5 + len(opts) // 4
    return struct.pack("!HHIIBBHHH", sp, dp, seq, ack, (doff << 4) | res, flags, win, 0, urg) + opts + data


def icmp(t, c, rest=b"\0\0\0\0", data=b""):
    return struct.pack("!BBH", t, c, 0) + rest + data


TCPOPTS = bytes.fromhex("020405b40402080a0001e2400000000001030307")


def frames(mac_a, mac_b):
    """(name, ethertype, L3 bytes) sent from A to B."""
    eth4, eth6, arp = 0x0800, 0x86DD, 0x0806
    inner_tcp = ip4(6, tcp(40000, 80, flags=0x18, data=b"x" * 8), src="10.77.0.2", dst="192.0.2.9")
    inner_udp = ip4(17, udp(5000, 53, b"q" * 4), src="10.77.0.2", dst="198.51.100.1")
    inner6 = ip6(17, udp(5001, 53, b"z" * 4), src="fd77::2", dst="2001:db8::1")
    v6hbh = bytes([17, 0, 1, 4, 0, 0, 0, 0])  # next=UDP, len 0, PadN(4)
    return [
        ("udp", eth4, ip4(17, udp(1234, 5353, b"payload"))),
        ("tcp-syn-opts", eth4, ip4(6, tcp(40001, 22, seq=0xDEADBEEF, opts=TCPOPTS))),
        ("tcp-allflags", eth4, ip4(6, tcp(40002, 443, seq=7, ack=9, flags=0xFF, urg=77, res=0x0F), frag=0)),
        ("tcp-res-ae", eth4, ip4(6, tcp(40003, 443, flags=0x10, res=0x01), tos=0x03)),
        ("tcp-res-8", eth4, ip4(6, tcp(40003, 443, flags=0x11, res=0x08), tos=0xB8)),
        ("tcp-short", eth4, ip4(6, b"\x9c\x43\x01\xbb\0\0")),
        ("icmp-echo", eth4, ip4(1, icmp(8, 0, struct.pack("!HH", 4242, 7), b"ping" * 4), ttl=1)),
        ("icmp-reply", eth4, ip4(1, icmp(0, 0, struct.pack("!HH", 1, 65535)), tos=0xFF, ident=0)),
        ("icmp-short", eth4, ip4(1, b"\x08\x00")),
        ("icmp-echo-6b", eth4, ip4(1, b"\x08\x00\x00\x00\x00\x01")),
        ("icmp-fragneeded", eth4, ip4(1, icmp(3, 4, struct.pack("!HH", 0, 1400), inner_tcp[:28 + 20]))),
        ("icmp-unreach-port", eth4, ip4(1, icmp(3, 3, b"\0\0\0\0", inner_udp))),
        ("icmp-redirect", eth4, ip4(1, icmp(5, 1, socket.inet_aton("10.77.0.254"), inner_udp[:28]))),
        ("icmp-timex-short", eth4, ip4(1, icmp(11, 0, b"\0\0\0\0", inner_tcp[:28]))),
        ("icmp-timex-tiny", eth4, ip4(1, icmp(11, 0, b"\0\0\0\0", inner_tcp[:20]))),
        ("icmp-timex-trunc", eth4, ip4(1, icmp(11, 0, b"\0\0\0\0", inner_tcp[:12]))),
        ("icmp-paramprob", eth4, ip4(1, icmp(12, 0, b"\x14\0\0\0", inner_udp[:28]))),
        ("icmp-timestamp-short", eth4, ip4(1, icmp(13, 0, b"\0\0\0\0"))),
        ("icmp-type42", eth4, ip4(1, icmp(42, 9))),
        ("ip-opts-udp", eth4, ip4(17, udp(1, 2), opts=b"\x94\x04\x00\x00")),
        ("ip-opts-tcp", eth4, ip4(6, tcp(3, 4, opts=b"\x01\x01\x01\x00"), opts=b"\x01\x01\x01\x00\x94\x04\x00\x00")),
        ("frag-first", eth4, ip4(17, udp(1111, 2222, b"A" * 16), frag=0x2000, ident=0x4242)),
        ("frag-mid-tcp", eth4, ip4(6, b"B" * 16, frag=0x2000 | 185, ident=0x4243)),
        ("frag-last-icmp", eth4, ip4(1, b"C" * 8, frag=3, ident=0x4244)),
        ("frag-ce", eth4, ip4(17, udp(1, 2), frag=0x8000 | 0x4000)),
        ("esp", eth4, ip4(50, struct.pack("!II", 0xF1234567, 1) + b"e" * 8)),
        ("esp-short", eth4, ip4(50, b"\x01\x02")),
        ("ah", eth4, ip4(51, struct.pack("!BBHII", 17, 4, 0, 0x100, 2) + b"\0" * 12 + udp(5, 6))),
        ("ah-frag", eth4, ip4(51, b"\0" * 8, frag=10)),
        ("gre", eth4, ip4(47, b"\0\0\x08\0")),
        ("proto253", eth4, ip4(253, b"")),
        ("udplite", eth4, ip4(136, udp(7, 8))),
        ("udp-short", eth4, ip4(17, b"\0\x35\0")),
        ("udp6", eth6, ip6(17, udp(1234, 53, b"six"), tc=0xB8, flow=0x12345)),
        ("tcp6", eth6, ip6(6, tcp(50000, 443, opts=TCPOPTS, flags=0xC2), hlim=255)),
        ("icmp6-echo", eth6, ip6(58, icmp(128, 0, struct.pack("!HH", 99, 3), b"data"))),
        ("icmp6-reply", eth6, ip6(58, icmp(129, 0, struct.pack("!HH", 0, 0)))),
        ("icmp6-toobig", eth6, ip6(58, icmp(2, 0, struct.pack("!I", 1280), inner6))),
        ("icmp6-unreach", eth6, ip6(58, icmp(1, 4, b"\0\0\0\0", inner6[:44]))),
        ("icmp6-paramprob", eth6, ip6(58, icmp(4, 1, struct.pack("!I", 40), inner6[:40]))),
        ("icmp6-mld", eth6, ip6(58, icmp(130, 0, b"\0\0\0\0", b"\0" * 16))),
        ("icmp6-short", eth6, ip6(58, b"\x80\x00")),
        ("icmp6-type200", eth6, ip6(58, icmp(200, 5))),
        ("ip6-hbh-udp", eth6, ip6(0, v6hbh + udp(9, 10))),
        ("ip6-dst-tcp", eth6, ip6(60, bytes([6, 0, 1, 4, 0, 0, 0, 0]) + tcp(11, 12))),
        ("ip6-rt-udp", eth6, ip6(43, bytes([17, 0, 0, 0, 0, 0, 0, 0]) + udp(13, 14))),
        ("ip6-frag-first", eth6, ip6(44, struct.pack("!BBHI", 17, 0, 0x0001, 0xCAFEBABE) + udp(15, 16, b"f" * 8))),
        ("ip6-frag-later", eth6, ip6(44, struct.pack("!BBHI", 17, 0, 0x0008 * 0 + (24 << 3), 0x1234) + b"g" * 8)),
        ("ip6-frag-later-dst", eth6, ip6(44, struct.pack("!BBHI", 60, 0, (2 << 3) | 1, 0x99) + bytes([17, 0, 1, 4, 0, 0, 0, 0]))),
        ("ip6-frag-icmp6-later", eth6, ip6(44, struct.pack("!BBHI", 58, 0, 8 << 3, 0x98) + b"h" * 8)),
        ("ip6-ah-udp", eth6, ip6(51, struct.pack("!BBHII", 17, 4, 0, 0xABCDEF01, 5) + b"\0" * 12 + udp(17, 18))),
        ("ip6-esp", eth6, ip6(50, struct.pack("!II", 0x42, 1) + b"E" * 8)),
        ("ip6-esp-short", eth6, ip6(50, b"\0\0\0")),
        ("ip6-nonext", eth6, ip6(59, b"")),
        ("ip6-gre", eth6, ip6(47, b"\0\0\x86\xdd")),
        ("ip6-hbh-trunc", eth6, ip6(0, b"")),
        ("arp-req", arp, struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, mac_a, socket.inet_aton("10.77.0.1"),
                                      b"\0" * 6, socket.inet_aton("10.77.0.2"))),
        ("arp-other", arp, struct.pack("!HHBBH", 6, 0x0800, 6, 4, 2) + b"\0" * 20),
        ("ethertype-88b5", 0x88B5, b"local experimental ethertype"),
    ]


def kmsg_drain(fd):
    lines = []
    while True:
        try:
            rec = os.read(fd, 8192)
        except BlockingIOError:
            break
        except OSError:  # EPIPE: records overwritten; skip
            continue
        text = rec.decode("utf-8", "replace").split("\n")[0]
        msg = text.split(";", 1)[1] if ";" in text else text
        # /dev/kmsg escapes unprintable bytes as \xNN; our prefixes have none
        lines.append(msg)
    return lines


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root", file=sys.stderr)
        return 77
    old = open("/proc/sys/net/netfilter/nf_log_all_netns").read().strip()
    try:
        return run()
    finally:
        with open("/proc/sys/net/netfilter/nf_log_all_netns", "w") as f:
            f.write(old)
        sh("ip", "netns", "del", NSA, check=False, stderr=subprocess.DEVNULL)
        sh("ip", "netns", "del", NSB, check=False, stderr=subprocess.DEVNULL)


def run():
    with open("/proc/sys/net/netfilter/nf_log_all_netns", "w") as f:
        f.write("1")
    sh("ip", "netns", "add", NSA)
    sh("ip", "netns", "add", NSB)
    # A only sends raw frames: no IPv6 of its own (MLD, DAD) to pollute the log
    sh("ip", "netns", "exec", NSA, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
       "net.ipv6.conf.default.disable_ipv6=1")
    sh("ip", "-n", NSA, "link", "add", "lla0", "type", "veth", "peer", "name", "llb0", "netns", NSB)
    sh("ip", "netns", "exec", NSB, "sysctl", "-qw", "net.ipv6.conf.llb0.addr_gen_mode=1")
    sh("ip", "-n", NSA, "link", "set", "lla0", "up")
    sh("ip", "-n", NSA, "addr", "add", "10.77.0.1/24", "dev", "lla0")
    sh("ip", "-n", NSB, "link", "set", "llb0", "up")
    sh("ip", "-n", NSB, "addr", "add", "10.77.0.2/24", "dev", "llb0")
    sh("ip", "-n", NSB, "addr", "add", "fd77::2/64", "dev", "llb0", "nodad")
    def mac(ns, dev):
        out = sh("ip", "-n", ns, "-o", "link", "show", dev, capture_output=True, text=True).stdout
        return bytes.fromhex(out.split("link/ether ")[1].split()[0].replace(":", ""))
    mac_a, mac_b = mac(NSA, "lla0"), mac(NSB, "llb0")
    # static neighbours: B's own packets go out without ARP/NS first
    mac_a_s = ":".join(f"{x:02x}" for x in mac_a)
    sh("ip", "-n", NSB, "neigh", "add", "10.77.0.1", "lladdr", mac_a_s, "dev", "llb0", "nud", "permanent")
    sh("ip", "-n", NSB, "neigh", "add", "fd77::1", "lladdr", mac_a_s, "dev", "llb0", "nud", "permanent")
    T = TAG
    ruleset = f"""
table inet t {{
  chain pre {{ type filter hook prerouting priority 0; policy accept;
    iifname "llb0" log prefix "{T}a "
    iifname "llb0" log prefix "{T}b " flags tcp sequence,options flags ip options
    iifname "llb0" log prefix "{T}c " flags ether
    iifname "llb0" meta mark set 0x2a log prefix "{T}d "
    meta mark set 0 drop
  }}
  chain out {{ type filter hook output priority 0; policy accept;
    oifname "llb0" log prefix "{T}e " flags skuid
    oifname "llb0" log prefix "{T}f " flags all
  }}
}}
table netdev n {{
  chain ing {{ type filter hook ingress device "llb0" priority 0; policy accept;
    log prefix "{T}g "
  }}
}}
table arp a {{
  chain in {{ type filter hook input priority 0; policy accept;
    log prefix "{T}i " flags ether
    log prefix "{T}h "
    drop
  }}
}}
"""
    sh("ip", "netns", "exec", NSB, "nft", "-f", "-", input=ruleset, text=True)

    kfd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    os.lseek(kfd, 0, os.SEEK_END)
    out = []

    def collect(keys, wait=0.25):
        time.sleep(wait)
        return [l for l in kmsg_drain(kfd) if l.startswith(T) and l[len(T)] in keys]

    def emit(lines, pkt, hwhdr, hwproto, ifname_in, ifname_out, uid="-", gid="-"):
        for l in lines:
            key = l[len(T)]
            flags = RULES[key]
            fam = {"g": 5, "h": 3, "i": 3}.get(key)
            if fam is None:
                fam = 10 if pkt[0] >> 4 == 6 else 2
            mark = "42" if key == "d" else "-"
            out.append("\t".join([f"{flags:#x}", str(fam), ifname_in, ifname_out, "1" if hwhdr else "-",
                                  hwhdr.hex() if hwhdr else "-", f"{hwproto:#06x}" if key == "g" else "-",
                                  mark, uid if key in "ef" else "-", gid if key in "ef" else "-",
                                  pkt.hex(), l]))

    # frames from A, logged on B's input side
    sender = (
        "import socket,sys\n"
        "s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\n"
        "s.bind(('lla0',0))\n"
        "s.send(bytes.fromhex(sys.argv[1]))\n"
    )
    collect(RULES, 0.5)  # anything left over from bringing the links up
    for name, et, l3 in frames(mac_a, mac_b):
        eth = mac_b + mac_a + struct.pack("!H", et)
        sh("ip", "netns", "exec", NSA, "python3", "-c", sender, (eth + l3).hex())
        lines = collect("abcdghi")
        if not lines:
            print(f"warning: {name}: no kernel line", file=sys.stderr)
        out.append(f"# {name}")
        emit(lines, l3, eth, et, "llb0", "-")

    # packets B sends itself: capture them on B's device to get their bytes
    cap = (
        "import socket,sys,os,select,time\n"
        "c=socket.socket(socket.AF_PACKET,socket.SOCK_RAW,socket.htons(3))\n"
        "c.bind(('llb0',0))\n"
        "pid=os.fork()\n"
        "if pid==0:\n"
        "  os.execvp(sys.argv[1],sys.argv[1:])\n"
        "os.waitpid(pid,0)\n"
        "end=time.time()+0.3\n"
        "while True:\n"
        "  r,_,_=select.select([c],[],[],max(0,end-time.time()))\n"
        "  if not r: break\n"
        "  d,a=c.recvfrom(65535)\n"
        "  if a[2]==socket.PACKET_OUTGOING: print(d[14:].hex()); break\n"
    )
    locals_ = [
        ("out-udp-nobody", ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "python3", "-c",
                            "import socket;s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.sendto(b'x'*3,('10.77.0.1',9999))"],
         "65534", "65534"),
        ("out-udp6-root", ["python3", "-c",
                           "import socket;s=socket.socket(socket.AF_INET6,socket.SOCK_DGRAM);s.sendto(b'yy',('fd77::1',7))"],
         "0", "0"),
        ("out-tcp-daemon", ["setpriv", "--reuid", "1", "--regid", "2", "--clear-groups", "python3", "-c",
                            "import socket;s=socket.socket();s.settimeout(0.1)\ntry: s.connect(('10.77.0.1',9))\nexcept Exception: pass"],
         "1", "2"),
    ]
    for name, cmd, uid, gid in locals_:
        r = sh("ip", "netns", "exec", NSB, "python3", "-c", cap, *cmd, capture_output=True, text=True)
        lines = collect("ef")
        if not r.stdout.strip() or not lines:
            print(f"warning: {name}: no capture or line", file=sys.stderr)
            continue
        pkt = bytes.fromhex(r.stdout.split()[0])
        # only the first packet's lines (a TCP connect may retransmit)
        first = {}
        for l in lines:
            first.setdefault(l[len(T)], l)
        out.append(f"# {name}")
        emit(list(first.values()), pkt, b"", 0, "-", "llb0", uid, gid)
    os.close(kfd)

    with open(OUT, "w") as f:
        f.write(f"# kernel LOG lines recorded by gen-logline-vectors.py on Linux {os.uname().release}\n")
        f.write("# flags family in out hwtype hwhdr hwproto mark uid gid packet expected\n")
        for l in out:
            f.write(l + "\n")
    print(f"wrote {sum(1 for l in out if not l.startswith('#'))} vectors to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
