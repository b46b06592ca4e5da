#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The control socket against clients that misbehave, with a reply larger
# than a socket buffer (3000 filter instances: ~1 MB of JSON).  A client
# that asks and never reads does not delay another one's `sluice stats`;
# a slow reader still gets the whole reply (the daemon sends the rest as
# it reads); the one that never reads is dropped after the 5 s deadline
# with its reply cut; 16 idle connections fill every slot, the next
# `sluice stats` says busy (exit 75) at once, and once they close it is
# served again.  Records keep flowing meanwhile.
. "$(dirname "$0")/lib.sh"
need_cmd python3
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
NF=3000
SOCK="$WORK/ctl.sock"
{
	echo "daemon: {control_socket: $SOCK}"
	echo "stacks:"
	printf '  s: [{plugin: gen, count: -1, per_tick: 1, interval: 100ms}'
	for ((i = 0; i < NF; i++)); do printf ', upcase'; done
	echo ", {plugin: file, file: $WORK/out.log, flush_interval: 50ms}]"
} >"$WORK/c.yaml"
run_sluice_bg "$WORK/err" -c "$WORK/c.yaml"
wait_for 20 grep -qs "control socket $SOCK: listening" "$WORK/err" || fail "no socket: $(cat "$WORK/err")"
wait_for 10 test -s "$WORK/out.log" || fail "no records: $(cat "$WORK/err")"

python3 - "$SLUICE" "$SOCK" "$NF" "${SLUICE_TEST_TIME_FACTOR:-1}" <<'PY' || fail "clients"
import json, socket, subprocess, sys, time
sluice, path, nf, tf = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

def connect():
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    return s

def stats(*args):
    t = time.time()
    r = subprocess.run([sluice, "stats", "--socket", path] + list(args),
                       capture_output=True, text=True, timeout=10 * tf)
    return r, time.time() - t

mute = connect()                    # asks, never reads
mute.sendall(b"stats json\n")
slow = connect()                    # asks, reads 64 KiB every 50 ms
slow.sendall(b"stats json\n")
time.sleep(0.3)

r, secs = stats("--json")
assert r.returncode == 0, r.stderr
doc = json.loads(r.stdout)
assert len(doc["instances"]) == nf + 2, len(doc["instances"])
print("stats --json: %d bytes, %d instances, %.3f s, past a client that does not read"
      % (len(r.stdout), len(doc["instances"]), secs))
assert secs < 3 * tf, secs

got = b""
t = time.time()
while True:
    b = slow.recv(65536)
    if not b:
        break
    got += b
    time.sleep(0.05)
status, body = got.split(b"\n", 1)
assert status == b"ok", status
slow_doc = json.loads(body)
assert len(slow_doc["instances"]) == nf + 2
print("slow reader: the whole reply, %d bytes in %.2f s" % (len(got), time.time() - t))

time.sleep(max(0, 5.5 - (time.time() - t)))
mute.settimeout(2 * tf)
cut = b""
while True:
    b = mute.recv(1 << 20)
    if not b:
        break
    cut += b
assert 0 < len(cut) < len(got), (len(cut), len(got))
print("non-reader: dropped at the deadline with %d of %d bytes" % (len(cut), len(got)))

idle = [connect() for _ in range(16)]
time.sleep(0.2)
r, secs = stats()
assert r.returncode == 75 and "busy" in r.stderr, (r.returncode, r.stderr)
assert secs < 2 * tf, secs
print("17th connection: exit 75 in %.3f s: %s" % (secs, r.stderr.strip()))
for s in idle:
    s.close()
time.sleep(0.2)
r, secs = stats()
assert r.returncode == 0 and "s.upcase%d" % nf in r.stdout, (r.returncode, r.stderr)
print("after they closed: served in %.3f s" % secs)
PY
n1=$(wc -l <"$WORK/out.log")
sleep 0.5
n2=$(wc -l <"$WORK/out.log")
[ "$n2" -gt "$n1" ] || fail "records stopped flowing ($n1, then $n2 lines)"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "exit $?: $(tail -5 "$WORK/err")"
pass "$NF instances; a non-reader, a slow reader, 16 idle clients: the loop never waited ($n2 records written)"
