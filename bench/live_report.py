#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Turns bench/run.sh's results.tsv into the live section of docs/BENCHMARKS.md.

Rewrites only the text between <!-- live:begin --> and <!-- live:end -->;
creates the file with the live and offline marker pairs when it is missing.
"""
import argparse
import datetime
import os
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from benchdoc import machine, replace_block, revision

LIVE_BEGIN, LIVE_END = "<!-- live:begin -->", "<!-- live:end -->"
OFF_BEGIN, OFF_END = "<!-- offline:begin -->", "<!-- offline:end -->"

LABEL = {
    "drain": "drain (recv and discard, `bench/gen/nflog_drain`)",
    "sluice-pcap": "sluice `nflog → pcap`",
    "sluice-text": "sluice `nflog → decode → logline → file`",
    "sluice-json": "sluice `nflog → decode → json → file`",
    "sluice-json-rules": "sluice `nflog (rules: true) → decode → json → file`, the log rule attributed",
    "sluice-fan3": "sluice fan-out without syslog: pcap + text + JSON",
    "sluice-fan4": "sluice fan-out: pcap + text + JSON + syslog/UDP (syslog on its own thread, the default)",
    "sluice-fan4lo": "(same, the syslog receiver on loopback: its kernel half on sluice's CPU, as before issue 20)",
    "sluice-fan4nt": "sluice fan-out, syslog/UDP with `thread: false` (on the input's thread, as before issue 9)",
    "sluice-fan4tcp": "sluice fan-out, syslog over TCP (`framing: lf`, own thread) instead",
    "sluice-stall": "sluice pcap + JSON + syslog/TCP, the syslog receiver stopped for 2 s",
    "sluice-grp1": "sluice one NFLOG group on one input thread (`thread: true`), JSON stack",
    "sluice-grp2": "sluice two NFLOG groups (`numgen inc mod 2`) on two input threads, a JSON stack each",
    "ulogd-pcap": "ulogd2 `NFLOG → BASE → PCAP`",
    "ulogd-text": "ulogd2 `NFLOG → BASE → IFINDEX → IP2STR → PRINTPKT → LOGEMU`",
    "ulogd-json": "ulogd2 `NFLOG → BASE → IFINDEX → IP2STR → JSON`",
    "ulogd-fan4": "ulogd2 four stacks: PCAP, LOGEMU, JSON, SYSLOG",
    "tcpdump": "`tcpdump -i nflog:42 -w`",
    "printk": "kernel `log` (printk) read from /dev/kmsg",
}
ORDER = list(LABEL)
FANS = ("fan3", "fan4", "fan4lo", "fan4nt", "fan4tcp")
# Threads holding an input: the main thread (TID == PID, "main" in run.sh's
# breakdown) and workers the core names "sl:INPUT" after their first instance.
INPUT_THREADS = ("main", "sl:fw", "sl:g0", "sl:g1")


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) < 11 or line.startswith("#"):
                continue
            threads = {}
            if len(p) > 11 and "=" in p[11]:
                for kv in p[11].split(";"):
                    k, v = kv.rsplit("=", 1)
                    threads[k] = threads.get(k, 0.0) + float(v)
            rows.append(dict(round=int(p[0]), mode=p[1], size=int(p[2]), name=p[3],
                             rate=int(float(p[4])), sent=int(p[5]), secs=float(p[6]),
                             kernel=int(p[7]), out=int(p[8]), cpu=float(p[9]), detail=p[10],
                             threads=threads))
    return rows


def received(r):
    """Packets the logger took in: for the fan-outs the largest output."""
    if r["name"].split("-")[-1] in FANS and "=" in r["detail"]:
        return max(int(kv.split("=")[1]) for kv in r["detail"].split(","))
    if r["name"].endswith("-stall") and "=" in r["detail"]:
        d = kv_detail(r)
        return max(d.get("pcap", 0), d.get("json", 0))
    return r["out"]


def kv_detail(r):
    d = {}
    for kv in r["detail"].split(","):
        if "=" in kv:
            k, v = kv.split("=", 1)
            d[k] = int(v) if v.isdigit() else v
    return d


def in_cpu_us(r):
    """The input thread(s)' CPU per packet received (sluice rows only)."""
    if not r.get("threads"):
        return None
    n = received(r)
    cpu = sum(v for k, v in r["threads"].items() if k in INPUT_THREADS)
    return 1e6 * cpu / n if n else None


