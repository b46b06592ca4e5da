#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The systemd unit as `cmake --install` puts it (into a DESTDIR):
#  1. it lands under the prefix (unless the build names a directory), its
#     ExecStart= names the installed daemon and the configured paths, and
#     the configuration it names is installed and valid; its ordering is
#     before network-pre.target (which it pulls in), as OPERATIONS.md says;
#  2. `systemd-analyze verify` passes with nothing said about the unit.
#     verify wants the ExecStart binary and the Documentation= man pages at
#     their real paths: in a private mount namespace the DESTDIR's sbin
#     is bind-mounted over the real one and MANPATH names its man pages;
#  3. `systemd-analyze security --offline` scores it 2.0 or better;
#  4. systemd is not PID 1 here, so the unit's confinement is emulated with
#     setpriv: the installed daemon as user sluice (else nobody) with
#     CAP_NET_ADMIN as its only (ambient, bounding) capability,
#     no_new_privs and UMask 0027, on an NFLOG group in a namespace, writing
#     a dir it owns: SO_RCVBUFFORCE works (no netlink_buffer warning), every
#     packet the nft counter counted is in the text files and the pcaps
#     (fault_check.py: each number once, in order; capinfos reads them),
#     SIGHUP reopens a moved file.  Seccomp, ProtectSystem= and the
#     RestrictAddressFamilies= list are not emulated.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd systemd-analyze setpriv unshare ip nft capinfos python3
. "$(dirname "$0")/fault_lib.sh"

cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILDDIR/CMakeCache.txt"; }
[ "$(cache SLUICE_INSTALL_SYSTEMD_UNIT)" = ON ] || skip "built with SLUICE_INSTALL_SYSTEMD_UNIT=OFF"
UNITDIR=$(cache SLUICE_SYSTEMD_UNITDIR)
PREFIX=$(cache CMAKE_INSTALL_PREFIX)
# A relative directory is under the prefix (/usr/local/lib/systemd/system
# for the default prefix, where systemd reads units); the package sets an
# absolute one.
case "$UNITDIR" in
/*) ;;
*) UNITDIR="$PREFIX/${UNITDIR:-lib/systemd/system}" ;;
esac
ROOT="$WORK/root"
DESTDIR="$ROOT" cmake --install "$BUILDDIR" >"$WORK/install.log" 2>&1 ||
	fail "cmake --install: $(cat "$WORK/install.log")"
UNIT="$ROOT$UNITDIR/sluice.service"
[ -f "$UNIT" ] || fail "no unit at $UNIT: $(cd "$ROOT" && find . -name sluice.service)"

# 1. the paths.  `sluice --help` prints the default configuration file.
exec_start=$(sed -n 's/^ExecStart=//p' "$UNIT")
bin=${exec_start%% *}
[ -x "$ROOT$bin" ] || fail "ExecStart=$exec_start: $bin is not in the installed tree"
case "$bin" in "$PREFIX"/*) ;; *) fail "ExecStart binary $bin is not under the prefix $PREFIX" ;; esac
conf=${exec_start##* -c }
"$ROOT$bin" --help 2>&1 | grep -qF "$conf" ||
	fail "the unit's config $conf is not the daemon's default: $("$ROOT$bin" --help 2>&1 | grep -- -c)"
grep -qx "ExecStartPre=$bin -t -c $conf" "$UNIT" || fail "no ExecStartPre=$bin -t -c $conf"
[ -f "$ROOT$conf" ] || fail "the unit's configuration $conf is not installed"
with_log_dir "$ROOT$bin" -t -c "$ROOT$conf" >"$WORK/t.out" 2>&1 || fail "sluice -t on the installed $conf: $(cat "$WORK/t.out")"

# 1b. the ordering: bound before interfaces come up, i.e. before
# network-pre.target, which it pulls in (a target nobody Wants= is not
# part of the boot, and then orders nothing); and docs/OPERATIONS.md says
# exactly these lines.
deps=$(sed -n '/^\[Unit\]/,/^\[/{/^\(After\|Before\|Wants\|Requires\|BindsTo\)=/p}' "$UNIT")
for line in Before=network-pre.target Wants=network-pre.target; do
	grep -qxF "$line" <<<"$deps" || fail "the unit lacks $line (it has: $(echo $deps))"
done
if grep -E '^After=.*network(-pre)?\.target' <<<"$deps"; then fail "the unit starts after the network"; fi
row=$(grep -E '^\| `(After|Before|Wants)=' "$SRCDIR/docs/OPERATIONS.md") || fail "OPERATIONS.md has no row for the unit's ordering"
documented=$(cut -d'|' -f2 <<<"$row" | grep -oE '`[A-Za-z]+=[^`]*`' | tr -d '`' | sort)
[ "$documented" = "$(sort <<<"$deps")" ] ||
	fail "OPERATIONS.md documents '$(echo $documented)', the unit has '$(echo $deps)'"
for line in Type=notify NotifyAccess=main User=sluice Group=sluice \
	AmbientCapabilities=CAP_NET_ADMIN CapabilityBoundingSet=CAP_NET_ADMIN NoNewPrivileges=yes \
	ProtectSystem=strict ProtectHome=yes PrivateTmp=yes LogsDirectory=sluice RuntimeDirectory=sluice \
	"RestrictAddressFamilies=AF_NETLINK AF_UNIX AF_INET AF_INET6" SystemCallFilter=@system-service \
	SystemCallArchitectures=native 'ExecReload=/bin/kill -HUP $MAINPID' Restart=on-failure \
	RestartPreventExitStatus=78; do
	grep -qxF "$line" "$UNIT" || fail "the unit lacks $line"
done
if grep -n '@[A-Za-z_]*@' "$UNIT"; then fail "unsubstituted @VAR@ in the unit"; fi

# 2. systemd-analyze verify on the installed file
sbindir=$(dirname "$bin")
[ -d "$sbindir" ] || skip "no $sbindir on this machine to bind the installed one over"
page=$(find "$ROOT" -path '*/man8/sluice.8*' | head -1)
[ -n "$page" ] || fail "sluice(8) is not installed"
mandir=$(dirname "$(dirname "$page")")
rc=0
unshare -m --propagation private bash -c \
	'mount --bind "$1" "$2" && MANPATH="$3" SYSTEMD_LOG_COLOR=0 systemd-analyze verify "$4"' \
	verify "$ROOT$sbindir" "$sbindir" "$mandir" "$UNIT" >"$WORK/verify.out" 2>&1 || rc=$?
