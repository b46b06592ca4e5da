#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ratelimit and dedup on NFLOG captures with known timestamps (nflog_pcap.py):
# replay -> decode -> ratelimit -> json, and replay -> decode -> logline ->
# dedup -> file.  Time is the records' own, so the counts are exact however
# fast the file is read; the oracle is a token bucket / run collapser in
# Python (fractions, no shared code) over the same schedule:
#   - per source, the records let through and the summaries, in order: every
#     summary right before the first record of its source let through again
#     (or at the end, flush), its `suppressed` the records dropped since;
#   - passed + sum(suppressed) == records in, for every source;
#   - the daemon's counters (suppressed, summaries) agree;
#   - unkeyed bucket; max_keys smaller than the sources: evicted keys
#     still report what they suppressed, the victims exactly keytable.h's
#     CLOCK (the oracle keeps the slots, bits and hand), on a schedule
#     where an exact LRU would give other records;
#   - dedup by text and by key, with runs cut by other records, by the
#     window, and by flush;
#   - fan-out: with the filters in some branches of one input (before and
#     after logline), the other branches are byte for byte what they are
#     without them (summaries reuse dropped records' storage).
. "$(dirname "$0")/lib.sh"
need_cmd python3
for p in replay decode ratelimit dedup json logline file; do
	[ -e "$SLUICE_PLUGIN_PATH/$p.so" ] || skip "plugin $p not built"
done
GEN="$SRCDIR/tests/e2e/nflog_pcap.py"

# Schedule: 10.0.0.1 floods at 1000/s for 3 s, 10.0.0.2 at 50/s, 10.0.0.3
# sends bursts of 40 every 0.5 s; 10.0.0.4..23 one record each 0.1 s.
python3 - >"$WORK/flood.txt" <<'PY'
from fractions import Fraction as F
b = 1700000000
ev = []
for i in range(3000):
    ev.append((b + F(i, 1000), "10.0.0.1"))
for i in range(150):
    ev.append((b + F(i, 50), "10.0.0.2"))
for k in range(6):
    for i in range(40):
        ev.append((b + F(k, 2) + F(i, 10000), "10.0.0.3"))
for i in range(30):
    for s in range(20):
        ev.append((b + F(i, 10) + F(s, 100000), "10.0.0.%d" % (4 + s)))
ev.sort()
for t, s in ev:
    print("%d.%06d %s 22 DROP:_" % (int(t), int((t - int(t)) * 1000000), s))
PY
python3 "$GEN" "$WORK/flood.pcap" <"$WORK/flood.txt"

cat >"$WORK/oracle.py" <<'PY'
"""oracle.py SCHEDULE OUT.json RATE BURST MODE [MAX_KEYS]: MODE src or none."""
import json, sys
from collections import OrderedDict, defaultdict
from fractions import Fraction as F

sched, out, rate, burst, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
max_keys = int(sys.argv[6]) if len(sys.argv) > 6 else 1 << 30
burst = burst or rate
# The table as keytable.h keeps it: slots filled 0, 1, 2, ... (ratelimit
# never frees one), then CLOCK: the victim is the first slot at or after
# the hand not used since the hand last passed it; the hand clears the
# bits it passes and stops after the victim.  A new entry is not marked.
slots, ref, hand = [], [], 0
buckets = {}              # key -> [tokens, last, suppressed, slot]
want = []                 # ("pass", src) / ("sum", key, n)
evicted = 0
for line in open(sched):
    ts, src = line.split()[:2]
    t = F(ts)
    k = src if mode == "src" else None
    if k in buckets:
        ref[buckets[k][3]] = True
    elif len(slots) < max_keys:
        buckets[k] = [F(burst), t, 0, len(slots)]
        slots.append(k)
        ref.append(False)
    else:
        while ref[hand]:
            ref[hand] = False
            hand = (hand + 1) % max_keys
        i, hand = hand, (hand + 1) % max_keys
        ob = buckets.pop(slots[i])
        evicted += 1
        if ob[2]:
            want.append(("sum", slots[i], ob[2]))
        slots[i], ref[i] = k, False
        buckets[k] = [F(burst), t, 0, i]
    b = buckets[k]
    if t > b[1]:
        b[0] = min(F(burst), b[0] + (t - b[1]) * rate)
        b[1] = t
    if b[0] >= 1:
        b[0] -= 1
        if b[2]:
            want.append(("sum", k, b[2]))
            b[2] = 0
        want.append(("pass", src))
    else:
        b[2] += 1
