#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# daemon.metrics, live: numbered UDP through an nft counter -> NFLOG ->
# sluice (one nflog input -> pcap, and -> decode -> logline -> file, the
# file on a thread of its own so a queue shows up), /metrics fetched with
# curl in the namespace.  Checked:
#  - `promtool check metrics` accepts the text (no problem printed);
#  - the counters equal the oracles: the input's records and each output's
#    in/out == the nft counter == the packets in the pcap (capinfos) ==
#    the lines in the text file; nothing dropped; plugin counters present;
#  - GET /other is 404, POST /metrics 405;
#  - a port already in use fails the start: nothing started, no output file;
#  - a non-loopback listen is refused by -t at file:line:col, and with
#    allow_remote: true it is accepted and served to the other namespace;
#  - a configuration without daemon.metrics never maps metrics_http.so or
#    libmicrohttpd (/proc/PID/maps), one with it does.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 curl promtool capinfos
MODULE="${SLUICE_PLUGIN_PATH%%:*}/metrics_http.so"
[ -f "$MODULE" ] || skip "no $MODULE (built with -DSLUICE_WITH_METRICS=OFF?)"
. "$(dirname "$0")/fault_lib.sh"
N=3000
PORT=9560

fault_net 88 58
# conf NAME METRICS-LINE: the stacks, with their own files
conf() {
	mkdir -p "$WORK/$1"
	cat >"$WORK/$1.yaml" <<YAML
daemon:
$2
instances:
  fw: {plugin: nflog, group: $FG, qtimeout: 20ms}
stacks:
  cap: [fw, {plugin: pcap, file: "$WORK/$1/cap.pcap", linktype: nflog}]
  txt: [fw, decode, logline, {plugin: file, file: "$WORK/$1/fw.log", thread: true}]
YAML
}
# scrape URL OUT: GET it from inside FB
scrape() { ip netns exec "$FB" curl -sS --max-time 5 -o "$2" -w '%{http_code}' "$1"; }
# metric FILE NAME LABELS: the value of the sample NAME{LABELS}
metric() {
	grep -F "$2{$3} " "$1" | awk '{print $NF}'
}
# maps_has PID WHAT: PID has a mapping whose path contains WHAT
maps_has() { grep -q "$2" "/proc/$1/maps"; }

# ---- a live run with metrics ----
conf live "  metrics: { listen: \"127.0.0.1:$PORT\" }"
start_sluice "$WORK/live.log" "$WORK/live.yaml"
grep -q "metrics: serving http://127.0.0.1:$PORT/metrics" "$WORK/live.log" ||
	{ cat "$WORK/live.log"; fail "no 'serving' line"; }
