#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The plugin SDK: install sluice into a scratch prefix, build tests/oot/
# against the installed headers and sluice-plugin.pc only, install the
# plugin into the pc file's plugindir, and run it with the installed daemon
# (no SLUICE_PLUGIN_PATH: the built-in plugin directory must find it).
. "$(dirname "$0")/lib.sh"
need_cmd cmake make pkg-config cc
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
[ -f "$plugindir/rot13.so" ] || fail "plugin not installed in $plugindir"

unset SLUICE_PLUGIN_PATH
SBIN="$PREFIX/sbin/sluice"
"$SBIN" --describe rot13 | grep -q "example out-of-tree filter" || fail "installed daemon cannot describe rot13"
# The installed daemon and its installed plugins, plus the test input.
cp "$SLUICE_TEST_PLUGIN_DIR/gen.so" "$plugindir/"
cat >"$WORK/c.yaml" <<CONF
stacks:
  s: [{ plugin: gen, count: 3, text: Hello }, rot13, { plugin: file, file: $WORK/out.log }]
CONF
"$SBIN" -c "$WORK/c.yaml" 2>"$WORK/err" || fail "installed daemon failed: $(cat "$WORK/err")"
[ "$(cat "$WORK/out.log")" = "$(printf 'Uryyb 0\nUryyb 1\nUryyb 2')" ] || fail "unexpected output: $(cat "$WORK/out.log")"
[ -f "$PREFIX/share/sluice/examples/demo.yaml" ] || fail "example configs not installed"
pass
