#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# syslog transport tls against real `openssl s_server` peers, for what the
# TLS policy must refuse or count (issue 19 section 2):
#  - a server speaking only TLS 1.0 (or 1.1) is refused: nothing arrives,
#    tls_failures counts it (GnuTLS's default priority on Debian 12 still
#    offers 1.0 and 1.1; sluice asks for 1.2 and 1.3 only);
#  - tls_min_version: "1.3" (also as tls: {min_version: …}) refuses a
#    TLS 1.2-only server and still talks to a 1.3 one (RELP: in
#    test_output_syslog_relp.sh, against rsyslog);
#  - a server certificate issued for clients only (extendedKeyUsage
#    clientAuth) is refused as a server's: the key purpose is checked;
#  - a TLS 1.3 server that refuses sluice's client certificate (signed by a
#    CA it does not trust) after sluice's side of the handshake is over:
#    nothing arrives and every message written on the refused sessions is
#    counted (possibly_lost or dropped_messages), at shutdown and under load.
. "$(dirname "$0")/lib.sh"
need_cmd openssl python3 ss
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
TF=${SLUICE_TEST_TIME_FACTOR:-1}
C="$WORK/certs"
mkdir "$C"

. "$(dirname "$0")/certs_lib.sh"
ca ca
ca otherca
leaf server ca "DNS:localhost,IP:127.0.0.1" serverAuth
leaf clientonly ca "DNS:localhost,IP:127.0.0.1" clientAuth
leaf client.test ca "DNS:client.test" clientAuth

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
listening() { ss -Hltn "sport = :$1" | grep -q .; }
counter() { grep "counters: $2 " "$1" | tail -1 | sed -nE "s/.* $3=([0-9]+).*/\1/p"; }

# server NAME S_SERVER-OPTIONS: an openssl s_server on $PORT; what it reads
# goes to $WORK/NAME.out.  Its stdin is a FIFO held open here: s_server
# ends the connection at end of input.
server() {
	local name=$1 pid
	shift
	PORT=$(free_port)
	mkfifo "$WORK/$name.in"
	exec {fd}<>"$WORK/$name.in"
	openssl s_server -accept "127.0.0.1:$PORT" -quiet "$@" <"$WORK/$name.in" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" &
	pid=$!
	at_exit "kill $pid"
	wait_for 10 listening "$PORT" || fail "$name: s_server did not listen: $(cat "$WORK/$name.err")"
	SERVER_PID=$pid
}
stop_server() { kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; }

CAP="$SRCDIR/tests/data/raw-mixed.pcap"
# run NAME SYSLOG-OPTIONS: replay the capture through syslog over TLS to $PORT
run() {
	cat >"$WORK/$1.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP"}, decode, logline,
      {plugin: syslog, format: rfc5424, transport: tls, address: "127.0.0.1:$PORT", app_name: tlsmark,
       tls_ca_file: "$C/ca.pem", reconnect_min: 100ms, $2}]
YAML
	"$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.log" 2>&1 || { cat "$WORK/$1.log"; fail "$1: sluice failed"; }
}
arrived() { grep -oa "tlsmark" "$WORK/$1.out" 2>/dev/null | wc -l; }
# refused NAME PATTERN: nothing reached the server, the log says why
refused() {
	local f
	[ "$(arrived "$1")" = 0 ] || fail "$1: the server read $(arrived "$1") messages: $(head -c 300 "$WORK/$1.out")"
	grep -q "$2" "$WORK/$1.log" || fail "$1: no '$2' in the log: $(cat "$WORK/$1.log")"
	f=$(counter "$WORK/$1.log" s.syslog tls_failures)
	[ "${f:-0}" -ge 1 ] || fail "$1: tls_failures=${f:-none}"
}

# the reference count
cat >"$WORK/ref.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP"}, decode, logline, {plugin: file, file: "$WORK/ref.txt"}]
YAML
"$SLUICE" -c "$WORK/ref.yaml" >"$WORK/ref.log" 2>&1 || fail "reference run failed: $(cat "$WORK/ref.log")"
N=$(wc -l <"$WORK/ref.txt")
[ "$N" -gt 10 ] || fail "reference has only $N records"
lines_ge() { [ "$(arrived "$1")" -ge "$2" ]; }

# ---- 0. the peers work: a TLS 1.3 server gets everything ----
server ok -cert "$C/server.pem" -key "$C/server.key"
run ok ""
wait_for $((10 * TF)) lines_ge ok "$N" || fail "ok: $(arrived ok) of $N messages arrived: $(cat "$WORK/ok.log")"
stop_server