def other_threads(r):
    """ "name µs" of the threads that hold no input."""
    n = received(r)
    if not n:
        return ""
    return ", ".join(f"{k} {f_us(1e6 * v / n)}" for k, v in sorted(r["threads"].items())
                     if k not in INPUT_THREADS and v * 1e6 / n >= 0.0005)


SYSLOG_THREAD = "sl:sys.syslog"
SYSLOG_TARGET_US = 1.5  # issue 20, at 64-byte payloads


def syslog_us(r):
    """The syslog output thread's CPU per message its receiver counted."""
    if not r.get("threads") or SYSLOG_THREAD not in r["threads"]:
        return None
    n = kv_detail(r).get("syslog")
    n = n if isinstance(n, int) and n else received(r)
    return 1e6 * r["threads"][SYSLOG_THREAD] / n if n else None


def syslog_rows(rows, s, name):
    return [syslog_us(r) for r in rows if r["mode"] == "full" and r["size"] == s and r["name"] == name]


def loss(r):
    return 100.0 * (r["kernel"] - r["out"]) / r["kernel"] if r["kernel"] else 100.0


def cpu_us(r):
    n = received(r)
    return 1e6 * r["cpu"] / n if n else None


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def spread(xs, fmt):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    m = fmt(statistics.median(xs))
    if len(xs) == 1:
        return m
    return f"{m} ({fmt(min(xs))}–{fmt(max(xs))})"


def f_loss(x):
    if x == 0:
        return "0"
    return f"{x:.3f}" if x < 0.1 else f"{x:.2f}" if x < 10 else f"{x:.1f}"


def f_us(x):
    return f"{x:.3f}" if x < 1 else f"{x:.2f}" if x < 10 else f"{x:.1f}"


def f_k(x):
    return f"{x / 1000:.0f}k" if x >= 1000 else f"{x:.0f}"


def full_table(rows, size):
    out = ["| logger | offered pps | logged by the kernel | in the output | loss % | CPU µs per packet | input thread(s) µs per packet | outputs |",
           "|---|---:|---:|---:|---:|---:|---:|---|"]
    for name in ORDER:
        rs = [r for r in rows if r["mode"] == "full" and r["size"] == size and r["name"] == name]
        if not rs:
            continue
        pps = med([r["sent"] / r["secs"] if r["secs"] else 0 for r in rs])
        detail = "; ".join(r["detail"] for r in rs) if rs[0]["detail"] != "-" else ""
        if name == "printk":
            detail = "; ".join(r["detail"] for r in rs) + " (CPU: the reader only; the kernel's cost falls on the sender's CPU)"
        if name.endswith("-stall"):
            ds = [kv_detail(r) for r in rs if "=" in r["detail"]]
            detail = ("median: " + ", ".join(f"{k}={f_k(med([d[k] for d in ds if isinstance(d.get(k), int)]) or 0)}"
                                             for k in ("pcap", "json", "syslog")) +
                      "; syslog's counted drops: " + ", ".join(str(d.get("syslog_dropped", "?")) for d in ds))
        if name.endswith("-grp2"):
            ds = [kv_detail(r) for r in rs if "=" in r["detail"]]
            detail = "median per group: " + ", ".join(f"{k}={f_k(med([d[k] for d in ds if k in d]) or 0)}" for k in ("g0", "g1"))
        if any(r.get("threads") for r in rs):
            oth = "; ".join(o for o in (other_threads(r) for r in rs) if o)
            if oth:
                detail += (" — " if detail else "") + "other threads µs/packet: " + oth
        if name.split("-")[-1] in FANS:
            keys = ("pcap", "text", "json") if name.endswith("fan3") else ("pcap", "text", "json", "syslog")
            detail = "median per output: " + ", ".join(
                f"{k}={f_k(med([int(dict(kv.split('=') for kv in r['detail'].split(','))[k]) for r in rs if '=' in r['detail']]))}"
                for k in keys)
            if any(r.get("threads") for r in rs):
                oth = "; ".join(o for o in (other_threads(r) for r in rs) if o)
                if oth:
                    detail += " — other threads µs/packet: " + oth
        ins = [in_cpu_us(r) for r in rs]
        out.append(f"| {LABEL[name]} | {f_k(pps)} | {f_k(med([r['kernel'] for r in rs]))} | "
                   f"{f_k(med([r['out'] for r in rs]))} | {spread([loss(r) for r in rs], f_loss)} | "
                   f"{spread([cpu_us(r) for r in rs], f_us)} | "
                   f"{spread(ins, f_us) if any(x is not None for x in ins) else '–'} | {detail} |")
    return out


