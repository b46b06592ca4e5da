#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# conf/sluice.logrotate, the snippet the package installs, run by the real
# logrotate (`logrotate -f -s STATE CONF`, 3 forced rotations) against a
# daemon logging live NFLOG traffic (seqgen, 3000 packets/s) to a text
# file and a pcap in a namespace.  The snippet is used as it is, but for
# its directory (WORK/log, owned by the user the daemon runs as, like
# /var/log/sluice under the unit) and its `su` user.  Its postrotate runs
# the real `sluice reopen` (a PATH entry adds -c WORK/sluice.yaml, as the
# installed daemon's default config file would be) and, when that fails,
# `systemctl kill --kill-who=main --signal=HUP sluice.service`.  systemd is
# not PID 1 here: a PATH entry `systemctl` records the call and sends the
# HUP systemd would send to the unit's main process.
#  A. with daemon.control_socket (when this daemon has `sluice reopen`):
#     `sluice reopen` reopens, systemctl is never called;
#  B. without it: `sluice reopen` fails, the SIGHUP fallback reopens.
# Each time: every file rotated (compressed after the first), the daemon
# wrote a new file, and across the files every packet the nft counter
# counted is there once and in order (fault_check.py).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 logrotate gzip setpriv
. "$(dirname "$0")/fault_lib.sh"

U=sluice
getent passwd "$U" >/dev/null || U=nobody
getent passwd "$U" >/dev/null || skip "no user sluice or nobody"
G=$(id -gn "$U")
chmod 755 "$WORK"
fault_net 88 48
mkdir "$WORK/bin"
cat >"$WORK/bin/sluice" <<SH
#!/bin/bash
exec "$SLUICE" "\$@" -c "$WORK/sluice.yaml"
SH
cat >"$WORK/bin/systemctl" <<SH
#!/bin/bash
echo "\$*" >>"$WORK/systemctl.calls"
[ "\$*" = "kill --kill-who=main --signal=HUP sluice.service" ] || exit 1
exec kill -HUP "\$(cat "$WORK/daemon.pid")"
SH
chmod 755 "$WORK/bin/sluice" "$WORK/bin/systemctl"
# the daemon as the unit runs it: user $U, CAP_NET_ADMIN only
cat >"$WORK/confined" <<SH
#!/bin/bash
exec setpriv --reuid=$U --regid=$G --init-groups --no-new-privs \\
	--inh-caps=-all,+net_admin --ambient-caps=-all,+net_admin --bounding-set=-all,+net_admin \\
	-- bash -c 'umask 0027; exec "\$@"' confined "\$@"
SH
chmod 755 "$WORK/confined"

rc=0
"$SLUICE" reopen --socket "$WORK/no-such-socket" >/dev/null 2>&1 || rc=$?
HAVE_CTL=false
[ "$rc" = 69 ] && HAVE_CTL=true

