#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench/sql.sh's table: medians of its runs, per pipeline.

    sql_report.py RESULTS.tsv --why "kind=reason;..." --packets N --pps R --replay M --full SECS

RESULTS rows: kind run sent logged rows logger_s backend_s aux_s wall_s
sent_pps detail ("-" where a figure does not exist: SQLite has no server, a
replay no generator).  The paced rows and the replays make the first
table, the full-rate rows (kinds *-full) the second.  A kind with a
reason in --why and no rows is printed as not measured, with the reason.
"""
import argparse
import statistics as st
import sys

PACED = {
    "ulogd2-live": "ulogd2 NFLOG → BASE → IFINDEX → IP2STR → HWHDR → PGSQL "
                   "(one `INSERT_PACKET_FULL` per packet), live",
    "ulogd2flat-live": "ulogd2, the same stack into its flat schema without secondary indexes "
                       "(one plain INSERT per packet), live",
    "sluice-live": "sluice nflog → decode → sql (postgresql, COPY), live",
    "sluiceflat-live": "sluice nflog → decode → where → sql (postgresql, COPY) into ulogd2's flat table "
                       "as above (conf/sql-ulogd2.yaml's columns), live",
    "replay-pg": "sluice replay → decode → sql (postgresql, COPY)",
    "replayidx-pg": "sluice replay → decode → sql (postgresql, COPY), table with six indexes",
    "replay-sqlite": "sluice replay → decode → sql (sqlite, WAL)",
}
FULL = {
    "ulogd2-full": "ulogd2 NFLOG → … → PGSQL (`INSERT_PACKET_FULL`)",
    "sluice-full": "sluice nflog → decode → sql (postgresql, COPY)",
}


def num(x):
    return None if x == "-" else float(x)


def med(values):
    values = [v for v in values if v is not None]
    return st.median(values) if values else None


def rates(r):
    """per run: rows per logger CPU s, rows per (logger + server) CPU s"""
    server = (r["backend"] or 0) + (r["aux"] or 0)
    lr = r["rows"] / r["logger"] if r["logger"] > 0 else None
    tr = r["rows"] / (r["logger"] + server) if r["logger"] + server > 0 else None
    return lr, tr


def table(runs, labels, why, base, first, last, lastval, lastfmt):
    """One markdown table: a row per kind of labels (medians over its runs)."""
    print(f"| {first} | runs | logged (sum) | rows (sum) | lost | logger CPU µs/row | "
          "rows per logger CPU s | backend CPU µs/row | other server CPU µs/row | "
          f"rows per logger + server CPU s | × ulogd2, logger | × ulogd2, logger + server | {last} |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    fmt = lambda v, f: "–" if v is None else format(v, f)
    vs = lambda v, b: "–" if v is None or not b else f"{v / b:.2f}×"
    for kind, label in labels.items():
        rs = runs.get(kind)
        if not rs:
            reason = why.get(kind) or "no run"
            print(f"| {label} | 0 | not measured: {reason} |" + " |" * 10)
            continue
        logged = sum(r["logged"] for r in rs)
        rows = sum(r["rows"] for r in rs)
        lost = logged - rows
        lost_s = f"{lost:,} ({100 * lost / logged:.1f} %)" if logged else "?"
        per = lambda key: med(r[key] / r["rows"] * 1e6 if r[key] is not None and r["rows"] else None
                              for r in rs)
        lus, bus, aus = per("logger"), per("backend"), per("aux")
        rr = [rates(r) for r in rs]
        lr, tr = med(x for x, _ in rr), med(y for _, y in rr)
        print(f"| {label} | {len(rs)} | {logged:,} | {rows:,} | {lost_s} | {fmt(lus, '.2f')} | "
              f"{fmt(lr, ',.0f')} | {fmt(bus, '.2f')} | {fmt(aus, '.2f')} | {fmt(tr, ',.0f')} | "
              f"{vs(lr, base and base[0])} | {vs(tr, base and base[1])} | {fmt(lastval(rs), lastfmt)} |")
    lossy = [(kind, r) for kind in labels for r in runs.get(kind, []) if r["logged"] > r["rows"]]
    if lossy:
        print()
        print("Runs that lost rows, and what the logger counted: " + "; ".join(
            f"{kind} run {r['run']}: {r['logged'] - r['rows']:,} of {r['logged']:,} "
            f"({r['detail'].replace(',', ', ')})" for kind, r in lossy) + ".")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--why", default="")
    ap.add_argument("--packets", type=int, required=True)
    ap.add_argument("--pps", type=int, required=True)
    ap.add_argument("--replay", type=int, required=True)
    ap.add_argument("--full", default="0")
    a = ap.parse_args()
    why = dict(kv.split("=", 1) for kv in a.why.split(";") if "=" in kv)
    runs = {}
    for line in open(a.results, encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        if len(f) != 11:
            continue
        kind, run, sent, logged, rows, lcpu, bcpu, acpu, wall, pps, detail = f
        runs.setdefault(kind, []).append(dict(
            run=run, sent=int(sent), logged=int(logged), rows=int(rows), logger=float(lcpu),
            backend=num(bcpu), aux=num(acpu), wall=float(wall), pps=num(pps), detail=detail))

    base = None
    if "ulogd2-live" in runs:
        rs = [rates(r) for r in runs["ulogd2-live"]]
        base = (med(x for x, _ in rs), med(y for _, y in rs))

    table(runs, PACED, why, base, "pipeline", "wall s", lambda rs: med(r["wall"] for r in rs), ".2f")
    print()
    print(f"Live: {a.packets:,} 64-byte UDP datagrams per run at {a.pps:,} packets/s "
          f"(logged = the nft rule's counter); replay: a capture of {a.replay:,} records "
          f"(`gen_nflog -m mix`), every run delivering all of them. "
          f"Medians over the runs; × ulogd2 divides a row's median rate by ulogd2's.")
    if a.full == "0":
        return 0
    fbase = None
    if "ulogd2-full" in runs:
        rs = [rates(r) for r in runs["ulogd2-full"]]
        fbase = (med(x for x, _ in rs), med(y for _, y in rs))
    print()
    table(runs, FULL, why, fbase, "the generator's full rate", "sent packets/s",
          lambda rs: med(r["pps"] for r in rs), ",.0f")
    print()
    print(f"Full rate: {a.full} s of 64-byte UDP datagrams per run, as fast as the generator "
          "sends them; × ulogd2 against ulogd2's full-rate row.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