def search_table(rows, sizes):
    out = ["| logger | " + " | ".join(f"{s}-byte payload" for s in sizes) + " |",
           "|---|" + "---:|" * len(sizes)]
    for name in ORDER:
        cells = []
        for s in sizes:
            rs = [r for r in rows if r["mode"] == "search" and r["size"] == s and r["name"] == name]
            if not rs:
                cells.append("")
                continue
            rates = [r["rate"] for r in rs]
            full = all(r["detail"] == "full" for r in rs)
            cell = spread(rates, f_k)
            if full:
                cell = f"full rate: {cell} (no loss ≥ 1%)"
            elif any(r["detail"] == "full" for r in rs):
                cell += " (some rounds: full rate)"
            cells.append(cell)
        if any(cells):
            out.append(f"| {LABEL[name]} | " + " | ".join(cells) + " |")
    return out


def per_round_ratio(rows, size, a, b, fa=cpu_us, fb=cpu_us):
    """Median over rounds of fa(a)/fb(b), each round compared within itself."""
    ratios = []
    for rnd in sorted({r["round"] for r in rows}):
        ra = [r for r in rows if r["mode"] == "full" and r["size"] == size and r["round"] == rnd and r["name"] == a]
        rb = [r for r in rows if r["mode"] == "full" and r["size"] == size and r["round"] == rnd and r["name"] == b]
        if ra and rb and fa(ra[0]) and fb(rb[0]):
            ratios.append(fa(ra[0]) / fb(rb[0]))
    return ratios


