#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog's `netns:` with daemon.user: joining a namespace (setns) needs
# CAP_SYS_ADMIN, which the drop to daemon.user does not keep (it keeps
# CAP_NET_ADMIN only), and instances start after the drop.  So the start
# fails, exit 1, saying why, and no record is read in the wrong namespace;
# the same configuration without daemon.user starts.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip setpriv
. "$(dirname "$0")/user_lib.sh"
NS=$(unique_name snsu)
make_netns "$NS"
mkdir -m 750 "$WORK/log" && chown "$TUSER:$TGROUP" "$WORK/log"
conf() {
	cat >"$1" <<CONF
${2:+daemon: { user: $2 \}}
stacks:
  t: [{ plugin: nflog, group: 33, netns: "$NS" }, json, { plugin: file, file: $WORK/log/out.json }]
CONF
	chmod 644 "$1"
}
conf "$WORK/user.yaml" "$TUSER"
"$SLUICE" -t -c "$WORK/user.yaml" || fail "sluice -t refused the configuration"
rc=0
timeout $((30 * TIME_FACTOR)) "$SLUICE" -c "$WORK/user.yaml" >"$WORK/user.log" 2>&1 || rc=$?
cat "$WORK/user.log"
[ "$rc" = 1 ] || fail "with daemon.user: exit $rc, expected 1"
grep -q "needs CAP_SYS_ADMIN" "$WORK/user.log" || fail "the failure does not say CAP_SYS_ADMIN is needed"

# as root the same instance starts
conf "$WORK/root.yaml" ""
run_sluice_bg "$WORK/root.log" -c "$WORK/root.yaml"
wait_for 10 grep -q "netns $NS: joined" "$WORK/root.log" || { cat "$WORK/root.log"; fail "as root: not joined"; }
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/root.log"; fail "as root: sluice exited with an error"; }
pass