# run_phase NAME CONTROL_KEY: one daemon, traffic, 3 rotations, checks.
run_phase() {
	local name=$1 key=$2 D="$WORK/$1" i f first
	mkdir -m 0750 "$D" && chown "$U:$G" "$D"
	cat >"$WORK/sluice.yaml" <<YAML
daemon: {$key}
instances:
  fw: {plugin: nflog, group: $FG, qtimeout: 20ms}
stacks:
  cap: [fw, {plugin: pcap, file: "$D/cap.pcap", linktype: nflog, flush_interval: 50ms}]
  txt: [fw, decode, logline, {plugin: file, file: "$D/fw.log", flush_interval: 50ms}]
YAML
	sed -e "s|/var/log/sluice|$D|g" -e "s|^\([[:space:]]*su\) sluice sluice|\1 $U $G|" \
		"$SRCDIR/conf/sluice.logrotate" >"$WORK/$name.logrotate"
	grep -q "^[[:space:]]*su $U $G\$" "$WORK/$name.logrotate" || fail "the snippet has no 'su sluice sluice'"
	rm -f "$WORK/systemctl.calls"
	ip netns exec "$FB" "$WORK/confined" "$SLUICE" -c "$WORK/sluice.yaml" >"$WORK/$name.log" 2>&1 &
	SLUICE_PID=$!
	echo "$SLUICE_PID" >"$WORK/daemon.pid"
	at_exit "kill $SLUICE_PID"
	wait_for 10 grep -qs "bound NFLOG group $FG" "$WORK/$name.log" ||
		{ cat "$WORK/$name.log"; fail "$name: nflog did not start"; }
	first=$(( $(nft_logged) ))
	# Traffic until the last rotation is done, however long that takes.
	send_bg "$WORK/$name.gen" -n 1000000 -r 3000 -t 300 -f "$first"
	for i in 1 2 3; do
		# Packets in the file before each rotation (the event, not a time).
		wait_for 10 test -s "$D/fw.log" || fail "$name: no traffic into fw.log before rotation $i"
		PATH="$WORK/bin:$PATH" logrotate -f -s "$WORK/$name.state" "$WORK/$name.logrotate" \
			>"$WORK/$name.lr" 2>&1 || fail "$name: logrotate: $(cat "$WORK/$name.lr")"
		wait_for 10 test -e "$D/fw.log" -a -e "$D/cap.pcap" ||
			fail "$name: no new files after rotation $i: $(tail -3 "$WORK/$name.log")"
	done
	wait_for 10 test -s "$D/fw.log" || fail "$name: no traffic into the new fw.log"
	kill -0 "$GEN_PID" 2>/dev/null || fail "$name: the traffic ended before the last rotation"
	kill -TERM "$GEN_PID"
	wait "$GEN_PID" || true
	grep -q '^sent [1-9]' "$WORK/$name.gen" || fail "$name: seqgen failed: $(cat "$WORK/$name.gen")"
	local logged=$(( $(nft_logged) - first ))
	wait_for 10 input_caught_up "$WORK/$name.log" "$logged" ||
		fail "$name: nflog in=$(counter "$WORK/$name.log" fw in), nft logged $logged"
	kill -TERM "$SLUICE_PID"
	wait "$SLUICE_PID" || { cat "$WORK/$name.log"; fail "$name: the daemon exited with an error"; }
	ls -l "$D"
	if $HAVE_CTL && [ -n "$key" ]; then
		[ ! -e "$WORK/systemctl.calls" ] || fail "$name: the fallback ran: $(cat "$WORK/systemctl.calls")"
	else
		[ "$(wc -l <"$WORK/systemctl.calls")" = 3 ] || fail "$name: systemctl called $(wc -l <"$WORK/systemctl.calls" 2>/dev/null || echo 0) times, not 3"
	fi
	# oldest first: .3.gz .2.gz .1 and the live file
	for f in fw.log cap.pcap; do
		[ -e "$D/$f.3.gz" ] && [ -e "$D/$f.2.gz" ] && [ -e "$D/$f.1" ] && [ -s "$D/$f" ] ||
			fail "$name: $f not rotated 3 times: $(ls "$D")"
		zcat "$D/$f.3.gz" >"$WORK/$name.3.$f"
		zcat "$D/$f.2.gz" >"$WORK/$name.2.$f"
	done
	local text pcap
	text=$(python3 "$CHECK" text "$WORK/$name.3.fw.log" "$WORK/$name.2.fw.log" "$D/fw.log.1" "$D/fw.log") ||
		fail "$name: text files: $text"
	pcap=$(python3 "$CHECK" pcap "$WORK/$name.3.cap.pcap" "$WORK/$name.2.cap.pcap" "$D/cap.pcap.1" "$D/cap.pcap") ||
		fail "$name: pcap files: $pcap"
	echo "$name text: $text"
	echo "$name pcap: $pcap"
	grep -q "records=$logged .* holes=0 " <<<"$text" || fail "$name: text files lack packets (nft logged $logged)"
	grep -q "records=$logged .* holes=0 " <<<"$pcap" || fail "$name: pcap files lack packets (nft logged $logged)"
	RESULT="$RESULT $name: $logged of $logged packets across 4 files;"
}

RESULT=""
if $HAVE_CTL; then
	mkdir "$WORK/run" && chown "$U:$G" "$WORK/run"	# like RuntimeDirectory=
	run_phase ctl "control_socket: $WORK/run/control"
else
	echo "phase A skipped: this daemon has no 'sluice reopen' (no control socket)"
fi
run_phase hup ""
pass "$RESULT"
