#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bpf keeps exactly the packets tcpdump's own filter keeps: replay of the
# Ethernet test capture -> decode -> bpf EXPR -> pcap (raw) must hold the
# same packets, in order, as `tcpdump -r raw-mixed.pcap EXPR`.  Also: the
# decode counters are all zero on this clean traffic, and with
# checksums: true the veth captures' offload-pending checksums are not
# reported as bad.
. "$(dirname "$0")/lib.sh"
need_cmd python3 tcpdump

DATA="$SRCDIR/tests/data"

cat >"$WORK/pcapcmp.py" <<'PY'
import struct, sys
def read(fn):
    d = open(fn, "rb").read()
    e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, out = 24, []
    while off + 16 <= len(d):
        incl = struct.unpack(e + "I", d[off + 8:off + 12])[0]
        out.append(d[off + 16:off + 16 + incl])
        off += 16 + incl
    return out
a, b = read(sys.argv[1]), read(sys.argv[2])
print(len(a), len(b), int(a == b))
PY

n=0
for expr in "udp" "icmp or icmp6" "ip6 and tcp" "tcp[tcpflags] & tcp-syn != 0" "src host 10.99.0.1 and greater 60" "not ip"; do
	cat >"$WORK/c.yaml" <<YAML
stacks:
  s:
    - {plugin: replay, file: "$DATA/eth-vlan.pcap"}
    - {plugin: decode, checksums: true, ifnames: false}
    - {plugin: bpf, expr: "$expr"}
    - {plugin: pcap, file: "$WORK/out.pcap", linktype: raw}
YAML
	rm -f "$WORK/out.pcap"
	timeout $((20 * TIME_FACTOR)) "$SLUICE" -c "$WORK/c.yaml" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "sluice failed for '$expr'"; }
	tcpdump -r "$DATA/raw-mixed.pcap" -w "$WORK/ref.pcap" "$expr" 2>/dev/null || fail "tcpdump refused '$expr'"
	read -r want got same < <(python3 "$WORK/pcapcmp.py" "$WORK/ref.pcap" "$WORK/out.pcap")
	[ "$same" = 1 ] || { cat "$WORK/log"; fail "'$expr': $got packets kept, tcpdump keeps $want (or they differ)"; }
	grep -q "(decode):.* truncated=0 malformed=0 bad_checksum=0 fragments=0" "$WORK/log" ||
		{ cat "$WORK/log"; fail "decode counted problems on clean traffic"; }
	echo "ok: '$expr': $got of 40 packets"
	n=$((n + 1))
done
pass "$n expressions"