cat "$WORK/verify.out"
[ "$rc" = 0 ] || fail "systemd-analyze verify exited $rc"
if grep -i 'sluice' "$WORK/verify.out"; then fail "systemd-analyze verify warns about the unit"; fi
echo "systemd-analyze verify: ok ($(wc -l <"$WORK/verify.out") lines about other units)"

# 3. the exposure score
SYSTEMD_COLORS=0 systemd-analyze security --offline=yes "$UNIT" >"$WORK/security.out" 2>&1 ||
	fail "systemd-analyze security: $(tail -3 "$WORK/security.out")"
score=$(sed -n 's/.*Overall exposure level for sluice.service: \([0-9.]*\).*/\1/p' "$WORK/security.out")
[ -n "$score" ] || fail "no exposure score: $(tail -3 "$WORK/security.out")"
python3 -c "import sys; sys.exit(0 if float('$score') <= 2.0 else 1)" ||
	{ grep '✗' "$WORK/security.out"; fail "exposure $score, above 2.0"; }
echo "systemd-analyze security: exposure $score"

# 4. the confinement, emulated.  The installed daemon and plugins run from
# $ROOT: the user must be able to read them.
U=sluice
getent passwd "$U" >/dev/null || U=nobody
getent passwd "$U" >/dev/null || skip "no user sluice or nobody"
G=$(id -gn "$U")
chmod 755 "$WORK"
D="$WORK/log"
mkdir -m 0750 "$D" && chown "$U:$G" "$D"
fault_net 89 49
cat >"$WORK/sluice.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $FG, netlink_buffer: 8MiB, qtimeout: 20ms}
stacks:
  cap: [fw, {plugin: pcap, file: "$D/cap.pcap", linktype: nflog, flush_interval: 50ms}]
  txt: [fw, decode, logline, {plugin: file, file: "$D/fw.log", flush_interval: 50ms}]
