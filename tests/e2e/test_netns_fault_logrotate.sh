#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fault: 100 logrotate rotations under load.  The real logrotate (own
# config and state file in WORK, `rotate 200`, numbered names, postrotate
# SIGHUP to sluice), forced 100 times while numbered traffic flows at 20k/s
# (divided by SLUICE_TEST_TIME_FACTOR: a sanitized daemon is that much
# slower) into a pcap output and decode -> logline -> file, until the last
# rotation is done, however long that takes.  Each rotation waits for
# sluice to have reopened both files (the live names exist again), then
# for a line in the new text file.  Afterwards: every pcap (101 of them) is readable
# by capinfos and tcpdump -r, the packets in all of them == the nft
# counter, the lines in all text files == the nft counter, no partial
# line or torn record, and across the files (oldest first) every packet
# number once and in order, the same in both sets.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 tcpdump capinfos logrotate
. "$(dirname "$0")/fault_lib.sh"

ROT=100 RATE=$((20000 / TIME_FACTOR))
fault_net 93 53
D="$WORK/log"
mkdir "$D"
cat >"$WORK/sluice.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $FG, qtimeout: 20ms}
stacks:
  cap: [fw, {plugin: pcap, file: "$D/cap.pcap", linktype: raw, flush_interval: 50ms${FAULT_OUTPUT_KEYS:-}}]
  txt: [fw, decode, logline, {plugin: file, file: "$D/fw.log", flush_interval: 50ms${FAULT_OUTPUT_KEYS:-}}]
YAML
start_sluice "$WORK/sluice.log" "$WORK/sluice.yaml"
cat >"$WORK/logrotate.conf" <<CONF
$D/cap.pcap $D/fw.log {
	rotate 200
	nocreate
	nocompress
	missingok
	sharedscripts
	postrotate
		kill -HUP $SLUICE_PID
	endscript
}
CONF

# Bounded by ctest's timeout only: stopped after the last rotation.
send_bg "$WORK/gen.out" -n 20000000 -r $RATE -t 600
wait_for 10 test -s "$D/fw.log" || fail "no traffic reaches the files"
hups() { grep -c "unchanged: reopening output files" "$WORK/sluice.log" || true; }
reopened() { [ "$(hups)" -ge "$1" ] && [ -e "$D/cap.pcap" ] && [ -e "$D/fw.log" ]; }
t0=$(date +%s.%N)
for ((i = 1; i <= ROT; i++)); do
	logrotate -f -s "$WORK/logrotate.state" "$WORK/logrotate.conf" 2>>"$WORK/logrotate.err" ||
		fail "logrotate failed at rotation $i: $(cat "$WORK/logrotate.err")"
	end=$((SECONDS + 10 * TIME_FACTOR))
	until reopened "$i"; do
		[ $SECONDS -lt $end ] || fail "sluice did not reopen after rotation $i"
		sleep 0.005
	done
	# Traffic flows into the new files: wait for a line in the text one.
	wait_for 10 test -s "$D/fw.log" || fail "no traffic into the files after rotation $i"
	kill -0 "$GEN_PID" 2>/dev/null || fail "the traffic ended before rotation $i"
done
secs=$(python3 -c "import time; print('%.1f' % (time.time() - $t0))")
kill -TERM "$GEN_PID"
wait "$GEN_PID" || true
logged=$(nft_logged)
wait_for 20 input_caught_up "$WORK/sluice.log" "$logged" ||
	fail "nflog received $(counter "$WORK/sluice.log" fw in) of $logged"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with status $?"; }
L="$WORK/sluice.log"
grep "counters:" "$L"
echo "$ROT rotations in ${secs} s; sent $(sent_of "$WORK/gen.out"), kernel logged $logged"

# oldest first: NAME.100 ... NAME.1, NAME
files() { local i; for ((i = ROT; i >= 1; i--)); do echo "$D/$1.$i"; done; echo "$D/$1"; }
mapfile -t PCAPS < <(files cap.pcap)
mapfile -t TEXTS < <(files fw.log)
for f in "${PCAPS[@]}" "${TEXTS[@]}"; do
	[ -e "$f" ] || fail "$(basename "$f") is missing: $(ls "$D" | wc -l) files in $D"
done
[ "$(ls "$D" | wc -l)" = $((2 * (ROT + 1))) ] || fail "unexpected files: $(ls "$D")"

# every pcap readable by both readers, and their counts add up
capinfos -M -c -T "${PCAPS[@]}" >"$WORK/capinfos.txt" 2>"$WORK/capinfos.err" ||
	fail "capinfos rejects a file: $(head -3 "$WORK/capinfos.err")"
ctotal=$(awk -F'\t' 'NR > 1 {s += $2; n++} END {print s + 0, n + 0}' "$WORK/capinfos.txt")
ttotal=0 empty=0
for f in "${PCAPS[@]}"; do
	c=$(tcpdump --count -r "$f" 2>"$WORK/tcpdump.err" | sed -n 's/ packets\?$//p') ||
		fail "tcpdump -r $(basename "$f"): $(cat "$WORK/tcpdump.err")"
	[ -n "$c" ] || fail "tcpdump cannot read $(basename "$f")"
	[ "$c" = 0 ] && empty=$((empty + 1))
	ttotal=$((ttotal + c))
done
lines=$(cat "${TEXTS[@]}" | wc -l)
pf=$(python3 "$CHECK" pcap "${PCAPS[@]}") || fail "pcaps: $pf"
tf=$(python3 "$CHECK" text "${TEXTS[@]}") || fail "text files: $tf"
echo "pcaps: capinfos $ctotal (packets, files), tcpdump $ttotal, $empty without packets; $pf"
echo "text: $lines lines; $tf"
[ "${ctotal% *}" = "$logged" ] && [ "$ttotal" = "$logged" ] ||
	fail "the pcaps hold $ctotal (capinfos) / $ttotal (tcpdump) packets, the kernel logged $logged"
[ "$lines" = "$logged" ] || fail "the text files hold $lines lines, the kernel logged $logged"
[ "$(echo "$pf" | cut -d' ' -f1-8)" = "$(echo "$tf" | cut -d' ' -f1-8)" ] ||
	fail "the pcaps and the text files hold different packets"
for k in cap.pcap txt.file; do
	[ "$(counter "$L" $k dropped)" = 0 ] && [ "$(counter "$L" $k errors)" = 0 ] || fail "$k dropped or failed"
done
pass "$logged packets at ${RATE}/s, $ROT logrotate rotations in ${secs} s: $((ROT + 1)) pcaps and $((ROT + 1)) text files, 0 lost, 0 repeated, 0 torn"
