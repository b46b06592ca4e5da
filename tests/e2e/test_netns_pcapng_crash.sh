#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pcapng after a crash: live NFLOG traffic to a pcapng and a JSON file;
# sluice is killed with SIGKILL once both hold the first burst, and the
# pcapng's last block is cut part-way, as a kill inside a write() leaves
# it (tshark must then refuse the file: the torn block is real).  sluice
# started again on the same files must cut the torn block off (and say
# so), append a new section and the second burst; a reopen (SIGHUP) of
# the same file then appends the third burst (the file is still ours: no
# move aside, though the section has grown since it was started).
# tshark, capinfos and tcpdump read the file whole, and every packet's
# time, interface and comment equals its JSON record (all but the one
# packet cut off).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pcapng_lib.sh"
need_root
need_cmd ip nft python3 tcpdump tshark capinfos
E2E=$(dirname "$0")

G=24
pcapng_netns slpngc 92 sluice_pcapng_crash "crash "

cat >"$WORK/c.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
  dec: {plugin: decode, community_id: true}
stacks:
  ng: [fw, dec, {plugin: pcap, file: "$WORK/fw.pcapng", format: pcapng, linktype: ethernet,
                 flush_interval: 50ms}]
  js: [fw, dec, json, {plugin: file, file: "$WORK/fw.json", flush_interval: 50ms}]
YAML
start() {
	ip netns exec "$B" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice$1.log" 2>&1 &
	SLUICE_PID=$!
	at_exit "kill $SLUICE_PID"
	wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice$1.log" ||
		{ cat "$WORK/sluice$1.log"; fail "nflog did not start"; }
}
packets() { tshark -r "$WORK/fw.pcapng" 2>/dev/null | wc -l; }
lines_ge() { [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ]; }
packets_ge() { [ "$(packets)" -ge "$1" ]; }

N=16
start 1
ip netns exec "$A" python3 "$E2E/send_mixed.py" 10.92.0.2 fd92::2 one
wait_for 10 lines_ge "$WORK/fw.json" $N || fail "first burst: $(wc -l <"$WORK/fw.json") JSON records"
wait_for 10 packets_ge $N || fail "first burst: $(packets) packets in the pcapng"
kill -KILL "$SLUICE_PID"
wait "$SLUICE_PID" 2>/dev/null || true

# the last block torn, as a write() stopped part-way leaves it
truncate -s -9 "$WORK/fw.pcapng"
if tshark -r "$WORK/fw.pcapng" >/dev/null 2>&1; then
	fail "tshark reads the torn file without complaint: the cut did not tear a block"
fi

start 2
wait_for 10 grep -qs "ended inside a record" "$WORK/sluice2.log" ||
	fail "the torn block was not cut at restart: $(cat "$WORK/sluice2.log")"
ip netns exec "$A" python3 "$E2E/send_mixed.py" 10.92.0.2 fd92::2 two
wait_for 10 lines_ge "$WORK/fw.json" $((2 * N)) || fail "second burst: $(wc -l <"$WORK/fw.json") JSON records"
kill -HUP "$SLUICE_PID"
ip netns exec "$A" python3 "$E2E/send_mixed.py" 10.92.0.2 fd92::2 three
wait_for 10 lines_ge "$WORK/fw.json" $((3 * N)) || fail "third burst: $(wc -l <"$WORK/fw.json") JSON records"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice2.log"; fail "sluice exited with an error"; }

tshark -r "$WORK/fw.pcapng" -T fields -e frame.time_epoch -e frame.interface_name -e frame.comment \
	>"$WORK/fw.tsv" 2>"$WORK/tshark.err" || fail "tshark cannot read the file: $(cat "$WORK/tshark.err")"
[ -s "$WORK/tshark.err" ] && ! grep -q "Running as user" "$WORK/tshark.err" &&
	fail "tshark: $(cat "$WORK/tshark.err")"
grep -q "another header" "$WORK/sluice2.log" && fail "the reopen moved our own file aside"
[ "$(ls "$WORK" | grep -c '^fw\.pcapng')" = 1 ] || fail "files besides fw.pcapng: $(ls "$WORK")"
n=$(wc -l <"$WORK/fw.tsv")
[ "$n" = $((3 * N - 1)) ] || fail "$n packets after the restart, want $((3 * N - 1)) (one cut off)"
capinfos -M "$WORK/fw.pcapng" >"$WORK/capinfos.txt" 2>&1 || fail "capinfos: $(cat "$WORK/capinfos.txt")"
c=$(sed -n 's/^Number of packets: *//p' "$WORK/capinfos.txt")
[ "$c" = "$n" ] || fail "capinfos counts $c packets, tshark $n"
t=$(tcpdump --count -r "$WORK/fw.pcapng" 2>/dev/null | sed -n 's/^\([0-9]*\) packets\?$/\1/p')
[ "$t" = "$n" ] || fail "tcpdump counts ${t:-none} packets, tshark $n"
# the first burst's last packet was the one cut: the JSON without it
sed "${N}d" "$WORK/fw.json" >"$WORK/kept.json"
m=$(python3 "$E2E/pcapng_check.py" cmp "$WORK/kept.json" "$WORK/fw.tsv" 2>&1) || fail "pcapng against JSON: $m"
[ "$m" = "$n" ] || fail "$m packets matched, want $n"
pass "torn block cut at restart, $n packets of two runs and a reopen read by tshark, capinfos and tcpdump, equal to the JSON"
