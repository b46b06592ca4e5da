#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Turn bench/offline.sh's results.tsv (name, records, unit, runs as
WALL:CPU seconds) into the markdown tables of docs/BENCHMARKS.md: median
rate per CPU second of the runs with the spread (slowest to fastest run),
and the median rate per wall-clock second."""
import statistics
import sys

TARGETS = {
    "replay → pcap": 5e6,
    "replay → decode → logline → file": 2e6,
    "replay → decode → json → file": 1.5e6,
    "replay → decode → flow → flowfile": 5e6,
}
for _k in list(TARGETS):
    TARGETS[_k + " (/dev/null)"] = TARGETS[_k]


def fmt_rate(r):
    return f"{r / 1e6:.2f} M"


def main(path):
    rows, meta = [], {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            name, n, unit, times = line.rstrip("\n").split("\t")
            if name.startswith("#"):
                meta[name[1:]] = n
                continue
            runs = [tuple(float(x) for x in t.split(":")) for t in times.split()]
            rows.append((name, int(n), unit, [c for _, c in runs], [w for w, _ in runs]))

    main_rows = [r for r in rows if not r[0].startswith("csum")]
    if main_rows:
        print(f"Capture: {main_rows[0][1]:,} NFLOG records, mean "
              f"{meta.get('meanrec', '?')} bytes per record (pcap header included); "
              f"{int(meta.get('flows', 0)):,} flows.\n")
        print("| pipeline | unit | median rate /CPU s | spread (slowest – fastest) | /wall s | runs | target |")
        print("|---|---|---|---|---|---|---|")
        for name, n, unit, times, walls in main_rows:
            rates = sorted(n / t for t in times)
            target = TARGETS.get(name)
            verdict = ""
            if target:
                verdict = f"{target / 1e6:g} M: " + ("met" if statistics.median(rates) >= target
                                                      else "missed")
            print(f"| {name} | {unit} | {fmt_rate(statistics.median(rates))} | "
                  f"{fmt_rate(rates[0])} – {fmt_rate(rates[-1])} | "
                  f"{fmt_rate(n / statistics.median(walls))} | {len(times)} | {verdict} |")
        print()

    by = {}
    for name, n, unit, times, _ in rows:
        if not name.startswith("csum"):
            continue
        size, what = name[4:].split(" ", 1)
        # ns per packet, median, and the spread of the runs
        per = sorted(t / n * 1e9 for t in times)
        by.setdefault(size, {})[what] = (statistics.median(per), per[0], per[-1], n)
    if by:
        print("| IP packet | replay → benchnull | + decode | + decode with checksums | "
              "decode | checksums add | of decode | of the pipeline |")
        print("|---|---|---|---|---|---|---|---|")
        for size, d in sorted(by.items(), key=lambda kv: int(kv[0])):
            null = d["replay → benchnull"][0]
            dec = d["replay → decode → benchnull"][0]
            ck = d["replay → decode (checksums) → benchnull"][0]
            cell = lambda v: f"{v[0]:.1f} ns ({v[1]:.1f}–{v[2]:.1f})"
            print(f"| {size} B | {cell(d['replay → benchnull'])} | "
                  f"{cell(d['replay → decode → benchnull'])} | "
                  f"{cell(d['replay → decode (checksums) → benchnull'])} | "
                  f"{dec - null:.1f} ns | {ck - dec:.1f} ns | "
                  f"{(ck - dec) / (dec - null) * 100 if dec > null else float('nan'):.0f} % | "
                  f"{(ck - dec) / dec * 100:.1f} % |")
        print()


if __name__ == "__main__":
    main(sys.argv[1])
