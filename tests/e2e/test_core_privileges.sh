#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# daemon.user: once the sockets that need root are bound the daemon runs as
# that user with CAP_NET_ADMIN only, and SIGHUP still reopens its files (in a
# directory the user may write).  An unknown user is a config error.
. "$(dirname "$0")/lib.sh"
need_root
getent passwd nobody >/dev/null || skip "no user 'nobody'"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
chmod 755 "$WORK"
mkdir "$WORK/log" && chown nobody "$WORK/log"

cat >"$WORK/bad.yaml" <<CONF
daemon: { user: no-such-user-here }
stacks:
  s: [gen, { plugin: file, file: $WORK/log/out.log }]
CONF
rc=0; out=$("$SLUICE" -t -c "$WORK/bad.yaml" 2>&1) || rc=$?
[ "$rc" = 78 ] || fail "unknown user: exit $rc"
grep -qF "bad.yaml:1:17: error: daemon.user: no user 'no-such-user-here'" <<<"$out" || fail "message: $out"

cat >"$WORK/c.yaml" <<CONF
daemon: { user: nobody }
stacks:
  s: [{ plugin: gen, count: -1, per_tick: 10, interval: 10ms },
      { plugin: file, file: $WORK/log/out.log, flush_interval: 50ms }]
CONF
run_sluice_bg "$WORK/err" -c "$WORK/c.yaml"
wait_for 10 test -s "$WORK/log/out.log" || fail "nothing written: $(cat "$WORK/err")"
uid=$(awk '/^Uid:/ {print $2, $3, $4, $5}' "/proc/$SLUICE_PID/status")
[ "$uid" = "65534 65534 65534 65534" ] || fail "uids are $uid, expected nobody's"
caps=$(awk '/^CapEff:/ {print $2}' "/proc/$SLUICE_PID/status")
[ "$caps" = 0000000000001000 ] || fail "effective capabilities $caps, expected CAP_NET_ADMIN only"
mv "$WORK/log/out.log" "$WORK/log/out.log.1"
kill -HUP "$SLUICE_PID"
wait_for 10 test -s "$WORK/log/out.log" || fail "SIGHUP reopen failed as nobody: $(cat "$WORK/err")"
[ "$(stat -c %U "$WORK/log/out.log")" = nobody ] || fail "reopened file not owned by nobody"
kill -TERM "$SLUICE_PID"
rc=0; wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || fail "exit $rc: $(cat "$WORK/err")"
grep -q "running as user nobody (keeping CAP_NET_ADMIN)" "$WORK/err" || fail "no log line about the drop"
pass
