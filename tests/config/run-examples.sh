#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every example in conf/ must pass `sluice -t` (exit 0).  -t also checks
# that the output directories exist and are writable (as daemon.user): the
# examples' /var/log/sluice, /var/spool/sluice and out/demo are made in a
# scratch folder and each example is checked with its paths moved there.
set -u
: "${SLUICE:?run through ctest}" "${SRCDIR:?}" "${BUILDDIR:?}"
cd "$SRCDIR" || exit 1
tmp=$(mktemp -d /tmp/sluice-examples.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/var/log/sluice" "$tmp/var/spool/sluice" "$tmp/out/demo" "$tmp/conf"
chmod 777 "$tmp/var/log/sluice" "$tmp/var/spool/sluice" "$tmp/out/demo"
pass=0 fail=0
for conf in conf/*.yaml; do
	# the kafka output is only built with SLUICE_WITH_KAFKA
	[ "$conf" != conf/kafka.yaml ] || [ -e "$BUILDDIR/plugins/kafka.so" ] || continue
	[ "$conf" != conf/otlp.yaml ] || [ -e "$BUILDDIR/plugins/otlp.so" ] || continue
	# and nats only with SLUICE_WITH_NATS
	[ "$conf" != conf/nats.yaml ] || [ -e "$BUILDDIR/plugins/nats.so" ] || continue
	[ "$conf" != conf/geoip.yaml ] || [ -e "$BUILDDIR/plugins/geoip.so" ] || continue
	# and journal only with SLUICE_WITH_JOURNAL
	[ "$conf" != conf/journal.yaml ] || [ -e "$BUILDDIR/plugins/journal.so" ] || continue
	# and nftrace only with SLUICE_WITH_NFTRACE
	[ "$conf" != conf/nftrace.yaml ] || [ -e "$BUILDDIR/plugins/nftrace.so" ] || continue
	# (nflog's rules: true too: it reads the ruleset with libnftables)
	[ "$conf" != conf/rules.yaml ] || [ -e "$BUILDDIR/plugins/nftrace.so" ] || continue
	# and nfacct only with SLUICE_WITH_NFACCT
	[ "$conf" != conf/nfacct.yaml ] || [ -e "$BUILDDIR/plugins/nfacct.so" ] || continue
	# and skbdrop only with SLUICE_WITH_BPF
	[ "$conf" != conf/skbdrop.yaml ] || [ -e "$BUILDDIR/plugins/skbdrop.so" ] || continue
	sed -e "s|/var/log/sluice|$tmp/var/log/sluice|g" -e "s|/var/spool/sluice|$tmp/var/spool/sluice|g" \
		-e "s|\([: ]\)out/demo/|\1$tmp/out/demo/|g" "$conf" >"$tmp/$conf"
	chmod 644 "$tmp/$conf"
	if out=$("$SLUICE" -t -c "$tmp/$conf" 2>&1); then
		pass=$((pass + 1))
	else
		echo "FAIL: $conf:"; echo "$out" | sed 's/^/    /'; fail=$((fail + 1))
	fi
done
# The nftables snippets must load (checked in a private namespace, as root).
if [ "$(id -u)" = 0 ] && command -v nft >/dev/null; then
	ns="slexample$$"
	ip netns add "$ns" && trap 'ip netns del "$ns"; rm -rf "$tmp"' EXIT
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
