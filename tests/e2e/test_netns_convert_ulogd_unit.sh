#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A converted ulogd.conf that keeps ulogd2's file names starts under the
# shipped unit once the converter's advice is followed.  A directory owned
# by ulog:adm 0750 (Debian's /var/log/ulog) holds ulogd2's log; the
# converter warns that the file is outside /var/log/sluice and prints the
# chown and the drop-in (ReadWritePaths=, Group=).  The daemon then runs
# as sluice.service runs it (systemd is not PID 1 here, so emulated): as
# user sluice (else nobody) with CAP_NET_ADMIN only, no_new_privs, UMask
# 0027, and every mount read-only (ProtectSystem=strict) except the
# ReadWritePaths= of the drop-in.  Without them it cannot open the file
# (the failure the issue saw); with them, the packets nftables counted are
# appended after ulogd2's line, in a file that keeps its group.
# PrivateTmp=, seccomp and the address families are not emulated.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft ping setpriv unshare findmnt
getent group adm >/dev/null || skip "no group adm"
U=sluice
getent passwd "$U" >/dev/null || U=nobody
getent passwd "$U" >/dev/null || skip "no user sluice or nobody"
OWNER=ulog
getent passwd "$OWNER" >/dev/null || OWNER=daemon

G=24
NS=$(unique_name slcvn)
make_netns "$NS"
chmod 755 "$WORK"
UL="$WORK/ulog"		# stands for /var/log/ulog
mkdir -m 0750 "$UL" && chown "$OWNER:adm" "$UL"
echo "Dec  1 00:00:00 host ulogd2's last line" >"$UL/syslogemu.log"
chown "$OWNER:adm" "$UL/syslogemu.log" && chmod 0640 "$UL/syslogemu.log"
printf '%s\n' '[global]' \
	'stack=log1:NFLOG,base1:BASE,ifi1:IFINDEX,ip2str1:IP2STR,print1:PRINTPKT,emu1:LOGEMU' \
	'[log1]' "group=$G" '[emu1]' "file=\"$UL/syslogemu.log\"" 'sync=1' >"$WORK/ulogd.conf"
"$SLUICE" convert ulogd "$WORK/ulogd.conf" >"$WORK/sluice.yaml" 2>"$WORK/convert.err" ||
	{ cat "$WORK/convert.err"; fail "convert failed"; }
chmod 644 "$WORK/sluice.yaml"
cat "$WORK/convert.err"
grep -q "ulogd.conf:5: warning: \[emu1\] (LOGEMU): $UL/syslogemu.log is outside /var/log/sluice" "$WORK/convert.err" ||
	fail "no warning for the file outside /var/log/sluice"
grep -qx "      chown -R sluice:adm $UL    # now $OWNER:adm 0750" "$WORK/convert.err" || fail "no chown printed"
grep -qx "      \[Service\]" "$WORK/convert.err" || fail "no drop-in printed"
grep -qx "#   ReadWritePaths=$UL" "$WORK/sluice.yaml" || fail "the drop-in is not in the YAML's comments"
# What the drop-in says, read from the converter's words.
RW=$(sed -n 's/^      ReadWritePaths=//p' "$WORK/convert.err")
GROUP=$(sed -n 's/^      Group=//p' "$WORK/convert.err")
[ "$RW" = "$UL" ] && [ "$GROUP" = adm ] || fail "drop-in: ReadWritePaths=$RW Group=$GROUP"

printf '%s\n' 'table inet slcvn {' ' chain out {' \
	'  type filter hook output priority 0; policy accept;' \
	"  ip daddr 127.0.0.0/8 icmp type echo-request counter log group $G prefix \"ulogd-unit \"" \
	' }' '}' | ip netns exec "$NS" nft -f - || skip "nftables log group not available"

# unit RW-PATHS GROUP: sluice -c as sluice.service runs it, in the namespace.
# Each step execs the next: run in a subshell, its PID is the daemon's.
unit() {
	exec ip netns exec "$NS" unshare -m --propagation private bash -c '
		rw=$1 group=$2 user=$3; shift 3
		# ProtectSystem=strict: every mount read-only but the kernel API ones
		findmnt -rn -o TARGET | grep -vE "^/(proc|sys|dev)(/|$)" | sort -u |
		while read -r m; do mount -o remount,bind,ro "$m" 2>/dev/null || true; done
		if touch /.sluice-ro-check 2>/dev/null; then
			rm -f /.sluice-ro-check; echo "/ is not read-only"; exit 99
		fi
		for p in $rw; do mount --bind "$p" "$p" && mount -o remount,bind,rw "$p" || exit 98; done
		exec setpriv --reuid="$user" --regid="$group" --clear-groups --no-new-privs \
			--inh-caps=-all,+net_admin --ambient-caps=-all,+net_admin \
			--bounding-set=-all,+net_admin -- bash -c "umask 0027; exec \"\$@\"" unit "$@"
	' unit "$1" "$2" "$U" "$SLUICE" -c "$WORK/sluice.yaml"
}

# 1. As converted, without the advice: the file cannot be opened.
rc=0
(unit "" "$(id -gn "$U")") >"$WORK/before.log" 2>&1 || rc=$?
[ "$rc" != 99 ] && [ "$rc" != 98 ] || fail "the unit's confinement could not be emulated: $(cat "$WORK/before.log")"
[ "$rc" != 0 ] && grep -q "$UL/syslogemu.log" "$WORK/before.log" ||
	{ cat "$WORK/before.log"; fail "started without the drop-in (exit $rc): the emulation is not the unit's"; }
echo "without the drop-in: exit $rc, $(grep -m1 "$UL/syslogemu.log" "$WORK/before.log")"

# 2. The advice followed: the printed chown (for the user the test runs
# as), then the drop-in's ReadWritePaths= and Group=.
sed -n "s/^      \(chown -R \)sluice:/\1$U:/p" "$WORK/convert.err" | sh -e || fail "the printed chown failed"
unit "$RW" "$GROUP" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "the converted configuration did not start with the drop-in"; }
ip netns exec "$NS" ping -q -c 4 -i 0.2 127.0.0.1 >/dev/null || fail "ping 127.0.0.1"
COUNTED=$(ip netns exec "$NS" nft list chain inet slcvn out | sed -n 's/.*counter packets \([0-9]*\) .*/\1/p')
[ "$COUNTED" = 4 ] || fail "nft counted $COUNTED echo requests, expected 4"
lines() { grep -c 'ulogd-unit IN= OUT=lo SRC=127.0.0.1 DST=127.0.0.1 ' "$UL/syslogemu.log" || true; }
written() { [ "$(lines)" -ge "$COUNTED" ]; }
wait_for 10 written || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
[ "$(lines)" = "$COUNTED" ] || { cat "$UL/syslogemu.log"; fail "syslogemu.log does not have the $COUNTED counted packets"; }
[ "$(head -1 "$UL/syslogemu.log")" = "Dec  1 00:00:00 host ulogd2's last line" ] || fail "ulogd2's line is gone"
[ "$(stat -c '%U:%G' "$UL/syslogemu.log")" = "$U:adm" ] || fail "syslogemu.log is $(stat -c '%U:%G' "$UL/syslogemu.log")"
pass "as the unit runs it (user $U, group $GROUP, read-only but $RW), $COUNTED packets appended to ulogd2's file"
