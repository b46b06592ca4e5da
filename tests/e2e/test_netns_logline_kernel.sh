#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# logline against the kernel itself: in a private namespace every packet is
# logged twice by nftables, once with `log prefix` (printk, read back from
# /dev/kmsg) and once with `log group` (NFLOG, read by sluice:
# nflog -> decode -> logline -> file).  The two sets of lines must be
# identical, field for field, for a plain `log` and for `log flags all`,
# and for a hostile prefix (backslash, tab, newline, ESC, DEL, UTF-8 and an
# invalid byte): /dev/kmsg escapes it as \xNN and so must sluice (one line
# per packet), but for valid UTF-8, which sluice keeps (compared after
# writing its bytes >= 0x80 as \xNN the way /dev/kmsg does).
# net.netfilter.nf_log_all_netns is set to 1 for the test (printk from a
# non-initial namespace) and restored at exit.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 setpriv
[ -r /dev/kmsg ] || skip "cannot read /dev/kmsg"
SYSCTL=/proc/sys/net/netfilter/nf_log_all_netns
modprobe nf_log_syslog 2>/dev/null || true
[ -w "$SYSCTL" ] || skip "no $SYSCTL (nf_log_syslog not available)"

lock_netfilter	# before the global sysctl: another run's test restores its own value
OLD_ALL_NETNS=$(cat "$SYSCTL")
at_exit "echo $OLD_ALL_NETNS > $SYSCTL"
echo 1 >"$SYSCTL"

A=$(unique_name sllka)
B=$(unique_name sllkb)
TAG="SLK$$"
G0=21
G1=22
G2=23
# raw bytes in an nft string are taken as they are (no escapes in nft)
HOSTILE="${TAG}K2 a\\b$(printf '\tc\nFAKE LINE \033[31m\303\251\377\177 ')"
make_netns "$A"
make_netns "$B"
ip link add va netns "$A" type veth peer name vb netns "$B" || skip "cannot create veth"
ip -n "$A" link set va address 02:00:00:98:00:01
ip -n "$B" link set vb address 02:00:00:98:00:02
ip netns exec "$A" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip netns exec "$B" sysctl -qw net.ipv6.conf.vb.addr_gen_mode=1
ip -n "$A" addr add 10.98.0.1/24 dev va
ip -n "$B" addr add 10.98.0.2/24 dev vb
ip -n "$B" addr add fd98::2/64 dev vb nodad
ip -n "$A" link set va up
ip -n "$B" link set vb up
ip -n "$B" neigh add 10.98.0.1 lladdr 02:00:00:98:00:01 dev vb nud permanent
ip -n "$B" neigh add fd98::1 lladdr 02:00:00:98:00:01 dev vb nud permanent

# K0: a plain `log`; K1: `log flags all` (after a mark is set).  Each is
# logged to printk and to NFLOG with the same prefix.
ip netns exec "$B" nft -f - <<NFT || skip "nftables log not available"
table inet sluice_llk {
	chain pre {
		type filter hook prerouting priority 0; policy accept;
		iifname "vb" log prefix "${TAG}K0 " log group $G0 prefix "${TAG}K0 "
		iifname "vb" log prefix "$HOSTILE" log group $G2 prefix "$HOSTILE"
		iifname "vb" meta mark set 0x17 log prefix "${TAG}K1 " flags all log group $G1 prefix "${TAG}K1 "
		iifname "vb" drop
	}
	chain out {
		type filter hook output priority 0; policy accept;
		oifname "vb" meta l4proto { tcp, udp } log prefix "${TAG}K0 " log group $G0 prefix "${TAG}K0 "
		oifname "vb" meta l4proto { tcp, udp } log prefix "${TAG}K1 " flags all log group $G1 prefix "${TAG}K1 "
	}
}
NFT

cat >"$WORK/llk.yaml" <<YAML
instances:
  k0: {plugin: nflog, group: $G0, qtimeout: 20ms}
  k1: {plugin: nflog, group: $G1, qtimeout: 20ms}
  k2: {plugin: nflog, group: $G2, qtimeout: 20ms}
stacks:
  plain: [k0, decode, logline, {plugin: file, file: "$WORK/k0.sluice", flush_interval: 50ms}]
  hostile: [k2, decode, logline, {plugin: file, file: "$WORK/k2.sluice", flush_interval: 50ms}]
  all:
    - k1
    - decode
    - {plugin: logline, tcp_sequence: true, tcp_options: true, ip_options: true, uid: true, ether: true}
    - {plugin: file, file: "$WORK/k1.sluice", flush_interval: 50ms}
YAML

