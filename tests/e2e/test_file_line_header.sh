#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# file's line_header on replayed NFLOG records with known timestamps: every
# line is the header rsyslog writes (RSYSLOG_TraditionalFileFormat for
# `syslog`, RSYSLOG_FileFormat for `rfc3339`) followed by the very line
# line_header: none writes.  The expected headers are written out by hand:
# TZ=Europe/Berlin (+01:00 in winter, +02:00 in summer, both DST changes of
# 2026 within one file, a day < 10 for the space padding, a date that is
# the next day in Berlin) and TZ=UTC (+00:00), with and without a tag.  Then: the group spelling
# `header: {...}` equals the flat one; an output on its own thread (the
# queue copies the timestamp) writes the same; the default host is this
# machine's short name; header_uptime's [seconds.micro] for records at
# known offsets from this boot (CLOCK_REALTIME - CLOCK_MONOTONIC) and for
# one from before it; json lines get the header too; bad header options
# are configuration errors at their line:column.
. "$(dirname "$0")/lib.sh"

for p in replay decode logline json file; do
	[ -f "$SLUICE_PLUGIN_PATH/$p.so" ] || skip "plugin $p not built"
done
[ -f /usr/share/zoneinfo/Europe/Berlin ] || skip "needs tzdata (Europe/Berlin)"

# TIME SRC DPORT PREFIX, times in UTC:
#   2026-12-01T05:53:27.175145  (day 1, winter)     2026-12-01T05:53:27.900000 (same second)
#   2026-07-15T22:30:00.000001  (Berlin: Jul 16)    2026-03-29T00:59:59.999999 (last second of +01:00)
#   2026-03-29T01:00:00.500000  (first of +02:00)   2026-10-25T00:30:00 / 01:30:00 (02:30 twice)
#   2026-11-09T23:05:01.020304  (Berlin: Nov 10)
cat >"$WORK/packets" <<EOF
1796104407.175145 10.0.0.1 1001 scan_
1796104407.900000 10.0.0.2 1002 scan_
1784154600.000001 10.0.0.3 1003 scan_
1774745999.999999 10.0.0.4 1004 scan_
1774746000.500000 10.0.0.5 1005 scan_
1792888200.000000 10.0.0.6 1006 scan_
1792891800.000000 10.0.0.7 1007 scan_
1794265501.020304 10.0.0.8 1008 scan_
EOF
python3 "$SRCDIR/tests/e2e/nflog_pcap.py" "$WORK/scan.pcap" <"$WORK/packets"

# run TZ NAME FILE-OPTIONS: replay -> decode -> logline -> file into $WORK/NAME.txt
run() {
	local tz="$1" name="$2" opts="$3" conv="${4:-logline}"
	cat >"$WORK/$name.yaml" <<YAML
stacks:
  s:
    - {plugin: replay, file: "$WORK/scan.pcap"}
    - decode
    - $conv
    - {plugin: file, file: "$WORK/$name.txt"$opts}
YAML
	TZ="$tz" timeout $((20 * ${SLUICE_TEST_TIME_FACTOR:-1})) "$SLUICE" -c "$WORK/$name.yaml" >"$WORK/$name.log" 2>&1 ||
		{ cat "$WORK/$name.log"; fail "$name: sluice failed"; }
}

# check NAME EXPECTED-HEADERS-FILE: NAME's lines are those headers + none's lines
check() {
	paste -d '' "$2" "$WORK/none.txt" >"$WORK/$1.want"
	diff -u "$WORK/$1.want" "$WORK/$1.txt" >&2 || fail "$1: lines differ from the expected"
	echo "ok: $1: $(wc -l <"$WORK/$1.txt") lines as expected"
}

run Europe/Berlin none ""
[ "$(wc -l <"$WORK/none.txt")" = 8 ] || fail "none: $(wc -l <"$WORK/none.txt") lines for 8 packets"
grep -vq '^scan IN= OUT= SRC=10\.0\.0\.' "$WORK/none.txt" && fail "line_header none (default) is not the bare kernel line"

run Europe/Berlin berlin-syslog ", line_header: syslog, header_host: fw"
cat >"$WORK/berlin-syslog.hdr" <<'EOF'
Dec  1 06:53:27 fw kernel: 
Dec  1 06:53:27 fw kernel: 
Jul 16 00:30:00 fw kernel: 
Mar 29 01:59:59 fw kernel: 
Mar 29 03:00:00 fw kernel: 
Oct 25 02:30:00 fw kernel: 
Oct 25 02:30:00 fw kernel: 
Nov 10 00:05:01 fw kernel: 
EOF
check berlin-syslog "$WORK/berlin-syslog.hdr"

