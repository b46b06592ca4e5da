#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Ingest lag of bench/fleet.sh: while N sluice processes replay their
captures at a fixed rate (records exactly 1/RATE apart from the start T0),
polls how many records are visible in ClickHouse (count() over HTTP) and
in the Kafka topic (the partitions' end offsets, kcat -Q) every 0.5 s.

Records are evenly spaced, so the k-th record of the fleet was due at
T0 + k / TOTAL_RATE: a sink that shows COUNT records at time t is
lag = (t - T0) - COUNT / TOTAL_RATE seconds behind the records' own
timestamps.  (T0 is taken just before the processes start: their start-up,
a few tens of ms, counts as lag.)  Polls until both sinks have EXPECT
records or DRAIN seconds after the last record was due; prints one JSON
line per sink:
  lag_mid / lag_end: median lag over the run's second half / at its end,
  lag_max, drain (seconds after the last record was due until all were
  visible; null if not within DRAIN), rate (EXPECT / time to all visible),
  saturated (not all visible within DRAIN, or the lag grew by more than
  1 s over the second half of the run).
"""
import argparse
import json
import subprocess
import time
import urllib.parse
import urllib.request


def ch_count(url, table):
    q = urllib.parse.quote(f"SELECT count() FROM {table}")
    try:
        with urllib.request.urlopen(f"{url}/?query={q}", timeout=5) as r:
            return int(r.read().strip() or 0)
    except (OSError, ValueError):
        return None


def kafka_count(bootstrap, topic, parts):
    args = ["kcat", "-Q", "-b", bootstrap]
    for p in range(parts):
        args += ["-t", f"{topic}:{p}:-1"]
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    n = [int(line.split()[-1]) for line in out.splitlines() if " offset " in line]
    return sum(n) if len(n) == parts else None


def summary(samples, t_end, expect, rate, drain_max):
    lags = [(t, t - c / rate) for t, c in samples if c is not None and t <= t_end]
    half = [lag for t, lag in lags if t >= t_end / 2]
    mid = sorted(half)[len(half) // 2] if half else None
    end = half[-1] if half else None
    first_half = [lag for t, lag in lags if t_end / 4 <= t < t_end / 2]
    grew = (end - sorted(first_half)[len(first_half) // 2]) if first_half and end is not None else 0
    done = next((t for t, c in samples if c is not None and c >= expect), None)
    drain = max(done - t_end, 0) if done is not None else None
    last = next((c for _, c in reversed(samples) if c is not None), 0)
    return {
        "lag_mid": mid, "lag_end": end, "lag_max": max((lag for _, lag in lags), default=None),
        "drain": drain, "rate": expect / done if done else last / samples[-1][0],
        "visible": last, "saturated": drain is None or drain > drain_max or grew > 1.0,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t0", type=float, required=True, help="time.time() just before the processes started")
    ap.add_argument("--secs", type=float, required=True, help="seconds of records in each capture")
    ap.add_argument("--rate", type=float, required=True, help="records per second of the whole fleet")
    ap.add_argument("--expect", type=int, required=True)
    ap.add_argument("--drain", type=float, default=10)
    ap.add_argument("--ch-url", required=True)
    ap.add_argument("--ch-table", required=True)
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--parts", type=int, required=True)
    ap.add_argument("--kafka-base", type=int, default=0, help="end offsets' sum before the run")
    ap.add_argument("--trace", help="file for the samples")
    a = ap.parse_args()
    ch, kf = [], []
    while True:
        now = time.time() - a.t0
        c, k = ch_count(a.ch_url, a.ch_table), kafka_count(a.bootstrap, a.topic, a.parts)
        k = None if k is None else k - a.kafka_base
        t = time.time() - a.t0
        ch.append(((now + t) / 2, c))
        kf.append(((now + t) / 2, k))
        if (c or 0) >= a.expect and (k or 0) >= a.expect or t > a.secs + a.drain:
            break
        time.sleep(max(0.5 - (time.time() - a.t0 - now), 0.05))
    if a.trace:
        with open(a.trace, "w") as f:
            for (t, c), (_, k) in zip(ch, kf):
                f.write(f"{t:.2f}\t{c}\t{k}\n")
    # drain limit for "saturated": one ClickHouse flush_interval (1 s) plus slack
    for name, s in (("clickhouse", ch), ("kafka", kf)):
        print(json.dumps({"sink": name, **summary(s, a.secs, a.expect, a.rate, 3.0)}))


if __name__ == "__main__":
    main()