# ---- 1. a TLS 1.0-only server, and a 1.1-only one, are refused ----
server tls10 -cert "$C/server.pem" -key "$C/server.key" -tls1 -cipher 'ECDHE-ECDSA-AES256-SHA@SECLEVEL=0'
run tls10 ""
refused tls10 "TLS handshake failed"
stop_server
server tls11 -cert "$C/server.pem" -key "$C/server.key" -tls1_1 -cipher 'ECDHE-ECDSA-AES256-SHA@SECLEVEL=0'
run tls11 ""
refused tls11 "TLS handshake failed"
stop_server
# ---- 2. tls_min_version: 1.3 refuses a 1.2-only server, takes a 1.3 one ----
server tls12 -cert "$C/server.pem" -key "$C/server.key" -tls1_2
run tls12_ok ""
wait_for $((10 * TF)) lines_ge tls12 "$N" || fail "tls12: $(arrived tls12) of $N messages arrived by default"
: >"$WORK/tls12.out"
run tls12 "tls_min_version: \"1.3\""
refused tls12 "TLS handshake failed"
stop_server
server tls13 -cert "$C/server.pem" -key "$C/server.key" -tls1_3
cat >"$WORK/tls13.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP"}, decode, logline,
      {plugin: syslog, format: rfc5424, transport: tls, address: "127.0.0.1:$PORT", app_name: tlsmark,
       tls: {ca_file: "$C/ca.pem", min_version: "1.3"}}]
YAML
"$SLUICE" -c "$WORK/tls13.yaml" >"$WORK/tls13.log" 2>&1 || fail "tls13: sluice failed: $(cat "$WORK/tls13.log")"
wait_for $((10 * TF)) lines_ge tls13 "$N" || fail "tls13: $(arrived tls13) of $N messages arrived: $(cat "$WORK/tls13.log")"
stop_server
# a version sluice does not offer is a configuration error
cat >"$WORK/bad.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP"},
      {plugin: syslog, transport: tls, tls_min_version: "1.1"}]
YAML
"$SLUICE" -t -c "$WORK/bad.yaml" >/dev/null 2>"$WORK/bad.err" && fail "-t accepted tls_min_version 1.1"
grep -q "bad.yaml:3:.*tls_min_version" "$WORK/bad.err" || fail "tls_min_version 1.1: $(cat "$WORK/bad.err")"

# ---- 3. a certificate for clients only is no server certificate ----
server purpose -cert "$C/clientonly.pem" -key "$C/clientonly.key"
run purpose ""
refused purpose "verification failed: .*purpose"
stop_server

# ---- 4. TLS 1.3: the server refuses our client certificate after our handshake ----
CLIENT="tls_cert_file: \"$C/client.test.pem\", tls_key_file: \"$C/client.test.key\""
server mtls -cert "$C/server.pem" -key "$C/server.key" -tls1_3 -Verify 1 -CAfile "$C/otherca.pem"
run mtls "$CLIENT"
refused mtls "TLS session .* failed"
min=$(counter "$WORK/mtls.log" s.syslog in)
mpl=$(counter "$WORK/mtls.log" s.syslog possibly_lost)
mdm=$(counter "$WORK/mtls.log" s.syslog dropped_messages)
mcore=$(counter "$WORK/mtls.log" s.syslog dropped)
[ "$min" = "$N" ] && [ $((mpl + mdm)) = "$N" ] && [ "$mcore" = "$N" ] ||
	fail "mtls: of $N messages (in $min) none arrived but possibly_lost $mpl + dropped_messages $mdm, core dropped $mcore: $(cat "$WORK/mtls.log")"
# and while running: every session refused anew, each one's messages counted
cat >"$WORK/mtls_gen.yaml" <<YAML
stacks:
  s: [{plugin: gen, count: 3000, per_tick: 5, interval: 1ms},
      {plugin: syslog, transport: tls, address: "127.0.0.1:$PORT", tls_ca_file: "$C/ca.pem", app_name: tlsmark,
       $CLIENT, reconnect_min: 50ms, reconnect_max: 100ms}]
YAML
"$SLUICE" -c "$WORK/mtls_gen.yaml" >"$WORK/mtls_gen.log" 2>&1 || fail "mtls_gen: sluice failed: $(cat "$WORK/mtls_gen.log")"
gin=$(counter "$WORK/mtls_gen.log" s.syslog in)
gpl=$(counter "$WORK/mtls_gen.log" s.syslog possibly_lost)
gdm=$(counter "$WORK/mtls_gen.log" s.syslog dropped_messages)
gf=$(counter "$WORK/mtls_gen.log" s.syslog tls_failures)
[ "$(arrived mtls)" = 0 ] || fail "mtls_gen: the server read $(arrived mtls) messages"
[ "$gin" = 3000 ] && [ $((gpl + gdm)) = 3000 ] && [ "${gf:-0}" -ge 2 ] ||
	fail "mtls_gen: of $gin messages possibly_lost $gpl + dropped_messages $gdm, tls_failures $gf: $(tail -5 "$WORK/mtls_gen.log")"
stop_server

pass "TLS 1.0 and 1.1 servers refused; tls_min_version 1.3 refuses 1.2, takes 1.3; clientAuth-only server certificate refused; client certificate refused after the TLS 1.3 handshake: $N/$N counted (possibly_lost $mpl, dropped_messages $mdm), under load 3000 = $gpl + $gdm over $gf refused sessions"
