#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# daemon.metrics survives idle connections (issue 19): 100 idle
# connections from one address, held and then closed all at once, three
# times (metrics_idle.py).  Before, one client could hold all 16
# connections, and once they were closed in one go /metrics never
# answered again.  Checked: scrapes from another address answer while they
# are held, scrapes answer after they are closed, and sluice still stops on
# SIGTERM.
. "$(dirname "$0")/lib.sh"
need_cmd python3 curl ss
MODULE="${SLUICE_PLUGIN_PATH%%:*}/metrics_http.so"
[ -f "$MODULE" ] || skip "no $MODULE (built with -DSLUICE_WITH_METRICS=OFF?)"
TF=${SLUICE_TEST_TIME_FACTOR:-1}
python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.2", 0))' 2>/dev/null ||
	skip "127.0.0.2 is not a local address here"

python3 - "$WORK/p.pcap" <<'PY'
import struct, sys
l4 = struct.pack(">HHHH", 40000, 53, 8 + 4, 0) + b"idle"
p = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0x4000, 64, 17, 0,
                bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])) + l4
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 101))
    for n in range(2):
        f.write(struct.pack("<IIII", 1764454688, n * 100000, len(p), len(p)) + p)
PY
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$WORK/m.yaml" <<YAML
daemon:
  metrics: { listen: "127.0.0.1:$PORT" }
stacks:
  s:
    - { plugin: replay, file: "$WORK/p.pcap", loop: 0, pace: original }
    - decode
    - logline
    - { plugin: file, file: "$WORK/out.log" }
YAML
L="$WORK/sluice.log"
run_sluice_bg "$L" -c "$WORK/m.yaml"
wait_for 10 grep -qs "metrics: serving" "$L" || fail "did not start: $(cat "$L")"
curl -sS --max-time $((10 * TF)) -o "$WORK/m.txt" "http://127.0.0.1:$PORT/metrics" ||
	fail "the first scrape failed"
grep -q '^sluice_build_info' "$WORK/m.txt" || fail "the first scrape has no sluice_build_info"
python3 "$SRCDIR/tests/e2e/metrics_idle.py" "$PORT" "$SLUICE_PID" 3 $((5 * TF)) ||
	fail "/metrics did not survive idle connections: $(tail -3 "$L")"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "sluice exited with $?: $(tail -5 "$L")"
pass "100 idle connections, three times: scraped beside them and after them"