# printk lines with our tag, from now on
python3 - "$TAG" "$WORK/kmsg.txt" <<'PY' &
import os, sys
tag, out = sys.argv[1], sys.argv[2]
fd = os.open("/dev/kmsg", os.O_RDONLY)
os.lseek(fd, 0, os.SEEK_END)
with open(out, "w") as f:
    f.write("")
    f.flush()
    while True:
        try:
            rec = os.read(fd, 8192)
        except OSError:      # EPIPE: overwritten records; go on
            continue
        msg = rec.decode("utf-8", "replace").split("\n")[0].split(";", 1)[-1]
        if msg.startswith(tag):
            f.write(msg + "\n")
            f.flush()
PY
KMSG_PID=$!
at_exit "kill $KMSG_PID"
wait_for 5 test -e "$WORK/kmsg.txt" || fail "kmsg reader did not start"

ip netns exec "$B" "$SLUICE" -c "$WORK/llk.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
bound() {
	grep -qs "bound NFLOG group $G0" "$WORK/sluice.log" && grep -qs "bound NFLOG group $G1" "$WORK/sluice.log" &&
		grep -qs "bound NFLOG group $G2" "$WORK/sluice.log"
}
wait_for 10 bound || { cat "$WORK/sluice.log"; fail "nflog did not start"; }