def targets(rows, sizes):
    out = ["| target | payload | measured (median over rounds; range) | verdict |", "|---|---:|---|---|"]
    for s in sizes:
        for name in ("sluice-pcap", "sluice-text", "sluice-json", "sluice-fan3", "sluice-fan4", "sluice-fan4nt",
                     "sluice-fan4tcp", "sluice-grp1", "sluice-grp2"):
            rs = [r for r in rows if r["mode"] == "full" and r["size"] == s and r["name"] == name]
            if not rs:
                continue
            ls = [loss(r) for r in rs]
            worst = max(ls)
            verdict = ("met" if worst < 0.1 else
                       f"**missed**: worst round {f_loss(worst)}% (median {f_loss(med(ls))}%), "
                       f"{worst / 0.1:.0f}× the 0.1% allowed" if worst >= 0.1 else "")
            out.append(f"| {LABEL[name]} loses < 0.1% at the generator's full rate | {s} B | "
                       f"loss {spread(ls, f_loss)}% | {verdict} |")

    for s in sizes:
        # issue 9: a stalled sink costs the other stacks on its input nothing
        rs = [r for r in rows if r["mode"] == "full" and r["size"] == s and r["name"] == "sluice-stall"]
        if rs:
            lost = [r["kernel"] - r["out"] for r in rs]
            drops = [str(kv_detail(r).get("syslog_dropped", "?")) for r in rs]
            verdict = ("met" if max(lost) <= 0 else
                       f"**missed**: {max(lost)} packets lost by a pcap or JSON stack in the worst round")
            out.append(f"| a sink that stops reading for 2 s under full rate: every other stack on the same "
                       f"input lossless (pcap + JSON next to a stopped syslog/TCP receiver) | {s} B | "
                       f"loss {spread([loss(r) for r in rs], f_loss)}% ({', '.join(str(x) for x in lost)} packets); "
                       f"the stalled syslog stack's counted drops: {', '.join(drops)} | {verdict} |")

    def ratio_row(text, s, a, b, limit, fa=cpu_us, fb=cpu_us):
        rs = per_round_ratio(rows, s, a, b, fa, fb)
        if not rs:
            return
        m = med(rs)
        if m <= limit:
            verdict = f"met ({(1 - m / limit) * 100:.0f}% under the limit)"
        else:
            verdict = f"**missed** by {(m / limit - 1) * 100:.0f}% (limit {limit:.3g}×)"
        out.append(f"| {text} | {s} B | {spread(rs, lambda x: f'{x:.3f}×')} | {verdict} |")

    for s in sizes:
        ratio_row("CPU per packet: `nflog → pcap` ≤ 1.3× the drain", s, "sluice-pcap", "drain", PCAP_TARGET)
        ratio_row("CPU per packet: text stack ≤ 1/5 of ulogd2 LOGEMU's", s, "sluice-text", "ulogd-text", 0.2)
        ratio_row("CPU per packet: JSON stack ≤ 1/8 of ulogd2 JSON's", s, "sluice-json", "ulogd-json", 0.125)
        ratio_row("CPU per packet: JSON stack with `rules: true` ≤ 1.05× without (issue 22)", s,
                  "sluice-json-rules", "sluice-json", RULES_TARGET)
        ratio_row("CPU per packet: four-stack fan-out < 2× a single stack (the JSON stack, the dearest)", s,
                  "sluice-fan4", "sluice-json", 2.0)
        ratio_row("(same, syslog over TCP instead of UDP)", s, "sluice-fan4tcp", "sluice-json", 2.0)
        ratio_row("(same, without the syslog stack)", s, "sluice-fan3", "sluice-json", 2.0)
        ratio_row("(same, syslog/UDP with `thread: false`, as before issue 9)", s, "sluice-fan4nt", "sluice-json", 2.0)
        ratio_row("**input thread's** CPU per packet: four-stack fan-out, UDP syslog on its own thread, "
                  "≤ 1.5× the JSON stack alone (issue 9)", s, "sluice-fan4", "sluice-json", 1.5, in_cpu_us, in_cpu_us)
        ratio_row("(same, syslog over TCP on its own thread)", s, "sluice-fan4tcp", "sluice-json", 1.5,
                  in_cpu_us, in_cpu_us)
        ratio_row("(same, `thread: false` on syslog: the old behaviour, for comparison)", s, "sluice-fan4nt",
                  "sluice-json", 1.5, in_cpu_us, in_cpu_us)
        us = syslog_rows(rows, s, "sluice-fan4")
        if any(x is not None for x in us):
            m = med(us)
            verdict = ("reported (the limit is set at 64 B)" if s != 64 else
                       f"met ({(1 - m / SYSLOG_TARGET_US) * 100:.0f}% under the limit)" if m <= SYSLOG_TARGET_US else
                       f"**missed** by {(m / SYSLOG_TARGET_US - 1) * 100:.0f}% (limit {SYSLOG_TARGET_US} µs)")
            out.append(f"| UDP syslog thread µs per message ≤ {SYSLOG_TARGET_US} (issue 20): `sl:sys.syslog`'s CPU "
                       f"per datagram received, four-stack fan-out, receiver across a veth pair | {s} B | "
                       f"{spread(us, f_us)} µs | {verdict} |")
        lo = syslog_rows(rows, s, "sluice-fan4lo")
        if any(x is not None for x in lo):
            out.append(f"| (same, receiver on loopback: the receiver's kernel half runs on sluice's CPU, "
                       f"the figure before issue 20) | {s} B | {spread(lo, f_us)} µs | reported |")
        rs = per_round_ratio(rows, s, "sluice-grp2", "sluice-grp1")
        if rs:
            ins = per_round_ratio(rows, s, "sluice-grp2", "sluice-grp1", in_cpu_us, in_cpu_us)
            out.append(f"| two groups on two input threads against one on one: CPU per packet, all threads "
                       f"(no limit set: reported, see the notes) | {s} B | {spread(rs, lambda x: f'{x:.3f}×')}; "
                       f"input threads only {spread(ins, lambda x: f'{x:.3f}×')} | reported |")
    return out


