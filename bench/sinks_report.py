#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench/sinks.sh's tables (markdown, stdout):

    sinks_report.py RESULTS RECORDS PARTS LIVE

RESULTS: the replay runs, "pipe sluice_cpu wall sink_cpu" a line (file,
kafka, clickhouse; may be empty); RECORDS: records per replay run; PARTS:
"compressed uncompressed rows" of ClickHouse's last table (or a missing
file); LIVE: bench/run.sh's results (its columns: round mode size logger
target_pps sent secs kernel_logged output cpu_s detail threads), of which
the full-rate rows of the loggers in LIVE_ROWS make the live table.

A live row's "delivered" is what the receiver holds, read back after
sluice stopped (run.sh's output column: the kafka topic read with kcat,
the OTLP log records httpcount.py counted, the JetStream stream's
messages, journalctl's entries, the lines of the file), "lost" the nft
counter's packets less that, and the output's own counters from the
detail: `dropped` (everything the output or its queue dropped) and of it
`queue_dropped` (its queue was full), the nflog input's `lost` (the
kernel's socket overran: lost before the output saw it) and the
receiver's CPU (`rx_cpu`, kafka's `mock_cpu`) per record it holds.
"""
import statistics as st
import sys

REPLAY = {"file": "replay → decode → json → file (/dev/shm)",
          "kafka": "replay → decode → json → kafka (mock cluster)",
          "clickhouse": "replay → decode → clickhouse (packets schema)"}
# run.sh's logger name: the row's label (the receiver in brackets)
LIVE_ROWS = {
    "sluice-json": "nflog → decode → json → file",
    "sluice-kafka": "nflog → decode → json → kafka (the topic read back with kcat)",
    "sluice-otlp": "nflog → decode → json → otlp (log records counted by bench/httpcount.py)",
    "sluice-nats": "nflog → decode → json → nats, `jetstream: true` (the stream's messages)",
    "sluice-journal": "nflog → decode → logline → journal (private journald, journalctl's entries)",
    "sluice-cef": "nflog → decode → cef → file, `thread: true` (its lines)",
}


def replay_tables(res, n, parts):
    out = []
    rows = {}
    for line in open(res):
        if not line.strip():
            continue
        pipe, cpu, wall, sink = line.split()
        rows.setdefault(pipe, []).append((float(cpu), float(wall), float(sink)))
    if not rows:
        return out
    med = {p: (st.median(c for c, _, _ in r), st.median(w for _, w, _ in r), st.median(s for _, _, s in r),
               min(c for c, _, _ in r), max(c for c, _, _ in r)) for p, r in rows.items()}
    out.append("| pipeline | records per sluice CPU s (median) | spread (min–max CPU s) | vs file | "
               "sluice µs/record | sink CPU µs/record | sluice + sink records per CPU s | wall s |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for p in REPLAY:
        if p not in med:
            continue
        c, w, s, lo, hi = med[p]
        vs = f"{med['file'][0] / c:.2f}×" if "file" in med else "–"
        out.append(f"| {REPLAY[p]} | {n / c:,.0f} | {lo:.2f}–{hi:.2f} | {vs} | "
                   f"{c / n * 1e6:.2f} | {('–' if p == 'file' else f'{s / n * 1e6:.2f}')} | "
                   f"{n / (c + s):,.0f} | {w:.2f} |")
    try:
        comp, unc, prow = (int(x) for x in open(parts).read().split())
        out.append("")
        out.append(f"ClickHouse stored the last run's {prow:,} rows in {comp:,} bytes "
                   f"({comp / prow:.1f} B/row compressed, {unc / prow:.1f} B/row uncompressed, "
                   f"{unc / comp:.1f}× LZ4; `system.parts` right after the insert, before merges).")
    except (OSError, ValueError, ZeroDivisionError):
        pass
    return out


def detail(r):
    """run.sh's detail column as a dict (numbers as int or float, '?' kept)."""
    d = {}
    for kv in r[10].split(","):
        if "=" not in kv:
            continue
        k, v = kv.split("=", 1)
        try:
            d[k] = int(v)
        except ValueError:
            try:
                d[k] = float(v)
            except ValueError:
                d[k] = v
    return d


