#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pcap's format: pcapng, live: nftables in a private namespace logs ICMP,
# UDP and TCP over IPv4 and IPv6 (a prefix with the comment's separator
# in it) to an nflog input with conntrack: true; decode adds the Community
# ID.  (Without CONFIG_NETFILTER_NETLINK_GLUE_CT nflog looks the conntrack
# id up through ctnetlink: every packet has one either way.)  One stack
# writes a pcapng (ethernet), one a pcapng (raw) rotated
# every few packets, one JSON.  The readers are the oracle: tshark reads
# every packet with its nanosecond time, interface name and comment, and
# each equals the JSON record of that packet (prefix, ct_id, community_id,
# time, interface); capinfos and tcpdump -r read every file, rotated ones
# too, and count the same packets.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pcapng_lib.sh"
need_root
need_cmd ip nft python3 tcpdump tshark capinfos
E2E=$(dirname "$0")

G=23
pcapng_netns slpng 91 sluice_pcapng "png;in " "ct state new,established counter"

mkdir "$WORK/rot"
# start_sluice CT: the daemon with nflog's conntrack: CT
start_sluice() {
	cat >"$WORK/png.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms, conntrack: $1}
  dec: {plugin: decode, community_id: true}
stacks:
  ng: [fw, dec, {plugin: pcap, file: "$WORK/fw.pcapng", format: pcapng, linktype: ethernet,
                 flush_interval: 50ms}]
  rot: [fw, dec, {plugin: pcap, file: "$WORK/rot/fw.pcapng", format: pcapng, linktype: raw,
                  rotate_size: 700}]
  js: [fw, dec, json, {plugin: file, file: "$WORK/fw.json", flush_interval: 50ms}]
YAML
	ip netns exec "$B" "$SLUICE" -c "$WORK/png.yaml" >"$WORK/sluice.log" 2>&1 &
	SLUICE_PID=$!
	at_exit "kill $SLUICE_PID"
	started() { grep -qs "bound NFLOG group $G" "$WORK/sluice.log"; }
	wait_for 10 started || { cat "$WORK/sluice.log"; fail "nflog did not start"; }
}
CT=true
start_sluice true

ip netns exec "$A" python3 "$E2E/send_mixed.py" 10.91.0.2 fd91::2 png
N=16
lines_ge() { [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ]; }
wait_for 10 lines_ge "$WORK/fw.json" $N || fail "only $(wc -l <"$WORK/fw.json") of $N JSON records"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
grep -q "errors=[1-9]\|dropped=[1-9]" "$WORK/sluice.log" && { cat "$WORK/sluice.log"; fail "errors or drops counted"; }
[ "$(wc -l <"$WORK/fw.json")" = $N ] || fail "$(wc -l <"$WORK/fw.json") JSON records, want $N"
# what the comment must carry is there: conntrack and decode did their part
if [ $CT = true ]; then
	[ "$(grep -c '"ct_id":' "$WORK/fw.json")" = $N ] ||
		fail "JSON records without ct_id: $(grep -v '"ct_id":' "$WORK/fw.json" | head -2)"
fi
[ "$(grep -c '"community_id":' "$WORK/fw.json")" = $N ] || fail "JSON records without community_id"

# read_pcapng FILE: tshark's packets as time, interface, comment (TSV)
read_pcapng() {
	tshark -r "$1" -T fields -e frame.time_epoch -e frame.interface_name -e frame.comment \
		2>"$WORK/tshark.err" >"$1.tsv" || fail "tshark cannot read $1: $(cat "$WORK/tshark.err")"
	grep -qi "malformed\|error" "$WORK/tshark.err" && fail "tshark on $1: $(cat "$WORK/tshark.err")"
	true
}
# readers_agree FILE: capinfos and tcpdump read it and count tshark's packets
readers_agree() {
	local f="$1" n c t
	n=$(wc -l <"$f.tsv")
	capinfos -M "$f" >"$WORK/capinfos.txt" 2>&1 || fail "capinfos cannot read $f: $(cat "$WORK/capinfos.txt")"
	c=$(sed -n 's/^Number of packets: *//p' "$WORK/capinfos.txt")
	[ "$c" = "$n" ] || fail "$f: capinfos counts $c packets, tshark $n"
	grep -q "nanoseconds" "$WORK/capinfos.txt" || fail "$f: not nanosecond precision: $(cat "$WORK/capinfos.txt")"
	t=$(tcpdump --count -r "$f" 2>/dev/null | sed -n 's/^\([0-9]*\) packets\?$/\1/p')
	[ "$t" = "$n" ] || fail "$f: tcpdump counts ${t:-none} packets, tshark $n"
}

read_pcapng "$WORK/fw.pcapng"
readers_agree "$WORK/fw.pcapng"
m=$(python3 "$E2E/pcapng_check.py" cmp "$WORK/fw.json" "$WORK/fw.pcapng.tsv" 2>&1) ||
	fail "pcapng against JSON: $m"
[ "$m" = $N ] || fail "$m packets matched, want $N"
want='prefix "png\\x3bin "; community_id 1:'
[ $CT = false ] || want='prefix "png\\x3bin "; ct_id [0-9]*; community_id 1:'
[ "$(grep -c "$want" "$WORK/fw.pcapng.tsv")" = $N ] ||
	fail "comment not as documented: $(head -1 "$WORK/fw.pcapng.tsv")"

# rotated: several files, each read whole by every reader, together every packet
files=("$WORK"/rot/fw.pcapng*)
[ "${#files[@]}" -ge 3 ] || fail "rotate_size 700 made only ${#files[@]} files"
tsvs=()
for f in "${files[@]}"; do
	[[ "$f" == *.tsv ]] && continue
	read_pcapng "$f"
	readers_agree "$f"
	tsvs+=("$f.tsv")
done
m=$(python3 "$E2E/pcapng_check.py" cmp "$WORK/fw.json" "${tsvs[@]}" 2>&1) ||
	fail "rotated pcapng files against JSON: $m"
[ "$m" = $N ] || fail "rotated: $m packets matched, want $N"
note=" (conntrack ids from the kernel)"
grep -q "looked up through ctnetlink" "$WORK/sluice.log" && note=" (conntrack ids looked up through ctnetlink)"
pass "$N packets: comments, times and interfaces equal the JSON, in one file and in ${#tsvs[@]} rotated ones$note"
