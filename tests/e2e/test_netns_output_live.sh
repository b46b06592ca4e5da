#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Live traffic through every output at once: nftables in a private
# namespace logs ICMP, UDP and TCP over IPv4 and IPv6 to a group that one
# nflog input fans out to pcap (nflog, ethernet and raw link types), file
# and syslog (RFC 5424 with structured data, over UDP to a listener in the
# namespace).  The same packets go to a second group that `tcpdump -i
# nflog` records: our NFLOG pcap must hold the kernel's records TLV for TLV.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 tcpdump tshark

G=17
G2=18
netns_pair slo 99

ip netns exec "$B" nft -f - <<NFT || skip "nftables log group not available"
table inet sluice_out_e2e {
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr 10.99.0.1 meta l4proto { icmp, tcp, udp } log group $G prefix "sluice-out " log group $G2 prefix "sluice-out "
		ip6 saddr fd99::1 meta l4proto { tcp, udp } log group $G prefix "sluice-out " log group $G2 prefix "sluice-out "
		ip6 saddr fd99::1 icmpv6 type echo-request log group $G prefix "sluice-out " log group $G2 prefix "sluice-out "
	}
}
NFT

# syslog receiver inside B: one line per datagram
ip netns exec "$B" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 5514))
open(sys.argv[1] + ".ready", "w").close()
with open(sys.argv[1], "ab", buffering=0) as f:
    while True:
        f.write(s.recv(65536).replace(b"\n", b" ") + b"\n")
' "$WORK/syslog.txt" &
at_exit "kill $!"
wait_for 10 test -e "$WORK/syslog.txt.ready" || fail "syslog listener did not start"

ip netns exec "$B" tcpdump -n -U -i nflog:$G2 -w "$WORK/kernel.pcap" 2>"$WORK/tcpdump.log" &
TCPDUMP_PID=$!
at_exit "kill $TCPDUMP_PID"
wait_for 10 grep -qs "listening on" "$WORK/tcpdump.log" || fail "tcpdump did not start"

cat >"$WORK/live.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
  dec: {plugin: decode}
  text: {plugin: logline}
stacks:
  nf: [fw, {plugin: pcap, file: "$WORK/nflog.pcap", linktype: nflog}]
  eth: [fw, {plugin: pcap, file: "$WORK/eth.pcap", linktype: ethernet}]
  raw: [fw, {plugin: pcap, file: "$WORK/raw.pcap", linktype: raw}]
  txt: [fw, dec, text, {plugin: file, file: "$WORK/text.log"}]
  sys: [fw, dec, text, {plugin: syslog, transport: udp, address: "127.0.0.1:5514",
                        format: rfc5424, structured_data: true}]
YAML
ip netns exec "$B" "$SLUICE" -c "$WORK/live.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }

ip netns exec "$A" python3 "$(dirname "$0")/send_mixed.py" 10.99.0.2 fd99::2 sluice-out
N=16

lines_ge() { [ "$(wc -l <"$1")" -ge "$2" ]; }
wait_for 10 lines_ge "$WORK/syslog.txt" $N || true
kernel_has_all() { [ "$(tcpdump --count -r "$WORK/kernel.pcap" 2>/dev/null | sed -n 's/ packets\?$//p')" -ge $N ]; }
wait_for 5 kernel_has_all || true	# tcpdump sets no qtimeout: up to 1 s
kill -INT "$TCPDUMP_PID"
wait "$TCPDUMP_PID" || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
grep -q "errors=[1-9]" "$WORK/sluice.log" && { cat "$WORK/sluice.log"; fail "errors counted"; }