for k in slots:   # flush, in table order
    if buckets[k][2]:
        want.append(("sum", k, buckets[k][2]))

got = []
for line in open(out):
    o = json.loads(line)
    if "suppressed" in o:
        if mode == "src":
            assert o["key"] == "src_addr=" + o.get("key", "=").split("=", 1)[1], o
            key = o["key"].split("=", 1)[1]
        else:
            assert "key" not in o, o
            key = None
        assert o["prefix"] == "DROP: ", o
        got.append(("sum", key, o["suppressed"]))
    else:
        got.append(("pass", o["src_ip"]))
# Order: per source exactly; summaries of evicted keys go ahead of the batch.
def per_key(seq):
    d = defaultdict(list)
    for e in seq:
        d[e[1] if mode == "src" else None].append(e)
    return d
wk, gk = per_key(want), per_key(got)
if wk != gk:
    for k in sorted(set(wk) | set(gk), key=str):
        if wk.get(k) != gk.get(k):
            w, g = wk.get(k, []), gk.get(k, [])
            i = next((i for i in range(min(len(w), len(g))) if w[i] != g[i]), min(len(w), len(g)))
            sys.exit("key %s: differs at %d: want %r got %r (lengths %d %d)" % (k, i, w[i:i+3], g[i:i+3], len(w), len(g)))
if mode == "none" and want != got:
    sys.exit("unkeyed: order differs")
passed = sum(1 for e in got if e[0] == "pass")
sums = [e[2] for e in got if e[0] == "sum"]
total = sum(1 for _ in open(sched))
if passed + sum(sums) != total:
    sys.exit("passed %d + suppressed %d != %d records" % (passed, sum(sums), total))
print("%d %d %d %d" % (passed, len(sums), sum(sums), evicted))
PY

# rl NAME RATE BURST MODE [MAX_KEYS]: one run of $SCHED (flood unless set), checked;
# prints passed summaries suppressed evicted.
rl() {
	local s="${SCHED:-flood}"
	local name="$1" rate="$2" burst="$3" mode="$4" mk="${5:-}" key="" opts
	[ "$mode" = src ] && key=", key: [src_addr]"
	opts="rate: $rate, burst: $burst$key${mk:+, max_keys: $mk}"
	cat >"$WORK/$name.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$WORK/$s.pcap"}, decode, {plugin: ratelimit, $opts},
      json, {plugin: file, file: "$WORK/$name.json"}]
YAML
	"$SLUICE" -c "$WORK/$name.yaml" >"$WORK/$name.log" 2>&1 || { cat "$WORK/$name.log"; fail "$name: sluice failed"; }
	read -r passed sums supp ev < <(python3 "$WORK/oracle.py" "$WORK/$s.txt" "$WORK/$name.json" \
		"$rate" "$burst" "$mode" $mk) || fail "$name: output differs from the oracle"
	grep -q "ratelimit): .* suppressed=$supp summaries=$sums evicted=$ev lost=0" "$WORK/$name.log" ||
		{ grep ratelimit "$WORK/$name.log"; fail "$name: counters differ from suppressed=$supp summaries=$sums evicted=$ev"; }
	echo "$name: rate $rate burst $burst key $mode${mk:+ max_keys $mk}: passed $passed, summaries $sums, suppressed $supp, evicted $ev"
}

N=$(wc -l <"$WORK/flood.txt")
echo "records: $N"
rl keyed 100 10 src
rl keyed_default_burst 20 0 src
rl unkeyed 300 50 none
rl evict 100 10 src 8
# Where CLOCK and LRU part: rate 1, burst 1, 4 keys; a b c d, then b and a
# (both suppressed, both marked), e (the hand clears a and b, evicts c),
# f (evicts d), g: an exact LRU would evict b, the clock evicts a (bit
# cleared, slot first): a's summary comes out then and its next record
# passes with a new bucket, where LRU would suppress it.  Then 200 records
# of 40 keys in a pseudo-random order, through the same 4 slots.
python3 - >"$WORK/clock.txt" <<'PY'
b, seq = 1700000000, [1, 2, 3, 4, 2, 1, 5, 6, 7, 1]
x = 12345
for i in range(200):
    x = (x * 1103515245 + 12345) % (1 << 31)
    seq.append(1 + (x >> 16) % 40 if (x >> 8) % 3 else 1 + (x >> 16) % 5)
