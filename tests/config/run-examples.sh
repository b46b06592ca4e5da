#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every example in conf/ must pass `sluice -t` (exit 0).
set -u
: "${SLUICE:?run through ctest}" "${SRCDIR:?}" "${BUILDDIR:?}"
cd "$SRCDIR" || exit 1
pass=0 fail=0
for conf in conf/*.yaml; do
	# the kafka output is only built with SLUICE_WITH_KAFKA
	[ "$conf" != conf/kafka.yaml ] || [ -e "$BUILDDIR/plugins/kafka.so" ] || continue
	[ "$conf" != conf/geoip.yaml ] || [ -e "$BUILDDIR/plugins/geoip.so" ] || continue
	# and nftrace only with SLUICE_WITH_NFTRACE
	[ "$conf" != conf/nftrace.yaml ] || [ -e "$BUILDDIR/plugins/nftrace.so" ] || continue
	# and nfacct only with SLUICE_WITH_NFACCT
	[ "$conf" != conf/nfacct.yaml ] || [ -e "$BUILDDIR/plugins/nfacct.so" ] || continue
	if out=$("$SLUICE" -t -c "$conf" 2>&1); then
		pass=$((pass + 1))
	else
		echo "FAIL: $conf:"; echo "$out" | sed 's/^/    /'; fail=$((fail + 1))
	fi
done
# The nftables snippets must load (checked in a private namespace, as root).
if [ "$(id -u)" = 0 ] && command -v nft >/dev/null; then
	ns="slexample$$"
	ip netns add "$ns" && trap 'ip netns del "$ns"' EXIT
	for nft in conf/*.nft; do
		if out=$(ip netns exec "$ns" nft -c -f "$nft" 2>&1); then
			pass=$((pass + 1))
		else
			echo "FAIL: $nft:"; echo "$out" | sed 's/^/    /'; fail=$((fail + 1))
		fi
	done
else
	echo "SKIP: nft syntax check of conf/*.nft (needs root and nft)"
fi
echo "example configs: $pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
