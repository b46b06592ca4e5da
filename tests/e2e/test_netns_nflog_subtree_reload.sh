#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ABI 1.3 subtree_reads() across a reload: nflog below which only a pcap
# (raw) runs parses no prefix; a reload that adds, on the same kept input,
# a stack whose `where` reads the prefix must make the input parse it from
# then on (the set is rewritten for the kept instance), so the new stack
# gets every packet logged after the reload, and the old one goes on.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3

G=47
NS=$(unique_name slsub)
make_netns "$NS"
ip netns exec "$NS" nft -f - <<NFT || skip "nftables log group not available"
table inet sluice_sub {
	chain in {
		type filter hook input priority 0; policy accept;
		udp dport 9999 log group $G prefix "subtree " drop
	}
}
NFT
CONF="$WORK/sluice.yaml"
L="$WORK/sluice.log"
conf() { # conf [EXTRA-STACK]
	cat >"$CONF.new" <<YAML
instances:
  in: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  p: [in, {plugin: pcap, file: "$WORK/p.pcap", flush_interval: 50ms}]
$1
YAML
	mv "$CONF.new" "$CONF"
}
send() { # send N
	ip netns exec "$NS" python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range($1):
    s.sendto(b'subtree', ('127.0.0.1', 9999))"
}
records() { # records FILE: pcap records in it (0 without the file)
	python3 - "$1" <<'PY'
import struct, sys
try:
	d = open(sys.argv[1], "rb").read()
except OSError:
	d = b""
o, n = 24, 0
while o + 16 <= len(d):
	o += 16 + struct.unpack("<I", d[o + 8:o + 12])[0]
	n += 1
print(n)
PY
}
has_records() { [ "$(records "$1")" -ge "$2" ]; }

conf ""
ip netns exec "$NS" "$SLUICE" -c "$CONF" >"$L" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$L" || { cat "$L"; fail "nflog did not start"; }
send 5
wait_for 10 has_records "$WORK/p.pcap" 5 || fail "pcap stack: $(records "$WORK/p.pcap") of 5 records"

conf "  w: [in, {plugin: where, expr: 'prefix == \"subtree \"'}, {plugin: pcap, file: \"$WORK/w.pcap\", flush_interval: 50ms}]"
kill -HUP "$SLUICE_PID"
wait_for 10 grep -qs "reload: [0-9]* kept" "$L" || fail "no reload keeping the input: $(tail -5 "$L")"
send 5
wait_for 10 has_records "$WORK/p.pcap" 10 || fail "pcap stack after the reload: $(records "$WORK/p.pcap") of 10"
wait_for 10 has_records "$WORK/w.pcap" 5 ||
	fail "the stack added by the reload got $(records "$WORK/w.pcap") of 5 records: the kept input does not parse the prefix its new stack reads"
pass "the kept input parses the prefix for the stack a reload added"
