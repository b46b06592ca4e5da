#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Write errors never stop the daemon: to /dev/full (ENOSPC on every write)
# and to a full 256 KiB tmpfs the file and pcap outputs keep running, count
# errors and dropped records (SIGUSR1 shows them), log rate-limited, and
# when space comes back they write again, whole records, in order.  At exit
# what /dev/full never took is counted in dropped_records and the core's
# dropped.
. "$(dirname "$0")/lib.sh"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
[ -w /dev/full ] || skip "no /dev/full"

# counter LOG INSTANCE NAME: the last value SIGUSR1 (or exit) logged
counter() {
	grep "counters: $2 " "$1" | tail -1 | sed -nE "s/.* $3=([0-9]+).*/\1/p"
}

# ---- /dev/full ----
cat >"$WORK/full.yaml" <<YAML
stacks:
  s:
    - {plugin: gen, count: -1, interval: 10ms, per_tick: 100}
    - {plugin: file, file: /dev/full, buffer: 16KiB}
  p:
    - {plugin: replay, file: "$SRCDIR/tests/data/raw-mixed.pcap", loop: 0, pace: original}
    - {plugin: pcap, file: /dev/full, buffer: 1MiB, snaplen: 1500}
YAML
t0=$SECONDS
run_sluice_bg "$WORK/full.log" -c "$WORK/full.yaml"
# SIGUSR1 only once the daemon handles it (before "started": it would die of it).
wait_for 10 grep -q "started: " "$WORK/full.log" || { cat "$WORK/full.log"; fail "sluice did not start"; }
# Until both outputs counted a failed write and the file output's buffer
# overflowed (the events; no time is waited out).
failing() {
	kill -0 "$SLUICE_PID" 2>/dev/null || { cat "$WORK/full.log"; fail "sluice died writing to /dev/full"; }
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	local e=$(counter "$WORK/full.log" s.file errors) pe=$(counter "$WORK/full.log" p.pcap errors)
	local d=$(counter "$WORK/full.log" s.file dropped_records)
	[ "${e:-0}" -ge 1 ] && [ "${pe:-0}" -ge 1 ] && [ "${d:-0}" -ge 1 ]
}
wait_for 20 failing || true	# the checks below say what is missing
# One error line per 10 s per output, and one at the start.
lmax=$((2 + (SECONDS - t0) / 10))
for inst in "s.file (file)" "p.pcap (pcap)"; do
	e=$(counter "$WORK/full.log" "${inst% *}" errors)
	d=$(counter "$WORK/full.log" "${inst% *}" dropped_records)
	[ "${e:-0}" -ge 1 ] || fail "$inst: write errors not counted ($(grep counters "$WORK/full.log"))"
	# the file output's 16 KiB buffer overflows; the slow pcap stack's does not
	[ "$inst" != "s.file (file)" ] || [ "${d:-0}" -ge 1 ] || fail "$inst: dropped records not counted"
	# rate-limited: one error line per 10 s, not one per write or record
	l=$(grep -c "${inst% *}: error: cannot write" "$WORK/full.log")
	[ "$l" -le "$lmax" ] || fail "$inst: $l error lines in $((SECONDS - t0)) s"
done
grep -q "No space left on device" "$WORK/full.log" || fail "the error is not named"
kill -TERM "$SLUICE_PID"
rc=0; wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || fail "exit status $rc after SIGTERM with a failing output"
# /dev/full took nothing: every record is dropped, also what was buffered at exit
for inst in s.file p.pcap; do
	i=$(counter "$WORK/full.log" $inst in)
	d=$(counter "$WORK/full.log" $inst dropped)
	r=$(counter "$WORK/full.log" $inst dropped_records)
	k=$(counter "$WORK/full.log" $inst skipped)
	[ "$i" -gt 0 ] && [ "$d" = "$i" ] && [ "$d" = $((r + ${k:-0})) ] ||
		fail "$inst at exit: in=$i dropped=$d dropped_records=$r skipped=${k:-0}"
done
echo "ok: /dev/full: errors and drops counted, exit 0"

# ---- a full file system that gets space back ----
[ "$(id -u)" = 0 ] || skip "tmpfs part needs root (the /dev/full part passed)"
mkdir "$WORK/fs"
mount -t tmpfs -o size=256k sluicetest "$WORK/fs" || skip "cannot mount a tmpfs"
at_exit "umount $WORK/fs"
cat >"$WORK/fs.yaml" <<YAML
stacks:
  s:
    - {plugin: gen, count: -1, interval: 10ms, per_tick: 500}
    - {plugin: file, file: "$WORK/fs/out.log", buffer: 64KiB, flush_interval: 100ms}
YAML
run_sluice_bg "$WORK/fs.log" -c "$WORK/fs.yaml"
wait_for 10 grep -q "cannot write to .*No space left" "$WORK/fs.log" || { cat "$WORK/fs.log"; fail "the tmpfs did not fill"; }
sleep 1
kill -0 "$SLUICE_PID" || fail "sluice died on a full file system"
cp "$WORK/fs/out.log" "$WORK/before.log"
: >"$WORK/fs/out.log"	# space comes back
wait_for 10 grep -q "writing to $WORK/fs/out.log again" "$WORK/fs.log" || { cat "$WORK/fs.log"; fail "no recovery"; }
sleep 0.5
kill -USR1 "$SLUICE_PID"
sleep 0.3
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || true
d=$(counter "$WORK/fs.log" s.file dropped_records)
[ "${d:-0}" -gt 0 ] || fail "nothing counted as dropped while full"
# Records are whole from the first byte (a short write is cut back to the
# last whole record and that record retried whole) and in order, with a
# gap where the buffer was full.
python3 - "$WORK/before.log" "$WORK/fs/out.log" <<'PY' || fail "records after recovery are damaged"
import sys
for fn in sys.argv[1:]:
    data = open(fn, "rb").read()
    assert data.endswith(b"\n"), (fn, data[-20:])
    lines = data.split(b"\n")[:-1]
    nums = []
    for l in lines:
        assert l.startswith(b"record "), (fn, l)
        nums.append(int(l[7:]))
    assert nums == sorted(nums) and len(set(nums)) == len(nums), fn
    assert nums, fn
PY
pass "write errors counted, no exit, recovery once space is back"
