# SPDX-License-Identifier: GPL-2.0-or-later
# The geoip tests' set-up; source after lib.sh.  Skips unless geoip.so is
# built.  geoip_fetch sets M to the folder of the real MaxMind DB files
# geoip_fetch.sh downloads and caches, and skips without them.
[ -e "$BUILDDIR/plugins/geoip.so" ] || skip "geoip.so not built (SLUICE_WITH_GEOIP=OFF)"

geoip_fetch() {
	M=$(bash "$SRCDIR/tests/e2e/geoip_fetch.sh" 2>"$WORK/fetch.err") ||
		skip "no MaxMind DB files: $(cat "$WORK/fetch.err")"
}
