#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# replay -> decode -> flow -> flowfile, read back with nfdump: every capture
# of tests/data gives the flows tshark's view of the same packets predicts
# (addresses, ports, protocol, packets, layer-3 bytes, TCP flags), in LZ4
# and uncompressed files; `nfdump -v` finds the files well formed and
# `nfdump -I` (the stat appendix) agrees with the flows.  Then: rotation
# with a 1 s interval puts every flow in exactly one nfcapd.YYYYMMDDhhmmss
# file; a restart within a slot appends to that slot's file (nfcapd's
# RenameAppend) instead of overwriting it; subdirs and local-time names.
. "$(dirname "$0")/lib.sh"
need_cmd nfdump tshark python3
[ -e "$SLUICE_PLUGIN_PATH/flowfile.so" ] && [ -e "$SLUICE_PLUGIN_PATH/flow.so" ] ||
	skip "flow/flowfile plugins not built"

DATA="$SRCDIR/tests/data"
export TZ=UTC

# flowcheck.py [OPTS] PCAP LOOPS FILE...: the flows in FILEs (read with
# nfdump) against the packets of PCAP (read with tshark) replayed LOOPS
# times.  Each flow must match one predicted flow: key, packets, bytes,
# flags.  --idle=S / --active=S: predict the flows the timeouts cut (in
# capture time).  --split: flows may be cut unpredictably (real-time
# timers, evictions): compare per-key sums only.
cat >"$WORK/flowcheck.py" <<'PY'
import subprocess, sys
from collections import defaultdict

args = sys.argv[1:]
opts = dict(a[2:].split("=", 1) if "=" in a else (a[2:], "1") for a in args if a.startswith("--"))
args = [a for a in args if not a.startswith("--")]
split = "split" in opts
idle, active = float(opts.get("idle", 1e9)), float(opts.get("active", 1e9))
pcap, loops, files = args[0], int(args[1]), args[2:]
PROTO = {1: "ICMP", 6: "TCP", 17: "UDP", 58: "ICMP6"}
FIELDS = ["ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "ip.proto", "ipv6.nxt", "ip.len",
          "ipv6.plen", "tcp.srcport", "tcp.dstport", "udp.srcport", "udp.dstport", "icmp.type",
          "icmp.code", "icmp.ident", "icmpv6.type", "icmpv6.code", "icmpv6.echo.identifier",
          "tcp.flags", "frame.time_epoch"]
cmd = ["tshark", "-r", pcap, "-T", "fields", "-E", "separator=,", "-E", "occurrence=f"]
for f in FIELDS:
    cmd += ["-e", f]
out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout

def flagstr(v):
    return "".join(c if v & (1 << (7 - i)) else "." for i, c in enumerate("CEUAPRSF"))

want = defaultdict(lambda: [0, 0, 0])   # nfdump key -> packets, bytes, flags
open_flows = {}                         # sluice's key (ICMP: with the echo id) -> flow
want_list = []                          # every predicted flow
for line in out.splitlines():
    v = dict(zip(FIELDS, line.split(",")))
    if v["ip.src"]:
        sa, da, pr, ln = v["ip.src"], v["ip.dst"], int(v["ip.proto"]), int(v["ip.len"])
    elif v["ipv6.src"]:
        sa, da, pr, ln = v["ipv6.src"], v["ipv6.dst"], int(v["ipv6.nxt"]), int(v["ipv6.plen"]) + 40
    else:
        continue
    sp = dp = 0
    ident = ""
    if pr == 6:
        sp, dp = int(v["tcp.srcport"]), int(v["tcp.dstport"])
    elif pr == 17:
        sp, dp = int(v["udp.srcport"]), int(v["udp.dstport"])
    elif pr == 1:
        dp = int(v["icmp.type"]) * 256 + int(v["icmp.code"])
        ident = v["icmp.ident"]
    elif pr == 58:
        dp = int(v["icmpv6.type"]) * 256 + int(v["icmpv6.code"])
        ident = v["icmpv6.echo.identifier"]
        ident = str(int(ident, 0)) if ident else ""
    key = (sa, da, sp, dp, PROTO.get(pr, str(pr)))
    fl = int(v["tcp.flags"], 16) & 0xff if pr == 6 else 0
    w = want[key]
    w[0] += loops
    w[1] += ln * loops
    w[2] |= fl
    # the flow this packet belongs to, cut by the timeouts as sluice cuts it
    t = float(v["frame.time_epoch"])
    f = open_flows.get(key + (ident,))
    if f is None or t - f["last"] > idle or t - f["first"] > active:
        f = open_flows[key + (ident,)] = {"first": t, "last": t, "v": [key, 0, 0, 0]}
        want_list.append(f["v"])
    f["last"] = t
    f["v"][1] += 1
    f["v"][2] += ln
    f["v"][3] |= fl

