#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Secrets in the configuration are never printed (docs/SECURITY.md,
# "Secrets in the configuration").  A configuration with distinctive
# secrets: clickhouse's password and a user:password@ in its url, sql dsns
# with password='...' (libpq's keyword form) and postgresql://u:PASSWORD@
# (the URI form, malformed so that libpq quotes it whole in its error),
# sslpassword= in a URI query, kafka properties sasl.password and
# ssl.key.password.  None of them may appear in:
#  1. `sluice -t` (the tree shows ******** and keeps the rest: user, host,
#     other properties);
#  2. --describe and --describe-all in every format (which say which
#     options are secret);
#  3. a configuration error whose library message repeats the value
#     (librdkafka quoting a refused property value holding password=);
#  4. the log of a running daemon (libpq's error quoting the URI, the
#     failed INSERTs and connects), `sluice stats` and `sluice stats --json`.
# No server runs: the outputs fail to connect, which is what logs.
. "$(dirname "$0")/lib.sh"
need_cmd python3
for p in clickhouse sql kafka replay decode json; do
	[ -e "$SLUICE_PLUGIN_PATH/$p.so" ] || skip "$p plugin not built"
done
CAP="$SRCDIR/tests/data/nflog-mixed.pcap"
[ -f "$CAP" ] || skip "no captures in tests/data"
SOCK="$WORK/ctl.sock"
SECRETS=(S3cr3t-CH-password S3cr3t-CH-url "S3cr3t PG-word" S3cr3t-PG-uri S3cr3t-PG-ssl
	S3cr3t-KAFKA-sasl S3cr3t-KAFKA-key S3cr3t-KAFKA-echo)

# no_secret FILE WHAT: none of the secrets (nor a piece of one) in FILE
no_secret() {
	local s
	for s in "${SECRETS[@]}" S3cr3t; do
		! grep -qF -- "$s" "$1" || { cat "$1"; fail "$2 shows the secret '$s'"; }
	done
}

cat >"$WORK/s.yaml" <<YAML
daemon: {control_socket: $SOCK}
instances:
  cap: {plugin: replay, file: "$CAP", pace: original, loop: 0}
stacks:
  ch: [cap, decode, {plugin: clickhouse, table: t, user: bob, password: S3cr3t-CH-password,
       url: "http://bob:S3cr3t-CH-url@127.0.0.1:1", max_retries: 0, flush_interval: 100ms}]
  pg: [cap, decode, {plugin: sql, driver: postgresql, max_retries: 0, flush_interval: 100ms,
       dsn: "host=127.0.0.1 port=1 user=u password='S3cr3t PG-word' dbname=x"}]
  pu: [cap, decode, {plugin: sql, driver: postgresql, table: t2, max_retries: 0, flush_interval: 100ms,
       dsn: "postgresql://u:S3cr3t-PG-uri@[::1/db?sslpassword=S3cr3t-PG-ssl"}]
  k: [cap, decode, json, {plugin: kafka, brokers: [127.0.0.1:1], topic: t, stop_timeout: 0,
      properties: {sasl.password: S3cr3t-KAFKA-sasl, client.id: visible-client,
                   ssl.key.password: "S3cr3t-KAFKA-key"}}]
YAML

# ---- 1. sluice -t ----
"$SLUICE" -t -c "$WORK/s.yaml" >"$WORK/t.out" 2>&1 || { cat "$WORK/t.out"; fail "sluice -t failed"; }
no_secret "$WORK/t.out" "sluice -t"
for want in "user=bob password=********" "url=http://bob:********@127.0.0.1:1" \
	"password=******** dbname=x" "postgresql://u:********@[::1/db?sslpassword=********" \
	"properties={sasl.password:********,client.id:visible-client,ssl.key.password:********}"; do
	grep -qF -- "$want" "$WORK/t.out" || { cat "$WORK/t.out"; fail "sluice -t: no '$want'"; }
done

# ---- 2. --describe: secret options say so ----
for p in clickhouse sql kafka; do
	"$SLUICE" --describe "$p" >"$WORK/d-$p.out" 2>&1 || fail "--describe $p failed"
	no_secret "$WORK/d-$p.out" "--describe $p"
done
grep -A4 "^  password (string)" "$WORK/d-clickhouse.out" | grep -q "secret: its value is shown as \*\*\*\*\*\*\*\*" ||
	{ cat "$WORK/d-clickhouse.out"; fail "--describe clickhouse: password is not said to be secret"; }
grep -A4 "^  properties (map)" "$WORK/d-kafka.out" | grep -q "secret: the value of a name containing pass" ||
	{ cat "$WORK/d-kafka.out"; fail "--describe kafka: properties is not said to be secret"; }
for f in text man markdown; do
	"$SLUICE" --describe-all --format=$f >"$WORK/all.$f" 2>&1 || fail "--describe-all --format=$f failed"
done
grep -qF '| `password` | string (secret) |' "$WORK/all.markdown" || fail "markdown: password is not (secret)"
grep -q '^Secret: its value is shown as' "$WORK/all.man" || fail "man: no Secret: line"

# ---- 3. a library's error repeating a value ----
sed 's/client.id: visible-client/compression.type: "password=S3cr3t-KAFKA-echo"/' "$WORK/s.yaml" >"$WORK/e.yaml"
"$SLUICE" -t -c "$WORK/e.yaml" >"$WORK/e.out" 2>&1 && { cat "$WORK/e.out"; fail "a refused property passed"; }
grep -q "e.yaml:1[0-9]:[0-9]*: error: kafka: option 'properties/compression.type': .*password=\*\*\*\*\*\*\*\*" \
	"$WORK/e.out" || { cat "$WORK/e.out"; fail "no error at the refused property"; }
no_secret "$WORK/e.out" "a configuration error"

# ---- 4. a running daemon: its log and sluice stats ----
run_sluice_bg "$WORK/run.log" -c "$WORK/s.yaml"
wait_for 20 grep -qs "control socket $SOCK: listening" "$WORK/run.log" ||
	fail "no control socket: $(cat "$WORK/run.log")"
# libpq quotes the malformed URI, password and all, in its error
wait_for 20 grep -qsF 'in URI: "postgresql://u:********@[::1/db?sslpassword=********"' "$WORK/run.log" ||
	{ cat "$WORK/run.log"; fail "pu.sql: no masked libpq error"; }
wait_for 20 grep -qs "pg.sql: warning: cannot connect" "$WORK/run.log" ||
	{ cat "$WORK/run.log"; fail "pg.sql never tried to connect"; }
wait_for 30 grep -qs "ch.clickhouse: warning: INSERT of .* failed" "$WORK/run.log" ||
	{ cat "$WORK/run.log"; fail "clickhouse never tried an INSERT"; }
"$SLUICE" stats --socket "$SOCK" >"$WORK/stats.out" 2>&1 || { cat "$WORK/stats.out"; fail "sluice stats failed"; }
"$SLUICE" stats --socket "$SOCK" --json >"$WORK/stats.json" 2>&1 || fail "sluice stats --json failed"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$WORK/stats.json" || fail "stats --json is no JSON"
grep -q "ch.clickhouse" "$WORK/stats.out" || { cat "$WORK/stats.out"; fail "stats: no ch.clickhouse"; }
no_secret "$WORK/stats.out" "sluice stats"
no_secret "$WORK/stats.json" "sluice stats --json"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "the daemon did not exit cleanly: $(tail -5 "$WORK/run.log")"
no_secret "$WORK/run.log" "the daemon's log"
pass "no secret in -t, --describe, errors, the log or stats"
