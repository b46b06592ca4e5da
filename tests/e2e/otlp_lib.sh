# SPDX-License-Identifier: GPL-2.0-or-later
# The otlp output's tests: a receiver (otlp_receiver.py) and a decoder
# independent of sluice (otlp_decode.js on @opentelemetry/otlp-transformer's
# protobufjs root).  Source after lib.sh.
#   otlp_decoder             npm-installs the package once into a cache
#                            (OTLP_NPM_CACHE, default under /var/tmp), sets
#                            OTLP_ROOT_JS; SKIP when npm cannot reach the registry
#   start_receiver NS DIR [ARGS]  a receiver in namespace NS (-: this one)
#                            saving into DIR; RECV_PID, RECV_PORT set
#   decode DIR OUT           every saved request's log records into OUT (JSON lines)
[ -e "$BUILDDIR/plugins/otlp.so" ] || skip "otlp.so not built (SLUICE_WITH_OTLP=OFF)"
OTLP_TRANSFORMER=@opentelemetry/otlp-transformer@0.208.0	# ships build/src/generated/root.js
OTLP_NPM_CACHE=${OTLP_NPM_CACHE:-/var/tmp/sluice-otlp-npm-0.208.0}

otlp_decoder() {
	need_cmd node npm
	OTLP_ROOT_JS=$OTLP_NPM_CACHE/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js
	if [ ! -e "$OTLP_ROOT_JS" ]; then
		mkdir -p "$OTLP_NPM_CACHE"
		(
			exec 8>"$OTLP_NPM_CACHE.lock"	# two tests installing at once
			flock 8
			[ -e "$OTLP_ROOT_JS" ] ||
				timeout 300 npm install --prefix "$OTLP_NPM_CACHE" --no-audit --no-fund \
					"$OTLP_TRANSFORMER" >"$WORK/npm.log" 2>&1
		) || skip "npm cannot install $OTLP_TRANSFORMER (no registry?): $(tail -n 3 "$WORK/npm.log" | tr '\n' ' ')"
	fi
	[ -e "$OTLP_ROOT_JS" ] || fail "$OTLP_TRANSFORMER has no build/src/generated/root.js"
}

start_receiver() {
	local ns="$1" dir="$2"; shift 2
	mkdir -p "$dir"
	rm -f "$dir/port"
	local in=(ip netns exec "$ns")
	[ "$ns" != - ] || in=()
	"${in[@]}" python3 "$SRCDIR/tests/e2e/otlp_receiver.py" "$dir" "$@" >"$dir/receiver.log" 2>&1 &
	RECV_PID=$!
	at_exit "kill $RECV_PID"
	wait_for 10 test -s "$dir/port" || { cat "$dir/receiver.log"; fail "the receiver did not start"; }
	RECV_PORT=$(cat "$dir/port")
}

stop_receiver() {
	kill "$RECV_PID" 2>/dev/null || true
	wait "$RECV_PID" 2>/dev/null || true
}

decode() {
	node "$SRCDIR/tests/e2e/otlp_decode.js" "$OTLP_ROOT_JS" "$1" >"$2" 2>"$WORK/decode.err" ||
		fail "node could not decode the requests in $1: $(head -c 2000 "$WORK/decode.err")"
}

# records_ge DIR N: at least N log records decoded so far (for wait_for)
records_ge() {
	decode "$1" "$WORK/.count" && [ "$(wc -l <"$WORK/.count")" -ge "$2" ]
}

# otlp_nft_log TABLE SADDR PREFIX [RULE]: nft in $B logs (and counts as "logged") UDP from SADDR to port 9999, group $G; RULE is one more rule
otlp_nft_log() {
	local more=""
	[ -z "${4:-}" ] || more=$'\n\t\t'"$4"
	ip netns exec "$B" nft -f - <<NFT || skip "nftables log group not available"
table inet $1 {
	counter logged { }
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr $2 udp dport 9999 counter name logged log group $G prefix "$3 "$more
	}
}
NFT
}

# otlp_sluice: the daemon on $WORK/live.yaml in $B, logging to $WORK/sluice.log, until it bound group $G.
otlp_sluice() {
	ip netns exec "$B" "$SLUICE" -c "$WORK/live.yaml" >"$WORK/sluice.log" 2>&1 &
	SLUICE_PID=$!
	at_exit "kill $SLUICE_PID"
	wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" ||
		{ cat "$WORK/sluice.log"; fail "nflog did not start"; }
}

# otlp_logged TABLE: the packets nft's counter "logged" in TABLE (in $B) saw.
otlp_logged() {
	ip netns exec "$B" nft -j list counter inet "$1" logged |
		python3 -c 'import json,sys; print([o["counter"]["packets"] for o in json.load(sys.stdin)["nftables"] if "counter" in o][0])'
}

# otlp_drain N: N records reach the receiver in $WORK/recv, then the daemon stops, cleanly.
otlp_drain() {
	wait_for 60 records_ge "$WORK/recv" "$1" ||
		{ cat "$WORK/sluice.log"; fail "the receiver has $(wc -l <"$WORK/.count") of $1 records"; }
	kill -TERM "$SLUICE_PID"
	wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
}

# lines_ge FILE N: FILE has at least N lines (for wait_for).
lines_ge() { [ "$(wc -l <"$1")" -ge "$2" ]; }

counter() {
	sed -n "s/^sluice: counters: $2 ([a-z]*):.* $3=\([0-9]*\).*/\1/p" "$1" | tail -n 1
}
