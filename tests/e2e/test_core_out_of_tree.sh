#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The plugin SDK: install sluice into a scratch prefix, build tests/oot/
# against the installed headers and sluice-plugin.pc only, install the
# plugins into the pc file's plugindir, and run them with the installed
# daemon (no SLUICE_PLUGIN_PATH: the built-in plugin directory must find
# them).  The generic output csv replays a capture; its rows are checked
# with python's csv module against what tshark reads in the same capture.
. "$(dirname "$0")/lib.sh"
need_cmd cmake make pkg-config cc g++ tshark python3
PREFIX="$WORK/prefix"

cmake -S "$SRCDIR" -B "$WORK/build" -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_BUILD_TYPE=Release \
	>"$WORK/cmake.log" 2>&1 || fail "configure failed: $(tail -20 "$WORK/cmake.log")"
cmake --build "$WORK/build" -j2 >>"$WORK/cmake.log" 2>&1 || fail "build failed: $(tail -20 "$WORK/cmake.log")"
cmake --install "$WORK/build" >>"$WORK/cmake.log" 2>&1 || fail "install failed: $(tail -20 "$WORK/cmake.log")"

export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig:$PREFIX/lib64/pkgconfig:$PREFIX/lib/x86_64-linux-gnu/pkgconfig"
plugindir=$(pkg-config --variable=plugindir sluice-plugin) || fail "sluice-plugin.pc not installed"
case "$plugindir" in "$PREFIX"/*) ;; *) fail "plugindir $plugindir is outside the prefix" ;; esac
[ -f "$PREFIX/include/sluice/plugin.h" ] || fail "headers not installed"
cp -r "$SRCDIR/tests/oot" "$WORK/oot"
make -C "$WORK/oot" install >"$WORK/make.log" 2>&1 || fail "out-of-tree build failed: $(cat "$WORK/make.log")"
for p in rot13 csv cxxtag; do
	[ -f "$plugindir/$p.so" ] || fail "plugin $p not installed in $plugindir"
done

unset SLUICE_PLUGIN_PATH
SBIN="$PREFIX/sbin/sluice"
"$SBIN" --describe rot13 | grep -q "example out-of-tree filter" || fail "installed daemon cannot describe rot13"
# The C++ example, built by the same Makefile against the installed header.
"$SBIN" --check-plugin "$plugindir/cxxtag.so" >/dev/null || fail "installed daemon refuses cxxtag"
"$SBIN" --describe cxxtag | grep -q "example out-of-tree filter in C++" || fail "cannot describe cxxtag"
# The installed daemon and its installed plugins, plus the test input.
cp "$SLUICE_TEST_PLUGIN_DIR/gen.so" "$plugindir/"
cat >"$WORK/c.yaml" <<CONF
stacks:
  s: [{ plugin: gen, count: 3, text: Hello }, rot13, { plugin: file, file: $WORK/out.log }]
CONF
"$SBIN" -c "$WORK/c.yaml" 2>"$WORK/err" || fail "installed daemon failed: $(cat "$WORK/err")"
[ "$(cat "$WORK/out.log")" = "$(printf 'Uryyb 0\nUryyb 1\nUryyb 2')" ] || fail "unexpected output: $(cat "$WORK/out.log")"
[ -f "$PREFIX/share/sluice/examples/demo.yaml" ] || fail "example configs not installed"

# The generic output: columns from an option, printed by registered type.
CAP="$SRCDIR/tests/data/nflog-mixed.pcap"
cat >"$WORK/csv.yaml" <<CONF
stacks:
  s: [{ plugin: replay, file: $CAP }, decode,
      { plugin: csv, file: $WORK/out.csv, fields: [src_addr, dport, prefix] }]
CONF
"$SBIN" -c "$WORK/csv.yaml" 2>"$WORK/err" || fail "csv stack failed: $(cat "$WORK/err")"
grep -q "counters: s.csv (csv): in=40 out=40 dropped=0 errors=0" "$WORK/err" ||
	fail "csv counters: $(grep counters "$WORK/err")"
# The oracle: tshark's first (outer) header of each packet.
tshark -r "$CAP" -T fields -E separator=/t -E occurrence=f -e nflog.prefix -e ip.src -e ipv6.src \
	-e ip.proto -e ipv6.nxt -e tcp.dstport -e udp.dstport >"$WORK/tshark.tsv" 2>/dev/null ||
	fail "tshark cannot read $CAP"
python3 - "$WORK/out.csv" "$WORK/tshark.tsv" <<'PY' || fail "csv output differs from the capture"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
want = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
assert rows[0] == ["src_addr", "dport", "prefix"], rows[0]
rows = rows[1:]
assert len(rows) == len(want) == 40, (len(rows), len(want))
ports = 0
for n, (got, w) in enumerate(zip(rows, want), 1):
    prefix, src4, src6, proto4, proto6, tport, uport = w
    proto = proto4 or proto6
    port = tport if proto == "6" else uport if proto == "17" else ""
    exp = [src4 or src6, port, prefix]
    if got != exp:
        sys.exit("row %d: got %r, tshark says %r" % (n, got, exp))
    ports += port != ""
assert ports > 0, "no record had a port"
print("csv: %d rows match tshark, %d with a port" % (len(rows), ports))
PY
# On its own thread its queue copies only the columns (need_field() + an
# empty .reads): the same rows.
sed "s|out.csv, fields|out-thr.csv, thread: true, fields|" "$WORK/csv.yaml" >"$WORK/csv-thr.yaml"
"$SBIN" -c "$WORK/csv-thr.yaml" 2>"$WORK/err" || fail "threaded csv stack failed: $(cat "$WORK/err")"
cmp "$WORK/out.csv" "$WORK/out-thr.csv" || fail "csv on its own thread wrote other rows"
# A listed field nothing upstream provides is a configuration error (-t).
cat >"$WORK/bad.yaml" <<CONF
stacks:
  s: [{ plugin: replay, file: $CAP }, { plugin: csv, file: $WORK/x.csv, fields: [prefix, dport] }]
CONF
"$SBIN" -t -c "$WORK/bad.yaml" >/dev/null 2>"$WORK/err" && fail "-t accepted a field nothing provides"
col=$(awk 'NR == 2 { print index($0, "dport]") }' "$WORK/bad.yaml")	# points at the item
grep -qF "bad.yaml:2:$col: error: plugin 'csv' needs field 'dport' (option 'fields'), which nothing before it in stack 's' provides (provided by: decode)" "$WORK/err" ||
	fail "unexpected -t errors: $(cat "$WORK/err")"
pass