got = defaultdict(lambda: [0, 0, 0])
got_list = []
nflows = 0
errors = []
for fn in files:
    r = subprocess.run(["nfdump", "-q", "-o", "csv", "-r", fn], capture_output=True, text=True)
    if r.returncode or r.stderr.strip():
        errors.append("%s: nfdump -r: rc %d: %s" % (fn, r.returncode, r.stderr.strip()))
    lines = [l for l in r.stdout.splitlines() if l.count(",") > 12]  # not "No matching flows"
    pk = by = 0
    tmin, tmax = None, None
    for l in lines:
        c = l.split(",")
        key = (c[3], c[4], int(c[5]), int(c[6]), c[7])
        g = got[key]
        g[0] += int(c[11])
        g[1] += int(c[12])
        flg = 0
        for i, ch in enumerate(c[8]):
            if ch != ".":
                flg |= 1 << (7 - i)
        g[2] |= flg
        got_list.append((key, int(c[11]), int(c[12]), flg))
        pk += int(c[11])
        by += int(c[12])
        tmin = c[0] if tmin is None or c[0] < tmin else tmin
        tmax = c[1] if tmax is None or c[1] > tmax else tmax
    nflows += len(lines)
    # the stat appendix (nfdump -I) must agree with the file's own flows
    r = subprocess.run(["nfdump", "-I", "-r", fn], capture_output=True, text=True)
    info = dict(l.split(": ", 1) for l in r.stdout.splitlines() if ": " in l)
    if r.returncode or r.stderr.strip():
        errors.append("%s: nfdump -I: %s" % (fn, r.stderr.strip()))
    elif (int(info["Flows"]), int(info["Packets"]), int(info["Bytes"])) != (len(lines), pk, by):
        errors.append("%s: nfdump -I says %s flows %s packets %s bytes, the file has %d %d %d" %
                      (fn, info["Flows"], info["Packets"], info["Bytes"], len(lines), pk, by))
    elif lines:
        import calendar, time
        first = calendar.timegm(time.strptime(tmin, "%Y-%m-%d %H:%M:%S"))
        last = calendar.timegm(time.strptime(tmax, "%Y-%m-%d %H:%M:%S"))
        if (int(info["First"]), int(info["Last"])) != (first, last):
            errors.append("%s: nfdump -I First/Last %s/%s, flows span %d/%d" %
                          (fn, info["First"], info["Last"], first, last))
    # nfdump's own file check: well formed, one record per flow + ident + stat
    r = subprocess.run(["nfdump", "-v", fn], capture_output=True, text=True)
    recs = [l for l in r.stdout.splitlines() if l.startswith("Records")]
    if r.returncode or r.stderr.strip() or not recs or int(recs[0].split(":")[1]) != len(lines) + 2:
        errors.append("%s: nfdump -v: rc %d %s %s" % (fn, r.returncode, recs, r.stderr.strip()))

for k in sorted(set(want) | set(got)):
    if want.get(k) != got.get(k):
        errors.append("flow %s: want packets/bytes/flags %s, nfdump shows %s" %
                      (k, want.get(k), got.get(k)))
want_list = sorted(tuple(w) for w in want_list * loops)
if not split and sorted(got_list) != want_list:
    errors.append("%d flows, want %d:\n  want %s\n  got  %s" % (nflows, len(want_list), want_list, sorted(got_list)))
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("flows=%d (predicted %d) packets=%d bytes=%d" % (nflows, len(want_list), sum(w[0] for w in want.values()),
                                        sum(w[1] for w in want.values())))
PY

# run_stack CONFIG-NAME FLOW-OPTS FLOWFILE-OPTS REPLAY-FILE [REPLAY-OPTS]
run_stack() {
	cat >"$WORK/$1.yaml" <<YAML
stacks:
  s1:
    - {plugin: replay, file: "$4"${5:-}}
    - decode
    - {plugin: flow$2}
    - {plugin: flowfile$3}
YAML
	timeout $((60 * TIME_FACTOR)) "$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.log" 2>&1 ||
		{ cat "$WORK/$1.log"; fail "sluice failed ($1)"; }
}