# Crafted frames from A (raw, so any header is possible), then packets B
# sends itself (UID/GID of the socket, the output hook).
ip netns exec "$A" python3 - <<'PY'
import socket, struct, time
MA, MB = bytes.fromhex("020000980001"), bytes.fromhex("020000980002")
def csum(d):
    if len(d) % 2: d += b"\0"
    s = sum(struct.unpack("!%dH" % (len(d) // 2), d))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
def ip4(proto, pl, src="10.98.0.1", dst="10.98.0.2", frag=0x4000, opts=b"", tos=0, ident=0x1234):
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | (5 + len(opts) // 4), tos, 20 + len(opts) + len(pl), ident, frag,
                    64, proto, 0, socket.inet_aton(src), socket.inet_aton(dst)) + opts
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + pl
def ip6(nh, pl, src="fd98::1", dst="fd98::2", tc=0, flow=0):
    return struct.pack("!IHBB16s16s", (6 << 28) | (tc << 20) | flow, len(pl), nh, 64,
                       socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)) + pl
def udp(sp, dp, d=b"sluice"): return struct.pack("!HHHH", sp, dp, 8 + len(d), 0) + d
def tcp(sp, dp, fl=0x02, opts=b"", res=0, seq=1000, ack=0):
    return struct.pack("!HHIIBBHHH", sp, dp, seq, ack, ((5 + len(opts) // 4) << 4) | res, fl, 64240, 0, 0) + opts
def icmp(t, c, rest=b"\0\0\0\0", d=b""): return struct.pack("!BBH", t, c, 0) + rest + d
OPTS = bytes.fromhex("020405b40402080a0001e2400000000001030307")
inner = ip4(6, tcp(40000, 80, 0x18), src="10.98.0.2", dst="192.0.2.9")
inner6 = ip6(17, udp(5001, 53), src="fd98::2", dst="2001:db8::1")
frames = [
    (0x0800, ip4(17, udp(1234, 5353))),
    (0x0800, ip4(6, tcp(40001, 22, opts=OPTS), tos=0xb8)),
    (0x0800, ip4(6, tcp(40002, 443, 0xff, res=0x0f), frag=0)),
    (0x0800, ip4(1, icmp(8, 0, struct.pack("!HH", 42, 7), b"ping"))),
    (0x0800, ip4(1, icmp(3, 4, struct.pack("!HH", 0, 1400), inner))),
    (0x0800, ip4(1, icmp(11, 0, b"\0\0\0\0", inner[:28]))),
    (0x0800, ip4(6, tcp(3, 4, opts=b"\x01\x01\x01\x00"), opts=b"\x94\x04\x00\x00")),
    (0x0800, ip4(17, b"frag" * 4, frag=0x2000 | 185, ident=0x4243)),
    (0x0800, ip4(50, struct.pack("!II", 0xf1234567, 1) + b"e" * 8)),
    (0x0800, ip4(253, b"")),
    (0x86dd, ip6(17, udp(1234, 53, b"six"), tc=0xb8, flow=0x12345)),
    (0x86dd, ip6(6, tcp(50000, 443, 0xc2, opts=OPTS))),
    (0x86dd, ip6(58, icmp(128, 0, struct.pack("!HH", 99, 3), b"data"))),
    (0x86dd, ip6(58, icmp(2, 0, struct.pack("!I", 1280), inner6))),
    (0x86dd, ip6(0, bytes([17, 0, 1, 4, 0, 0, 0, 0]) + udp(9, 10))),
    (0x86dd, ip6(44, struct.pack("!BBHI", 17, 0, 1, 0xcafebabe) + udp(15, 16, b"f" * 8))),
    (0x86dd, ip6(51, struct.pack("!BBHII", 17, 4, 0, 0xabcdef01, 5) + b"\0" * 12 + udp(17, 18))),
]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("va", 0))
for et, l3 in frames:
    s.send(MB + MA + struct.pack("!H", et) + l3)
    time.sleep(0.01)
PY
# an unprivileged user cannot run a python3 under /root (pyenv shims)
SYSPY=python3
for p in /usr/bin/python3 /usr/local/bin/python3; do
	[ -x "$p" ] && { SYSPY=$p; break; }
done
ip netns exec "$B" setpriv --reuid 65534 --regid 65534 --clear-groups "$SYSPY" -c \
	"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x' * 3, ('10.98.0.1', 9999))"
ip netns exec "$B" python3 -c "
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.sendto(b'yy', ('fd98::1', 7))
t = socket.socket(); t.settimeout(0.2)
try: t.connect(('10.98.0.1', 9))
except OSError: pass"
# 17 frames in, 3 packets out (the TCP SYN may be retransmitted: at least 3)
EXPECT_MIN=20

count() { grep -ac "^${TAG}$1 " "$2" 2>/dev/null || true; }
settled() {
	local k0 k1 k2
	k0=$(count K0 "$WORK/kmsg.txt")
	k1=$(count K1 "$WORK/kmsg.txt")
	k2=$(count K2 "$WORK/kmsg.txt")
	[ "$k0" -ge $EXPECT_MIN ] && [ "$k1" -ge $EXPECT_MIN ] && [ "$k2" -ge 17 ] &&
		[ "$(count K0 "$WORK/k0.sluice")" -ge "$k0" ] && [ "$(count K1 "$WORK/k1.sluice")" -ge "$k1" ] &&
		[ "$(count K2 "$WORK/k2.sluice")" -ge "$k2" ]
}
wait_for 15 settled || true
sleep 0.3
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
kill "$KMSG_PID" 2>/dev/null || true

# Compare as sorted multisets (printk and NFLOG may interleave differently);
# on a difference, show the differing fields.
python3 - "$WORK" "$TAG" <<'PY' || { cat "$WORK/sluice.log"; fail "sluice's lines differ from the kernel's"; }
import sys
work, tag = sys.argv[1:]
kern = [l.rstrip("\n") for l in open(work + "/kmsg.txt")]
ok = True
def kmsg_form(raw):
    # sluice's line must be valid UTF-8 without C0/C1 controls or DEL ...
    line = raw.decode("utf-8")
    assert not [c for c in line if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f], line
    # ... and is then what /dev/kmsg shows once its other bytes >= 0x80 are \xNN
    return "".join(chr(b) if b < 0x80 else "\\x%02x" % b for b in raw)
for k, fn in (("K0", "k0.sluice"), ("K1", "k1.sluice"), ("K2", "k2.sluice")):
    want = sorted(l for l in kern if l.startswith(tag + k + " "))
    got = sorted(kmsg_form(l.rstrip(b"\n")) for l in open(work + "/" + fn, "rb"))
    print("%s: kernel %d lines, sluice %d lines" % (k, len(want), len(got)))
    if want == got:
        continue
    ok = False
    missing = [l for l in want if l not in got]
    extra = [l for l in got if l not in want]
    for w, g in zip(missing, extra):
        wf, gf = w.split(" "), g.split(" ")
        print("kernel: " + w + "|")
        print("sluice: " + g + "|")
        print("  fields: " + ", ".join("%r != %r" % p for p in zip(wf, gf) if p[0] != p[1]) +
              ("" if len(wf) == len(gf) else "  (%d vs %d fields)" % (len(wf), len(gf))))
    for l in missing[len(extra):]:
        print("only kernel: " + l + "|")
    for l in extra[len(missing):]:
        print("only sluice: " + l + "|")
sys.exit(0 if ok else 1)
PY
grep -aq 'K2 a\\x5cb\\x09c\\x0aFAKE LINE \\x1b\[31m'$'\303\251''\\xff\\x7f IN=vb ' "$WORK/k2.sluice" ||
	{ head -2 "$WORK/k2.sluice"; fail "hostile prefix not escaped as expected"; }
pass "sluice's lines are the kernel's ($(count K0 "$WORK/k0.sluice") + $(count K1 "$WORK/k1.sluice") + $(count K2 "$WORK/k2.sluice") hostile)"