cat >"$WORK/nf.py" <<'PY'
import struct, sys
def records(fn):
    d = open(fn, "rb").read()
    e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    nano = d[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    off, out = 24, []
    while off + 16 <= len(d):
        s, f, incl, _ = struct.unpack(e + "IIII", d[off:off + 16])
        out.append((s, f if nano else f * 1000, d[off + 16:off + 16 + incl]))
        off += 16 + incl
    return out
def tlvs(rec):
    p, out = 4, []
    while p + 4 <= len(rec):
        l, t = struct.unpack("=HH", rec[p:p + 4])
        out.append((t & 0x3fff, rec[p + 4:p + l]))
        p += (l + 3) & ~3
    return rec[0], out
cmd = sys.argv[1]
if cmd == "cmp":       # kernel ours: records equal TLV for TLV
    k, o = records(sys.argv[2]), records(sys.argv[3])
    same = 0
    for (_, _, a), (_, _, b) in zip(k, o):
        fa, ta = tlvs(a)
        fb, tb = tlvs(b)
        # sequence numbers: tcpdump does not ask for them; timestamps: without
        # skb timestamps the kernel stamps each group's copy when it logs it,
        # so the two groups differ by microseconds.
        skip = {3, 12, 13}
        if 3 in dict(ta):
            ka = struct.unpack(">QQ", dict(ta)[3])
            kb = struct.unpack(">QQ", dict(tb).get(3, bytes(16)))
            if abs((ka[0] - kb[0]) * 10**6 + ka[1] - kb[1]) > 100000:
                print("timestamps differ:", ka, kb, file=sys.stderr)
                continue
        ta = [t for t in ta if t[0] not in skip]
        tb = [t for t in tb if t[0] not in skip]
        if fa == fb and ta == tb:
            same += 1
        else:
            print("differs:", fa, ta, "\n    ours:", fb, tb, file=sys.stderr)
    print(len(k), len(o), same)
elif cmd == "times":
    for s, ns, _ in records(sys.argv[2]):
        print("%d.%09d" % (s, ns))
PY

read -r k o same < <(python3 "$WORK/nf.py" cmp "$WORK/kernel.pcap" "$WORK/nflog.pcap")
[ "$o" = $N ] || fail "nflog pcap: $o records, expected $N"
[ "$k" = $N ] || fail "tcpdump recorded $k of $N"
[ "$same" = $N ] || fail "only $same of $N NFLOG records equal the kernel's"
echo "ok: NFLOG pcap equals tcpdump -i nflog TLV for TLV"
tshark -r "$WORK/nflog.pcap" -T fields -e nflog.prefix -e nflog.hook -e nflog.ifindex_indev 2>/dev/null |
	sort -u >"$WORK/nfmeta.txt"
[ "$(wc -l <"$WORK/nfmeta.txt")" = 1 ] && grep -q "^sluice-out 	1	[0-9]" "$WORK/nfmeta.txt" ||
	fail "tshark reads other NFLOG metadata: $(cat "$WORK/nfmeta.txt")"

# Ethernet: the real header from the veth
[ "$(tshark -r "$WORK/eth.pcap" -T fields -e eth.src -e eth.dst 2>/dev/null | sort -u)" = \
	"$(printf '02:00:00:99:00:01\t02:00:00:99:00:02')" ] || fail "ethernet pcap: wrong MACs"
# Raw: the same IP packets as the kernel's payload TLVs
a=$(tshark -r "$WORK/raw.pcap" -T fields -e ip.src -e ipv6.src -e udp.payload -e icmp.seq -e icmpv6.echo.sequence_number 2>/dev/null)
b=$(tshark -r "$WORK/kernel.pcap" -T fields -e ip.src -e ipv6.src -e udp.payload -e icmp.seq -e icmpv6.echo.sequence_number 2>/dev/null)
[ "$a" = "$b" ] && [ "$(echo "$a" | wc -l)" = $N ] || fail "raw pcap decodes differently from the kernel's records"
# One timestamp per event in every pcap
python3 "$WORK/nf.py" times "$WORK/nflog.pcap" >"$WORK/t1"
python3 "$WORK/nf.py" times "$WORK/eth.pcap" >"$WORK/t2"
python3 "$WORK/nf.py" times "$WORK/raw.pcap" >"$WORK/t3"
cmp -s "$WORK/t1" "$WORK/t2" && cmp -s "$WORK/t1" "$WORK/t3" || fail "pcaps carry different timestamps"
echo "ok: ethernet and raw pcaps"

# Text and syslog
[ "$(wc -l <"$WORK/text.log")" = $N ] || fail "text.log: $(wc -l <"$WORK/text.log") lines"
[ "$(grep -c '^sluice-out IN=vb OUT= ' "$WORK/text.log")" = $N ] || { cat "$WORK/text.log"; fail "text lines lack prefix/IN="; }
[ "$(wc -l <"$WORK/syslog.txt")" = $N ] || fail "syslog: $(wc -l <"$WORK/syslog.txt") of $N messages"
grep -q '^<166>1 [0-9T:.-]*[+-Z][0-9:]* [^ ]* sluice [0-9]* - \[sluice@32473 src="10.99.0.1" dst="10.99.0.2" proto="17" spt="[0-9]*" dpt="9999" in="vb"\] sluice-out IN=vb ' \
	"$WORK/syslog.txt" || { head -3 "$WORK/syslog.txt"; fail "syslog message format"; }
[ "$(grep -c 'src="fd99::1" dst="fd99::2"' "$WORK/syslog.txt")" = 8 ] || fail "IPv6 structured data"
echo "ok: file and syslog"
pass "$N live packets through pcap (3 link types), file and syslog"