no_leftovers() {
	local left
	left=$(find "$1" -name 'nfcapd.current*')
	[ -z "$left" ] || fail "temporary files left: $left"
}

# 1. Every capture (pcap and pcapng), both compressions: one file per run, the right flows.
while read -r f _; do
	for comp in lz4 none; do
		out="$WORK/out-$f-$comp"
		mkdir -p "$out"
		run_stack "c-$f-$comp" "" ", dir: \"$out\", compression: $comp, ident: sluice-test" "$DATA/$f"
		no_leftovers "$out"
		mapfile -t files < <(find "$out" -type f -name 'nfcapd.*' | sort)
		[ ${#files[@]} -ge 1 ] || fail "$f/$comp: no flow file in $out"
		# the slot may have turned during the run: then two files, both checked
		res=$(python3 "$WORK/flowcheck.py" "$DATA/$f" 1 "${files[@]}") || { echo "$res"; fail "$f/$comp"; }
		want_hdr=$([ $comp = lz4 ] && echo "lz4 compressed" || echo "not compressed")
		# (whole outputs first: grep -q would cut nfdump off, and pipefail fail it)
		hdr=$(nfdump -v "${files[0]}" | grep Version)
		[[ $hdr =~ "2 - $want_hdr" ]] || fail "$f/$comp: header says $hdr"
		ident=$(nfdump -I -r "${files[0]}" | grep Ident)
		[ "$ident" = "Ident: sluice-test" ] || fail "$f/$comp: $ident"
		for x in "${files[@]}"; do
			[[ $(basename "$x") =~ ^nfcapd\.[0-9]{12}$ ]] || fail "$f/$comp: file name $(basename "$x")"
		done
		echo "ok: $f $comp: $res"
	done
done <"$DATA/counts.txt"

# 2. Timeouts run on capture time: a generated capture (an IPv4 UDP flow
#    with a packet every 110 ms for 2.2 s, an IPv6 one with 400 ms pauses),
#    replayed as fast as it goes, is cut where the capture's own timing
#    says: active_timeout 500 ms cuts the first, idle_timeout 300 ms the
#    second.  Then a table of 4 flows evicts the least recent flow to make
#    room (counted), and loses no packet.
cat >"$WORK/gen.py" <<'PY'
import struct, sys
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
def v4(src, dst, sp, dp, n):
    udp = struct.pack("!HHHH", sp, dp, 8 + n, 0) + bytes(n)
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0, bytes(src), bytes(dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + udp
def v6(src, dst, sp, dp, n):
    udp = struct.pack("!HHHH", sp, dp, 8 + n, 0) + bytes(n)
    return struct.pack("!IHBB16s16s", 6 << 28, len(udp), 17, 64, bytes(src), bytes(dst)) + udp
pkts = []
t0 = 1700000000.0
for i in range(21):
    pkts.append((t0 + 0.110 * i, v4([192, 0, 2, 1], [192, 0, 2, 2], 1000, 2000, 10 + i)))
a6 = [0x20, 1, 0x0d, 0xb8] + [0] * 11
for i, dt in enumerate([0, 0.1, 0.2, 0.6, 0.7, 1.1, 1.15, 1.2]):
    pkts.append((t0 + 0.05 + dt, v6(a6 + [1], a6 + [2], 3000, 53, 20 + i)))
pkts.sort(key=lambda p: p[0])
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 101))
    for t, p in pkts:
        us = int(round(t * 1e6))
        f.write(struct.pack("<IIII", us // 1000000, us % 1000000, len(p), len(p)) + p)
PY
python3 "$WORK/gen.py" "$WORK/timeouts.pcap"
out="$WORK/timeouts"
mkdir -p "$out"
run_stack idle ", idle_timeout: 300ms, active_timeout: 500ms" ", dir: \"$out\"" "$WORK/timeouts.pcap"
mapfile -t files < <(find "$out" -type f | sort)
res=$(python3 "$WORK/flowcheck.py" --idle=0.3 --active=0.5 "$WORK/timeouts.pcap" 1 "${files[@]}") ||
	{ echo "$res"; fail "timeouts in capture time"; }
nfdump -q -r "${files[0]}" -o raw >"$WORK/idle.raw"
grep -q "end reason.*idle" "$WORK/idle.raw" && grep -q "end reason.*active" "$WORK/idle.raw" ||
	fail "timeouts: end reasons idle and active expected"
echo "ok: idle/active timeouts: $res"
rm -rf "$out"/*
run_stack evict ", max_flows: 4" ", dir: \"$out\"" "$DATA/raw-mixed.pcap"
mapfile -t files < <(find "$out" -type f | sort)
res=$(python3 "$WORK/flowcheck.py" --split "$DATA/raw-mixed.pcap" 1 "${files[@]}") ||
	{ echo "$res"; fail "eviction"; }
evicted=$(sed -n 's/.*(flow):.* evicted=\([0-9]*\).*/\1/p' "$WORK/evict.log")
[ "${evicted:-0}" -gt 0 ] || { cat "$WORK/evict.log"; fail "eviction: not counted"; }
grep -q "end reason.*lack of resources" <(nfdump -q -r "${files[0]}" -o raw) || fail "eviction: end reason"
echo "ok: eviction: $evicted evicted, $res"

# 3. Rotation every second while a capture plays at its own pace three
#    times: flows end on the idle timeout and land in the slot in which
#    they end; the files together hold every packet exactly once.
out="$WORK/rot"
mkdir -p "$out"
t0=$(date +%s)
run_stack rot ", idle_timeout: 200ms, active_timeout: 1s" ", dir: \"$out\", rotate_interval: 1s" \
	"$DATA/raw-mixed.pcap" ", pace: original, loop: 3"
t1=$(date +%s)
no_leftovers "$out"
mapfile -t files < <(find "$out" -type f | sort)
[ ${#files[@]} -ge 3 ] || fail "rotation: ${#files[@]} files for a ${t0}..${t1} s run"
nonempty=0
for x in "${files[@]}"; do
	name=$(basename "$x")
	[[ $name =~ ^nfcapd\.[0-9]{14}$ ]] || fail "rotation: file name $name (seconds expected for a 1 s interval)"
	ts=$(date -u -d "${name:7:8} ${name:15:2}:${name:17:2}:${name:19:2}" +%s)
	[ "$ts" -ge "$t0" ] && [ "$ts" -le "$t1" ] || fail "rotation: $name is not a slot of the run ($t0..$t1)"
	n=$(nfdump -I -r "$x" | sed -n 's/^Flows: //p')
	[ "$n" -gt 0 ] && nonempty=$((nonempty + 1))
done
[ $nonempty -ge 2 ] || fail "rotation: flows in only $nonempty file(s)"
res=$(python3 "$WORK/flowcheck.py" --split "$DATA/raw-mixed.pcap" 3 "${files[@]}") ||
	{ echo "$res"; fail "rotation"; }
for x in "${files[@]}"; do nfdump -q -r "$x" -o raw; done >"$WORK/rot.raw"
grep -q "end reason.*idle" "$WORK/rot.raw" || fail "rotation: no flow ended on the idle timeout"
echo "ok: rotation: ${#files[@]} files ($nonempty with flows), $res"

# 4. Restart within a slot: the second run appends to the slot's file.
#    Subdirectory layout 1 (%Y/%m/%d) and a zone 5:30 east of UTC: a day
#    slot starts at 00:00 UTC, which the file name shows as 05:30.
out="$WORK/append"
mkdir -p "$out"
for i in 1 2; do
	TZ=XST-5:30 run_stack "app$i" "" ", dir: \"$out\", rotate_interval: 1d, subdirs: 1" "$DATA/eth-mixed.pcap"
done
no_leftovers "$out"
mapfile -t files < <(find "$out" -type f | sort)
slot=$(($(date +%s) / 86400 * 86400))
want="$out/$(TZ=XST-5:30 date -d @$slot +%Y/%m/%d/nfcapd.%Y%m%d%H%M)"
[ ${#files[@]} = 1 ] || [ "$(date +%s)" -lt $((slot + 60)) ] || fail "append: ${#files[@]} files: ${files[*]}"
[ ${#files[@]} != 1 ] || [ "${files[0]}" = "$want" ] || fail "append: file ${files[0]}, want $want"
[[ $(basename "${files[0]}") == *0530 ]] || fail "append: ${files[0]} is not named by the local slot start"
res=$(python3 "$WORK/flowcheck.py" --split "$DATA/eth-mixed.pcap" 2 "${files[@]}") ||
	{ echo "$res"; fail "append"; }
echo "ok: restart appends: ${files[*]#"$out/"}: $res"

pass "flows, nfdump files, rotation, append"
