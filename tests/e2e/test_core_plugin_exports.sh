#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every plugin this build makes exports its entry point and nothing else:
# the plugins and the plugins/common helpers linked into them are built
# with hidden visibility, and SLUICE_PLUGIN() makes the entry visible.  A
# helper a plugin exported would bind to a function of the same name in
# the daemon or a preloaded library, or take the place of one in a library
# the plugin links (the plugin comes first in its own lookup scope), and
# would be an interface nobody promised.
# The entries are the symbols the daemon dlsym()s: SL_PLUGIN_ENTRY_SYMBOL
# in a plugin, SL_METRICS_ENTRY in the metrics module, SL_TAIL_ENTRY in
# the tail formatter.
. "$(dirname "$0")/lib.sh"
need_cmd nm

entry_of() {
	sed -n "s/^#define $2 \"\(.*\)\"$/\1/p" "$SRCDIR/$1"
}
plugin_entry=$(entry_of core/include/sluice/plugin.h SL_PLUGIN_ENTRY_SYMBOL)
metrics_entry=$(entry_of core/src/metrics_module.h SL_METRICS_ENTRY)
tail_entry=$(entry_of core/src/tail_module.h SL_TAIL_ENTRY)
[ -n "$plugin_entry" ] && [ -n "$metrics_entry" ] && [ -n "$tail_entry" ] || fail "cannot read the entry symbol names"

dir="$BUILDDIR/plugins"
n=0 bad=0 report=""
for so in "$dir"/*.so; do
	[ -e "$so" ] || fail "no plugin built in $dir"
	name=$(basename "$so" .so)
	want=$plugin_entry
	[ "$name" = metrics_http ] && want=$metrics_entry
	[ "$name" = tail_fmt ] && want=$tail_entry
	syms=$(nm -D --defined-only "$so" | awk '{ print $NF }' | sort) || fail "nm cannot read $so"
	extra=$(grep -vx -- "$want" <<<"$syms" || true)
	grep -qx -- "$want" <<<"$syms" || { echo "$name.so: does not export $want" >&2; bad=$((bad + 1)); }
	if [ -n "$extra" ]; then
		echo "$name.so: exports $(wc -l <<<"$extra") symbols besides $want:" $extra >&2
		bad=$((bad + 1))
	fi
	report+=" $name=$(wc -l <<<"$syms")"
	n=$((n + 1))
done
# syslog.so is built in every configuration (no optional library).
[ -e "$dir/syslog.so" ] || fail "syslog.so not built in $dir"
[ "$bad" = 0 ] || fail "$bad problems in the exports of $n plugins (above)"
pass "$n plugins export only their entry (symbols:$report)"
