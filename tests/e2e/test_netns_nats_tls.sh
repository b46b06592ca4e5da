#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The nats output over TLS, its tls_* options mapped onto libnats: a
# JetStream server that requires TLS and a client certificate (verify:
# true), certificates from openssl.  With the right CA and a client
# certificate, live NFLOG records reach the stream, as many as nft counted,
# equal to the json file's lines.  With another CA the server is not
# trusted: the output says it is not connected, with libnats' reason, and
# the stream gets nothing.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 openssl
G=27
N=300
netns_pair slt 95
NATS_NETNS=$B
. "$(dirname "$0")/nats_lib.sh"
C="$WORK/certs"
mkdir -p "$C"
. "$(dirname "$0")/certs_lib.sh"
ca ca
ca other
leaf server ca "DNS:localhost,IP:127.0.0.1" serverAuth
leaf client ca "DNS:sluice" clientAuth
export NATS_TLS_CA="$C/ca.pem" NATS_TLS_CERT="$C/client.pem" NATS_TLS_KEY="$C/client.key"

nats_nft_log sluice_natst_e2e 10.95.0.1 sluice-natst

NATS_EXTRA="tls { cert_file: \"$C/server.pem\", key_file: \"$C/server.key\", ca_file: \"$C/ca.pem\", verify: true }"
nats_single 120

cat >"$WORK/live.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  n: [fw, decode, json, {plugin: nats, servers: [tls://127.0.0.1:4222], subject: "fw.{nflog_group}",
      tls_ca_file: "$C/ca.pem", tls_cert_file: "$C/client.pem", tls_key_file: "$C/client.key",
      flush_interval: 100ms}]
  f: [fw, decode, json, {plugin: file, file: "$WORK/ref.json"}]
  # the same server, a CA that did not sign its certificate
  x: [fw, decode, json, {plugin: nats, servers: [tls://127.0.0.1:4222], subject: "other.{nflog_group}",
      tls_ca_file: "$C/other.pem", tls_cert_file: "$C/client.pem", tls_key_file: "$C/client.key",
      flush_interval: 100ms, max_retries: 1, retry_min: 100ms, retry_max: 100ms}]
YAML
L="$WORK/sluice.log"
nats_sluice 1

ip netns exec "$A" python3 - "$N" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.95.0.1", 30000))
for i in range(int(sys.argv[1])):
    s.sendto(b"natst-%d" % i, ("10.95.0.2", 9999))
    if i % 50 == 49:
        time.sleep(0.005)
PY
logged=$(nft_count "$B" sluice_natst_e2e logged)
[ "$logged" = $N ] || fail "nft counted $logged of $N datagrams"
wait_for 30 stream_has "$logged" ||
	{ cat "$L"; fail "the stream holds $(nats_cli 4222 count LOGS), nft counted $logged"; }
wait_for 30 grep -qs "x.nats: warning: not connected to a NATS server (.*[a-zA-Z]" "$L" ||
	{ cat "$L"; fail "the untrusted server was not reported"; }
wait_for 10 lines_ge "$WORK/ref.json" "$logged" || fail "the file has $(wc -l <"$WORK/ref.json") lines"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$L"; fail "sluice exited with an error"; }
grep -E "n.nats .*(dropped|dropped_records)=[1-9]" "$L" && fail "records lost over TLS"
# the untrusted one delivered nothing, and counted every record it had
[ "$(counter "$L" x.nats published)" = 0 ] || fail "published through an untrusted server"
[ "$(counter "$L" x.nats dropped_records)" = "$logged" ] ||
	fail "x.nats: dropped_records $(counter "$L" x.nats dropped_records), expected $logged"
nats_cli 4222 dump LOGS "$WORK/stream.json" || fail "cannot read the stream back"
python3 "$SRCDIR/tests/e2e/nats_compare.py" "$WORK/ref.json" "$WORK/stream.json" "fw.$G" ordered ||
	fail "the stream differs from the json file"
pass "over TLS with a client certificate: nft counted $logged, the stream holds each once; another CA: not connected, all counted"