PCAP_TARGET = 1.3
RULES_TARGET = 1.05


def rules_target(rows):
    """Issue 22's lookup cost as lines for the terminal: CPU µs per packet of
    `nflog (rules: true) → decode → json` and of the same without, per
    payload size (medians over rounds, range), and their per-round ratio."""
    out = []
    for s in sorted({r["size"] for r in rows}):
        rs = per_round_ratio(rows, s, "sluice-json-rules", "sluice-json")
        if not rs:
            out.append(f"rules lookup ({s} B): not measured (no sluice-json-rules or sluice-json row)")
            continue
        full = [r for r in rows if r["mode"] == "full" and r["size"] == s]
        us = {n: [cpu_us(r) for r in full if r["name"] == n] for n in ("sluice-json", "sluice-json-rules")}
        att = [kv_detail(r).get("attributed", "?") for r in full if r["name"] == "sluice-json-rules"]
        m = med(rs)
        out.append(f"rules lookup ({s} B): CPU µs per packet {spread(us['sluice-json-rules'], f_us)} with rules: true, "
                   f"{spread(us['sluice-json'], f_us)} without: {spread(rs, lambda x: f'{x:.3f}×')} "
                   f"(rounds: {', '.join(f'{x:.3f}' for x in rs)}; attributed records {', '.join(map(str, att))}), "
                   f"limit {RULES_TARGET}×: {'met' if m <= RULES_TARGET else 'MISSED'}")
    return out


def pcap_target(rows):
    """The issue 9/19 pcap target as lines for the terminal: `nflog → pcap`
    CPU per packet against the drain's, per payload size (median of the
    rounds' ratios), and whether it is met."""
    out = []
    for s in sorted({r["size"] for r in rows}):
        rs = per_round_ratio(rows, s, "sluice-pcap", "drain")
        if not rs:
            out.append(f"pcap target ({s} B): not measured (no sluice-pcap or drain row)")
            continue
        m = med(rs)
        out.append(f"pcap target ({s} B): nflog → pcap CPU per packet {spread(rs, lambda x: f'{x:.3f}×')} "
                   f"the drain's, limit {PCAP_TARGET}×: {'met' if m <= PCAP_TARGET else 'MISSED'}")
    return out


