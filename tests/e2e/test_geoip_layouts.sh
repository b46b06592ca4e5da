#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# geoip on the GeoIP2/GeoLite2 layout, its defaults and its errors.  The
# npm files (test_geoip_mmdblookup) have only top-level strings, so two
# small files in MaxMind's layout are written here with MaxMind's own
# writer (geoip_write_db.pl: a City and an ASN file) and every answer is
# again compared with mmdblookup on them (geoip_compare.py):
#   defaults: databases [City, ASN], no fields: country.iso_code,
#             city.names.en, autonomous_system_number (a uint32, up to
#             4294967295, printed as a JSON number), as_org (with quotes,
#             a backslash and a control byte, escaped by json);
#   keys:     the other keys at nested paths with an array index
#             (subdivisions.0.iso_code) and another language;
#   swapped:  asn <- a string, as_org <- an integer: both left out,
#             type_mismatch counts each, one warning per key.
# Then configuration errors at file:line:column (misspelt and unknown
# key, bad path, no databases) and a database that does not open: the daemon does not
# start, naming the file.
. "$(dirname "$0")/lib.sh"
need_cmd python3 mmdblookup perl
. "$(dirname "$0")/geoip_lib.sh"
perl -MMaxMind::DB::Writer::Tree -e1 2>/dev/null || skip "needs MaxMind::DB::Writer (libmaxmind-db-writer-perl)"
CITY="$WORK/city.mmdb" ASN="$WORK/asn.mmdb"
perl "$SRCDIR/tests/e2e/geoip_write_db.pl" "$CITY" "$ASN" || fail "cannot write the test databases"
ADDRS="192.0.2.5 192.0.2.200 198.51.100.7 203.0.113.9 81.2.69.142 8.8.8.8 2001:db8:1::5 2001:db8:2::1 fd00::1 2001:db8:1:ffff::9"
# shellcheck disable=SC2086
python3 "$SRCDIR/tests/e2e/geoip_pcap.py" "$WORK/a.pcap" --list $ADDRS
N=10

cat >"$WORK/g.yaml" <<YAML
instances:
  cap: { plugin: replay, file: "$WORK/a.pcap" }
stacks:
  defaults: [cap, decode, { plugin: geoip, databases: ["$CITY", "$ASN"] }, json,
             { plugin: file, file: "$WORK/defaults.json" }]
  keys:
    - cap
    - decode
    - plugin: geoip
      databases: ["$CITY"]
      fields:
        country_name: country.names.en
        continent: continent.code
        region: subdivisions.0.iso_code
        postal: postal.code
        timezone: location.time_zone
        city: city.names.de
    - json
    - { plugin: file, file: "$WORK/keys.json" }
  swapped:
    - cap
    - decode
    - { plugin: geoip, databases: ["$ASN"], fields: { asn: autonomous_system_organization, as_org: autonomous_system_number } }
    - json
    - { plugin: file, file: "$WORK/swapped.json" }
YAML
"$SLUICE" -c "$WORK/g.yaml" >"$WORK/g.log" 2>&1 || { cat "$WORK/g.log"; fail "sluice failed"; }
grep -q "geoip: $ASN: type sluice-Test-ASN, built 20" "$WORK/g.log" || fail "no start line for $ASN"
C="$SRCDIR/tests/e2e/geoip_compare.py"
python3 "$C" "$WORK/defaults.json" $N "$CITY,$ASN" country=country.iso_code city=city.names.en \
	asn=autonomous_system_number as_org=autonomous_system_organization || fail "defaults differ from mmdblookup"
python3 "$C" "$WORK/keys.json" $N "$CITY" country_name=country.names.en continent=continent.code \
	region=subdivisions.0.iso_code postal=postal.code timezone=location.time_zone city=city.names.de ||
	fail "keys differ from mmdblookup"
python3 "$C" "$WORK/swapped.json" $N "$ASN" || fail "swapped: a field of the wrong type was set"
grep -q '"src_asn":4294967295,' "$WORK/defaults.json" || fail "the largest uint32 is not a JSON number"
grep -q '"dst_as_org":"Bredband\\u00022 \\\\AB"' "$WORK/defaults.json" || fail "as_org not escaped"
# swapped: each address the ASN file knows costs two mismatches
known=0
for a in $ADDRS; do mmdblookup --file "$ASN" --ip "$a" >/dev/null 2>&1 && known=$((known + 1)); done
[ $known = 7 ] || fail "the ASN file knows $known of the addresses, expected 7"
grep -q "swapped.geoip (geoip): .* cache_misses=$N not_found=$N type_mismatch=$((2 * known)) lookup_errors=0" \
	"$WORK/g.log" || fail "swapped counters: $(grep swapped.geoip "$WORK/g.log")"
[ "$(grep -c "swapped.geoip: warning: .* holds MMDB data type" "$WORK/g.log")" = 2 ] ||
	fail "expected one warning per swapped key: $(grep swapped.geoip "$WORK/g.log")"

# configuration errors: file:line:column and what was expected
check_err() { # check_err WHAT PATTERN YAML
	printf '%s\n' "$3" >"$WORK/bad.yaml"
	if "$SLUICE" -t -c "$WORK/bad.yaml" >"$WORK/bad.log" 2>&1; then fail "$1: accepted"; fi
	grep -q "$2" "$WORK/bad.log" || fail "$1: $(cat "$WORK/bad.log")"
}
check_err "misspelt key" "bad.yaml:2:.*fields/contry.*unknown key 'contry'; did you mean 'country'?" \
"stacks:
  s: [cap, decode, { plugin: geoip, databases: [x.mmdb], fields: { contry: country.iso_code } }, json, file]
instances:
  cap: { plugin: replay, file: x.pcap }
  file: { plugin: file, file: x.json }"
check_err "unknown key" "bad.yaml:2:.*fields/latitude.*unknown key 'latitude'; expected one of country, city" \
"stacks:
  s: [cap, decode, { plugin: geoip, databases: [x.mmdb], fields: { latitude: location.latitude } }, json, file]
instances:
  cap: { plugin: replay, file: x.pcap }
  file: { plugin: file, file: x.json }"
check_err "bad path" "bad.yaml:2:[0-9]*: .*path 'country..iso_code': expected names separated by single dots" \
"stacks:
  s: [cap, decode, { plugin: geoip, databases: [x.mmdb], fields: { country: country..iso_code } }, json, file]
instances:
  cap: { plugin: replay, file: x.pcap }
  file: { plugin: file, file: x.json }"
check_err "no databases" "bad.yaml:2:[0-9]*: .*needs option 'databases'" \
"stacks:
  s: [cap, decode, { plugin: geoip }, json, file]
instances:
  cap: { plugin: replay, file: x.pcap }
  file: { plugin: file, file: x.json }"
# a database that does not open: nothing starts
sed "s|\"$ASN\"|\"$WORK/missing.mmdb\"|" "$WORK/g.yaml" >"$WORK/m.yaml"
if "$SLUICE" -c "$WORK/m.yaml" >"$WORK/m.log" 2>&1; then fail "started without its database"; fi
grep -q "geoip: .*$WORK/missing.mmdb: cannot open: No such file or directory" "$WORK/m.log" ||
	fail "missing file: $(cat "$WORK/m.log")"
[ ! -s "$WORK/m.json" ] || fail "records written although a database is missing"
pass "$(cat "$WORK"/*.json | wc -l) records compared on three layouts, five errors"
