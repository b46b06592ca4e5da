#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The data of bench/charts.gp, from the benchmarks' own result files.

    charts_data.py DIR TMP

reads DIR/live.tsv (bench/run.sh's results.tsv) and DIR/outputs.tsv
(bench/outputs.sh's), each if it is there, and writes into TMP what
gnuplot draws, with the same arithmetic as the tables
(bench/live_report.py, bench/outputs_report.py):
  loss-SIZE.dat   per logger one block (gnuplot `index`; the same loggers
                  in the same order in every size's file), its label
                  first, then "offered_pps loss_%" of every full-rate
                  and rate-search measurement of that payload size, by
                  rate ("NaN NaN" when it has none)
  cpu.dat         per logger "label" and the median CPU µs per packet at
                  the generator's full rate for each payload size (NaN: none)
  outputs.dat     per output "label" and the median records per sluice
                  CPU second
  vars.gp         what the script needs to know (sizes, counts, notes,
                  the loggers' labels: array LOGGERS)
"""
import os
import statistics as st
import sys
import textwrap

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import live_report
import outputs_report

# Short names for the legends (the tables have the long ones).
SHORT = {
    "drain": "drain (recv, discard)",
    "sluice-pcap": "sluice pcap",
    "sluice-text": "sluice logline→file",
    "sluice-json": "sluice json→file",
    "sluice-fan3": "sluice pcap+text+json",
    "sluice-fan4": "sluice fan-out + syslog/UDP",
    "sluice-fan4lo": "sluice fan-out + syslog/UDP on lo",
    "sluice-fan4nt": "sluice fan-out + syslog/UDP, thread: false",
    "sluice-fan4tcp": "sluice fan-out + syslog/TCP",
    "sluice-stall": "sluice pcap+json, syslog stalled",
    "sluice-grp1": "sluice 1 group, json",
    "sluice-grp2": "sluice 2 groups, json",
    "sluice-kafka": "sluice json→kafka",
    "sluice-otlp": "sluice json→otlp",
    "sluice-nats": "sluice json→nats JetStream",
    "sluice-journal": "sluice logline→journal",
    "sluice-cef": "sluice cef→file (own thread)",
    "ulogd-pcap": "ulogd2 PCAP",
    "ulogd-text": "ulogd2 LOGEMU",
    "ulogd-json": "ulogd2 JSON",
    "ulogd-fan4": "ulogd2 4 stacks",
    "tcpdump": "tcpdump -w",
    "printk": "printk (/dev/kmsg)",
}
ORDER = list(SHORT)


def q(s):
    """A gnuplot string (double quotes)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def q_wrapped(s, width=100):
    """A gnuplot string of s in lines of at most width characters (a title's)."""
    return "\\n".join(q(line)[1:-1] for line in textwrap.wrap(s, width)).join('""')


def live_note(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#note\t"):
                return line.rstrip("\n").split("\t", 1)[1]
    return ""


def live(path, tmp, var):
    rows = live_report.load(path)
    sizes = sorted({r["size"] for r in rows if r["mode"] in ("full", "probe")})
    names = sorted({r["name"] for r in rows}, key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER))
    # Block i of every size's file is the same logger (NaN where it has no
    # measurement of that size), so a logger has the same colour in every
    # panel and the one legend (LOGGERS) holds them all.
    for s in sizes:
        with open(os.path.join(tmp, f"loss-{s}.dat"), "w") as f:
            for n in names:
                pts = sorted((r["sent"] / r["secs"], live_report.loss(r)) for r in rows
                             if r["name"] == n and r["size"] == s and r["mode"] in ("full", "probe")
                             and r["secs"] > 0 and r["kernel"] > 0)
                f.write(f"{q(SHORT.get(n, n))} {q('')}\n")
                f.writelines(f"{x:.0f} {y:.4f}\n" for x, y in pts) if pts else f.write("NaN NaN\n")
                f.write("\n\n")
    var["LOGGERS"] = [SHORT.get(n, n) for n in names]
    with open(os.path.join(tmp, "cpu.dat"), "w") as f:
        f.write("logger " + " ".join(q(f"{s}-byte payloads") for s in sizes) + "\n")
        for n in names:
            meds = []
            for s in sizes:
                xs = [live_report.cpu_us(r) for r in rows if r["name"] == n and r["size"] == s and r["mode"] == "full"]
                xs = [x for x in xs if x is not None]
                meds.append(f"{st.median(xs):.4f}" if xs else "NaN")
            if any(m != "NaN" for m in meds):
                f.write(q(SHORT.get(n, n)) + " " + " ".join(meds) + "\n")
    var["SIZES"] = " ".join(str(s) for s in sizes)
    var["LIVE_NOTE"] = live_note(path)


def outputs(path, tmp, var):
    note, runs, _ = outputs_report.load(path)
    with open(os.path.join(tmp, "outputs.dat"), "w") as f:
        for name, rs in runs.items():
            f.write(f"{q(name)} {st.median(outputs_report.rate(r) for r in rs):.0f}\n")
    var["OUTPUTS_N"] = len(runs)
    var["OUTPUTS_NOTE"] = note
    var["VECTOR_EPS"] = outputs_report.VECTOR_EPS
    var["TARGET"] = outputs_report.TARGET


def main():
    if len(sys.argv) != 3:
        print("usage: charts_data.py DIR TMP", file=sys.stderr)
        return 64
    d, tmp = sys.argv[1], sys.argv[2]
    var = {"SIZES": "", "OUTPUTS_N": 0, "LIVE_NOTE": "", "OUTPUTS_NOTE": ""}
    if os.path.exists(os.path.join(d, "live.tsv")):
        live(os.path.join(d, "live.tsv"), tmp, var)
    if os.path.exists(os.path.join(d, "outputs.tsv")):
        outputs(os.path.join(d, "outputs.tsv"), tmp, var)
    loggers = var.pop("LOGGERS", [])
    with open(os.path.join(tmp, "vars.gp"), "w") as f:
        for k, v in var.items():
            if isinstance(v, (int, float)):
                f.write(f"{k} = {v}\n")
            else:
                f.write(f"{k} = {q_wrapped(v) if k.endswith('_NOTE') else q(v)}\n")
        f.write(f"NLOGGERS = {len(loggers)}\n")
        if loggers:
            f.write(f"array LOGGERS[{len(loggers)}] = [" + ", ".join(q(n) for n in loggers) + "]\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
