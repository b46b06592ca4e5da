#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian packages, built and installed on this machine (as root):
# a copy of the source tree (its git files, committed or not; no build
# dirs) is built with `dpkg-buildpackage -us -uc -b`; lintian on the
# .changes (so on every .deb) reports no error and no warning.  The split
# is ulogd2's: each package holds the plugins expected of it (the base
# package those needing no library beyond a netfilter firewall's, each
# other one the plugins of its library), and the base package's
# recursive dependencies (apt-cache depends --recurse, Depends only, as
# for ulogd2) are no more than ulogd2's with libnftables1's (below).  The base package alone is
# installed first: `sluice -t` on its conffile /etc/sluice/sluice.yaml
# passes with its plugins only, a configuration naming a plugin of another
# package fails naming the plugin and that package, the man pages (sluice-where(7) too) are there, every
# /usr/share/doc/sluice file they and the conffile name exists.  Then
# the plugin packages and sluice-dev: `sluice --list-plugins` finds every
# plugin in /usr/lib/<triplet>/sluice/plugins; the system user and
# /var/log/sluice, the unit (enabled by deb-systemd-helper), the logrotate
# snippet (`logrotate -d`), the packaged config running as the unit runs
# it (emulated with setpriv), and sluice-dev's headers and
# sluice-plugin.pc build tests/oot's plugins, which the installed daemon
# loads.  Then `apt-get purge` and nothing of it is left but the user,
# which Debian keeps on purge (files it owned may remain); the test deletes
# the user itself if it created it.  Whatever fails, the exit trap purges.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd dpkg-buildpackage dpkg-checkbuilddeps dh lintian apt-get apt-cache dpkg-deb fakeroot make cc pkg-config ip setpriv groff
if dpkg-query -W -f='${Status}' sluice 2>/dev/null | grep -q 'ok installed'; then
	skip "a sluice package is installed on this machine; this test would replace and purge it"
fi
unset SLUICE_PLUGIN_PATH	# the installed daemon finds its own plugins

SRC="$WORK/src/sluice"
mkdir -p "$SRC"
if git -C "$SRCDIR" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$SRCDIR" ls-files -z -co --exclude-standard | grep -zv '^build' |
		tar -C "$SRCDIR" --null -T - -cf - | tar -C "$SRC" -xf -
else
	tar -C "$SRCDIR" --exclude='./build*' --exclude='./obj-*' -cf - . | tar -C "$SRC" -xf -
fi
[ -x "$SRC/debian/rules" ] || fail "no debian/rules in the copy"
missing=$(cd "$SRC" && dpkg-checkbuilddeps 2>&1) || skip "build dependencies missing: $missing"

t0=$SECONDS
(cd "$SRC" && DEB_BUILD_OPTIONS="parallel=2" dpkg-buildpackage -us -uc -b) >"$WORK/build.log" 2>&1 ||
	{ tail -40 "$WORK/build.log"; fail "dpkg-buildpackage failed"; }
echo "dpkg-buildpackage: $((SECONDS - t0)) s"
OUT="$WORK/src"
changes=$(ls "$OUT"/sluice_*.changes)
lintian --info "$changes" >"$WORK/lintian.out" 2>&1 || true
cat "$WORK/lintian.out"
if grep -q '^[EW]:' "$WORK/lintian.out"; then fail "lintian reports errors or warnings"; fi

# The split: which package holds which plugin.  Every plugin of the build
# is in exactly one package (dh_missing fails the build otherwise).
declare -A PLUGINS=(
	[sluice]="cef decode dedup file flow flowfile ipfix json logline nfacct nfct nflog ratelimit tail_fmt where"
	[sluice-pcap]="bpf pcap replay"
	[sluice-syslog]="syslog"
	[sluice-nftrace]="nftrace"
	[sluice-skbdrop]="skbdrop"
	[sluice-kafka]="kafka"
	[sluice-journal]="journal"
	[sluice-nats]="nats"
	[sluice-clickhouse]="clickhouse"
	[sluice-otlp]="otlp"
	[sluice-sql]="sql"
	[sluice-geoip]="geoip"
	[sluice-metrics]="metrics_http"
	[sluice-dev]=""
)
DEBS=()
for pkg in "${!PLUGINS[@]}"; do
	deb=$(ls "$OUT/${pkg}_"*.deb 2>/dev/null) || fail "no $pkg .deb built: $(ls "$OUT")"
	DEBS+=("$deb")
	have=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed -n 's#.*/sluice/plugins/\(.*\)\.so$#\1#p' | sort | xargs)
	want=$(tr ' ' '\n' <<<"${PLUGINS[$pkg]}" | grep . | sort | xargs || true)
	[ "$have" = "$want" ] || fail "$pkg holds the plugins '$have', expected '$want'"
