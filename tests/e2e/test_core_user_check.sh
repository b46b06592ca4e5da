#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `sluice -t` checks, as daemon.user, what the daemon will open as that
# user: each error at the option's file:line:column, exit 78, nothing
# started.  An output in a missing directory, one in a directory only root
# may write, a spool_dir whose parent the user cannot write, a flowfile dir
# missing, a configuration file the user cannot read.  A configuration
# whose paths are all right passes, and without daemon.user a missing
# directory is still an error.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd setpriv
. "$(dirname "$0")/user_lib.sh"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
mkdir -m 755 "$WORK/root" "$WORK/ok"
chown "$TUSER" "$WORK/ok"

cat >"$WORK/bad.yaml" <<CONF
daemon: { user: $TUSER }
stacks:
  a: [gen, { plugin: file, file: $WORK/missing/out.log }]
  b: [gen, { plugin: file, file: $WORK/root/out.log }]
  c: [gen, { plugin: syslog, transport: tcp, address: "127.0.0.1:9",
             spool_dir: $WORK/root/spool }]
  d: [gen, { plugin: file, file: $WORK/ok/out.log }]
CONF
chmod 644 "$WORK/bad.yaml"
rc=0; "$SLUICE" -t -c "$WORK/bad.yaml" >"$WORK/out" 2>&1 || rc=$?
[ "$rc" = 78 ] || fail "exit $rc, expected 78: $(cat "$WORK/out")"
B="$WORK/bad.yaml"
for want in \
	"$B:3:34: error: file: directory $WORK/missing does not exist (as user $TUSER)" \
	"$B:4:34: error: file: directory $WORK/root is not writable: Permission denied (as user $TUSER)" \
	"$B:6:25: error: spool_dir: cannot be created: directory $WORK/root is not writable: Permission denied (as user $TUSER)" \
	"sluice: 3 errors in $B; nothing started"; do
	grep -qxF "$want" "$WORK/out" || fail "no line '$want' in: $(cat "$WORK/out")"
done
grep -q "ok/out.log" "$WORK/out" && fail "a writable directory was reported: $(cat "$WORK/out")"

# The file itself unreadable by the user: a reload would fail.
sed "/^  [abc]:/,/spool_dir/d" "$WORK/bad.yaml" >"$WORK/private.yaml"
chmod 600 "$WORK/private.yaml"
rc=0; "$SLUICE" -t -c "$WORK/private.yaml" >"$WORK/out" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -qxF "$WORK/private.yaml: error: cannot be read (as user $TUSER): Permission denied; a reload would fail" "$WORK/out" ||
	fail "unreadable config: exit $rc: $(cat "$WORK/out")"
chmod 644 "$WORK/private.yaml"
"$SLUICE" -t -c "$WORK/private.yaml" >"$WORK/out" 2>&1 || fail "good config refused: $(cat "$WORK/out")"

# flowfile's dir must exist; a spool_dir the user can create passes.
cat >"$WORK/ff.yaml" <<CONF
daemon: { user: $TUSER }
stacks:
  f: [{ plugin: replay, file: "$SRCDIR/tests/data/raw-mixed.pcap" }, decode, flow,
      { plugin: flowfile, dir: $WORK/ok/flows }]
  s: [gen, { plugin: syslog, transport: tcp, address: "127.0.0.1:9", spool_dir: $WORK/ok/spool }]
CONF
chmod 644 "$WORK/ff.yaml"
rc=0; "$SLUICE" -t -c "$WORK/ff.yaml" >"$WORK/out" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -qxF "$WORK/ff.yaml:4:32: error: dir: directory $WORK/ok/flows does not exist (as user $TUSER)" "$WORK/out" &&
	[ "$(grep -c error: "$WORK/out")" = 1 ] || fail "flowfile dir: exit $rc: $(cat "$WORK/out")"

# No daemon.user, as root: a missing directory is still found.
sed 1d "$WORK/bad.yaml" >"$WORK/root.yaml"
rc=0; "$SLUICE" -t -c "$WORK/root.yaml" >"$WORK/out" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -qxF "$WORK/root.yaml:2:34: error: file: directory $WORK/missing does not exist (as this user)" "$WORK/out" &&
	[ "$(grep -c error: "$WORK/out")" = 1 ] || fail "without daemon.user: exit $rc: $(cat "$WORK/out")"
pass "missing and unwritable directories, an uncreatable spool_dir, a missing flowfile dir and an unreadable file, at file:line:column"
