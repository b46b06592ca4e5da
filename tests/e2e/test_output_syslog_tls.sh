#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# syslog transport: tls (RFC 5425) against a real rsyslogd with the GnuTLS
# driver (imtcp, StreamDriver.Mode=1) on 127.0.0.1, certificates made here
# with openssl: a CA, a server certificate for localhost/127.0.0.1 and a
# client certificate.
#  - every record of a replay arrives, each message equal to sluice's own
#    text output (file plugin) of the same records;
#  - a server certificate verified against another CA, and against a name
#    it does not carry, is refused: logged with the failed check, counted
#    in tls_failures, and tcpdump on loopback sees no record text;
#  - mutual TLS: a listener with AuthMode x509/name takes sluice's client
#    certificate, and refuses a sluice without one (after the TLS 1.3
#    handshake: nothing arrives, and every message written on the refused
#    session is counted, in possibly_lost or dropped_messages);
#  - and a listener whose permittedPeer is not the name in sluice's client
#    certificate: rsyslog checks the name after the TLS 1.3 handshake and
#    closes without an alert; every message written on those sessions is
#    counted too (issue 19: they were counted as delivered).
. "$(dirname "$0")/lib.sh"
need_cmd rsyslogd openssl python3 ss tcpdump
[ -e /usr/lib/x86_64-linux-gnu/rsyslog/lmnsd_gtls.so ] || ls /usr/lib/*/rsyslog/lmnsd_gtls.so >/dev/null 2>&1 ||
	skip "needs rsyslog-gnutls (lmnsd_gtls.so)"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
export TZ=UTC
RS="$WORK/rs" C="$WORK/certs"
mkdir "$RS" "$C"

# ---- certificates ----
. "$(dirname "$0")/certs_lib.sh"
ca ca
ca otherca
leaf server ca "DNS:localhost,IP:127.0.0.1" serverAuth
leaf client.test ca "DNS:client.test" clientAuth

read -r PORT MPORT NPORT < <(python3 -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

cat >"$RS/rs.conf" <<CONF
global(workDirectory="$RS" defaultNetstreamDriver="gtls"
	defaultNetstreamDriverCAFile="$C/ca.pem"
	defaultNetstreamDriverCertFile="$C/server.pem"
	defaultNetstreamDriverKeyFile="$C/server.key")
module(load="imtcp" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")
template(name="m" type="string" string="%msg%\n")
ruleset(name="tls") { action(type="omfile" file="$RS/tls.txt" template="m") }
ruleset(name="mtls") { action(type="omfile" file="$RS/mtls.txt" template="m") }
ruleset(name="nametls") { action(type="omfile" file="$RS/nametls.txt" template="m") }
input(type="imtcp" address="127.0.0.1" port="$PORT" ruleset="tls")
input(type="imtcp" address="127.0.0.1" port="$MPORT" ruleset="mtls"
	streamDriver.authMode="x509/name" permittedPeer="client.test")
input(type="imtcp" address="127.0.0.1" port="$NPORT" ruleset="nametls"
	streamDriver.authMode="x509/name" permittedPeer="other.test")
CONF
rsyslogd -N1 -f "$RS/rs.conf" >"$RS/check.log" 2>&1 || { cat "$RS/check.log"; skip "rsyslogd rejects the test config"; }
listening() { ss -Hltn "sport = :$1" | grep -q .; }
rsyslogd -n -f "$RS/rs.conf" -i "$RS/pid" >>"$RS/rs.log" 2>&1 &
RS_PID=$!
at_exit "kill $RS_PID"
wait_for 10 listening "$PORT" || fail "rsyslogd did not listen: $(cat "$RS/rs.log")"
wait_for 10 listening "$MPORT" || fail "rsyslogd did not listen on $MPORT: $(cat "$RS/rs.log")"
wait_for 10 listening "$NPORT" || fail "rsyslogd did not listen on $NPORT: $(cat "$RS/rs.log")"

counter() { grep "counters: $2 " "$1" | tail -1 | sed -nE "s/.* $3=([0-9]+).*/\1/p"; }
lines_ge() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }
CAP="$SRCDIR/tests/data/raw-mixed.pcap"
# run NAME SYSLOG-OPTIONS: replay the capture through syslog
run() {
	cat >"$WORK/$1.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP"}, decode, logline,
      {plugin: syslog, format: rfc5424, transport: tls, $2}]