run Europe/Berlin berlin-rfc3339 ", line_header: rfc3339, header_host: fw.example.org, header_tag: fwlog"
cat >"$WORK/berlin-rfc3339.hdr" <<'EOF'
2026-12-01T06:53:27.175145+01:00 fw.example.org fwlog: 
2026-12-01T06:53:27.900000+01:00 fw.example.org fwlog: 
2026-07-16T00:30:00.000001+02:00 fw.example.org fwlog: 
2026-03-29T01:59:59.999999+01:00 fw.example.org fwlog: 
2026-03-29T03:00:00.500000+02:00 fw.example.org fwlog: 
2026-10-25T02:30:00.000000+02:00 fw.example.org fwlog: 
2026-10-25T02:30:00.000000+01:00 fw.example.org fwlog: 
2026-11-10T00:05:01.020304+01:00 fw.example.org fwlog: 
EOF
check berlin-rfc3339 "$WORK/berlin-rfc3339.hdr"

run UTC utc-syslog ", line_header: syslog, header_host: fw"
cat >"$WORK/utc-syslog.hdr" <<'EOF'
Dec  1 05:53:27 fw kernel: 
Dec  1 05:53:27 fw kernel: 
Jul 15 22:30:00 fw kernel: 
Mar 29 00:59:59 fw kernel: 
Mar 29 01:00:00 fw kernel: 
Oct 25 00:30:00 fw kernel: 
Oct 25 01:30:00 fw kernel: 
Nov  9 23:05:01 fw kernel: 
EOF
check utc-syslog "$WORK/utc-syslog.hdr"

# header_tag "": no tag, the line follows the host, as ulogd2's LOGEMU writes
run UTC notag ", line_header: syslog, header_host: fw, header_tag: ''"
sed 's/ kernel: $/ /' "$WORK/utc-syslog.hdr" >"$WORK/notag.hdr"
check notag "$WORK/notag.hdr"

run UTC utc-rfc3339 ", line_header: rfc3339, header_host: fw"
cat >"$WORK/utc-rfc3339.hdr" <<'EOF'
2026-12-01T05:53:27.175145+00:00 fw kernel: 
2026-12-01T05:53:27.900000+00:00 fw kernel: 
2026-07-15T22:30:00.000001+00:00 fw kernel: 
2026-03-29T00:59:59.999999+00:00 fw kernel: 
2026-03-29T01:00:00.500000+00:00 fw kernel: 
2026-10-25T00:30:00.000000+00:00 fw kernel: 
2026-10-25T01:30:00.000000+00:00 fw kernel: 
2026-11-09T23:05:01.020304+00:00 fw kernel: 
EOF
check utc-rfc3339 "$WORK/utc-rfc3339.hdr"

# The group spelling, and the output on its own thread behind a queue.
run Europe/Berlin group ", line_header: rfc3339, header: {host: fw.example.org, tag: fwlog}"
check group "$WORK/berlin-rfc3339.hdr"
run Europe/Berlin threaded ", line_header: syslog, header_host: fw, thread: true"
check threaded "$WORK/berlin-syslog.hdr"

# Default host: gethostname() up to the first '.', as rsyslog's %HOSTNAME%.
host=$(hostname)
host=${host%%.*}
run UTC defhost ", line_header: syslog"
sed "s/ fw / $host /" "$WORK/utc-syslog.hdr" >"$WORK/defhost.hdr"
check defhost "$WORK/defhost.hdr"

# Uptime stamps: records at boot + U for known U, and one from 2026-03-29
# (before this boot unless the machine has run since then: skipped then).
python3 - "$WORK/up.packets" <<'PY'
import sys, time
boot = time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)
up = time.clock_gettime(time.CLOCK_MONOTONIC)
us = [int(up / 2) + 0.567890, 7.000001, 123456.25]  # 123456 s: wider than %5lu, in the future
with open(sys.argv[1], "w") as f:
    for i, u in enumerate(us):
        f.write("%.6f 10.0.1.%d 2000 up_ %d\n" % (boot + u, i + 1, i + 1))
    f.write("1774745999.999999 10.0.1.9 2000 up_\n")
PY
python3 -c '
import sys, time
boot = time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)
for l in open(sys.argv[1]):
    print("%.6f" % max(0.0, float(l.split()[0]) - boot))' "$WORK/up.packets" >"$WORK/up.want"
