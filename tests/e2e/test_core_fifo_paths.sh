#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Nothing blocks the daemon (issue 19): a FIFO planted where sluice opens
# a file by name is refused with a clear error, it never waits for a
# writer.  Every run is under `timeout -s KILL` so that a hang FAILS the
# test (status 137) instead of hanging it.  Checked:
#   - the configuration file (sluice -t -c FIFO);
#   - syslog's tls_ca_file, tls_cert_file, tls_key_file (sluice -t);
#   - kafka's properties ssl.ca.location (at start, when kafka.so is built);
#   - replay's capture file, geoip's database (at start);
#   - the file of `sluice convert ulogd` and `sluice convert nft --file`,
#     and convert nft's --yaml and --batch outputs (a FIFO nobody reads);
#   - geoip's database replaced by a FIFO, then SIGHUP, with geoip on the
#     input's own thread: the old database is kept, records keep flowing,
#     `sluice stats` answers, and then the configuration replaced by a
#     FIFO and SIGHUP: the reload is refused, the daemon serves on, and
#     SIGTERM ends it.
. "$(dirname "$0")/lib.sh"
need_cmd python3 timeout mkfifo openssl
TF=${SLUICE_TEST_TIME_FACTOR:-1}
T=$((10 * TF))
F="$WORK/fifo"
mkfifo "$F"

# refused NAME PATTERN CMD...: CMD fails in time (not killed) and says PATTERN
refused() {
	local name=$1 pat=$2 rc=0
	shift 2
	timeout -s KILL "$T" "$@" >"$WORK/$name.out" 2>&1 || rc=$?
	[ "$rc" != 137 ] || fail "$name: hung on the FIFO (killed after $T s)"
	[ "$rc" != 0 ] || fail "$name: succeeded with a FIFO: $(cat "$WORK/$name.out")"
	grep -qF -- "$pat" "$WORK/$name.out" || fail "$name: no '$pat' in: $(cat "$WORK/$name.out")"
}

# ---- the configuration file ----
refused config "$F: error: cannot open: not a regular file (a FIFO)" "$SLUICE" -t -c "$F"

# ---- syslog's TLS files (sluice -t) ----
C="$WORK/certs"
mkdir -p "$C"
. "$SRCDIR/tests/e2e/certs_lib.sh"
ca ca >/dev/null 2>&1 && leaf cl ca DNS:client clientAuth >/dev/null 2>&1 ||
	fail "openssl could not make test certificates"
CAP="$SRCDIR/tests/data/raw-mixed.pcap"
tls() {	# tls NAME OPTIONS
	cat >"$WORK/$1.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP"}, decode, logline,
      {plugin: syslog, format: rfc5424, transport: tls, address: "127.0.0.1:1", $2}]
YAML
}
tls ca "tls_ca_file: \"$F\""
refused tls_ca "cannot load CA certificates from $F: not a regular file (a FIFO)" "$SLUICE" -t -c "$WORK/ca.yaml"
grep -qE "ca.yaml:[0-9]+:[0-9]+" "$WORK/tls_ca.out" || fail "tls_ca_file: no file:line:column: $(cat "$WORK/tls_ca.out")"
tls cert "tls_ca_file: \"$C/ca.pem\", tls_cert_file: \"$F\", tls_key_file: \"$C/cl.key\""
refused tls_cert "$F: not a regular file (a FIFO)" "$SLUICE" -t -c "$WORK/cert.yaml"
tls key "tls_ca_file: \"$C/ca.pem\", tls_cert_file: \"$C/cl.pem\", tls_key_file: \"$F\""
refused tls_key "$F: not a regular file (a FIFO)" "$SLUICE" -t -c "$WORK/key.yaml"
# the same files, regular, pass
tls good "tls_ca_file: \"$C/ca.pem\", tls_cert_file: \"$C/cl.pem\", tls_key_file: \"$C/cl.key\""
timeout -s KILL "$T" "$SLUICE" -t -c "$WORK/good.yaml" >"$WORK/good.out" 2>&1 ||
	fail "regular TLS files refused: $(cat "$WORK/good.out")"

# ---- kafka: librdkafka's *.location files (it opens them at start) ----
if [ -e "$BUILDDIR/plugins/kafka.so" ]; then
	cat >"$WORK/kafka.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP"}, decode, json,
      {plugin: kafka, brokers: ["127.0.0.1:1"], topic: t,
       properties: {security.protocol: ssl, ssl.ca.location: "$F"}}]
YAML
	refused kafka "ssl.ca.location: $F is not a regular file or a directory" \
		"$SLUICE" -c "$WORK/kafka.yaml"
fi

