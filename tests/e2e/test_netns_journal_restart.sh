#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# journald killed (SIGKILL) and started again in the middle of a live NFLOG
# flood: nothing lost, nothing twice.  journald runs as systemd runs it, on
# a socket held for it (journald_held.py, as systemd-journald.socket), so
# what waits in the socket is read by the next journald.  While it is down
# the socket's queue fills, the journal output's sends time out (libsystemd's
# socket would block for ever without the timeout the output gives it), the
# entries go to the disk spool (spool_dir) and are sent from there once
# journald is back.  Every packet nft counted is exactly one entry, equal to
# the json output's record for it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/journal_lib.sh"
E2E=$(dirname "$0")
G=8
journal_netns_start sljr 96
journald_held_start
ip netns exec "$B" nft -f - <<NFT || skip "nftables log group not available"
table inet sluice_e2e {
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr 10.96.0.1 udp dport 9999 counter log group $G prefix "flood "
	}
}
NFT
cat >"$WORK/j.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  j: [fw, decode, json, {plugin: file, file: "$WORK/live.json", flush_interval: 50ms}]
  t: [fw, decode, logline, {plugin: file, file: "$WORK/live.txt", flush_interval: 50ms}]
  jn: [fw, decode, logline, {plugin: journal, spool_dir: "$WORK/spool", retry_min: 50ms, retry_max: 500ms,
                             queue: 4096}]
YAML
journal_sluice_start
# a paced flood until told to stop (a packet every 2 ms)
ip netns exec "$A" python3 - "$WORK/stop" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
i = 0
while not os.path.exists(sys.argv[1]) and i < 100000:
    s.sendto(b"flood-%d" % i, ("10.96.0.2", 9999))
    i += 1
    time.sleep(0.002)
PY
GEN=$!
at_exit "touch $WORK/stop"
wait_for 20 have_entries 100 ||
	{ cat "$WORK/sluice.log" "$WORK/journald.log"; jctl -n 5; fail "no entries reach journald"; }
journald_held_kill
# the socket's queue fills, a send times out, the entries go to the spool
wait_for 30 grep -qs "go to the spool" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "the journal output did not spool while journald was down"; }
down=$(entries)
journald_held_restart
wait_for 30 have_entries $((down + 200)) || fail "entries do not reach the new journald"
touch "$WORK/stop"
wait "$GEN"
sent=$(ip netns exec "$B" nft list table inet sluice_e2e | sed -n 's/.*counter packets \([0-9]*\) .*/\1/p')
wait_for 60 have_entries "$sent" || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || true
wait_for 10 have_entries "$sent" || true	# what journald has yet to read
jctl -t sluice -o json >"$WORK/journal.json" || fail "journalctl cannot read the journal"
n=$(wc -l <"$WORK/journal.json")
[ "$n" = "$sent" ] || { tail -20 "$WORK/sluice.log"; fail "$n journal entries, nft counted $sent packets"; }
python3 "$E2E/journal_compare.py" "$WORK/live.json" "$WORK/live.txt" "$WORK/journal.json" sluice 6 ||
	fail "journal entries differ from the json output (lost or twice)"
line=$(grep "jn.journal (journal):" "$WORK/sluice.log") || { tail -20 "$WORK/sluice.log"; fail "no counters line of the journal output"; }
grep -q " spooled=[1-9]" <<<"$line" && ! grep -q "dropped=[1-9]" <<<"$line" ||
	fail "the entries did not go through the spool, or some were dropped: $line"
pass "$sent packets, journald killed and restarted: $n entries, each once, equal to the json output"
