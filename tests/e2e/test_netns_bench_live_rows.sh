#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/run.sh's live rows of issue 21's outputs work (sluice-otlp,
# -nats, -journal, -cef; each where it can run here): one round of 1 s at
# the generator's full rate (QUICK=1, the rig's own namespaces), and for
# each row the receiver's count read back and the output's counters add
# up, whatever the rate and whatever was lost:
#   delivered (the receiver's count) = the output's `out`
#   nft's count = out + the output's `dropped` + the nflog input's `lost`
# so every packet the kernel logged is in the receiver or counted where
# it went.  No rate or loss is checked: that is the benchmark's.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft taskset python3 cmake
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (bench/run.sh pins the generator and sluice apart)"
[ -x "$BUILDDIR/bench/udpgen" ] || skip "no $BUILDDIR/bench/udpgen"
lock_netfilter

loggers=""
[ -e "$BUILDDIR/plugins/cef.so" ] && loggers="$loggers sluice-cef"
[ -e "$BUILDDIR/plugins/otlp.so" ] && loggers="$loggers sluice-otlp"
[ -e "$BUILDDIR/plugins/nats.so" ] && command -v nats-server >/dev/null && loggers="$loggers sluice-nats"
[ -e "$BUILDDIR/plugins/journal.so" ] && [ -x /lib/systemd/systemd-journald ] &&
	command -v journalctl >/dev/null && command -v nsenter >/dev/null && loggers="$loggers sluice-journal"
[ -n "$loggers" ] || skip "none of cef, otlp, nats (and nats-server), journal (and journald) here"

NOBUILD=1 BUILD=$BUILDDIR SAVE=$WORK QUICK=1 SIZES=64 LOGGERS="$loggers" NODOC=1 CHARTS=0 \
	OFFLINE=0 CONNTRACK=0 SINKS=0 SQL=0 OUTPUTS=0 \
	"$SRCDIR/bench/run.sh" >"$WORK/run.out" 2>&1 || { cat "$WORK/run.out" >&2; fail "run.sh failed"; }
cat "$WORK/run.out"
tsv=$WORK/sluice-bench-results.tsv
[ -s "$tsv" ] || fail "no results in SAVE ($WORK)"
# round mode size logger target_pps sent secs kernel_logged output cpu_s detail threads
python3 - "$tsv" $loggers <<'PY' || fail "a row does not add up (above)"
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if not l.startswith("#")]
bad = 0
for name in sys.argv[2:]:
    rs = [r for r in rows if r[3] == name and r[1] == "full"]
    if not rs:
        print(f"{name}: no full-rate row"); bad += 1; continue
    for r in rs:
        k, got = int(r[7]), int(r[8])
        d = dict(kv.split("=", 1) for kv in r[10].split(",") if "=" in kv)
        try:
            out, dropped, lost = int(d["out"]), int(d["dropped"]), int(d["nflog_lost"])
        except (KeyError, ValueError):
            print(f"{name}: no counters in the detail: {r[10]}"); bad += 1; continue
        if k <= 0 or got <= 0:
            print(f"{name}: nothing logged or delivered: kernel {k}, delivered {got}"); bad += 1
        if got != out:
            print(f"{name}: the receiver holds {got}, the output says it delivered {out}"); bad += 1
        if k != out + dropped + lost:
            print(f"{name}: kernel {k} != out {out} + dropped {dropped} + nflog lost {lost}"); bad += 1
        if name == "sluice-otlp" and d.get("bad") != "0":
            print(f"{name}: requests the receiver could not parse: {d.get('bad')}"); bad += 1
sys.exit(1 if bad else 0)
PY
pass "$loggers: every packet delivered or counted"