# ---- replay's capture ----
cat >"$WORK/replay.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$F"}, decode, logline, {plugin: file, file: "$WORK/r.log"}]
YAML
refused replay "$F: cannot open: not a regular file (a FIFO)" "$SLUICE" -c "$WORK/replay.yaml"

# ---- the converters' input ----
refused convert_ulogd "$F: not a regular file (a FIFO)" "$SLUICE" convert ulogd "$F"
refused convert_nft "$F: not a regular file (a FIFO)" "$SLUICE" convert nft --file "$F"
# and its outputs: a FIFO nobody reads is refused, not waited on
for o in --yaml --batch; do
	refused "convert_nft$o" "$F: a FIFO nobody reads" "$SLUICE" convert nft \
		--file "$SRCDIR/tests/data/nft/mixed.json" $o "$F" --log-file "$WORK/x.log"
done

# ---- geoip ----
if [ ! -e "$BUILDDIR/plugins/geoip.so" ]; then
	pass "configuration, TLS files, capture and converters (geoip.so not built)"
fi
M=$(bash "$SRCDIR/tests/e2e/geoip_fetch.sh" 2>"$WORK/fetch.err") ||
	skip "no MaxMind DB files for the geoip part: $(cat "$WORK/fetch.err")"
DB="$WORK/db/country.mmdb"
mkdir -p "$WORK/db"
geo() {	# geo NAME DB: replay looping on its own thread -> geoip -> json file
	cat >"$WORK/$1.yaml" <<YAML
daemon: {control_socket: "$WORK/ctl.sock"}
stacks:
  g:
    - { plugin: replay, file: "$CAP", loop: 0, pace: original, thread: true }
    - decode
    - { plugin: geoip, databases: ["$2"], fields: { country: country_code } }
    - json
    - { plugin: file, file: "$WORK/out.json" }
YAML
}
geo gstart "$F"
refused geoip_start "$F: cannot open: not a regular file (a FIFO)" "$SLUICE" -c "$WORK/gstart.yaml"

cp "$M/geo-whois-asn-country.mmdb" "$DB"
geo live "$DB"
L="$WORK/live.log"
run_sluice_bg "$L" -c "$WORK/live.yaml"
at_exit "kill -KILL $SLUICE_PID"	# on the old code SIGTERM stays pending
wait_for "$T" grep -q "started:" "$L" || fail "did not start: $(cat "$L")"
lines() { wc -l <"$WORK/out.json" 2>/dev/null || echo 0; }
grows() {	# grows: more records are written after this call
	local n
	n=$(lines)
	wait_for "$T" bash -c "[ \$(wc -l <'$WORK/out.json' 2>/dev/null || echo 0) -gt $n ]"
}
grows || fail "no records: $(tail -3 "$L")"
stats() {
	timeout -s KILL "$T" "$SLUICE" stats --socket "$WORK/ctl.sock" >"$WORK/stats.out" 2>&1 ||
		fail "sluice stats got no answer ($1; status $?): $(tail -3 "$L")"
	grep -q "g.geoip" "$WORK/stats.out" || fail "sluice stats ($1): $(cat "$WORK/stats.out")"
}
stats "before"
mkfifo "$DB.new" && mv "$DB.new" "$DB"
kill -HUP "$SLUICE_PID"
wait_for "$T" grep -q "geoip: warning: $DB: keeping the database opened before" "$L" ||
	fail "no refusal of the FIFO database after SIGHUP: $(tail -5 "$L")"
grep -q "geoip: warning: $DB: cannot open: not a regular file (a FIFO)" "$L" ||
	fail "no reason for the refused database: $(grep geoip "$L" | tail -3)"
grows || fail "no records after the FIFO database was refused: $(tail -3 "$L")"
stats "after the FIFO database"

mkfifo "$WORK/live.yaml.new" && mv "$WORK/live.yaml.new" "$WORK/live.yaml"
kill -HUP "$SLUICE_PID"
wait_for "$T" grep -qF "reload: $WORK/live.yaml: error: cannot open: not a regular file (a FIFO)" "$L" ||
	fail "no refused reload for the FIFO configuration: $(tail -5 "$L")"
stats "after the FIFO configuration"
grows || fail "no records after the refused reload: $(tail -3 "$L")"

kill -TERM "$SLUICE_PID"
rc=0
timeout -s KILL "$T" tail --pid="$SLUICE_PID" -f /dev/null || rc=$?
[ "$rc" = 0 ] || fail "SIGTERM did not end sluice within $T s"
wait "$SLUICE_PID" || fail "sluice exited with $?: $(tail -5 "$L")"
pass "configuration, TLS files, capture, converters and geoip databases: FIFOs refused, never waited on"
