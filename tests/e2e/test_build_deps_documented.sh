#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The build dependencies are written down where a builder reads them, and
# agree with what the build requires:
#  - every pkg-config module CMakeLists.txt asks for (pkg_check_modules)
#    comes from a package debian/control's Build-Depends names (found with
#    dpkg -S on the module's .pc file, directly or through a Build-Depends
#    package that depends on it, as libpcap-dev on libpcap0.8-dev);
#  - every Build-Depends package is in the `apt-get install` command of
#    docs/OPERATIONS.md ("Installing the package") and of README.md
#    ("Building by hand"), and in tests/setup.sh's BUILD_PACKAGES (but
#    debhelper, which only the package build uses, in the first only).
. "$(dirname "$0")/lib.sh"
need_cmd dpkg-query pkg-config

# Build-Depends: names only (versions and architectures dropped), with
# debhelper-compat as the debhelper it stands for.
build_deps=$(awk '/^Build-Depends:/ {on = 1; sub(/^Build-Depends:/, ""); print; next}
		/^[^ \t]/ {on = 0} on' "$SRCDIR/debian/control" | tr ',' '\n' | sed 's/[[(].*//; s/^[[:space:]]*//; s/[[:space:]]*$//' |
	grep . | sed 's/^debhelper-compat$/debhelper/' | sort -u)
[ "$(wc -l <<<"$build_deps")" -ge 10 ] || fail "could not read Build-Depends: $build_deps"

errors=()
# pkg_check_modules(VAR [REQUIRED] [IMPORTED_TARGET] module...)
modules=$(cat "$SRCDIR/CMakeLists.txt" "$SRCDIR"/*/CMakeLists.txt 2>/dev/null | tr '\n' ' ' |
	grep -oE 'pkg_check_modules\([^)]*\)' | sed 's/pkg_check_modules(//; s/)//' |
	awk '{for (i = 2; i <= NF; i++) if ($i != "REQUIRED" && $i != "QUIET" && $i != "IMPORTED_TARGET" && $i != "GLOBAL") print $i}' |
	sed 's/[<>=].*//' | sort -u)
[ "$(wc -l <<<"$modules")" -ge 10 ] || fail "could not read pkg_check_modules: $modules"
for m in $modules; do
	dir=$(pkg-config --variable=pcfiledir "$m" 2>/dev/null) ||
		{ errors+=("pkg-config module $m is not installed here: cannot tell its package"); continue; }
	pkg=$(dpkg-query -S "$dir/$m.pc" 2>/dev/null | head -1 | cut -d: -f1) ||
		{ errors+=("$dir/$m.pc belongs to no package"); continue; }
	[ -n "$pkg" ] || { errors+=("$dir/$m.pc belongs to no package"); continue; }
	ok=false
	for b in $build_deps; do
		if [ "$b" = "$pkg" ] ||
			dpkg-query -W -f='${Depends}\n' "$b" 2>/dev/null | tr ',|' '\n\n' | sed 's/(.*//; s/ //g' | grep -qx "$pkg"; then
			ok=true
			break
		fi
	done
	$ok || errors+=("CMakeLists.txt needs pkg-config module $m ($pkg), which debian/control's Build-Depends lacks")
done

# The packages named in a document's `apt-get install` commands (a
# command may continue over lines ending in \).
apt_packages() {
	sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1" | grep -E '^[[:space:]]*(sudo )?apt-get install' |
		tr ' \t' '\n\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' | sort -u || true
}
for doc in docs/OPERATIONS.md README.md; do
	listed=$(apt_packages "$SRCDIR/$doc")
	for b in $build_deps; do
		# README builds with cmake alone, not debhelper
		[ "$doc/$b" = README.md/debhelper ] && continue
		grep -qx -- "$b" <<<"$listed" || errors+=("$doc: Build-Depends package $b is not in its apt-get install command")
	done
done
setup=$(sed -n '/^BUILD_PACKAGES="/,/"/p' "$SRCDIR/tests/setup.sh" | tr -d '"' | sed 's/BUILD_PACKAGES=//' | tr ' \t' '\n\n' | grep .)
for b in $build_deps; do
	[ "$b" = debhelper ] && continue	# the package build's; setup.sh builds with cmake
	grep -qx -- "$b" <<<"$setup" || errors+=("tests/setup.sh: BUILD_PACKAGES lacks $b")
done

if [ "${#errors[@]}" -gt 0 ]; then
	printf '%s\n' "${errors[@]}" >&2
	fail "${#errors[@]} build dependencies are not where they should be"
fi
pass "$(wc -l <<<"$build_deps") Build-Depends, $(wc -l <<<"$modules") pkg-config modules: documented in OPERATIONS.md, README.md and setup.sh"
