# SPDX-License-Identifier: GPL-2.0-or-later
# The syslog spool against a real rsyslogd, for test_netns_syslog_spool_tls.sh
# and test_netns_syslog_spool_relp.sh (set TRANSPORT=tls or relp, then
# source this after lib.sh).  As in test_netns_syslog_spool.sh, seqgen's
# numbered UDP (fault_lib.sh) is logged by an nft rule to NFLOG in a
# namespace; sluice turns it into logline text and sends it with a 64 KiB
# memory queue to rsyslogd on the loopback of the same namespace (imtcp with
# the gtls driver, or imrelp), which writes %msg% with omfile.  The oracle
# is the rule's nft counter and the packet numbers (SPT/DPT) in what
# rsyslogd wrote, checked by fault_check.py.  rsyslogd runs with a direct
# main queue and synchronous omfile writes: what it acknowledged is in its
# file even after its own SIGKILL.  The helpers and phases are spool_lib.sh's.
need_root
need_cmd ip nft ss python3 rsyslogd openssl
case $TRANSPORT in
tls) ls /usr/lib/*/rsyslog/lmnsd_gtls.so >/dev/null 2>&1 || skip "needs rsyslog-gnutls (lmnsd_gtls.so)" ;;
relp) ls /usr/lib/*/rsyslog/imrelp.so >/dev/null 2>&1 || skip "needs rsyslog-relp (imrelp.so)" ;;
esac
. "$(dirname "$0")/fault_lib.sh"
export TZ=UTC
RS="$WORK/rs" C="$WORK/certs" SPOOL="$WORK/spool"
mkdir "$RS" "$C"
PORT=6514
GOT="$RS/got.txt"

if [ "$TRANSPORT" = tls ]; then
	. "$(dirname "$0")/certs_lib.sh"
	ca ca
	leaf server ca "DNS:localhost,IP:127.0.0.1" serverAuth
	cat >"$RS/rs.conf" <<CONF
global(workDirectory="$RS" defaultNetstreamDriver="gtls"
	defaultNetstreamDriverCAFile="$C/ca.pem"
	defaultNetstreamDriverCertFile="$C/server.pem"
	defaultNetstreamDriverKeyFile="$C/server.key")
main_queue(queue.type="Direct")
module(load="imtcp" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")
template(name="m" type="string" string="%msg%\n")
ruleset(name="r") { action(type="omfile" file="$GOT" template="m" asyncWriting="off" flushOnTXEnd="on") }
input(type="imtcp" address="127.0.0.1" port="$PORT" ruleset="r")
CONF
	DEST="transport: tls, tls_ca_file: '$C/ca.pem'"
else
	cat >"$RS/rs.conf" <<CONF
global(workDirectory="$RS")
main_queue(queue.type="Direct")
module(load="imrelp")
template(name="m" type="string" string="%msg%\n")
ruleset(name="r") { action(type="omfile" file="$GOT" template="m" asyncWriting="off" flushOnTXEnd="on") }
input(type="imrelp" address="127.0.0.1" port="$PORT" ruleset="r")
CONF
	DEST="transport: relp"
fi
rsyslogd -N1 -f "$RS/rs.conf" >"$RS/check.log" 2>&1 || { cat "$RS/check.log"; skip "rsyslogd rejects the test config"; }

fault_net 97 57
RS_PID=""
recv_start() {
	ip netns exec "$FB" rsyslogd -n -f "$RS/rs.conf" -i "$RS/pid" >>"$RS/rs.log" 2>&1 8>&- &
	RS_PID=$!
	at_exit "kill -9 $RS_PID"
	wait_for 10 listening || fail "rsyslogd did not listen: $(cat "$RS/rs.log")"
}
recv_stop() { kill "$RS_PID"; wait "$RS_PID" 2>/dev/null || true; }
rs_kill() { kill -9 "$RS_PID"; wait "$RS_PID" 2>/dev/null || true; }
# the logline text of each message: rsyslogd's %msg% has the space after the tag
texts() { sed 's/^ //' "$GOT" >"$1"; }
. "$(dirname "$0")/spool_lib.sh"