done
for deb in "$OUT"/*.deb; do
	case "$deb" in *-dbgsym_*) continue ;; esac
	pkg=$(dpkg-deb -f "$deb" Package)
	[ -n "${PLUGINS[$pkg]+set}" ] || fail "an unexpected package $pkg was built"
done

# Installing sluice pulls no more packages than installing ulogd2 and
# libnftables1: the recursive Depends (no Recommends or Suggests;
# Pre-Depends left out for both) of the built .deb, against those of
# ulogd2 with libnftables1's in this machine's apt lists.  libnftables1 is
# a netfilter firewall's own library (nftables depends on it; sluice
# recommends nftables), and nflog reads the ruleset with it for
# `rules: true` (which rule logged each packet).
closure() {
	apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances --no-pre-depends "$@" | grep -v '^[ <]' | sort -u
}
apt-cache show ulogd2 >/dev/null 2>&1 || skip "apt-cache knows no ulogd2 (apt-get update?)"
base_deps=$(dpkg-deb -f "$OUT"/sluice_*.deb Depends | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/[[:space:]]//g' | grep .)
closure $base_deps >"$WORK/sluice.closure"
closure ulogd2 | grep -vx ulogd2 >"$WORK/ulogd2.only"
n_ulogd2=$(wc -l <"$WORK/ulogd2.only")
closure ulogd2 libnftables1 | grep -vx ulogd2 >"$WORK/ulogd2.closure"
n_sluice=$(wc -l <"$WORK/sluice.closure")
n_allowed=$(wc -l <"$WORK/ulogd2.closure")
echo "recursive dependencies: sluice $n_sluice, ulogd2 $n_ulogd2, ulogd2 with libnftables1 $n_allowed"
[ "$n_ulogd2" -ge 20 ] || fail "ulogd2's closure is $n_ulogd2 packages: apt-cache is not answering"
[ "$n_sluice" -le "$n_allowed" ] ||
	fail "installing sluice pulls $n_sluice packages, ulogd2 with libnftables1 $n_allowed; beyond theirs: $(comm -23 "$WORK/sluice.closure" "$WORK/ulogd2.closure" | xargs)"

USER_EXISTED=false
getent passwd sluice >/dev/null && USER_EXISTED=true
$USER_EXISTED || at_exit "deluser --quiet --system sluice; getent group sluice && delgroup --quiet --system sluice"
at_exit "DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 purge -y -qq ${!PLUGINS[*]}"
apt_install() {
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends \
		"$@" >"$WORK/install.log" 2>&1 || fail "apt-get install: $(tail -20 "$WORK/install.log")"
}

# The base package alone.
apt_install "$OUT"/sluice_*.deb
[ -x /usr/sbin/sluice ] || fail "no /usr/sbin/sluice"
/usr/sbin/sluice -t -c /etc/sluice/sluice.yaml >"$WORK/t.out" 2>&1 ||
	fail "sluice -t on the packaged config, with the base package alone: $(cat "$WORK/t.out")"
dpkg-query -W -f='${Conffiles}\n' sluice | grep -q '^ /etc/sluice/sluice.yaml ' ||
	fail "/etc/sluice/sluice.yaml is not a conffile"
/usr/sbin/sluice --help 2>&1 | grep -qF /etc/sluice/sluice.yaml || fail "the default config is not /etc/sluice/sluice.yaml"
PLUGINDIR=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/sluice/plugins
/usr/sbin/sluice --list-plugins >"$WORK/plugins.out" 2>&1 || fail "--list-plugins: $(cat "$WORK/plugins.out")"
listed=$(awk '$2 == "input" || $2 == "filter" || $2 == "output" {print $1}' "$WORK/plugins.out" | sort | xargs)
# tail_fmt is the core's module (`sluice tail`), no plugin
[ "$listed" = "$(tr ' ' '\n' <<<"${PLUGINS[sluice]}" | grep -vx tail_fmt | xargs)" ] || fail "the base package's daemon lists '$listed'"
# a plugin of another package: the error names it, where it looked and
# the package to install (each plugin package's, from debian/rules)
for pkg in "${!PLUGINS[@]}"; do
	for p in ${PLUGINS[$pkg]}; do
		[ "$pkg" != sluice ] && [ "$p" != metrics_http ] || continue
		printf 'stacks:\n  a:\n    - { plugin: nflog, group: 5 }\n    - %s\n' "$p" >"$WORK/missing.yaml"
		rc=0; /usr/sbin/sluice -t -c "$WORK/missing.yaml" >"$WORK/missing.out" 2>&1 || rc=$?
		[ "$rc" = 78 ] || fail "a config naming $p without $pkg: exit $rc, not 78"
		grep -qF "unknown plugin '$p' (searched: $PLUGINDIR): it comes in the package $pkg" "$WORK/missing.out" ||
			fail "a config naming $p without $pkg: $(cat "$WORK/missing.out")"
	done
done
# The documentation the man pages and the conffile point to.
for page in man8/sluice.8 man5/sluice.yaml.5 man7/sluice-where.7; do
	[ -f "/usr/share/man/$page.gz" ] || fail "man page $page not installed"
	zcat "/usr/share/man/$page.gz" | groff -man -ww -z 2>"$WORK/groff.err"
	[ ! -s "$WORK/groff.err" ] || fail "groff -ww warns on the installed $page: $(cat "$WORK/groff.err")"
done
for f in README.md CONFIG.md PLUGINS.md OPERATIONS.md MIGRATING.md SECURITY.md; do
	[ -f "/usr/share/doc/sluice/$f" ] || fail "/usr/share/doc/sluice/$f is not installed"
done
named=$( (zcat /usr/share/man/man*/sluice*.gz; grep '^[[:space:]]*#' /etc/sluice/sluice.yaml) |
	grep -oE '/(usr|etc)/[A-Za-z0-9_./<>-]*[A-Za-z0-9_/]' | grep -v '<' | sort -u)
