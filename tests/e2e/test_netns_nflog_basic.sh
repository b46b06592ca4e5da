#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Live NFLOG records reach an output: nftables in a private namespace logs
# ICMP, TCP and UDP over IPv4 and IPv6 to a group; nflog -> decode -> pcap
# (NFLOG link type) must write every packet with its prefix, family, hook
# and input interface.  When tcpdump is installed the same packets are also
# logged to a second group that tcpdump records, and replaying that capture
# must give the same records as the live input (timestamps and sequence
# numbers aside: tcpdump does not ask for those).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3

G=7
G2=8
netns_pair slnf 99

TWO=false
command -v tcpdump >/dev/null 2>&1 && TWO=true
SECOND=""
$TWO && SECOND="log group $G2 prefix \"sluice-test \""
ip netns exec "$B" nft -f - <<NFT || skip "nftables log group not available"
table inet sluice_e2e {
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr 10.99.0.1 meta l4proto { icmp, tcp, udp } log group $G prefix "sluice-test " $SECOND
		ip6 saddr fd99::1 meta l4proto { tcp, udp } log group $G prefix "sluice-test " $SECOND
		ip6 saddr fd99::1 icmpv6 type echo-request log group $G prefix "sluice-test " $SECOND
	}
}
NFT

cat >"$WORK/live.yaml" <<YAML
stacks:
  live:
    - {plugin: nflog, group: $G, qtimeout: 20ms}
    - decode
    - {plugin: pcap, file: "$WORK/live.pcap", linktype: nflog}
YAML
if $TWO; then
	ip netns exec "$B" tcpdump -n -U -i nflog:$G2 -w "$WORK/tcpdump.pcap" 2>"$WORK/tcpdump.log" &
	at_exit "kill $!"
	TCPDUMP_PID=$!
	wait_for 10 grep -qs "listening on" "$WORK/tcpdump.log" || fail "tcpdump did not start"
fi
ip netns exec "$B" "$SLUICE" -c "$WORK/live.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }

# 5 UDP + 2 ICMP echo + 1 TCP SYN (to a closed port) per IP version
ip netns exec "$A" python3 "$(dirname "$0")/send_mixed.py" 10.99.0.2 fd99::2 sluice-e2e
EXPECT=16

# SIGUSR1 makes sluice log its counters
live_has_all() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	grep -q "(nflog): in=$EXPECT " "$WORK/sluice.log"
}
wait_for 10 live_has_all || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
cat "$WORK/sluice.log"

# check_nflog_pcap FILE: prints "count families hooks prefixes payloads" checks
cat >"$WORK/nflog.py" <<'PY'
import struct, sys
def records(fn):
    d = open(fn, "rb").read()
    e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    if struct.unpack(e + "I", d[20:24])[0] != 239:
        sys.exit("%s: not an NFLOG capture" % fn)
    off = 24
    while off + 16 <= len(d):
        incl = struct.unpack(e + "I", d[off + 8:off + 12])[0]
        yield d[off + 16:off + 16 + incl]
        off += 16 + incl
def tlvs(rec):
    fam, p, out = rec[0], 4, {}
    while p + 4 <= len(rec):
        l, t = struct.unpack("=HH", rec[p:p + 4])
        if l < 4: sys.exit("bad TLV")
        out[t & 0x3fff] = rec[p + 4:p + l]
        p += (l + 3) & ~3
    return fam, out
def summary(fn):
    res = []
    for rec in records(fn):
        fam, t = tlvs(rec)
        t.pop(3, None)     # NFULA_TIMESTAMP: receive time when the kernel gave none
        t.pop(12, None)    # NFULA_SEQ and
        t.pop(13, None)    # NFULA_SEQ_GLOBAL: tcpdump does not ask for them
        res.append((fam, sorted(t.items())))
    return res
if sys.argv[1] == "check":
    n, bad = 0, []
    udp = set()
    for fam, items in summary(sys.argv[2]):
        t = dict(items); n += 1
        if fam not in (2, 10): bad.append("family %d" % fam)
        if t.get(10, b"").rstrip(b"\0") != b"sluice-test ": bad.append("prefix %r" % t.get(10))
        if 1 not in t or t[1][2] != 1: bad.append("hook")
        if 4 not in t: bad.append("no ifindex_in")
        pl = t.get(9, b"")
        if b"sluice-e2e-" in pl: udp.add((fam, pl[pl.index(b"sluice-e2e-"):]))
    print(n, len(udp), len(bad), " ".join(bad[:5]))
else:   # compare FILE1 FILE2: records equal apart from timestamps
    a, b = summary(sys.argv[2]), summary(sys.argv[3])
    print(len(a), len(b), sum(x == y for x, y in zip(a, b)))
PY
read -r n udp nbad why < <(python3 "$WORK/nflog.py" check "$WORK/live.pcap") || fail "cannot read live.pcap"
[ "$n" = "$EXPECT" ] || fail "live: $n records, expected $EXPECT"
[ "$udp" = 10 ] || fail "live: $udp distinct UDP payloads, expected 10"
[ "$nbad" = 0 ] || fail "live: bad records: $why"
grep -q "(nflog):.* errors=0 .*seq_lost=0 malformed=0" "$WORK/sluice.log" || fail "nflog counted errors or losses"

tcpdump_has_all() { [ "$(tcpdump -r "$WORK/tcpdump.pcap" 2>/dev/null | wc -l)" -ge $EXPECT ]; }
if $TWO; then
	# the kernel holds group $G2's events up to 1 s (tcpdump sets no qtimeout)
	wait_for 5 tcpdump_has_all || true
	kill -INT "$TCPDUMP_PID"
	wait "$TCPDUMP_PID" || true
	cat >"$WORK/replay.yaml" <<YAML
stacks:
  replayed:
    - {plugin: replay, file: "$WORK/tcpdump.pcap"}
    - decode
    - {plugin: pcap, file: "$WORK/replayed.pcap", linktype: nflog}
YAML
	"$SLUICE" -c "$WORK/replay.yaml" >"$WORK/replay.log" 2>&1 || { cat "$WORK/replay.log"; fail "replay failed"; }
	read -r a b same < <(python3 "$WORK/nflog.py" compare "$WORK/live.pcap" "$WORK/replayed.pcap")
	[ "$b" = "$EXPECT" ] || fail "replay of tcpdump's capture: $b records, expected $EXPECT"
	[ "$same" = "$EXPECT" ] || fail "live and replayed records differ ($same of $EXPECT equal)"
	echo "live and replayed records are identical"
fi
pass "$n live records"
