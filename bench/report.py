#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Turn bench/offline.sh's results.tsv (name, records, unit, runs as
WALL:CPU seconds) into the markdown tables of docs/BENCHMARKS.md: median
rate per CPU second of the runs with the spread (slowest to fastest run),
and the median rate per wall-clock second.  With --doc, also into the
offline-tables, offline-csum-tables and offline-filter-tables blocks of
that document."""
import argparse
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import benchdoc  # noqa: E402

TARGETS = {
    "replay → pcap": 5e6,
    "replay → decode → logline → file": 2e6,
    "replay → decode → json → file": 1.5e6,
    "replay → decode → flow → flowfile": 5e6,
}
for _k in list(TARGETS):
    TARGETS[_k + " (/dev/null)"] = TARGETS[_k]
# Filters (issue 12): CPU ns per record over replay -> decode -> benchnull.
FILTER_TARGETS = {"where": 30, "ratelimit": 50, "geoip": 100}


def fmt_rate(r):
    return f"{r / 1e6:.2f} M"


def tables(path):
    """(main table, checksum table) as markdown, either "" when not measured."""
    rows, meta = [], {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            name, n, unit, times = line.rstrip("\n").split("\t")
            if name.startswith("#"):
                meta[name[1:]] = n
                continue
            runs = [tuple(float(x) for x in t.split(":")) for t in times.split()]
            rows.append((name, int(n), unit, [c for _, c in runs], [w for w, _ in runs]))

    out = []
    main_rows = [r for r in rows if not r[0].startswith(("csum", "filter "))]
    if main_rows:
        out.append(f"Capture: {main_rows[0][1]:,} NFLOG records, mean "
                   f"{meta.get('meanrec', '?')} bytes per record (pcap header included); "
                   f"{int(meta.get('flows', 0)):,} flows. "
                   f"{len(main_rows[0][3])} run{'s' if len(main_rows[0][3]) != 1 else ''} each.\n")
        out.append("| pipeline | unit | median rate /CPU s | spread (slowest – fastest) | /wall s | target |")
        out.append("|---|---|---|---|---|---|")
        for name, n, unit, times, walls in main_rows:
            rates = sorted(n / t for t in times)
            target = TARGETS.get(name)
            verdict = ""
            if target:
                m = statistics.median(rates)
                verdict = f"{target / 1e6:g} M: " + ("met" if m >= target
                                                      else f"**missed** ({m / target * 100:.0f} %)")
            if unit == "flow":
                name += f" ({n:,} flows)"
            out.append(f"| {name} | {unit} | {fmt_rate(statistics.median(rates))} | "
                       f"{fmt_rate(rates[0])} – {fmt_rate(rates[-1])} | "
                       f"{fmt_rate(n / statistics.median(walls))} | {verdict} |")
    main_md = "\n".join(out)

    by = {}
    for name, n, unit, times, _ in rows:
        if not name.startswith("csum"):
            continue
        size, what = name[4:].split(" ", 1)
        # ns per packet, median, and the spread of the runs
        per = sorted(t / n * 1e9 for t in times)
        by.setdefault(size, {})[what] = (statistics.median(per), per[0], per[-1], n, len(per))
    out = []
    if by:
        any_d = next(iter(by.values()))["replay → benchnull"]
        out.append(f"{any_d[3]:,} packets a run, median of {any_d[4]} runs (range).\n")
        out.append("| IP packet | replay → benchnull | + decode | + decode with checksums | "
                   "decode | checksums add | of the pipeline |")
        out.append("|---|---|---|---|---|---|---|")
        for size, d in sorted(by.items(), key=lambda kv: int(kv[0])):
            null = d["replay → benchnull"][0]
            dec = d["replay → decode → benchnull"][0]
            ck = d["replay → decode (checksums) → benchnull"][0]
            cell = lambda v: f"{v[0]:.1f} ns ({v[1]:.1f}–{v[2]:.1f})"
            out.append(f"| {size} B | {cell(d['replay → benchnull'])} | "
                       f"{cell(d['replay → decode → benchnull'])} | "
                       f"{cell(d['replay → decode (checksums) → benchnull'])} | "
                       f"{dec - null:.1f} ns | {ck - dec:.1f} ns | "
                       f"{(ck - dec) / dec * 100:.1f} % |")
    return main_md, "\n".join(out), filter_table(rows, meta)


def filter_table(rows, meta):
    """Part 3: each filter's CPU ns per record.  offline.sh alternates runs
    of "filter NAME: base" (replay -> decode -> benchnull on the filter's
    capture) and "filter NAME: with" (the filter before benchnull); the
    cost is the median of the run-by-run differences, next to the median
    of each pipeline.  meta["NAME"] holds the filter's exit counters."""
    by = {}
    for name, n, unit, times, _ in rows:
        if name.startswith("filter ") and ": " in name:
            filt, what = name[7:].split(": ", 1)
            by.setdefault(filt, {})[what] = (n, [t / n * 1e9 for t in times])
    out = ["| filter | records a run | replay → decode → benchnull | with the filter | the filter "
           "(run-by-run differences) | target | counters |",
           "|---|---|---|---|---|---|---|"]
    runs = 0
    for filt, d in by.items():
        if "base" not in d or "with" not in d:
            continue
        n, base_runs = d["base"]
        with_runs = d["with"][1]
        runs = len(base_runs)
        cell = lambda v: f"{statistics.median(v):.1f} ns ({min(v):.1f}–{max(v):.1f})"
        diffs = [x - y for x, y in zip(with_runs, base_runs)]
        cost = statistics.median(diffs)
        target = FILTER_TARGETS.get(filt)
        verdict = f"≤ {target} ns: " + ("met" if cost <= target else "**missed**") if target else ""
        out.append(f"| {filt} | {n:,} | {cell(base_runs)} | {cell(with_runs)} | {cell(diffs)} | "
                   f"{verdict} | {meta.get(filt, '')} |")
    if not runs:
        return ""
    return (f"CPU time per record (user + system, whole process, pinned to one CPU), median of "
            f"{runs} runs (range); base and filter runs alternate, so both meet the same load.\n\n"
            + "\n".join(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--doc", help="also rewrite the offline-tables and offline-csum-tables blocks of this file")
    ap.add_argument("--by", default="bench/offline.sh", help="the command line, for the date/commit/machine line")
    a = ap.parse_args()
    main_md, csum_md, filter_md = tables(a.results)
    for t in (main_md, csum_md, filter_md):
        if t:
            print(t + "\n")
    if a.doc:
        line = benchdoc.stamp(a.by)
        blocks = {}
        if main_md:
            blocks["offline-tables"] = line + "\n\n" + main_md
        if csum_md:
            blocks["offline-csum-tables"] = line + "\n\n" + csum_md
        if filter_md:
            blocks["offline-filter-tables"] = line + "\n\n" + filter_md
        try:
            benchdoc.replace_in_file(a.doc, blocks)
        except (OSError, ValueError) as e:
            print(f"report.py: {a.doc}: {e}; not changed", file=sys.stderr)
            return 1
        print(f"report.py: {a.doc}: {', '.join(blocks)} rewritten", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
