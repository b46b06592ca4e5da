#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The journal output's own native-protocol sender, on a private journald in
# a mount namespace of its own (replay input: no network namespace needed).
#  1. Binary-safe values: a prefix with newlines, '=' and a control byte is
#     sent in the protocol's binary form; the journal holds MESSAGE and
#     PREFIX as exactly those bytes, one entry per record.
#  2. A stalled journald (SIGSTOP) under an endless replay: its socket's
#     queue fills, sends fail after a bounded wait; the daemon is never
#     wedged: `sluice stats` answers again and again, the entries are
#     retried then dropped and counted.  After SIGCONT they flow again, and
#     TERM ends the daemon (status 0).  Every record is either an entry in
#     the journal or counted dropped: entries + dropped = records in, and
#     the journal holds exactly the entries the output counted (none twice).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/journal_lib.sh"
need_root
need_cmd python3 timeout
[ -e "$SLUICE_PLUGIN_PATH/journal.so" ] || skip "journal output not built"
E2E=$(dirname "$0")
journal_ns_start
journald_start

# 1: binary-safe values ("drop\nSRC=1.2.3.4 \x01x\n")
python3 "$E2E/nflog_prefix.py" "$SRCDIR/tests/data/nflog-mixed.pcap" "$WORK/nl.pcap" \
	64726f700a5352433d312e322e332e342001780a || fail "cannot make the capture"
cat >"$WORK/nl.yaml" <<YAML
instances:
  rp: {plugin: replay, file: "$WORK/nl.pcap"}
stacks:
  j: [rp, decode, json, {plugin: file, file: "$WORK/nl.json"}]
  jn: [rp, decode, {plugin: journal, identifier: sluice-nl}]
YAML
in_jns "$SLUICE" -c "$WORK/nl.yaml" >"$WORK/nl.log" 2>&1 || { cat "$WORK/nl.log"; fail "the replay exited $?"; }
recs=$(wc -l <"$WORK/nl.json")
[ "$recs" -ge 10 ] || fail "the capture gave $recs records"
nl_entries() { [ "$(jctl -t sluice-nl -o cat 2>/dev/null | grep -c '^drop$')" -ge "$recs" ]; }
wait_for 10 nl_entries || true
jctl -t sluice-nl -o json >"$WORK/nl.jj" || fail "journalctl cannot read the journal"
python3 - "$WORK/nl.jj" "$recs" <<'PY' || fail "a value with newlines did not arrive intact"
import json, sys
want = b"drop\nSRC=1.2.3.4 \x01x\n"
def raw(v):
    return bytes(v) if isinstance(v, list) else v.encode("utf-8", "surrogateescape")
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    for k in ("MESSAGE", "PREFIX"):
        if raw(e.get(k, "")) != want:
            sys.exit("%s = %r" % (k, raw(e.get(k, ""))))
    n += 1
if n != int(sys.argv[2]):
    sys.exit("%d entries for %s records" % (n, sys.argv[2]))
PY

# 2: a stalled journald
SOCK=$WORK/ctl.sock
cat >"$WORK/st.yaml" <<YAML
daemon: {control_socket: $SOCK, stop_timeout: 30s}
instances:
  rp: {plugin: replay, file: "$SRCDIR/tests/data/nflog-mixed.pcap", loop: 0}
stacks:
  jn: [rp, decode, logline, {plugin: journal, max_retries: 1, retry_min: 20ms, retry_max: 50ms,
                             queue: 256}]
YAML
client() {
	local rc=0
	timeout $((15 * TIME_FACTOR)) "$SLUICE" "$@" --socket "$SOCK" || rc=$?
	[ "$rc" != 124 ] || fail "no answer to 'sluice $*' within $((15 * TIME_FACTOR)) s: the daemon is wedged"
	return "$rc"
}
# counter NAME: the journal output's counter NAME from `sluice stats --json`
counter() {
	client stats --json >"$WORK/st.json" || fail "stats failed: $(cat "$WORK/st.json")"
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
i = [x for x in s["instances"] if x["plugin"] == "journal"][0]
print(i["counters"][sys.argv[2]])' "$WORK/st.json" "$1"
}
kill -STOP "$JOURNALD_PID"
at_exit "kill -CONT $JOURNALD_PID"
"${JNS[@]}" "$SLUICE" -c "$WORK/st.yaml" >"$WORK/st.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 test -S "$SOCK" || { cat "$WORK/st.log"; fail "no control socket"; }
dropped_some() { [ "$(counter dropped)" -gt 0 ]; }
wait_for 30 dropped_some || { cat "$WORK/st.log"; fail "a stopped journald: nothing was dropped and counted"; }
grep -q "cannot send to journald.*Resource temporarily unavailable" "$WORK/st.log" ||
	{ cat "$WORK/st.log"; fail "no send timed out with journald stopped"; }
for _ in 1 2 3; do counter send_errors >/dev/null; done	# answers while the output waits
stalled=$(counter entries)
kill -CONT "$JOURNALD_PID"
flowing() { [ "$(counter entries)" -gt $((stalled + 100)) ]; }
wait_for 30 flowing || { cat "$WORK/st.log"; fail "entries did not flow again after SIGCONT"; }
kill -TERM "$SLUICE_PID"
rc=0
wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || { tail -20 "$WORK/st.log"; fail "sluice exited $rc after TERM"; }
line=$(grep "jn.journal (journal):" "$WORK/st.log") || { tail -20 "$WORK/st.log"; fail "no counters line"; }
val() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$line"; }
in=$(val in) entries=$(val entries) dropped=$(val dropped) qd=$(val queue_dropped)
[ -n "$in" ] && [ "$in" -gt 0 ] && [ "$((entries + dropped + qd))" = "$in" ] ||
	fail "records in=$in, entries=$entries + dropped=$dropped + queue_dropped=$qd: some unaccounted for ($line)"
have_all() { [ "$(jctl -t sluice -o cat 2>/dev/null | wc -l)" -ge "$entries" ]; }
wait_for 20 have_all || true
n=$(jctl -t sluice -o cat | wc -l)
[ "$n" = "$entries" ] || fail "the journal holds $n entries, the output counted $entries sent"
pass "$recs entries with newlines intact; stalled journald: stats answered, $in records = $entries entries + $dropped dropped + $qd queue_dropped, $n in the journal"
