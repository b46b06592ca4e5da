#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench/outputs.sh's outputs.tsv as a markdown table (stdout): records per
sluice CPU second of each output, against Vector's published sizing figure.

    outputs_report.py outputs.tsv

Also a module: load() is what bench/charts_data.py reads the file with.
"""
import statistics as st
import sys

# https://vector.dev/docs/setup/going-to-prod/sizing ("Estimations"): an
# unstructured log event of ~256 bytes, ~10 MiB/s per vCPU ("conservative
# for estimation purposes"; 1 vCPU = half an Intel core with hyperthreading).
VECTOR_MIBS = 10
VECTOR_EVENT_BYTES = 256
VECTOR_EPS = VECTOR_MIBS * 1024 * 1024 / VECTOR_EVENT_BYTES  # 40,960 events/s
TARGET = 10  # issue 21: each output >= 10x that per core

LABEL = {
    "file-json": "json → file (/dev/shm)",
    "file-logline": "logline → file (/dev/shm)",
    "syslog-udp": "logline → syslog, UDP",
    "syslog-tcp": "logline → syslog, TCP (`framing: lf`)",
    "kafka": "json → kafka (librdkafka mock cluster)",
    "clickhouse": "clickhouse (packets schema, JSONEachRow)",
    "sql-sqlite": "sql, SQLite (packets table, WAL)",
    "ipfix": "flow → ipfix, UDP (flow records)",
    "otlp": "json → otlp, protobuf (OTLP/HTTP, records counted by the receiver)",
    "nats": "json → nats, JetStream (nats-server, file store)",
    "journal": "logline → journal (a private systemd-journald)",
    "cef-file": "cef → file (/dev/shm)",
}


def load(path):
    """(note, {name: [run dicts]} in file order, {name: why skipped})."""
    note, runs, skipped = "", {}, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] == "#note":
                note = p[1] if len(p) > 1 else ""
            elif p[0] == "#skipped" and len(p) > 2:
                skipped[p[1]] = p[2]
            elif line.startswith("#") or len(p) < 11:
                continue
            else:
                runs.setdefault(p[0], []).append(dict(
                    run=int(p[1]), records=int(p[2]), expect=p[3], took=int(p[4]), sent=int(p[5]),
                    got=int(p[6]), cpu=float(p[7]), wall=float(p[8]), rxcpu=float(p[9]),
                    bytes=None if p[10] == "-" else int(p[10])))
    return note, runs, skipped


def rate(r):
    """Records replayed per sluice CPU second."""
    return r["records"] / r["cpu"] if r["cpu"] > 0 else 0.0


def lost(r):
    """Records (or messages, for an EXPECT other than out) sent and not received,
    plus records the output took and did not send."""
    if r["expect"] == "out":
        return r["took"] - r["got"]
    return r["sent"] - r["got"]


def delivered(r):
    """Records that arrived: the receiver's count, or (EXPECT other than
    out: messages of several records) the records the output took, when
    every message arrived."""
    if r["expect"] == "out":
        return r["got"]
    return r["took"] if r["got"] == r["sent"] else 0


def table(runs, skipped):
    out = ["| output (after replay → decode) | runs | records per sluice CPU s (median; min–max) | "
           "sluice µs/record | × Vector's ~41k/vCPU | target ≥ 10× | receiver CPU µs/record | "
           "bytes/record received | MiB received per sluice CPU s | lost |",
           "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|"]
    for name, rs in runs.items():
        rates = [rate(r) for r in rs]
        m = st.median(rates)
        n = rs[0]["records"]
        cpu = st.median(r["cpu"] for r in rs)
        rx = st.median(r["rxcpu"] for r in rs)
        x = m / VECTOR_EPS
        verdict = "met" if x >= TARGET else "**missed**"
        # bytes per record delivered (ipfix: per flow record, several to a datagram)
        bs = [r["bytes"] / delivered(r) for r in rs if r["bytes"] and delivered(r)]
        bpr = st.median(bs) if bs else None
        mb = [r["bytes"] / r["cpu"] / 1048576 for r in rs if r["bytes"] and r["cpu"] > 0]
        mibs = f"{st.median(mb):.0f}" if mb else "–"
        ls = [lost(r) for r in rs]
        unit = "" if rs[0]["expect"] == "out" else f" {rs[0]['expect']}"
        lost_s = "0" if not any(ls) else ", ".join(f"{v:,}" for v in ls) + unit
        if rs[0]["took"] != n and rs[0]["expect"] == "out":
            lost_s += f" (took {rs[0]['took']:,} of {n:,})"
        out.append(f"| {LABEL.get(name, name)} | {len(rs)} | {m:,.0f} ({min(rates):,.0f}–{max(rates):,.0f}) | "
                   f"{cpu / n * 1e6:.2f} | {x:.1f}× | {verdict} | "
                   f"{'–' if rx == 0 else f'{rx / n * 1e6:.2f}'} | {'–' if bpr is None else f'{bpr:.0f}'} | "
                   f"{mibs} | {lost_s} |")
    for name, why in skipped.items():
        out.append(f"| {LABEL.get(name, name)} | 0 | not measured: {why} | | | | | | | |")
    return out


def main():
    note, runs, skipped = load(sys.argv[1])
    if not runs and not skipped:
        print("outputs_report.py: no runs in " + sys.argv[1], file=sys.stderr)
        return 1
    print("\n".join(table(runs, skipped)))
    n = next(iter(runs.values()))[0]["records"] if runs else 0
    print()
    print(f"A capture of {n:,} records (`gen_nflog -m mix`: TCP/UDP/ICMP, IPv4 and IPv6) replayed through "
          "each output; sluice pinned to one CPU, the receiver to the other. Records per CPU second: records "
          "replayed ÷ sluice's user + system CPU (every thread). Vector's figure: ~10 MiB/s per vCPU for "
          f"~256-byte unstructured events, {VECTOR_EPS:,.0f} events/s "
          "([sizing guide](https://vector.dev/docs/setup/going-to-prod/sizing)); the target is "
          f"{TARGET}× that, {TARGET * VECTOR_EPS:,.0f} records per CPU second.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