def syslog_target(rows):
    """Issue 20's UDP syslog thread figure as lines for the terminal."""
    out = []
    for s in sorted({r["size"] for r in rows}):
        for name, where in (("sluice-fan4", "receiver across veth"), ("sluice-fan4lo", "receiver on loopback")):
            us = syslog_rows(rows, s, name)
            if not any(x is not None for x in us):
                continue
            m = med(us)
            verdict = ("" if name != "sluice-fan4" or s != 64 else
                       f", limit {SYSLOG_TARGET_US} µs: {'met' if m <= SYSLOG_TARGET_US else 'MISSED'}")
            out.append(f"UDP syslog thread µs per message ({s} B, {where}): {spread(us, f_us)}{verdict}")
    return out or ["UDP syslog thread µs per message: not measured (no sluice-fan4 or sluice-fan4lo row)"]


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--pcap-target":
        print("\n".join(pcap_target(load(sys.argv[2]))))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--rules-target":
        print("\n".join(rules_target(load(sys.argv[2]))))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--syslog-target":
        print("\n".join(syslog_target(load(sys.argv[2]))))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("doc")
    ap.add_argument("--quick", default="0")
    ap.add_argument("--runs", default="?")
    ap.add_argument("--dur", default="?")
    ap.add_argument("--elapsed", default="?")
    ap.add_argument("--ulogd", default="?")
    ap.add_argument("--tcpdump", default="?")
    ap.add_argument("--notes", default="")
    ap.add_argument("--search-steps", default="4")
    ap.add_argument("--load", default="?")
    ap.add_argument("--stalls", default="0")
    ap.add_argument("--rev", default="", help="sluice commit measured (default: HEAD)")
    ap.add_argument("--date", default="", help="when measured (default: now)")
    a = ap.parse_args()
    rows = load(a.results)
    sizes = sorted({r["size"] for r in rows})
    n, model, kernel = machine()
    date = a.date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rev = a.rev or revision()

    L = [LIVE_BEGIN, "", "## Live packet benchmark", "",
         f"Generated by `bench/run.sh`{' (QUICK mode: one short round, no rate search)' if a.quick == '1' else ''} "
         f"on {date}, sluice at `{rev}`. Machine: {n} CPUs ({model}), kernel {kernel}; "
         f"ulogd2 {a.ulogd}; {a.tcpdump}. {a.runs} round(s), {a.dur} s of traffic per "
         f"full-rate measurement, {a.elapsed} s in all. Load average (1/5/15 min) before / after: "
         f"{a.load} — the machine was shared with other work, see *Noise* below. Measurements "
         f"repeated because the generator stalled: {a.stalls}.", "",
         "**Rig.** Two network namespaces joined by a veth pair. In the sending one "
         "`bench/gen/udpgen` (sendmmsg, 64 datagrams per call) is pinned to CPU 0 — the "
         "kernel's netfilter and NFLOG work happens there too, in the softirq of the sender. "
         "In the receiving one the rule `udp dport 9999 counter log group 42 drop` counts what "
         "the kernel logged (the ground truth) and the logger under test runs pinned to CPU 1. "
         "Every logger gets the same traffic in turn within a round, and the rounds repeat "
         "that comparison; tables show the median over rounds and, in brackets, the range. "
         "A third namespace holds the UDP syslog receiver of the fan-outs (see *Settings*).",
         "",
         "**Columns.** *offered pps*: what the generator sent per second (it slows down when "
         "the kernel's logging work on its CPU grows: printk, the fan-out's receiver). *logged by the "
         "kernel*: the nft counter. *in the output*: records counted in the output files (pcap "
         "records, text lines, JSON lines, syslog datagrams received; for the four-output setups "
         "the smallest of the four). *loss*: (logged − output) / logged. *CPU µs per packet*: the "
         "logger's CPU time (`/proc/PID/schedstat`, user + system; for sluice the sum over its threads, "
         "`/proc/PID/task/TID/schedstat`) from just before the traffic to "
         "1.3 s after it (the kernel sends a partly filled batch after 1 s), divided by the packets "
         "it received (for the fan-outs, the largest output).",
         "",
         "**Settings.** sluice: the defaults (`nflog`: 8 MiB socket buffer, 128 KiB kernel batches, "
         "kernel qthreshold/qtimeout; `pcap` link type raw; `file`/`pcap` buffered writes) except the "
         "syslog stack's `queue_size: 16MiB` (see the notes); syslog over UDP (or TCP, `framing: lf`) "
         "to a counting receiver. The UDP fan-outs (with and without `thread: false`) send to a "
         "receiver in a third namespace across a second veth pair, whose receive processing RPS "
         "steers to CPU 0 (`rps_cpus` of the receiving veth's queue), as to a syslog server on "
         "another host: sluice's CPU then holds the UDP/IP send path and the device's transmit, "
         "not the receiver's kernel work. The loopback row and the TCP rows send to 127.0.0.1 in "
         "the receiving namespace, where the receiver's half of each datagram (IP/UDP receive, "
         "the socket's wake-up) runs in a softirq on sluice's CPU. Every logger runs at SCHED_RR "
         "priority 99, which is ulogd2's own default. ulogd2: in the foreground, "
         "plugin defaults (`sync=0`, so buffered writes), `netlink_socket_buffer_size` and "
         "`_maxsize` 8 MiB like sluice, `unbind=0`; its SYSLOG output (libc `syslog()`) writes to a "
         "private `/dev/log` (a counting receiver bound in a private mount namespace). tcpdump: "
         "`-B 8192` (8 MiB). The four ulogd2 stacks share their NFLOG input as ulogd2 does for "
         "stacks naming the same input; each has its own BASE. The syslog receivers run on CPU 0.",
         ""]
    for s in sizes:
        L += [f"### Loss at the generator's full rate, {s}-byte payloads", ""] + full_table(rows, s) + [""]
    if any(r["mode"] == "search" for r in rows):
        L += ["### Highest rate with under 1% loss", "",
              f"Bisection between 0 and the logger's full rate ({a.search_steps} probes of 1 s each: "
              f"the result is within 1/{2 ** int(a.search_steps)} of the full rate below the true limit). "
              "\"full rate\": the full-rate measurement itself lost under 1%, so the limit is the "
              "generator's, not the logger's. Rates are packets per second offered.", ""]
        L += search_table(rows, sizes) + [""]
    L += ["### Targets", ""] + targets(rows, sizes) + [""]
    if a.notes and os.path.exists(a.notes):
        with open(a.notes) as f:
            L += [f.read().rstrip(), ""]
    if any(r["name"] in ("sluice-fan4nt", "sluice-stall", "sluice-grp1", "sluice-grp2") for r in rows):
        L += ["**Threads (issue 9).** The notes above were written for the single-threaded runs "
              "before issue 9 (\"sluice runs one thread\", syslog's sends on the input's CPU). Since "
              "issue 9 a network output runs on a thread of its own by "
              "default, so the fan-out rows with syslog measure that (the syslog thread shares CPU 1 "
              "with the input: `taskset` pins the whole process); the `thread: false` row is the "
              "old single-thread behaviour. *input thread(s) µs per packet*: the CPU of the threads that "
              "hold an input (the main thread, TID = PID, and workers the core names `sl:INPUT`), from "
              "`/proc/PID/task/TID/schedstat` over the same interval, per packet received; the other "
              "threads (`sl:sys.syslog`: the syslog output's) are listed in the outputs column. The "
              "stall row: `pcap` and `json → file` next to syslog over TCP to a receiver that gets "
              "SIGSTOP 0.5 s into the traffic and SIGCONT 2 s later; its loss is the smaller of the "
              "pcap and JSON outputs against the kernel's counter, and the syslog stack's drops are "
              "the core's `dropped` counter at exit (its queue fills and `when_full: drop` applies). "
              "The groups rows: the rule sends every other packet (`numgen inc mod 2`) to a second "
              "group; each group has its own input thread (`thread: true`) and JSON stack. On this "
              "machine the generator and its softirq (where the kernel's NFLOG work happens) take "
              "CPU 0 and both input threads share CPU 1, so two groups can show the split's cost per "
              "packet but not a higher lossless rate: that needs a free core per input and a "
              "generator faster than one input.", ""]
    L += [LIVE_END]
    live = "\n".join(L)

    if os.path.exists(a.doc):
        with open(a.doc) as f:
            doc = f.read()
    else:
        doc = ""
    if LIVE_BEGIN in doc and LIVE_END in doc:
        doc = replace_block(doc, "live", "\n".join(L[1:-1]))
    elif doc:
        doc = doc.rstrip("\n") + "\n\n" + live + "\n"
    else:
        doc = ("# Benchmarks\n\nTwo sections, each rewritten by its own script: the live packet "
               "benchmark (`bench/run.sh`, as root) and the offline one. Edit outside the marker "
               "comments only.\n\n" + live + "\n\n" + OFF_BEGIN + "\n\n## Offline benchmark\n\n"
               "(not generated yet)\n\n" + OFF_END + "\n")
    if OFF_BEGIN not in doc:
        doc = doc.rstrip("\n") + "\n\n" + OFF_BEGIN + "\n\n## Offline benchmark\n\n(not generated yet)\n\n" + OFF_END + "\n"
    with open(a.doc, "w") as f:
        f.write(doc)


if __name__ == "__main__":
    main()
