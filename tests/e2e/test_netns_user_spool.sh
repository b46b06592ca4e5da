#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# daemon.user, started as root: a syslog output's spool_dir that the daemon
# creates is the user's, so while the TCP receiver (syslog_recv.py) is
# away the records go to disk, and when it comes up every one of them
# arrives: received == generated, spool_dropped == 0, nothing dropped.
# (An endless slow input keeps the daemon running after the count.)
# Then a spool folder the user can no longer write to (its lock file is
# there, so the spool opens): every record the receiver cannot take is
# counted in spool_dropped, and "cannot create" is logged once, not once
# per record.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip ss python3 setpriv
. "$(dirname "$0")/user_lib.sh"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
NS=$(unique_name slsp)
make_netns "$NS"
FACTOR=${SLUICE_TEST_TIME_FACTOR:-1}
LOG="$WORK/log" SPOOL="$WORK/log/spool" GOT="$WORK/got.txt" PORT=5514 N=3000
mkdir -m 750 "$LOG" && chown "$TUSER:$TGROUP" "$LOG"
cat >"$WORK/c.yaml" <<CONF
daemon: { user: $TUSER }
stacks:
  s: [{ plugin: gen, count: $N, per_tick: 100, interval: 10ms },
      { plugin: syslog, transport: tcp, address: "127.0.0.1:$PORT", queue_size: 64KiB,
        message_size: 512, reconnect_min: 50ms, reconnect_max: 200ms, spool_dir: $SPOOL }]
  idle: [{ plugin: gen, count: -1, interval: 1s, per_tick: 1 }, { plugin: file, file: /dev/null }]
CONF
chmod 644 "$WORK/c.yaml"
lines() { if [ -e "$GOT" ]; then wc -l <"$GOT"; else echo 0; fi; }
lines_are() { [ "$(lines)" -ge "$1" ]; }
segments() { find "$SPOOL" -name 'seg-*.spl' 2>/dev/null | grep -q .; }
listening() { ip netns exec "$NS" ss -Hltn "sport = :$PORT" | grep -q .; }

ip netns exec "$NS" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/err" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 segments || fail "nothing spooled: $(cat "$WORK/err")"
[ "$(stat -c "%U:%G %a" "$SPOOL")" = "$TUSER:$TGROUP 700" ] ||
	fail "spool_dir made as $(stat -c "%U:%G %a" "$SPOOL")"
ip netns exec "$NS" python3 "$SRCDIR/tests/e2e/syslog_recv.py" $PORT "$GOT" &
RECV=$!
at_exit "kill -9 $RECV"
wait_for 10 listening || fail "receiver did not listen"
wait_for 30 lines_are $N ||
	fail "received $(lines) of $N: $(grep -c spool_dropped "$WORK/err") spool_dropped lines: $(tail -5 "$WORK/err")"
kill -TERM "$SLUICE_PID"
rc=0; wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || fail "exit $rc: $(cat "$WORK/err")"
[ "$(lines)" = $N ] || fail "received $(lines), expected $N"
[ "$(counter s.syslog spool_dropped "$WORK/err")" = 0 ] && [ "$(counter s.syslog dropped "$WORK/err")" = 0 ] ||
	fail "drops: $(grep "counters: s.syslog" "$WORK/err")"

kill -9 "$RECV"; wait "$RECV" 2>/dev/null || true
RO="$LOG/ro-spool"
mkdir -m 700 "$RO" && touch "$RO/lock" && chmod 600 "$RO/lock" && chown -R "$TUSER:$TGROUP" "$RO"
chmod 500 "$RO"
sed -e "s|spool_dir: $SPOOL|spool_dir: $RO|" "$WORK/c.yaml" >"$WORK/ro.yaml"
chmod 644 "$WORK/ro.yaml"
ip netns exec "$NS" "$SLUICE" -c "$WORK/ro.yaml" >"$WORK/ro.err" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -q "cannot create $RO/seg-" "$WORK/ro.err" || fail "ro: $(cat "$WORK/ro.err")"
kill -TERM "$SLUICE_PID"
rc=0; wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || fail "ro: exit $rc: $(tail -5 "$WORK/ro.err")"
dropped=$(counter s.syslog spool_dropped "$WORK/ro.err")
said=$(grep -c "cannot create $RO/seg-" "$WORK/ro.err")
[ "$dropped" -gt 1 ] && [ "$said" = 1 ] ||
	fail "$dropped records not spooled, 'cannot create' said $said times: $(head -c 2000 "$WORK/ro.err")"
pass "$N records spooled in a folder the daemon made as $TUSER, all delivered; $dropped not spooled in an unwritable one, said once"
