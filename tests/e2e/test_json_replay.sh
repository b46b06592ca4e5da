#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# json converter on recorded captures (tests/data): replay -> decode -> json
# -> file.  Every line must be a JSON object python's json module (and
# `python3 -m json.tool --json-lines`) accepts, with the expected values;
# times must be RFC 3339 (Z in UTC, +05:30 with timezone: local and
# TZ=Asia/Kolkata, the same instants); a prefix holding control bytes,
# quotes and invalid UTF-8 must come out escaped and valid.
. "$(dirname "$0")/lib.sh"
need_cmd python3
DATA="$SRCDIR/tests/data"
[ -f "$DATA/counts.txt" ] || skip "no captures in tests/data"

# run_json CAPTURE OUT [JSON OPTIONS]: one pass of the capture through json.
run_json() {
	local cap="$1" out="$2" opts="${3:-}"
	cat >"$WORK/j.yaml" <<YAML
stacks:
  j: [{plugin: replay, file: "$cap"}, decode, {plugin: json$opts}, {plugin: file, file: "$out"}]
YAML
	"$SLUICE" -c "$WORK/j.yaml" >"$WORK/j.log" 2>&1 || { cat "$WORK/j.log"; fail "sluice failed on $cap"; }
}

cat >"$WORK/check.py" <<'PY'
import datetime, json, re, sys
fn, want_n, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
objs = []
for i, line in enumerate(open(fn, encoding="utf-8"), 1):
    try:
        o = json.loads(line)
    except ValueError as e:
        sys.exit("%s:%d: not JSON (%s): %s" % (fn, i, e, line[:200]))
    if not isinstance(o, dict):
        sys.exit("%s:%d: not an object" % (fn, i))
    objs.append(o)
if len(objs) != want_n:
    sys.exit("%s: %d objects, expected %d" % (fn, len(objs), want_n))
rfc3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$")
protos, flags, ports = set(), set(), set()
for o in objs:
    ts = o.get("timestamp")
    if ts is None or not rfc3339.match(ts):
        sys.exit("bad timestamp %r in %r" % (ts, o))
    if o.get("ip_version") == 4 and not re.match(r"^10\.99\.0\.[12]$", o.get("src_ip", "")):
        sys.exit("bad IPv4 src_ip in %r" % o)
    if o.get("ip_version") == 6 and o.get("src_ip") not in ("fd99::1", "fd99::2"):
        sys.exit("bad IPv6 src_ip in %r" % o)
    protos.add(o.get("proto"))
    if "tcp_flags" in o:
        flags.update(o["tcp_flags"].split())
    ports.add(o.get("dest_port"))
    for k, v in o.items():
        if k in ("mac_src", "mac_dst") and not re.match(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$", v):
            sys.exit("bad %s %r" % (k, v))
if not {"icmp", "icmpv6", "tcp", "udp"} <= protos:
    sys.exit("protocols seen: %r" % protos)
if not {"SYN", "ACK"} <= flags or not {8080, 9999} <= ports:
    sys.exit("flags %r ports %r" % (flags, ports))
if kind == "nflog":
    first = objs[0]
    want = {"prefix": "sluice-test ", "family": "ipv4", "hook": "INPUT", "src_ip": "10.99.0.1",
            "dest_ip": "10.99.0.2", "proto": "icmp", "icmp_type": 8, "icmp_code": 0, "ttl": 64,
            "mac_src": "02:00:00:99:00:01", "mac_dst": "02:00:00:99:00:02"}
    for k, v in want.items():
        if first.get(k) != v:
            sys.exit("first record: %s = %r, expected %r (%r)" % (k, first.get(k), v, first))
    hooks = {o.get("hook") for o in objs}
    if hooks != {"INPUT", "OUTPUT"}:
        sys.exit("hooks %r" % hooks)
if kind == "vlan" and not all(o.get("vlan") == 10 for o in objs):
    sys.exit("vlan missing")
print("%s: %d objects ok" % (fn.rsplit("/", 1)[-1], len(objs)))
PY

while read -r cap n; do
	[ -f "$DATA/$cap" ] || continue
	kind=other
	case "$cap" in nflog-*) kind=nflog ;; eth-vlan*) kind=vlan ;; esac
	run_json "$DATA/$cap" "$WORK/$cap.json"
	python3 "$WORK/check.py" "$WORK/$cap.json" "$n" "$kind" || fail "$cap: wrong JSON"
	python3 -m json.tool --json-lines "$WORK/$cap.json" >/dev/null || fail "$cap: json.tool rejects the output"
done <"$DATA/counts.txt"

# timezone: local shows the same instants with the local offset
NFLOG="$DATA/nflog-mixed.pcap"
[ -f "$NFLOG" ] || skip "no nflog-mixed.pcap"
run_json "$NFLOG" "$WORK/utc.json"
TZ=Asia/Kolkata run_json "$NFLOG" "$WORK/local.json" ", timezone: local"
python3 - "$WORK/utc.json" "$WORK/local.json" <<'PY' || fail "timezone: local"
import datetime, json, sys
u = [json.loads(l)["timestamp"] for l in open(sys.argv[1])]
l = [json.loads(l)["timestamp"] for l in open(sys.argv[2])]
assert all(t.endswith("Z") for t in u), u[:3]
if all(t.endswith("+00:00") for t in l):
    print("no tzdata for Asia/Kolkata: offset not checked")
else:
    assert all(t.endswith("+05:30") for t in l), l[:3]
p = lambda t: datetime.datetime.strptime(t.replace("Z", "+00:00"), "%Y-%m-%dT%H:%M:%S.%f%z")
assert [p(a) for a in u] == [p(b) for b in l], (u[:2], l[:2])
print("local times: %s = %s" % (l[0], u[0]))
PY

# a hostile prefix: rewrite the NFULA_PREFIX of the first record
# \x01 " q \\ \xff U+00E9 DEL \n \xe2\x82 (cut) U+1F600 \x80 tab \t here ESC[31m U+009B NUL
EVIL=0122715cffc3a97f0ae28220f09f98808074616209686572651b5b33316dc29b00
python3 "$SRCDIR/tests/e2e/nflog_prefix.py" "$NFLOG" "$WORK/evil.pcap" "$EVIL" --first
run_json "$WORK/evil.pcap" "$WORK/evil.json"
python3 - "$WORK/evil.json" <<'PY' || fail "hostile prefix"
import json, sys
raw = open(sys.argv[1], "rb").readline()
raw.decode("utf-8")                      # valid UTF-8, or this raises
o = json.loads(raw)
want = '\x01"q\\\u00ff\u00e9\x7f\n\u00e2\u0082 \U0001F600\u0080tab\there\x1b[31m\u009b'
assert o["prefix"] == want, (o["prefix"], want)
assert b"\\u00ff" in raw and b"\\u0001" in raw and b'\\"' in raw, raw
assert b"\\u001b[31m" in raw and b"\\u009b" in raw and b"\\n" in raw, raw
lines = open(sys.argv[1], "rb").read().split(b"\n")
assert lines[-1] == b"" and len(lines) - 1 == 40, len(lines)   # one object per packet
for l in lines[:-1]:
    json.loads(l)
print("prefix escaped:", raw[:120])
PY
pass "every capture converted to valid JSON"
