#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The otlp output over https:// (libcurl's TLS, set from the shared tls_*
# options), to a test receiver on loopback with a certificate for
# 127.0.0.1 made here; the 40 records of eth-mixed.pcap each time:
#   1. tls_ca_file holding that certificate: all delivered;
#   2. without it (the system's store does not know it): no request gets
#      through, the certificate error is logged, the records dropped and counted;
#   3. tls_verify: false: all delivered, and a warning says the certificate is not checked;
#   4. a receiver requiring a client certificate: delivered with
#      tls_cert_file and tls_key_file, refused without;
#   5. a receiver whose certificate names otel.test only: refused at
#      127.0.0.1, delivered with tls_server_name: otel.test (the url's
#      host still the one connected to), which the receiver sees as Host.
. "$(dirname "$0")/lib.sh"
need_cmd python3 openssl
. "$(dirname "$0")/otlp_lib.sh"
CAP="$SRCDIR/tests/data/eth-mixed.pcap"

cert() {	# cert NAME SUBJECT_ALT_NAME: a self-signed certificate and its key
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$1" -addext "subjectAltName=$2" \
		-keyout "$WORK/$1.key" -out "$WORK/$1.pem" >/dev/null 2>&1 || skip "openssl cannot make a certificate"
}
cert server IP:127.0.0.1
cert client DNS:sluice-client
cert named DNS:otel.test

# run NAME RECEIVER_DIR OPTIONS: replay into the receiver, the counters of o.otlp in NAME.count
run() {
	cat >"$WORK/$1.yaml" <<YAML
stacks:
  o: [{plugin: replay, file: "$CAP"}, decode, json,
      {plugin: otlp, url: "https://127.0.0.1:$RECV_PORT/v1/logs", batch_size: 10, max_retries: 0,
       timeout: 5s, $2}]
YAML
	"$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.log" 2>&1 || { cat "$WORK/$1.log"; fail "$1: sluice failed"; }
	grep "counters: o.otlp (otlp)" "$WORK/$1.log" >"$WORK/$1.count" || { cat "$WORK/$1.log"; fail "$1: no counters"; }
}
delivered() { grep -q "in=40 out=40 dropped=0 errors=0 requests=4 records=40 http_errors=0 connect_errors=0" "$WORK/$1.count" ||
	{ cat "$WORK/$1.log"; fail "$1: not all 40 records delivered"; }; }
refused() { grep -q "in=40 out=0 dropped=40 errors=0 requests=0 records=0 http_errors=0 connect_errors=4 .*dropped_records=40" "$WORK/$1.count" ||
	{ cat "$WORK/$1.log"; fail "$1: the records were not refused and counted"; }; }

start_receiver - "$WORK/r" --tls "$WORK/server.pem" "$WORK/server.key"
run ca "tls_ca_file: \"$WORK/server.pem\""
delivered ca
run noca "tls_min_version: \"1.2\""
refused noca
grep -qi "certificate" "$WORK/noca.log" || fail "the certificate error was not logged"
run noverify "tls_verify: false"
delivered noverify
grep -q "tls_verify is false" "$WORK/noverify.log" || fail "no warning for tls_verify: false"
stop_receiver

start_receiver - "$WORK/rm" --tls "$WORK/server.pem" "$WORK/server.key" --client-ca "$WORK/client.pem"
run mtls "tls_ca_file: \"$WORK/server.pem\", tls_cert_file: \"$WORK/client.pem\", tls_key_file: \"$WORK/client.key\""
delivered mtls
run nocert "tls_ca_file: \"$WORK/server.pem\""
refused nocert
stop_receiver

start_receiver - "$WORK/rn" --tls "$WORK/named.pem" "$WORK/named.key"
run wrongname "tls_ca_file: \"$WORK/named.pem\""
refused wrongname
run servername "tls_ca_file: \"$WORK/named.pem\", tls_server_name: otel.test"
delivered servername
grep -q "\"host\": \"otel.test:$RECV_PORT\"" "$WORK"/rn/*.head || fail "the receiver did not see Host: otel.test"
pass "https: verified with tls_ca_file, refused without, tls_verify false, mutual TLS, tls_server_name"
