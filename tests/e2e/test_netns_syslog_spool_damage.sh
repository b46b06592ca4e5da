#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A syslog output's spool that cannot be fed or wedged (plugins/common/spool.h):
#  1. a spool_dir owned by nobody (0755), holding a segment nobody planted:
#     the start is refused, naming the owner, and nothing planted is sent;
#  2. a segment left by "a previous run" with a damaged record (a flipped
#     byte) in the middle of 10, next to a junk file named like a segment
#     and one numbered ffffffffffffffff: the 9 sound records arrive, in
#     order, the damaged one does not, and `sluice stats` shows
#     spool_corrupt=3 (the damaged record and the two files set aside as
#     seg-*.bad, which are left on disk).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip ss python3
getent passwd nobody >/dev/null || skip "needs the user 'nobody'"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
NS=$(unique_name slsd)
make_netns "$NS"
FACTOR=${SLUICE_TEST_TIME_FACTOR:-1}
PORT=5514 GOT="$WORK/got.txt" SOCK="$WORK/control" N=20
lines() { if [ -e "$GOT" ]; then wc -l <"$GOT"; else echo 0; fi; }
lines_are() { [ "$(lines)" -ge "$1" ]; }
listening() { ip netns exec "$NS" ss -Hltn "sport = :$PORT" | grep -q .; }
conf() {	# conf FILE SPOOL_DIR
	cat >"$1" <<CONF
daemon: { control_socket: $SOCK }
stacks:
  s: [{ plugin: gen, count: $N, per_tick: 1, interval: 10ms },
      { plugin: syslog, transport: tcp, address: "127.0.0.1:$PORT", queue_size: 64KiB,
        message_size: 512, reconnect_min: 50ms, reconnect_max: 200ms, spool_dir: $2 }]
  idle: [{ plugin: gen, count: -1, interval: 1s, per_tick: 1 }, { plugin: file, file: /dev/null }]
CONF
}
# segment FILE FIRST COUNT [FLIP_RECORD]: a spool segment (format: spool.h)
# of syslog frames "spooled-I", with one byte of record FLIP_RECORD flipped.
segment() {
	python3 - "$@" <<'PY'
import struct, sys
def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xffffffff
path, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
flip = int(sys.argv[4]) if len(sys.argv) > 4 else -1
out = bytearray(b"SLSPOOL1" + struct.pack("<Q", 16))
for i in range(first, first + count):
    msg = b"<13>Dec  2 00:00:00 host test: spooled-%d" % i
    rec = b"%d %s" % (len(msg), msg)
    hdr = struct.pack("<I", len(rec))
    at = len(out)
    out += hdr + struct.pack("<I", crc32c(hdr + rec)) + rec
    if i == flip:
        out[at + 8 + len(rec) - 1] ^= 0x20
open(path, "wb").write(out)
PY
}

ip netns exec "$NS" python3 "$SRCDIR/tests/e2e/syslog_recv.py" $PORT "$GOT" &
RECV=$!
at_exit "kill -9 $RECV"
wait_for $((10 * FACTOR)) listening || fail "receiver did not listen"

# 1. a directory of nobody's with nobody's segment in it
FOREIGN="$WORK/foreign"
mkdir -m 755 "$FOREIGN"
segment "$FOREIGN/seg-0000000100000000.spl" 1000 3
chown -R nobody "$FOREIGN"
conf "$WORK/foreign.yaml" "$FOREIGN"
rc=0
ip netns exec "$NS" timeout $((30 * FACTOR)) "$SLUICE" -c "$WORK/foreign.yaml" >"$WORK/foreign.err" 2>&1 || rc=$?
grep -q "spooled-100[0-2]" "$GOT" 2>/dev/null && fail "nobody's segment was sent: $(cat "$GOT")"
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "a spool_dir of nobody's was used (exit $rc): $(tail -5 "$WORK/foreign.err")"
grep -q "$FOREIGN belongs to uid $(id -u nobody), not to the daemon's user (uid 0) or root: refused" "$WORK/foreign.err" ||
	fail "no clear error (exit $rc): $(cat "$WORK/foreign.err")"

# 2. a damaged record in the middle of a segment, a junk file, a wrapping number
SPOOL="$WORK/spool"
mkdir -m 700 "$SPOOL"
segment "$SPOOL/seg-0000000100000000.spl" 0 10 4
head -c 100000 /dev/urandom >"$SPOOL/seg-0000000100000001.spl"
segment "$SPOOL/seg-ffffffffffffffff.spl" 500 2
conf "$WORK/c.yaml" "$SPOOL"
ip netns exec "$NS" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/err" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for $((30 * FACTOR)) lines_are $((9 + N)) || fail "received $(lines) of $((9 + N)): $(tail -5 "$WORK/err")"
corrupt() {
	"$SLUICE" stats --json -c "$WORK/c.yaml" | python3 -c '
import json, sys
print([i for i in json.load(sys.stdin)["instances"] if i["name"] == "s.syslog"][0]["counters"]["spool_corrupt"])'
}
c=$(corrupt) || fail "sluice stats: $(tail -5 "$WORK/err")"
[ "$c" = 3 ] || fail "spool_corrupt $c, expected 3: $(grep spool "$WORK/err")"
kill -TERM "$SLUICE_PID"
rc=0; wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || fail "exit $rc: $(tail -5 "$WORK/err")"
got=$(grep -o "spooled-[0-9]*" "$GOT" | tr '\n' ' ')
[ "$got" = "spooled-0 spooled-1 spooled-2 spooled-3 spooled-5 spooled-6 spooled-7 spooled-8 spooled-9 " ] ||
	fail "from the spool came: $got"
[ -e "$SPOOL/seg-0000000100000001.bad" ] && [ -e "$SPOOL/seg-ffffffffffffffff.bad" ] ||
	fail "not set aside: $(ls "$SPOOL")"
grep -q "damaged record at offset .* to the next sound record" "$WORK/err" || fail "no log line: $(grep spool "$WORK/err")"
pass "a spool_dir of nobody's refused; of 10 spooled records with one damaged 9 delivered in order, spool_corrupt=$c"
