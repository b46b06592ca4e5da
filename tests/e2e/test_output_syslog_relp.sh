#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# syslog transport: relp against a real rsyslogd with imrelp on 127.0.0.1:
#  - every record of a replay arrives, equal to sluice's own text output;
#  - under a steady replay (pace: original, looped) rsyslogd is killed
#    with SIGKILL and started again: nothing is lost (each distinct
#    message arrives at least as often as it was replayed); duplicates,
#    which RELP allows (a message written but not yet acknowledged when
#    the receiver died is resent), are counted and reported;
#  - RELP over TLS (librelp's TLS, imrelp tls="on" with authMode name on
#    both sides, certificates made here with openssl): every message
#    arrives; a server certificate checked against another CA is refused
#    and nothing arrives; a listener limited to TLS 1.2 (tls.prioritystring)
#    takes sluice's default and refuses tls_min_version "1.3" (the version
#    floor reaches librelp's session).
# rsyslogd runs with a direct main queue and synchronous omfile writes, so
# that what it acknowledged is on disk (its own in-memory queue would lose
# acknowledged messages at SIGKILL, which is not sluice's loss).
. "$(dirname "$0")/lib.sh"
need_cmd rsyslogd python3 ss openssl
ls /usr/lib/*/rsyslog/imrelp.so >/dev/null 2>&1 || skip "needs rsyslog-relp (imrelp.so)"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
export TZ=UTC
RS="$WORK/rs" C="$WORK/certs"
mkdir "$RS" "$C"
read -r PORT TPORT T12PORT < <(python3 -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

. "$(dirname "$0")/certs_lib.sh"
ca ca
ca otherca
leaf localhost ca "DNS:localhost,IP:127.0.0.1" serverAuth,clientAuth
leaf client.test ca "DNS:client.test" clientAuth,serverAuth

cat >"$RS/rs.conf" <<CONF
global(workDirectory="$RS")
main_queue(queue.type="Direct")
module(load="imrelp")
template(name="m" type="string" string="%msg%\n")
ruleset(name="r") {
	action(type="omfile" file="$RS/relp.txt" template="m" asyncWriting="off" flushOnTXEnd="on")
}
input(type="imrelp" address="127.0.0.1" port="$PORT" ruleset="r")
ruleset(name="t") {
	action(type="omfile" file="$RS/tls.txt" template="m" asyncWriting="off" flushOnTXEnd="on")
}
input(type="imrelp" address="127.0.0.1" port="$TPORT" ruleset="t" tls="on"
	tls.caCert="$C/ca.pem" tls.myCert="$C/localhost.pem" tls.myPrivKey="$C/localhost.key"
	tls.authMode="name" tls.permittedPeer=["client.test"])
ruleset(name="t12") {
	action(type="omfile" file="$RS/tls12.txt" template="m" asyncWriting="off" flushOnTXEnd="on")
}
input(type="imrelp" address="127.0.0.1" port="$T12PORT" ruleset="t12" tls="on"
	tls.caCert="$C/ca.pem" tls.myCert="$C/localhost.pem" tls.myPrivKey="$C/localhost.key"
	tls.authMode="name" tls.permittedPeer=["client.test"]
	tls.prioritystring="NORMAL:-VERS-ALL:+VERS-TLS1.2")
CONF
rsyslogd -N1 -f "$RS/rs.conf" >"$RS/check.log" 2>&1 || { cat "$RS/check.log"; skip "rsyslogd rejects the test config"; }
listening() { ss -Hltn "sport = :$PORT" | grep -q .; }
RS_PID=""
rs_start() {
	rsyslogd -n -f "$RS/rs.conf" -i "$RS/pid" >>"$RS/rs.log" 2>&1 &
	RS_PID=$!
	at_exit "kill -9 $RS_PID"
	wait_for 10 listening || fail "rsyslogd did not listen: $(cat "$RS/rs.log")"
}
rs_start

counter() { grep "counters: $2 " "$1" | tail -1 | sed -nE "s/.* $3=([0-9]+).*/\1/p"; }
lines_ge() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }
CAP="$SRCDIR/tests/data/raw-mixed.pcap"

cat >"$WORK/ref.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP"}, decode, logline, {plugin: file, file: "$WORK/ref.txt"}]
YAML
"$SLUICE" -c "$WORK/ref.yaml" >"$WORK/ref.log" 2>&1 || fail "reference run failed: $(cat "$WORK/ref.log")"
N=$(wc -l <"$WORK/ref.txt")
[ "$N" -gt 10 ] || fail "reference has only $N records"

# ---- 1. every message arrives ----
cat >"$WORK/once.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP"}, decode, logline,
      {plugin: syslog, format: rfc5424, transport: relp, address: "127.0.0.1:$PORT"}]
YAML
"$SLUICE" -c "$WORK/once.yaml" >"$WORK/once.log" 2>&1 || fail "sluice failed: $(cat "$WORK/once.log")"
wait_for 10 lines_ge "$RS/relp.txt" "$N" || fail "relp: $(wc -l <"$RS/relp.txt" 2>/dev/null) of $N arrived: $(cat "$WORK/once.log")"
sed 's/^ //' "$RS/relp.txt" >"$WORK/got.txt"
cmp -s "$WORK/ref.txt" "$WORK/got.txt" || fail "relp: messages differ: $(diff "$WORK/ref.txt" "$WORK/got.txt" | head -5)"