[ -n "$named" ] || fail "the man pages and the conffile name no installed path"
for path in $named; do
	case "$path" in
	/usr/share/* | /etc/sluice/* | /etc/logrotate.d/*) [ -e "$path" ] || fail "$path, named by the man pages or the conffile, is not installed" ;;
	esac
done
if grep -E '^[[:space:]]*#.*(^|[[:space:](])(conf|docs)/' /etc/sluice/sluice.yaml; then
	fail "the conffile's comments name a path of the source tree"
fi

# Then every other package.
others=()
for deb in "${DEBS[@]}"; do case "$deb" in */sluice_*) ;; *) others+=("$deb") ;; esac; done
apt_install "${others[@]}"
/usr/sbin/sluice --list-plugins >"$WORK/plugins.out" 2>&1 || fail "--list-plugins: $(cat "$WORK/plugins.out")"
n=$(awk '$2 == "input" || $2 == "filter" || $2 == "output"' "$WORK/plugins.out" | wc -l)
want=$(echo "${PLUGINS[*]}" | wc -w)
# metrics_http and tail_fmt are the core's modules, no plugins
[ "$n" = $((want - 2)) ] || { cat "$WORK/plugins.out"; fail "--list-plugins lists $n plugins, expected $((want - 2))"; }
for p in $(awk '$2 == "input" || $2 == "filter" || $2 == "output" {print $1}' "$WORK/plugins.out"); do
	/usr/sbin/sluice --describe "$p" | grep -qx "file: $PLUGINDIR/$p.so" ||
		fail "plugin $p is not loaded from $PLUGINDIR: $(/usr/sbin/sluice --describe "$p" | sed -n 2p)"
done
[ "$(ls "$PLUGINDIR"/*.so | wc -l)" = "$want" ] || fail "$PLUGINDIR does not hold $want objects"

# the user, the log directory, the unit, logrotate, man pages
IFS=: read -r _ _ uid gid _ home shell < <(getent passwd sluice) || fail "no user sluice"
[ "$uid" -lt 1000 ] || fail "sluice is not a system user (uid $uid)"
[ "$home" = /nonexistent ] || fail "home of sluice is $home"
[ "$(getent group sluice | cut -d: -f3)" = "$gid" ] || fail "sluice's group is not 'sluice'"
[ "$(stat -c '%U:%G %a' /var/log/sluice)" = "sluice:sluice 750" ] ||
	fail "/var/log/sluice: $(stat -c '%U:%G %a' /var/log/sluice)"