YAML
	"$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.log" 2>&1 || { cat "$WORK/$1.log"; fail "$1: sluice failed"; }
}

# ---- the reference: sluice's own text output of the same records ----
cat >"$WORK/ref.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP"}, decode, logline, {plugin: file, file: "$WORK/ref.txt"}]
YAML
"$SLUICE" -c "$WORK/ref.yaml" >"$WORK/ref.log" 2>&1 || fail "reference run failed: $(cat "$WORK/ref.log")"
N=$(wc -l <"$WORK/ref.txt")
[ "$N" -gt 10 ] || fail "reference has only $N records"

# ---- 1. every message arrives over TLS, name checked against 127.0.0.1's SAN ----
run ok "address: \"127.0.0.1:$PORT\", tls_ca_file: \"$C/ca.pem\""
wait_for 10 lines_ge "$RS/tls.txt" "$N" || { cat "$WORK/ok.log" "$RS/rs.log"; fail "tls: messages missing"; }
sed 's/^ //' "$RS/tls.txt" >"$WORK/got.txt"
got=$(wc -l <"$WORK/got.txt")
[ "$got" = "$N" ] || fail "tls: $got of $N messages arrived; log: $(cat "$WORK/ok.log")"
cmp -s "$WORK/ref.txt" "$WORK/got.txt" || fail "tls: messages differ from the text output: $(diff "$WORK/ref.txt" "$WORK/got.txt" | head -5)"
[ "$(counter "$WORK/ok.log" s.syslog tls_failures)" = 0 ] || fail "tls: tls_failures is not 0"
# and the name from tls_server_name (localhost, a DNS SAN)
: >"$RS/tls.txt"
run name_ok "address: \"127.0.0.1:$PORT\", tls_ca_file: \"$C/ca.pem\", tls_server_name: localhost"
wait_for 10 lines_ge "$RS/tls.txt" "$N" || fail "tls_server_name localhost: $(wc -l <"$RS/tls.txt") of $N"

# ---- 2. refused: another CA, a wrong name; nothing in clear ----
MARK=$(head -1 "$WORK/ref.txt" | grep -oE 'SRC=[0-9a-f.:]+ DST=[0-9a-f.:]+' | head -1)
[ -n "$MARK" ] || fail "no SRC=/DST= in the reference text"
refused() {	# refused NAME OPTIONS PATTERN
	local name=$1 pcap="$WORK/$1.pcap" tp
	: >"$RS/tls.txt"
	tcpdump -i lo -U --immediate-mode -n -w "$pcap" "tcp port $PORT" 2>"$WORK/$name.tcpdump" &
	tp=$!
	at_exit "kill $tp"
	wait_for 10 grep -q "listening on" "$WORK/$name.tcpdump" || fail "tcpdump did not start"
	run "$name" "address: \"127.0.0.1:$PORT\", $2, reconnect_min: 100ms"
	sleep 0.3
	kill -INT "$tp"; wait "$tp" 2>/dev/null || true
	grep -q "$3" "$WORK/$name.log" || fail "$name: no '$3' in the log: $(cat "$WORK/$name.log")"
	f=$(counter "$WORK/$name.log" s.syslog tls_failures)
	[ "${f:-0}" -ge 1 ] || fail "$name: tls_failures=${f:-none}"
	pk=$(tcpdump -r "$pcap" -n 2>/dev/null | wc -l)
	[ "$pk" -ge 6 ] || fail "$name: tcpdump saw only $pk packets: no handshake was captured"
	! grep -aqF "$MARK" "$pcap" || fail "$name: record text '$MARK' was sent in clear"
	! grep -aqF "sluice" "$pcap" || fail "$name: the app name went out in clear"
	[ ! -s "$RS/tls.txt" ] || fail "$name: rsyslog received $(wc -l <"$RS/tls.txt") messages"
	echo "$name: refused, tls_failures=$f, $pk packets captured, no record text"
	eval "${name}_f=$f"
}
refused otherca "tls_ca_file: \"$C/otherca.pem\"" "verification failed: .*issuer is unknown"
refused badname "tls_ca_file: \"$C/ca.pem\", tls_server_name: other.example" \
	"verification failed: .*does not match"

