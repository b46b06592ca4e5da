#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# where as a router: one replayed NFLOG capture, decoded once, split by
# three stacks each with its own where (by prefix; TCP to the web ports
# from the test nets, with aliases, a set and IPv4 and IPv6 prefixes; the
# rest), each writing an NFLOG-linktype pcap.  The oracle is tshark's
# display filters over the same input capture, an independent decoder:
# every output must hold exactly the frames tshark selects for its stack
# (compared by addresses, ids, sequence numbers, payload and prefix), and the three together
# exactly the input, each frame once.  The where counters must agree.
. "$(dirname "$0")/lib.sh"
need_cmd tshark
DATA="$SRCDIR/tests/data"
CAP="$DATA/nflog-mixed.pcap"
[ -f "$CAP" ] || skip "no $CAP"

WEB='proto == tcp and dest_port in {8080, 8081} and src_ip in {10.99.0.0/24, fd99::/64}'
cat >"$WORK/r.yaml" <<YAML
instances:
  cap: {plugin: replay, file: "$CAP"}
  dec: {plugin: decode, ifnames: false}
stacks:
  out:
    - cap
    - dec
    - {plugin: where, expr: 'prefix ^= "sluice-test-out"'}
    - {plugin: pcap, file: "$WORK/out.pcap", linktype: nflog}
  web:
    - cap
    - dec
    - {plugin: where, expr: 'not prefix ^= "sluice-test-out" and $WEB'}
    - {plugin: pcap, file: "$WORK/web.pcap", linktype: nflog}
  rest:
    - cap
    - dec
    - {plugin: where, expr: 'not prefix ^= "sluice-test-out" and not ($WEB)'}
    - {plugin: pcap, file: "$WORK/rest.pcap", linktype: nflog}
YAML
"$SLUICE" -c "$WORK/r.yaml" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "sluice failed"; }

# The same three selections as Wireshark display filters.
OUT='nflog.prefix matches "^sluice-test-out"'
F_WEB='!icmp && !icmpv6 && tcp.dstport in {8080, 8081} && (ip.src == 10.99.0.0/24 || ipv6.src == fd99::/64)'
declare -A want=(
	[out]="$OUT"
	[web]="!($OUT) && $F_WEB"
	[rest]="!($OUT) && !($F_WEB)"
)
# keys FILE [FILTER]: one line per frame, sorted: what identifies a packet
# of the capture (timestamps do not: replay takes the NFLOG timestamp TLV).
keys() {
	tshark -r "$1" ${2:+-Y "$2"} -T fields -E separator=/ -e ip.src -e ipv6.src -e ip.id \
		-e tcp.seq_raw -e tcp.ack_raw -e tcp.flags -e udp.srcport -e icmp.seq \
		-e icmpv6.echo.sequence_number -e data.data -e nflog.prefix 2>/dev/null | sort
}
total=0
for s in out web rest; do
	[ -s "$WORK/$s.pcap" ] || fail "no output for stack $s"
	keys "$CAP" "${want[$s]}" >"$WORK/$s.want"
	keys "$WORK/$s.pcap" >"$WORK/$s.got"
	n=$(wc -l <"$WORK/$s.want")
	[ "$n" -gt 0 ] || fail "tshark selects nothing for $s: the test data changed?"
	diff "$WORK/$s.want" "$WORK/$s.got" >"$WORK/$s.diff" ||
		fail "stack $s: output differs from tshark's selection ($(wc -l <"$WORK/$s.got") frames, want $n): $(head -20 "$WORK/$s.diff")"
	grep -q "counters: $s.where (where): in=40 out=$n dropped=$((40 - n)) errors=0" "$WORK/log" ||
		fail "where counters of $s: $(grep "$s.where" "$WORK/log")"
	total=$((total + n))
	eval "n_$s=$n"
done
# A partition: together the input, each frame exactly once.
sort -m "$WORK"/out.got "$WORK"/web.got "$WORK"/rest.got >"$WORK/all.got"
keys "$CAP" >"$WORK/all.want"
[ "$(sort -u "$WORK/all.want" | wc -l)" = 40 ] ||
	fail "the input has $(sort -u "$WORK/all.want" | wc -l) distinct frames, not 40"
diff "$WORK/all.want" "$WORK/all.got" >"$WORK/all.diff" ||
	fail "outputs are not a partition of the input: $(head "$WORK/all.diff")"
# A field registered by a plugin (decode's community_id, a string) is an
# operand like the well-known ones: every IP packet of the capture has one.
"$SLUICE" --describe decode | grep -q '^  community_id ' ||
	pass "out=$n_out web=$n_web rest=$n_rest of 40, each as tshark selects it (no community_id in this build)"
cat >"$WORK/cid.yaml" <<YAML
stacks:
  cid:
    - {plugin: replay, file: "$CAP"}
    - {plugin: decode, ifnames: false, community_id: true}
    - {plugin: where, expr: 'community_id ^= "1:" and community_id ~ "^1:[A-Za-z0-9+/]{27}=\$"'}
    - json
    - {plugin: file, file: /dev/null}
YAML
"$SLUICE" -c "$WORK/cid.yaml" >"$WORK/cid.log" 2>&1 || { cat "$WORK/cid.log"; fail "sluice failed (community_id)"; }
grep -q "counters: cid.where (where): in=40 out=40 dropped=0 errors=0" "$WORK/cid.log" ||
	fail "community_id: $(grep cid.where "$WORK/cid.log")"
pass "out=$n_out web=$n_web rest=$n_rest of 40, each as tshark selects it; community_id on all 40"