for i, s in enumerate(seq):
    print("%d.%06d 10.0.1.%d 22 DROP:_" % (b, 1000 * i, s))
PY
python3 "$GEN" "$WORK/clock.pcap" <"$WORK/clock.txt"
SCHED=clock rl clock 1 1 src 4
python3 -c 'import json, sys; o = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(not any(r.get("key") == "src_addr=10.0.1.1" and r.get("suppressed") == 1 for r in o[:12]))' \
	"$WORK/clock.json" || fail "clock: no summary for 10.0.1.1 at its eviction by the hand"

# ---- dedup ----
python3 - >"$WORK/dd.txt" <<'PY'
b = 1700000000.0
ev = []
# ID 1 x5, ID 2, ID 1 x3, (gap past the 2 s window) ID 1 x2, ID 3 x1, ID 3 x4 spread over 3 s
for i in range(5): ev.append((b + i * 0.1, "10.0.0.1", 1))
ev.append((b + 0.6, "10.0.0.1", 2))
for i in range(3): ev.append((b + 0.7 + i * 0.1, "10.0.0.1", 1))
ev += [(b + 5.0, "10.0.0.1", 1), (b + 5.1, "10.0.0.1", 1), (b + 5.2, "10.0.0.9", 3)]
for i in range(4): ev.append((b + 5.3 + i * 0.75, "10.0.0.9", 3))
for t, s, ipid in ev:
    print("%.6f %s 22 DROP:_ %d" % (t, s, ipid))
PY
python3 "$GEN" "$WORK/dd.pcap" <"$WORK/dd.txt"
cat >"$WORK/dd_oracle.py" <<'PY'
"""dd_oracle.py SCHEDULE OUT WINDOW_S MODE: MODE text (line = src+ipid) or src."""
import sys
sched, out, window, mode = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
want, run = [], None   # run: [key, first, count]
for line in open(sched):
    t, src, _, _, ipid = line.split()
    t = float(t)
    k = (src, ipid) if mode == "text" else src
    if run and run[0] == k and t - run[1] <= window + 1e-9:
        run[2] += 1
        continue
    if run and run[2]:
        want.append("last message repeated %d times" % run[2])
    want.append("pass %s %s" % (src, ipid))
    run = [k, t, 0]
if run and run[2]:
    want.append("last message repeated %d times" % run[2])
got = []
for line in open(out):
    line = line.rstrip("\n")
    if line.startswith("last message"):
        got.append(line.split(" src_addr")[0])
    else:
        f = dict(w.split("=", 1) for w in line.split() if "=" in w)
        got.append("pass %s %s" % (f["SRC"], f["ID"]))
if got != want:
    sys.exit("dedup %s: got\n  %s\nwant\n  %s" % (mode, "\n  ".join(got), "\n  ".join(want)))
print(sum(1 for w in want if w.startswith("pass")), sum(1 for w in want if w.startswith("last")))
PY
dd() {
	local name="$1" mode="$2" opts="window: 2s"
	[ "$mode" = src ] && opts="$opts, key: [src_addr]"
	cat >"$WORK/$name.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$WORK/dd.pcap"}, decode, logline, {plugin: dedup, $opts},
      {plugin: file, file: "$WORK/$name.out"}]
YAML
	"$SLUICE" -c "$WORK/$name.yaml" >"$WORK/$name.log" 2>&1 || { cat "$WORK/$name.log"; fail "$name: sluice failed"; }
	read -r passed sums < <(python3 "$WORK/dd_oracle.py" "$WORK/dd.txt" "$WORK/$name.out" 2 "$mode") ||
		fail "$name: output differs from the oracle"
	grep -q "dedup): .* summaries=$sums no_text=0 lost=0" "$WORK/$name.log" ||
		{ grep dedup "$WORK/$name.log"; fail "$name: counters"; }
	echo "$name: passed $passed, summaries $sums"
}
dd dedup_text text
dd dedup_key src
grep -q '^last message repeated 4 times src_addr=10.0.0.1DROP: $' "$WORK/dedup_key.out" && fail "key text leaked into the line"
# dedup's timer: X at 0, 0.1, 0.2 s, then nothing until Y at 3 s, read at
# the capture's pace (pace: original) with a 500 ms window.  The summary
# must be in the file well before Y arrives (the timer ended the run), and
# Y after it.
printf '%s\n' "1700000000.0 10.0.0.1 22 DROP:_ 1" "1700000000.1 10.0.0.1 22 DROP:_ 1" \
	"1700000000.2 10.0.0.1 22 DROP:_ 1" "1700000003.0 10.0.0.1 22 DROP:_ 2" |
	python3 "$GEN" "$WORK/timer.pcap"