# ---- 3. mutual TLS ----
run mtls "address: \"127.0.0.1:$MPORT\", tls_ca_file: \"$C/ca.pem\", tls_cert_file: \"$C/client.test.pem\", tls_key_file: \"$C/client.test.key\""
wait_for 10 lines_ge "$RS/mtls.txt" "$N" || true
mg=$(wc -l <"$RS/mtls.txt" 2>/dev/null || echo 0)
[ "$mg" = "$N" ] || fail "mtls: $mg of $N messages arrived; log: $(cat "$WORK/mtls.log")"
cp "$RS/mtls.txt" "$WORK/mtls-ok.txt"; : >"$RS/mtls.txt"
run mtls_nocert "address: \"127.0.0.1:$MPORT\", tls_ca_file: \"$C/ca.pem\", reconnect_min: 100ms"
sleep 0.5
[ ! -s "$RS/mtls.txt" ] || fail "mtls: a client without a certificate got $(wc -l <"$RS/mtls.txt") messages in"
nf=$(counter "$WORK/mtls_nocert.log" s.syslog tls_failures)
[ "${nf:-0}" -ge 1 ] || fail "mtls without a client certificate: tls_failures=${nf:-none}"
grep -q "asked for a client certificate" "$WORK/mtls_nocert.log" ||
	fail "mtls without a client certificate: the log does not say so: $(cat "$WORK/mtls_nocert.log")"
nin=$(counter "$WORK/mtls_nocert.log" s.syslog in)
npl=$(counter "$WORK/mtls_nocert.log" s.syslog possibly_lost)
ndm=$(counter "$WORK/mtls_nocert.log" s.syslog dropped_messages)
ncore=$(counter "$WORK/mtls_nocert.log" s.syslog dropped)
[ "$nin" = "$N" ] && [ $((npl + ndm)) = "$N" ] && [ "$ncore" = "$N" ] ||
	fail "mtls without a client certificate: of $N messages (in $nin) none arrived but possibly_lost $npl + dropped_messages $ndm, core dropped $ncore: $(cat "$WORK/mtls_nocert.log")"
# and while running: every session refused anew, each one's messages counted
cat >"$WORK/mtls_gen.yaml" <<YAML
stacks:
  s: [{plugin: gen, count: 3000, per_tick: 5, interval: 1ms},
      {plugin: syslog, transport: tls, address: "127.0.0.1:$MPORT", tls_ca_file: "$C/ca.pem",
       reconnect_min: 50ms, reconnect_max: 100ms}]
YAML
"$SLUICE" -c "$WORK/mtls_gen.yaml" >"$WORK/mtls_gen.log" 2>&1 || fail "mtls_gen: sluice failed: $(cat "$WORK/mtls_gen.log")"
gin=$(counter "$WORK/mtls_gen.log" s.syslog in)
gpl=$(counter "$WORK/mtls_gen.log" s.syslog possibly_lost)
gdm=$(counter "$WORK/mtls_gen.log" s.syslog dropped_messages)
gf=$(counter "$WORK/mtls_gen.log" s.syslog tls_failures)
[ ! -s "$RS/mtls.txt" ] || fail "mtls_gen: a client without a certificate got $(wc -l <"$RS/mtls.txt") messages in"
[ "$gin" = 3000 ] && [ $((gpl + gdm)) = 3000 ] && [ "${gf:-0}" -ge 2 ] ||
	fail "mtls_gen: of $gin messages possibly_lost $gpl + dropped_messages $gdm, tls_failures $gf: $(tail -5 "$WORK/mtls_gen.log")"