# ---- 2. receiver killed (SIGKILL) and restarted under a steady replay ----
LOOPS=10	# 40 records in 0.8 s per pass: ~8 s, ~50 msg/s
: >"$RS/relp.txt"
cat >"$WORK/kill.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP", pace: original, loop: $LOOPS}, decode, logline,
      {plugin: syslog, format: rfc5424, transport: relp, address: "127.0.0.1:$PORT",
       reconnect_min: 100ms, reconnect_max: 500ms}]
YAML
"$SLUICE" -c "$WORK/kill.yaml" >"$WORK/kill.log" 2>&1 &
SL=$!
at_exit "kill $SL"
wait_for 10 lines_ge "$RS/relp.txt" $((2 * N)) || fail "no steady stream before the kill"
before=$(wc -l <"$RS/relp.txt")
kill -9 "$RS_PID"; wait "$RS_PID" 2>/dev/null || true
sleep 1
down=$(wc -l <"$RS/relp.txt")
rs_start
wait "$SL" || fail "sluice failed: $(cat "$WORK/kill.log")"
want=$((N * LOOPS))
wait_for 10 lines_ge "$RS/relp.txt" "$want" || true
sed 's/^ //' "$RS/relp.txt" >"$WORK/kgot.txt"
total=$(wc -l <"$WORK/kgot.txt")
# every distinct message at least LOOPS times, and no message sluice did not send
missing=$(awk -v L=$LOOPS 'NR == FNR { want[$0] += L; next } { got[$0]++ }
	END { for (m in want) if (got[m] < want[m]) s += want[m] - got[m]; print s + 0 }' \
	"$WORK/ref.txt" "$WORK/kgot.txt")
extra=$(grep -cvxF -f "$WORK/ref.txt" "$WORK/kgot.txt" || true)
drop=$(counter "$WORK/kill.log" s.syslog dropped)
rec=$(counter "$WORK/kill.log" s.syslog reconnects)
echo "relp kill: $before before the kill, $down when down, total $total of $want sent; missing $missing, foreign $extra, duplicates $((total - want)); dropped=$drop reconnects=$rec"
[ "$missing" = 0 ] || fail "relp: $missing messages lost across the receiver's SIGKILL ($total of $want)"
[ "$extra" = 0 ] || fail "relp: $extra messages that were never sent"
[ "${drop:-0}" = 0 ] || fail "relp: sluice dropped $drop"
[ "${rec:-0}" -ge 1 ] || fail "relp: no reconnect counted"
[ "$down" -lt "$want" ] || fail "relp: the kill came after the stream ended; the test proves nothing"
# ---- 3. RELP over TLS ----
relp_tls() {	# relp_tls NAME CA [PORT [OPTIONS]]
	cat >"$WORK/$1.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP"}, decode, logline,
      {plugin: syslog, format: rfc5424, transport: relp, address: "127.0.0.1:${3:-$TPORT}", ${4:-}
       tls_ca_file: "$C/$2.pem", tls_server_name: localhost,
       tls_cert_file: "$C/client.test.pem", tls_key_file: "$C/client.test.key"}]
YAML
	"$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.log" 2>&1 || fail "$1: sluice failed: $(cat "$WORK/$1.log")"
}
relp_tls tls_ok ca
wait_for 10 lines_ge "$RS/tls.txt" "$N" || fail "relp+tls: $(wc -l <"$RS/tls.txt" 2>/dev/null) of $N arrived: $(cat "$WORK/tls_ok.log")"
sed 's/^ //' "$RS/tls.txt" >"$WORK/tgot.txt"
cmp -s "$WORK/ref.txt" "$WORK/tgot.txt" || fail "relp+tls: messages differ"
: >"$RS/tls.txt"
relp_tls tls_bad otherca
sleep 0.5
[ ! -s "$RS/tls.txt" ] || fail "relp+tls: a server from another CA got $(wc -l <"$RS/tls.txt") messages"
grep -q "RELP connect failed" "$WORK/tls_bad.log" || fail "relp+tls: the refusal is not logged: $(cat "$WORK/tls_bad.log")"
grep "RELP connect failed" "$WORK/tls_bad.log" | head -1
tf=$(counter "$WORK/tls_bad.log" s.syslog tls_failures)
[ "${tf:-0}" -ge 1 ] || fail "relp+tls: tls_failures=${tf:-none} after a refused certificate"
# the version floor: a TLS 1.2-only listener
relp_tls tls12_ok ca "$T12PORT"
wait_for 10 lines_ge "$RS/tls12.txt" "$N" ||
	fail "relp+tls 1.2: $(wc -l <"$RS/tls12.txt" 2>/dev/null) of $N arrived: $(cat "$WORK/tls12_ok.log")"
: >"$RS/tls12.txt"
relp_tls tls12_refused ca "$T12PORT" 'tls_min_version: "1.3",'
sleep 0.5
[ ! -s "$RS/tls12.txt" ] || fail "relp+tls, tls_min_version 1.3: a TLS 1.2-only server got $(wc -l <"$RS/tls12.txt") messages"
grep -q "RELP connect failed" "$WORK/tls12_refused.log" ||
	fail "relp+tls, tls_min_version 1.3: the refusal is not logged: $(cat "$WORK/tls12_refused.log")"

pass "$N/$N messages over RELP and $N/$N over RELP+TLS equal to the text output (another CA refused, tls_failures $tf; a TLS 1.2-only server refused with tls_min_version 1.3); SIGKILL of rsyslogd mid-stream: $total of $want arrived, none missing, $((total - want)) duplicates, $rec reconnect(s)"
