#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The journal output when journald is away, on a private journald in a
# mount namespace of its own (replay input: no network namespace needed).
#  1. No journald socket at all: libsystemd reports success and drops the
#     entry; the output must see the socket missing and spool every entry.
#  2. journald stopped (SIGSTOP): its socket takes a few datagrams, then
#     libsystemd's blocking send would wait for ever and wedge the daemon's
#     stop; the output's send timeout turns it into a failed send: the
#     entries are spooled and the daemon exits 0 (not by stop_timeout).
#  3. journald running again: the spool is sent, oldest first; the journal
#     then holds each record of the three runs once, equal to the json output.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/journal_lib.sh"
need_root
need_cmd python3
[ -e "$SLUICE_PLUGIN_PATH/journal.so" ] || skip "journal output not built"
E2E=$(dirname "$0")
journal_ns_start
run() {	# run N: one pass of the capture through the stacks; the daemon's exit status
	cat >"$WORK/r$1.yaml" <<YAML
daemon: {stop_timeout: 20s}
instances:
  rp: {plugin: replay, file: "$SRCDIR/tests/data/nflog-mixed.pcap"}
stacks:
  j: [rp, decode, json, {plugin: file, file: "$WORK/live$1.json"}]
  t: [rp, decode, logline, {plugin: file, file: "$WORK/live$1.txt"}]
  jn: [rp, decode, logline, {plugin: journal, spool_dir: "$WORK/spool", retry_min: 50ms, retry_max: 200ms}]
YAML
	in_jns "$SLUICE" -c "$WORK/r$1.yaml" >"$WORK/s$1.log" 2>&1
}
counter() { sed -n "s/.*jn.journal (journal):.* $1=\([0-9]*\).*/\1/p" "$WORK/s$2.log"; }

# 1: no socket
run 1 || { cat "$WORK/s1.log"; fail "run without journald exited $?"; }
recs=$(wc -l <"$WORK/live1.json")
[ "$recs" -ge 10 ] || fail "the capture gave $recs records"
[ "$(counter entries 1)" = 0 ] && [ "$(counter spooled 1)" = "$recs" ] ||
	{ grep "jn.journal (journal):" "$WORK/s1.log"; fail "without a journald socket, entries were not spooled"; }

# 2: journald stopped
journald_start
kill -STOP "$JOURNALD_PID"
at_exit "kill -CONT $JOURNALD_PID"
run 2 || { cat "$WORK/s2.log"; fail "run with a stopped journald exited $? (its stop was wedged?)"; }
sent2=$(counter entries 2)
[ -n "$sent2" ] && [ "$((sent2 + $(counter spool_sent 2)))" -lt "$((2 * recs))" ] ||
	{ grep "jn.journal (journal):" "$WORK/s2.log"; fail "a stopped journald took every entry?"; }
grep -q "cannot send to journald.*Resource temporarily unavailable" "$WORK/s2.log" ||
	{ cat "$WORK/s2.log"; fail "no send timed out with journald stopped"; }

# 3: journald back
kill -CONT "$JOURNALD_PID"
run 3 || { cat "$WORK/s3.log"; fail "run with journald back exited $?"; }
cat "$WORK"/live[123].json >"$WORK/live.json"
cat "$WORK"/live[123].txt >"$WORK/live.txt"
wait_for 10 have_entries $((3 * recs)) || true
jctl -t sluice -o json >"$WORK/journal.json" || fail "journalctl cannot read the journal"
n=$(wc -l <"$WORK/journal.json")
[ "$n" = $((3 * recs)) ] || { grep "jn.journal (journal):" "$WORK"/s?.log; fail "$n entries for 3 x $recs records"; }
python3 "$E2E/journal_compare.py" "$WORK/live.json" "$WORK/live.txt" "$WORK/journal.json" sluice 6 ||
	fail "journal entries differ from the json output (lost or twice)"
for i in 1 2 3; do
	[ "$(counter dropped $i)" = 0 ] || fail "run $i dropped entries"
done
pass "3 x $recs records with no socket, a stopped journald, then journald back: $n entries, each once"