# a client certificate whose name the listener does not permit
CLIENT="tls_cert_file: \"$C/client.test.pem\", tls_key_file: \"$C/client.test.key\""
run name_refused "address: \"127.0.0.1:$NPORT\", tls_ca_file: \"$C/ca.pem\", $CLIENT, reconnect_min: 100ms"
rin=$(counter "$WORK/name_refused.log" s.syslog in)
rpl=$(counter "$WORK/name_refused.log" s.syslog possibly_lost)
rdm=$(counter "$WORK/name_refused.log" s.syslog dropped_messages)
rf=$(counter "$WORK/name_refused.log" s.syslog tls_failures)
[ ! -s "$RS/nametls.txt" ] || fail "name_refused: a client with a refused name got $(wc -l <"$RS/nametls.txt") messages in"
[ "$rin" = "$N" ] && [ $((rpl + rdm)) = "$N" ] && [ "${rf:-0}" -ge 1 ] ||
	fail "name_refused: of $N messages (in $rin) none arrived but possibly_lost $rpl + dropped_messages $rdm, tls_failures $rf: $(cat "$WORK/name_refused.log")"
grep -q "probably refused tls_cert_file" "$WORK/name_refused.log" ||
	fail "name_refused: the log does not say the certificate was probably refused: $(cat "$WORK/name_refused.log")"
sed -e "s/$MPORT/$NPORT/" -e "s|reconnect_min|$CLIENT, reconnect_min|" "$WORK/mtls_gen.yaml" >"$WORK/name_gen.yaml"
"$SLUICE" -c "$WORK/name_gen.yaml" >"$WORK/name_gen.log" 2>&1 || fail "name_gen: sluice failed: $(cat "$WORK/name_gen.log")"
hin=$(counter "$WORK/name_gen.log" s.syslog in)
hpl=$(counter "$WORK/name_gen.log" s.syslog possibly_lost)
hdm=$(counter "$WORK/name_gen.log" s.syslog dropped_messages)
hf=$(counter "$WORK/name_gen.log" s.syslog tls_failures)
[ ! -s "$RS/nametls.txt" ] || fail "name_gen: a client with a refused name got $(wc -l <"$RS/nametls.txt") messages in"
[ "$hin" = 3000 ] && [ $((hpl + hdm)) = 3000 ] && [ "${hf:-0}" -ge 2 ] ||
	fail "name_gen: of $hin messages possibly_lost $hpl + dropped_messages $hdm, tls_failures $hf: $(tail -5 "$WORK/name_gen.log")"

# ---- 4. configuration errors at file:line:col ----
cat >"$WORK/bad.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP"}, decode, logline,
      {plugin: syslog, transport: tls, tls_ca_file: "$WORK/missing.pem"}]
YAML
"$SLUICE" -t -c "$WORK/bad.yaml" >/dev/null 2>"$WORK/bad.err" && fail "-t accepted a missing tls_ca_file"
col=$(awk 'NR == 3 { print index($0, "\"'"$WORK"'/missing") }' "$WORK/bad.yaml")
grep -q "bad.yaml:3:$col:.*tls_ca_file" "$WORK/bad.err" || fail "missing tls_ca_file: not reported at 3:$col: $(cat "$WORK/bad.err")"

pass "$N/$N messages over TLS equal to the text output, $mg/$N over mutual TLS; other CA and wrong name refused (tls_failures $otherca_f and $badname_f, no record text on the wire); client without certificate refused (tls_failures $nf, $N/$N counted: possibly_lost $npl, dropped_messages $ndm; under load $gf refused sessions, 3000 = $gpl + $gdm); client name refused after the handshake: $N/$N counted ($rpl + $rdm), under load 3000 = $hpl + $hdm over $hf sessions)"