cat >"$WORK/timer.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$WORK/timer.pcap", pace: original}, decode, logline,
      {plugin: dedup, window: 500ms}, {plugin: file, file: "$WORK/timer.out"}]
YAML
run_sluice_bg "$WORK/timer.log" -c "$WORK/timer.yaml"
wait_for 2 grep -qs "^last message repeated 2 times$" "$WORK/timer.out" ||
	{ cat "$WORK/timer.log"; fail "dedup's timer did not end the run within 2 s"; }
grep -q "ID=2 " "$WORK/timer.out" && fail "Y came before the check: the timer was not what ended the run"
wait "$SLUICE_PID" || fail "timer run: sluice exited with status $?"
[ "$(grep -c . "$WORK/timer.out")" = 3 ] && tail -1 "$WORK/timer.out" | grep -q "ID=2 " ||
	{ cat "$WORK/timer.out"; fail "timer run: expected X, the summary, Y"; }
echo "dedup timer: summary written before the next record arrived"

# Fan-out: summaries written into the storage of dropped records must not
# show in the next branch, which still has those records.  One input, the
# shared decode and logline, then a branch through ratelimit (and one
# through dedup) and a branch with every line: that one must equal a run
# without the filters, line for line.
fan() {
	local name="$1" filt="$2" pcap="$3"
	cat >"$WORK/$name.yaml" <<YAML
instances:
  in: {plugin: replay, file: "$pcap"}
  dec: {plugin: decode}
  txt: {plugin: logline}
stacks:
  f: [in, dec, txt, $filt, {plugin: file, file: "$WORK/$name.f"}]
  all: [in, dec, txt, {plugin: file, file: "$WORK/$name.all"}]
  early: [in, dec, {plugin: ratelimit, rate: 5, burst: 1, key: [src_addr]}, logline, {plugin: file, file: "$WORK/$name.early"}]
  all2: [in, dec, {plugin: json}, {plugin: file, file: "$WORK/$name.json"}]
YAML
	"$SLUICE" -c "$WORK/$name.yaml" >"$WORK/$name.log" 2>&1 || { cat "$WORK/$name.log"; fail "$name: sluice failed"; }
	cat >"$WORK/plain.yaml" <<YAML
stacks:
  all: [{plugin: replay, file: "$pcap"}, decode, logline, {plugin: file, file: "$WORK/$name.plain"}]
  all2: [{plugin: replay, file: "$pcap"}, decode, json, {plugin: file, file: "$WORK/$name.plainjson"}]
YAML
	"$SLUICE" -c "$WORK/plain.yaml" >"$WORK/plain.log" 2>&1 || fail "plain run failed"
	cmp -s "$WORK/$name.all" "$WORK/$name.plain" || fail "$name: the unfiltered branch differs from a run without the filter"
	cmp -s "$WORK/$name.json" "$WORK/$name.plainjson" || fail "$name: the json branch differs from a run without the filter"
	grep -q "records suppressed\|last message repeated" "$WORK/$name.f" || fail "$name: no summary in the filtered branch"
	grep -q "records suppressed" "$WORK/$name.early" || fail "$name: no summary in the early branch"
	echo "$name: $(wc -l <"$WORK/$name.all") lines in the unfiltered branches, as without filters;" \
		"$(wc -l <"$WORK/$name.f") and $(wc -l <"$WORK/$name.early") in the filtered ones"
}
fan fan_rl "{plugin: ratelimit, rate: 100, burst: 10, key: [src_addr]}" "$WORK/flood.pcap"
fan fan_dd "{plugin: dedup, window: 2s}" "$WORK/dd.pcap"
pass "ratelimit and dedup counts equal the oracle's; fan-out branches untouched"
