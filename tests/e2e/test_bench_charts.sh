#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The benchmark charts and the outputs table come from the result files
# with the tables' arithmetic (issue 21): on hand-made results of
# bench/run.sh (live.tsv) and bench/outputs.sh (outputs.tsv) whose answers
# are known,
# - bench/charts_data.py gives each logger's loss against the offered rate
#   (full-rate and probe rows; the search summary rows left out), the
#   median CPU per packet per payload size (NaN where a size is missing)
#   and each output's median records per CPU second;
# - bench/charts.sh draws three well-formed SVGs naming every logger and
#   output and the run (the '#note' line) in their titles;
# - bench/outputs_report.py's table has the median rate, the ratio to
#   Vector's 40,960 events/s, met/missed against 10x, and the lost records.
. "$(dirname "$0")/lib.sh"
need_cmd python3 gnuplot

# round mode size logger target_pps sent secs kernel_logged output cpu_s detail threads
tab() { tr ' ' '\t'; }
tab >"$WORK/live.tsv" <<'EOF'
#note charts-test-run
1 full 64 sluice-json 0 200000 2.000 200000 200000 0.0800 - main=0.0800
2 full 64 sluice-json 0 220000 2.000 220000 220000 0.1100 - main=0.1100
1 full 512 sluice-json 0 100000 2.000 100000 100000 0.0600 - main=0.0600
1 full 64 ulogd-json 0 300000 2.000 300000 150000 0.6000 - -
1 probe 64 ulogd-json 75000 75000 1.000 75000 74000 0.1000 - -
1 search 64 ulogd-json 75000 0 0 0 0 0 upper=150000
#stalled 1 probe 64 ulogd-json 37500 10 1.000 10 0 0.1000 - -
1 full 512 tcpdump 0 90000 1.000 90000 90000 0.0900 - -
EOF
# name run records expect took sent received cpu wall rxcpu bytes
tab >"$WORK/outputs.tsv" <<'EOF'
#note outputs-test-run
file-json 1 1000000 out 1000000 1000000 1000000 0.5000 0.6 0.000 430000000
file-json 2 1000000 out 1000000 1000000 1000000 1.0000 1.1 0.000 430000000
file-json 3 1000000 out 1000000 1000000 1000000 2.0000 2.1 0.000 430000000
syslog-udp 1 1000000 out 1000000 1000000 999000 4.0000 4.5 0.500 -
EOF

# ---- the data gnuplot draws ----
mkdir "$WORK/dat"
python3 "$SRCDIR/bench/charts_data.py" "$WORK" "$WORK/dat" || fail "charts_data.py failed"
python3 - "$WORK/dat" <<'PY' || fail "charts_data.py's numbers are not the tables' (above)"
import math, os, sys
d = sys.argv[1]
bad = []
def blocks(path):
    """{label: points}, without the "NaN NaN" of a logger with no points"""
    out = {}
    for b in open(path, encoding="utf-8").read().split("\n\n\n"):
        lines = [l for l in b.strip("\n").split("\n") if l]
        if lines:
            out[lines[0].split('"')[1]] = [tuple(float(x) for x in l.split()) for l in lines[1:]
                                           if "NaN" not in l]
    return out
l64 = blocks(os.path.join(d, "loss-64.dat"))
want64 = {"sluice json→file": [(100000, 0.0), (110000, 0.0)],
          "ulogd2 JSON": [(75000, 100 * 1000 / 75000), (150000, 50.0)], "tcpdump -w": []}
for k, pts in want64.items():
    got = l64.get(k, [])
    if len(got) != len(pts) or any(abs(a - c) > 0.5 or abs(b - e) > 1e-3 for (a, b), (c, e) in zip(got, pts)):
        bad.append(f"loss-64.dat {k}: {got}, want {pts}")
l512 = blocks(os.path.join(d, "loss-512.dat"))
# the same loggers in the same order in every panel (their colours)
if list(l64) != ["sluice json→file", "ulogd2 JSON", "tcpdump -w"] or list(l512) != list(l64):
    bad.append(f"loggers: loss-64.dat {list(l64)}, loss-512.dat {list(l512)}")
if [k for k, v in l512.items() if v] != ["sluice json→file", "tcpdump -w"]:
    bad.append(f"loss-512.dat: {l512}")
cpu = {}
for l in open(os.path.join(d, "cpu.dat"), encoding="utf-8").read().splitlines()[1:]:
    name, rest = l[1:].split('" ', 1)
    cpu[name] = [float(x) for x in rest.split()]
want = {"sluice json→file": [0.45, 0.6], "ulogd2 JSON": [4.0, math.nan], "tcpdump -w": [math.nan, 1.0]}
for k, v in want.items():
    g = cpu.get(k)
    if g is None or len(g) != 2 or any(not (math.isnan(a) and math.isnan(b)) and abs(a - b) > 1e-3 for a, b in zip(g, v)):
        bad.append(f"cpu.dat {k}: {g}, want {v}")
outs = dict(l.rsplit(" ", 1) for l in open(os.path.join(d, "outputs.dat"), encoding="utf-8").read().splitlines())
if outs != {'"file-json"': "1000000", '"syslog-udp"': "250000"}:
    bad.append(f"outputs.dat: {outs}")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# ---- the charts ----
"$SRCDIR/bench/charts.sh" "$WORK" 2>"$WORK/charts.err" || { cat "$WORK/charts.err" >&2; fail "charts.sh failed"; }
python3 - "$WORK" <<'PY' || fail "the SVGs do not show what they should (above)"
import os, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
want = {"loss-vs-rate.svg": ["sluice json→file", "ulogd2 JSON", "tcpdump -w", "64-byte payloads", "512-byte payloads", "charts-test-run"],
        "cpu-per-packet.svg": ["sluice json→file", "ulogd2 JSON", "tcpdump -w", "charts-test-run"],
        "outputs.svg": ["file-json", "syslog-udp", "outputs-test-run", "40960"]}
bad = 0
for f, words in want.items():
    try:
        root = ET.parse(os.path.join(d, f)).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"{f}: {e}")
        bad += 1
        continue
    text = " ".join(t for t in root.itertext())
    for w in words:
        if w not in text:
            print(f"{f}: no '{w}' in its text")
            bad += 1
sys.exit(1 if bad else 0)
PY

# ---- the outputs table ----
python3 "$SRCDIR/bench/outputs_report.py" "$WORK/outputs.tsv" >"$WORK/table.md" || fail "outputs_report.py failed"
grep -q '^| json → file (/dev/shm) | 3 | 1,000,000 (500,000–2,000,000) | 1.00 | 24.4× | met | – | 430 | 410 | 0 |$' "$WORK/table.md" ||
	{ cat "$WORK/table.md" >&2; fail "the file-json row is not the median of its three runs"; }
grep -q '^| logline → syslog, UDP | 1 | 250,000 (250,000–250,000) | 4.00 | 6.1× | \*\*missed\*\* | 0.50 | – | – | 1,000 |$' "$WORK/table.md" ||
	{ cat "$WORK/table.md" >&2; fail "the syslog-udp row does not show its loss and missed target"; }
pass "charts and the outputs table from hand-made results"