YAML
# the plugins of the installed tree only
export SLUICE_PLUGIN_PATH="$ROOT$(cache SLUICE_PLUGIN_DIR)"
# every step execs the next: the PID started is the daemon's
cat >"$WORK/confined" <<SH
#!/bin/bash
exec setpriv --reuid=$U --regid=$G --init-groups --no-new-privs \\
	--inh-caps=-all,+net_admin --ambient-caps=-all,+net_admin --bounding-set=-all,+net_admin \\
	-- bash -c 'umask 0027; exec "\$@"' confined "\$@"
SH
chmod 755 "$WORK/confined"
"$WORK/confined" "$ROOT$bin" -t -c "$WORK/sluice.yaml" >"$WORK/check.out" 2>&1 ||
	fail "sluice -t as $U: $(cat "$WORK/check.out")"
ip netns exec "$FB" "$WORK/confined" "$ROOT$bin" -c "$WORK/sluice.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $FG" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "nflog did not start as $U with CAP_NET_ADMIN"; }
st=/proc/$SLUICE_PID/status
uid=$(id -u "$U")
[ "$(awk '/^Uid:/ {print $2, $3, $4, $5}' "$st")" = "$uid $uid $uid $uid" ] || fail "uids: $(grep Uid: "$st")"
for f in CapEff CapPrm CapBnd CapAmb; do
	[ "$(awk "/^$f:/ {print \$2}" "$st")" = 0000000000001000 ] || fail "$f: $(grep "^$f:" "$st"), expected CAP_NET_ADMIN only"
done
[ "$(awk '/^NoNewPrivs:/ {print $2}' "$st")" = 1 ] || fail "no_new_privs is not set"
if grep -i 'netlink_buffer' "$WORK/sluice.log"; then fail "SO_RCVBUFFORCE refused with CAP_NET_ADMIN"; fi

send -n 3000 -r 3000 >"$WORK/gen1.out"
wait_for 10 input_caught_up "$WORK/sluice.log" 3000 || fail "nflog in=$(counter "$WORK/sluice.log" fw in), sent 3000"
mv "$D/fw.log" "$D/fw.log.1"
mv "$D/cap.pcap" "$D/cap.pcap.1"
kill -HUP "$SLUICE_PID"
wait_for 10 test -e "$D/fw.log" -a -e "$D/cap.pcap" || fail "SIGHUP did not reopen as $U: $(tail -5 "$WORK/sluice.log")"
send -n 2000 -r 3000 -f 3000 >"$WORK/gen2.out"
logged=$(nft_logged)
wait_for 10 input_caught_up "$WORK/sluice.log" "$logged" || fail "nflog in=$(counter "$WORK/sluice.log" fw in), nft logged $logged"
kill -TERM "$SLUICE_PID"
rc=0; wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/sluice.log"; fail "exit $rc"; }
[ "$(stat -c '%U %a' "$D/fw.log")" = "$U 640" ] || fail "reopened file: $(stat -c '%U %a' "$D/fw.log"), expected $U 640"

read -r text < <(python3 "$CHECK" text "$D/fw.log.1" "$D/fw.log") || fail "text files: $text"
read -r pcap < <(python3 "$CHECK" pcap "$D/cap.pcap.1" "$D/cap.pcap") || fail "pcap files: $pcap"
echo "text: $text"
echo "pcap: $pcap"
grep -q "records=$logged " <<<"$text" || fail "text files hold not the $logged packets nft logged"
grep -q "records=$logged " <<<"$pcap" || fail "pcap files hold not the $logged packets nft logged"
n=$(capinfos -M -c "$D/cap.pcap" | sed -n 's/^Number of packets: *//p')
[ "$n" = 2000 ] || fail "capinfos counts $n packets in cap.pcap, not 2000"
pass "unit verified, exposure $score; as $U with CAP_NET_ADMIN only: $logged of $logged logged packets in both outputs"