UNIT=/lib/systemd/system/sluice.service
grep -qx 'ExecStart=/usr/sbin/sluice -c /etc/sluice/sluice.yaml' "$UNIT" || fail "unit ExecStart: $(grep ExecStart= "$UNIT")"
grep -qx 'User=sluice' "$UNIT" || fail "the unit does not run as sluice"
[ -L /etc/systemd/system/multi-user.target.wants/sluice.service ] || fail "the unit is not enabled"
logrotate -d /etc/logrotate.d/sluice >"$WORK/logrotate.out" 2>&1 || fail "logrotate -d: $(cat "$WORK/logrotate.out")"
if grep -qi 'error' "$WORK/logrotate.out"; then fail "logrotate: $(grep -i error "$WORK/logrotate.out")"; fi
# The packaged configuration runs as the unit runs it (user sluice with
# CAP_NET_ADMIN only; systemd is not PID 1 here), in a namespace: group 5
# binds and both files are opened in /var/log/sluice.
NS=$(unique_name sldeb)
make_netns "$NS"
# The unit's RuntimeDirectory=sluice: /run/sluice owned by the user.
if [ ! -d /run/sluice ]; then
	install -d -o sluice -g sluice -m 0755 /run/sluice
	at_exit "rm -rf /run/sluice"
fi
ip netns exec "$NS" setpriv --reuid=sluice --regid=sluice --init-groups --no-new-privs \
	--inh-caps=-all,+net_admin --ambient-caps=-all,+net_admin --bounding-set=-all,+net_admin \
	-- /usr/sbin/sluice -c /etc/sluice/sluice.yaml >"$WORK/run.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group 5" "$WORK/run.log" ||
	fail "the packaged config does not start as sluice: $(cat "$WORK/run.log")"
for f in ssh.json firewall.log; do
	wait_for 5 test -e "/var/log/sluice/$f" || fail "/var/log/sluice/$f not opened"
	[ "$(stat -c %U "/var/log/sluice/$f")" = sluice ] || fail "/var/log/sluice/$f not owned by sluice"
done
# the packaged control socket answers root (the unit's ExecReload and logrotate use it)
wait_for 5 test -S /run/sluice/control || fail "no control socket at /run/sluice/control"
/usr/sbin/sluice stats -c /etc/sluice/sluice.yaml | grep -q "nflog" || fail "sluice stats from the packaged config"
[ "$(/usr/sbin/sluice reopen -c /etc/sluice/sluice.yaml)" = ok ] || fail "sluice reopen from the packaged config"
kill -TERM "$SLUICE_PID"
rc=0; wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || fail "the packaged config: exit $rc: $(cat "$WORK/run.log")"
if grep -q 'warning: \|error: ' "$WORK/run.log"; then fail "the packaged config warns: $(cat "$WORK/run.log")"; fi

# sluice-dev: sluice-plugin(3) when the tree has it, and an out-of-tree
# plugin from the installed headers and .pc
if [ -e "$SRC/docs/sluice-plugin.3" ] || [ -e "$SRC/docs/sluice-plugin.3.in" ]; then
	dpkg -L sluice-dev | grep -qx /usr/share/man/man3/sluice-plugin.3.gz || fail "sluice-dev lacks sluice-plugin(3)"
fi
[ "$(pkg-config --variable=plugindir sluice-plugin)" = "$PLUGINDIR" ] || fail "sluice-plugin.pc plugindir"
cp -r "$SRCDIR/tests/oot" "$WORK/oot"
make -C "$WORK/oot" >"$WORK/oot.log" 2>&1 || fail "tests/oot against sluice-dev: $(cat "$WORK/oot.log")"
SLUICE_PLUGIN_PATH="$WORK/oot" /usr/sbin/sluice --describe rot13 | grep -q "example out-of-tree filter" ||
	fail "the installed daemon does not load rot13.so built against sluice-dev"

# purge: all gone but the user
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 purge -y -qq "${!PLUGINS[@]}" \
	>"$WORK/purge.log" 2>&1 || fail "apt-get purge: $(tail -20 "$WORK/purge.log")"
if dpkg-query -W -f='${Status}\n' "${!PLUGINS[@]}" 2>/dev/null | grep -q 'installed'; then
	fail "still installed after purge"
fi
for f in /usr/sbin/sluice "$PLUGINDIR" /etc/sluice /etc/logrotate.d/sluice "$UNIT" /var/log/sluice \
	/etc/systemd/system/multi-user.target.wants/sluice.service /usr/include/sluice /usr/share/doc/sluice; do
	[ ! -e "$f" ] && [ ! -L "$f" ] || fail "$f is left after purge"
done
getent passwd sluice >/dev/null || fail "purge removed the user (Debian keeps it)"
pass "built ${#DEBS[@]} packages in the copy, lintian clean; sluice pulls $n_sluice packages (ulogd2 $n_ulogd2); $n plugins from $PLUGINDIR; purged"
