#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `where` on the fields geoip adds (issue 12: "usable by where"): the
# capture of test_geoip_mmdblookup (16 IPv4 and 10 IPv6 addresses, pairs
# of them) through decode -> geoip (the ip-location-db country file) ->
# where 'src_country == C' -> json, for the commonest country C of the
# sources.  The oracle is mmdblookup on the same file: the records kept
# are exactly those whose source mmdblookup places in C, and a `not has
# src_country` stack keeps exactly the sources the file does not know.
. "$(dirname "$0")/lib.sh"
need_cmd python3 mmdblookup
. "$(dirname "$0")/geoip_lib.sh"
geoip_fetch
CTRY="$M/geo-whois-asn-country.mmdb"
python3 "$SRCDIR/tests/e2e/geoip_pcap.py" "$WORK/a.pcap" 1

# the sources of the capture, in order, with mmdblookup's country for each
cat >"$WORK/all.yaml" <<YAML
stacks:
  s: [{ plugin: replay, file: "$WORK/a.pcap" }, decode, json, { plugin: file, file: "$WORK/all.json" }]
YAML
"$SLUICE" -c "$WORK/all.yaml" 2>"$WORK/all.log" || fail "replay: $(tail -3 "$WORK/all.log")"
python3 - "$WORK/all.json" >"$WORK/src.txt" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["src_ip"])
PY
: >"$WORK/oracle.txt"
while read -r a; do
	c=$(mmdblookup --file "$CTRY" --ip "$a" country_code 2>/dev/null | sed -n 's/^ *"\(.*\)" <utf8_string>/\1/p' || true)
	echo "$a ${c:--}" >>"$WORK/oracle.txt"
done <"$WORK/src.txt"
C=$(awk '$2 != "-" {print $2}' "$WORK/oracle.txt" | sort | uniq -c | sort -rn | awk 'NR == 1 {print $2}')
[ -n "$C" ] || fail "mmdblookup knows none of the sources"
want_c=$(awk -v c="$C" '$2 == c {print $1}' "$WORK/oracle.txt")
want_none=$(awk '$2 == "-" {print $1}' "$WORK/oracle.txt")

cat >"$WORK/w.yaml" <<YAML
instances:
  cap: { plugin: replay, file: "$WORK/a.pcap" }
stacks:
  in_c:
    - cap
    - decode
    - { plugin: geoip, databases: ["$CTRY"], fields: { country: country_code } }
    - { plugin: where, expr: 'src_country == "$C"' }
    - json
    - { plugin: file, file: "$WORK/c.json" }
  unknown:
    - cap
    - decode
    - { plugin: geoip, databases: ["$CTRY"], fields: { country: country_code } }
    - { plugin: where, expr: 'not has src_country' }
    - json
    - { plugin: file, file: "$WORK/none.json" }
YAML
"$SLUICE" -t -c "$WORK/w.yaml" >/dev/null 2>&1 || fail "config: $("$SLUICE" -t -c "$WORK/w.yaml" 2>&1 | head -3)"
"$SLUICE" -c "$WORK/w.yaml" 2>"$WORK/w.log" || fail "run: $(tail -3 "$WORK/w.log")"
srcs() { [ -s "$1" ] || return 0; python3 -c 'import json,sys
for l in open(sys.argv[1]): print(json.loads(l)["src_ip"])' "$1"; }
got_c=$(srcs "$WORK/c.json")
got_none=$(srcs "$WORK/none.json")
[ "$got_c" = "$want_c" ] || fail "src_country == $C kept [$(echo $got_c)], mmdblookup says [$(echo $want_c)]"
[ "$got_none" = "$want_none" ] || fail "not has src_country kept [$(echo $got_none)], mmdblookup knows none of [$(echo $want_none)]"
pass "where on geoip's fields: $(echo "$want_c" | grep -c .) of $(wc -l <"$WORK/src.txt") sources in $C, $(echo "$want_none" | grep -c .) unknown, as mmdblookup says"