def total(ds, key):
    """Sum of a counter over the rounds; '?' when a round does not have it."""
    vs = [d.get(key) for d in ds]
    if not vs or any(not isinstance(v, int) for v in vs):
        return "?"
    return f"{sum(vs):,}"


def live_table(live):
    lrows = [l.rstrip("\n").split("\t") for l in open(live) if l.strip() and not l.startswith("#")]
    lrows = [r for r in lrows if len(r) > 10 and r[1] == "full"]
    out, notes = [], []
    if not lrows:
        return out
    out.append("| live stack, generator's full rate, 64-byte payloads | rounds | sent pps (median) | "
               "nft logged | delivered (read back) | lost | loss % | output's dropped (of them: queue full) | "
               "nflog input's lost | sluice CPU µs/packet (median) | of which the input thread | "
               "receiver CPU µs per record delivered (median) |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, label in LIVE_ROWS.items():
        rs = [r for r in lrows if r[3] == name]
        if not rs:
            continue
        ds = [detail(r) for r in rs]
        pps = st.median(int(r[5]) / float(r[6]) for r in rs if float(r[6]) > 0)
        k = sum(int(r[7]) for r in rs)
        o = sum(int(r[8]) for r in rs)
        if name == "sluice-kafka":
            # The mock keeps only the tail of each partition: records it had
            # appended and then discarded before kcat read (their offsets are
            # below each partition's first) count as delivered, said below.
            trim = sum(d["mock_trimmed"] for d in ds if isinstance(d.get("mock_trimmed"), int))
            o += trim
            if trim:
                notes.append(f"kafka: {trim:,} of the delivered records had been trimmed by the mock "
                             "(its partitions keep ~5 MB) before kcat read the topic; they count by their offsets.")
        loss = f"{100 * (k - o) / k:.2f}" if k else "–"
        if name in ("sluice-json", "sluice-kafka"):
            dropped = lost = "–"
        else:
            dropped = f"{total(ds, 'dropped')} ({total(ds, 'queue_dropped')})"
            lost = total(ds, "nflog_lost")
        cpp = st.median(float(r[9]) / int(r[7]) * 1e6 for r in rs if int(r[7]) > 0) if k else 0
        # the input's thread is the main one (run.sh's twelfth column: name=seconds;...)
        mains = [float(t.split("=")[1]) / int(r[7]) * 1e6 for r in rs if len(r) > 11 and int(r[7]) > 0
                 for t in r[11].split(";") if t.startswith("main=")]
        main = f"{st.median(mains):.3f}" if mains else "?"
        # the receiver's CPU per record it holds (kafka's: with the trimmed)
        rx = [(d.get("rx_cpu", d.get("mock_cpu"))) for d in ds]
        got = [int(r[8]) + (d["mock_trimmed"] if isinstance(d.get("mock_trimmed"), int) else 0) for r, d in zip(rs, ds)]
        rxs = [float(c) / g * 1e6 for c, g in zip(rx, got) if isinstance(c, (int, float)) and g > 0]
        rxc = f"{st.median(rxs):.2f}" if rxs else "–"
        out.append(f"| {label} | {len(rs)} | {pps:,.0f} | {k:,} | {o:,} | {k - o:,} | {loss} | {dropped} | "
                   f"{lost} | {cpp:.3f} | {main} | {rxc} |")
    if notes:
        out.append("")
        out.extend(notes)
    return out


def main():
    res, n, parts, live = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    out = replay_tables(res, n, parts)
    lt = live_table(live)
    if out and lt:
        out.append("")
    out.extend(lt)
    print("\n".join(out))


if __name__ == "__main__":
    main()
