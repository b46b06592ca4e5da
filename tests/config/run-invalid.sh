#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every config in invalid/ must make `sluice -t` exit 78 and print exactly
# the errors in the matching .err file (paths relative to the source tree;
# the built-in plugin directory, which CMAKE_INSTALL_PREFIX decides, is
# written @PLUGINDIR@, and the build directory @BUILDDIR@).
set -u
: "${SLUICE:?run through ctest}" "${SRCDIR:?}" "${BUILDDIR:?}" "${SLUICE_BUILTIN_PLUGIN_DIR:?}"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
cd "$SRCDIR" || exit 1
pass=0 fail=0
for conf in tests/config/invalid/*.yaml; do
	# the kafka output is only built with SLUICE_WITH_KAFKA
	case "$conf" in */kafka-*) [ -e "$BUILDDIR/plugins/kafka.so" ] || continue ;; esac
	# and otlp only with SLUICE_WITH_OTLP
	case "$conf" in */otlp-*) [ -e "$BUILDDIR/plugins/otlp.so" ] || continue ;; esac
	# and nats only with SLUICE_WITH_NATS
	case "$conf" in */nats-*) [ -e "$BUILDDIR/plugins/nats.so" ] || continue ;; esac
	# and nfacct only with SLUICE_WITH_NFACCT
	case "$conf" in */nfacct-*) [ -e "$BUILDDIR/plugins/nfacct.so" ] || continue ;; esac
	want="${conf%.yaml}.err"
	got=$("$SLUICE" -t -c "$conf" 2>&1 >/dev/null)
	rc=$?
	got=${got//$SLUICE_BUILTIN_PLUGIN_DIR/@PLUGINDIR@}
	got=${got//$BUILDDIR/@BUILDDIR@}
	if [ "$rc" != 78 ]; then
		echo "FAIL: $conf: exit $rc, expected 78"; fail=$((fail + 1)); continue
	fi
	if [ "$got" != "$(cat "$want")" ]; then
		echo "FAIL: $conf: errors differ from $want:"
		diff <(cat "$want") <(printf '%s\n' "$got") | sed 's/^/    /'
		fail=$((fail + 1)); continue
	fi
	pass=$((pass + 1))
done
echo "invalid configs: $pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