python3 "$SRCDIR/tests/e2e/nflog_pcap.py" "$WORK/scan.pcap" <"$WORK/up.packets"
run Europe/Berlin uptime ", line_header: syslog, header: {host: fw, uptime: true}"
python3 - "$WORK/uptime.txt" "$WORK/up.want" <<'PY' || fail "uptime stamps differ"
import re, sys
got = open(sys.argv[1]).read().splitlines()
want = [float(x) for x in open(sys.argv[2])]
if len(got) != len(want):
    sys.exit("%d lines for %d packets" % (len(got), len(want)))
worst = 0.0
for line, w in zip(got, want):
    m = re.match(r"^[A-Z][a-z]{2} [ 1-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-6][0-9] fw kernel: "
                 r"\[( *)([0-9]+)\.([0-9]{6})\] up IN= ", line)
    if not m:
        sys.exit("not a kern.log line with an uptime stamp: %r" % line)
    pad, sec, us = m.groups()
    if len(pad) + len(sec) != max(5, len(sec)) or (len(sec) > 1 and sec[0] == "0"):
        sys.exit("stamp not '[%%5lu.%%06lu]': %r" % line)
    err = abs(int(sec) + int(us) / 1e6 - w)
    if w == 0.0 and (int(sec), int(us)) != (0, 0):
        sys.exit("a record from before this boot is not [    0.000000]: %r" % line)
    if err > 0.002:
        sys.exit("uptime %s.%s, expected %.6f: %r" % (sec, us, w, line))
    worst = max(worst, err)
print("ok: uptime: %d stamps within %.6f s of boot + U (2 ms allowed)" % (len(got), worst))
PY

# json lines get the header too: header + the JSON object the json converter made.
python3 "$SRCDIR/tests/e2e/nflog_pcap.py" "$WORK/scan.pcap" <"$WORK/packets"
run UTC json ", line_header: rfc3339, header_host: fw" json
python3 - "$WORK/json.txt" "$WORK/utc-rfc3339.hdr" <<'PY' || fail "json lines with a header"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
hdrs = open(sys.argv[2]).read().splitlines(True)
if len(lines) != len(hdrs):
    sys.exit("%d lines for %d packets" % (len(lines), len(hdrs)))
for line, h in zip(lines, hdrs):
    h = h.rstrip("\n")
    if not line.startswith(h):
        sys.exit("no header %r: %r" % (h, line))
    obj = json.loads(line[len(h):])
    if not isinstance(obj, dict) or not obj.get("timestamp", "").startswith(h[:19]):
        sys.exit("not the record's JSON object with its timestamp: %r" % line)
print("ok: json: %d lines, header + JSON object" % len(lines))
PY

# Configuration errors name the option's line:column and say why.
bad() {
	local what="$1" opts="$2" want="$3"
	cat >"$WORK/bad.yaml" <<YAML
stacks:
  s:
    - {plugin: replay, file: "$WORK/scan.pcap"}
    - decode
    - logline
    - {plugin: file, file: "$WORK/bad.txt", $opts}
YAML
	if "$SLUICE" -t -c "$WORK/bad.yaml" >"$WORK/bad.log" 2>&1; then
		fail "$what: accepted"
	fi
	grep -qE "$want" "$WORK/bad.log" || { cat "$WORK/bad.log"; fail "$what: not the expected message"; }
	echo "ok: $what: $(grep -E "$want" "$WORK/bad.log" | head -1)"
}
bad "uptime without a header" "header_uptime: true" "bad.yaml:6:[0-9]+: .*'header_uptime': needs a line_header"
bad "group without a header" "header: {host: fw}" "bad.yaml:6:[0-9]+: .*'header_host': needs a line_header"
bad "tag with a space" "line_header: syslog, header_tag: 'my tag'" "bad.yaml:6:[0-9]+: .*tag holds a space"
bad "tag with a colon" "line_header: syslog, header_tag: 'a:b'" "bad.yaml:6:[0-9]+: .*holds a ':'"
bad "empty host" "line_header: rfc3339, header_host: ''" "bad.yaml:6:[0-9]+: .*host name is empty"
bad "unknown style" "line_header: kern" "bad.yaml:6:[0-9]+: .*(none|syslog|rfc3339)"
bad "unknown group member" "line_header: syslog, header: {hots: fw}" "bad.yaml:6:[0-9]+: .*did you mean 'host'"
[ ! -e "$WORK/bad.txt" ] || fail "a refused configuration created its file"
pass "syslog and rfc3339 headers in Europe/Berlin and UTC, uptime, json, errors"