maps_has "$SLUICE_PID" metrics_http.so || fail "metrics_http.so is not mapped"
maps_has "$SLUICE_PID" libmicrohttpd || fail "libmicrohttpd is not mapped"
send -n $N -r 20000 >"$WORK/gen.out"
logged=$(nft_logged)
[ "$logged" = "$N" ] || fail "the nft counter says $logged, sent $N"
lines() { [ "$(wc -l <"$WORK/live/fw.log")" = "$logged" ]; }
wait_for 10 lines || fail "fw.log has $(wc -l <"$WORK/live/fw.log") lines, the counter $logged"
# both outputs have counted everything once the text file has it all
caught_up() {
	[ "$(scrape "http://127.0.0.1:$PORT/metrics" "$WORK/m.txt")" = 200 ] &&
		[ "$(metric "$WORK/m.txt" sluice_records_total \
			'instance="cap.pcap",plugin="pcap",stack="cap",direction="out"')" = "$logged" ] &&
		[ "$(metric "$WORK/m.txt" sluice_records_total \
			'instance="txt.file",plugin="file",stack="txt",direction="out"')" = "$logged" ]
}
wait_for 10 caught_up || { cat "$WORK/m.txt"; fail "/metrics never showed $logged records out"; }
promtool check metrics <"$WORK/m.txt" >"$WORK/promtool.out" 2>&1 ||
	{ cat "$WORK/promtool.out"; fail "promtool check metrics failed"; }
[ ! -s "$WORK/promtool.out" ] || { cat "$WORK/promtool.out"; fail "promtool printed lint problems"; }
grep -q '^# TYPE sluice_records_total counter$' "$WORK/m.txt" || fail "no TYPE line for sluice_records_total"

# every record counter against the oracles
rec() { metric "$WORK/m.txt" sluice_records_total "instance=\"$1\",plugin=\"$2\",stack=\"$3\",direction=\"$4\""; }
check_eq() { [ "$2" = "$3" ] || fail "$1 is '$2', expected $3"; }
check_eq "fw out" "$(rec fw nflog cap,txt out)" "$logged"
for i in "cap.pcap pcap cap" "txt.decode decode txt" "txt.logline logline txt" "txt.file file txt"; do
	set -- $i
	check_eq "$1 in" "$(rec "$1" "$2" "$3" in)" "$logged"
	check_eq "$1 out" "$(rec "$1" "$2" "$3" out)" "$logged"
done
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/live.log"; fail "sluice exited with status $?"; }
caps=$(capinfos -M -c -T "$WORK/live/cap.pcap" | awk -F'\t' 'NR == 2 {print $2}')
check_eq "packets in cap.pcap" "$caps" "$logged"
tf=$(python3 "$CHECK" text "$WORK/live/fw.log") || fail "fw.log: $tf"
check_eq "fw.log" "$(echo "$tf" | cut -d' ' -f1)" "records=$logged"
for s in 'instance="cap.pcap",plugin="pcap",reason="output"' \
	'instance="txt.file",plugin="file",reason="output"' \
	'instance="txt.file",plugin="file",reason="queue_full"' \
	'instance="txt.decode",plugin="decode",reason="filtered"'; do
	check_eq "sluice_dropped_total{$s}" "$(metric "$WORK/m.txt" sluice_dropped_total "$s")" 0
done
check_eq "errors of fw" "$(metric "$WORK/m.txt" sluice_errors_total 'instance="fw",plugin="nflog"')" 0
check_eq "fw seq_lost" "$(metric "$WORK/m.txt" sluice_nflog_seq_lost_total 'instance="fw"')" 0
check_eq "fw lost" "$(metric "$WORK/m.txt" sluice_nflog_lost_total 'instance="fw"')" 0
check_eq "queue depth" "$(metric "$WORK/m.txt" sluice_queue_batches 'instance="txt.file",plugin="file"')" 0
check_eq "reloads" "$(metric "$WORK/m.txt" sluice_reloads_total 'result="ok"')" 0
grep -Eq '^sluice_build_info\{version="[^"]+",abi="[0-9]+\.[0-9]+"\} 1$' "$WORK/m.txt" ||
	fail "no sluice_build_info"
grep -Eq '^sluice_start_time_seconds [0-9]{10}$' "$WORK/m.txt" || fail "no sluice_start_time_seconds"
FIG="$logged packets: nft counter = records_total of every instance = $caps in the pcap = $logged lines"

# ---- HTTP: only GET /metrics ----
conf http "  metrics: { listen: \"127.0.0.1:$PORT\" }"
start_sluice "$WORK/http.log" "$WORK/http.yaml"
check_eq "GET /other" "$(scrape "http://127.0.0.1:$PORT/other" /dev/null)" 404
check_eq "POST /metrics" "$(ip netns exec "$FB" curl -sS -o /dev/null -w '%{http_code}' \
	-X POST -d x "http://127.0.0.1:$PORT/metrics")" 405

# ---- the port in use: a start failure, nothing started ----
conf busy "  metrics: { listen: \"127.0.0.1:$PORT\" }"
if ip netns exec "$FB" "$SLUICE" -c "$WORK/busy.yaml" >"$WORK/busy.log" 2>&1; then
	fail "started with its port in use"
fi
grep -q "daemon.metrics: cannot listen on 127.0.0.1:$PORT: Address already in use" "$WORK/busy.log" ||
	{ cat "$WORK/busy.log"; fail "no clear error for the port in use"; }
! grep -q "bound NFLOG" "$WORK/busy.log" || fail "an input started with the port in use"
[ ! -e "$WORK/busy/cap.pcap" ] && [ ! -e "$WORK/busy/fw.log" ] || fail "an output was opened"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || true

# ---- non-loopback: refused by -t, accepted with allow_remote ----
conf remote "  metrics: { listen: \"10.$FN.0.2:$PORT\" }"
if "$SLUICE" -t -c "$WORK/remote.yaml" >"$WORK/remote.out" 2>&1; then
	fail "-t accepted a non-loopback listen address"
fi
grep -q "^$WORK/remote.yaml:2:22: error: daemon.metrics.listen: '10.$FN.0.2:$PORT' is not a loopback address" \
	"$WORK/remote.out" || { cat "$WORK/remote.out"; fail "no file:line:col error for a non-loopback listen"; }
conf remote "  metrics: { listen: \"10.$FN.0.2:$PORT\", allow_remote: true }"
"$SLUICE" -t -c "$WORK/remote.yaml" >"$WORK/remote.out" 2>&1 || { cat "$WORK/remote.out"; fail "allow_remote: true refused"; }
start_sluice "$WORK/remote.log" "$WORK/remote.yaml"
code=$(ip netns exec "$FA" curl -sS --max-time 5 -o "$WORK/remote.txt" -w '%{http_code}' \
	"http://10.$FN.0.2:$PORT/metrics")
check_eq "GET from the other namespace" "$code" 200
promtool check metrics <"$WORK/remote.txt" >/dev/null 2>&1 || fail "promtool on the remote scrape"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || true

# ---- without daemon.metrics the module is never loaded ----
conf plain ""
start_sluice "$WORK/plain.log" "$WORK/plain.yaml"
! maps_has "$SLUICE_PID" metrics_http.so || fail "metrics_http.so mapped without daemon.metrics"
! maps_has "$SLUICE_PID" libmicrohttpd || fail "libmicrohttpd mapped without daemon.metrics"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || true
pass "$FIG; promtool: no problems; 404/405; port in use refused; -t refuses 10.$FN.0.2, allow_remote serves it"
