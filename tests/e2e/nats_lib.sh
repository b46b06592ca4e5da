# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the nats output's tests: Debian's nats-server with JetStream
# on loopback in the namespace NATS_NETNS (data in the test's $WORK,
# started here, stopped by PID at exit), and nats_client.py, a text-protocol
# client independent of libnats, for JetStream's API.  Source after lib.sh.
[ -e "$SLUICE_PLUGIN_PATH/nats.so" ] || skip "nats.so not built (SLUICE_WITH_NATS=OFF?)"
need_cmd nats-server python3
NATS_CLIENT="$SRCDIR/tests/e2e/nats_client.py"

nats_ns() { ip netns exec "$NATS_NETNS" "$@"; }

# nats_start NAME PORT [CLUSTER_PORT ROUTE_PORT...]: a server named NAME
# listening on 127.0.0.1:PORT, JetStream in $WORK/NAME; with a cluster port,
# a member of cluster "sl" routed to every ROUTE_PORT.  NATS_PID_<NAME> is
# its PID.  $NATS_EXTRA, when set, is added to its configuration (tls {...}).
nats_start() {
	local name="$1" port="$2" conf="$WORK/$1.conf" routes="" p
	shift 2
	mkdir -p "$WORK/$name"
	cat >"$conf" <<CONF
server_name: $name
listen: 127.0.0.1:$port
jetstream { store_dir: "$WORK/$name" }
${NATS_EXTRA:-}
CONF
	if [ $# -gt 0 ]; then
		local cport="$1"
		shift
		for p in "$@"; do routes="$routes${routes:+, }\"nats-route://127.0.0.1:$p\""; done
		cat >>"$conf" <<CONF
cluster { name: sl, listen: 127.0.0.1:$cport, routes: [$routes] }
CONF
	fi
	# not through a function: ip execs, so $! is the server itself
	ip netns exec "$NATS_NETNS" nats-server -c "$conf" >"$WORK/$name.log" 2>&1 &
	eval "NATS_PID_$name=$!"
	NATS_PIDS="${NATS_PIDS:-} $!"
	at_exit "nats_stop $!"
}

# nats_stop PID: the server ended, and gone before the work folder is removed
# (JetStream still writes its store while it shuts down); -9 after 10 s.
nats_stop() {
	kill -CONT "$1" 2>/dev/null
	kill "$1" 2>/dev/null || return 0
	local i
	for i in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null || true
}

# nats_ready PORT: JetStream answers on PORT (within a generous deadline).
nats_ready() {
	nats_js_up() {
		local p
		for p in $NATS_PIDS; do	# a server that exited (a bad config) will not come
			kill -0 "$p" 2>/dev/null || { cat "$WORK"/*.log; fail "nats-server $p exited"; }
		done
		nats_ns python3 "$NATS_CLIENT" "127.0.0.1:$1" ready 2>/dev/null
	}
	wait_for 30 nats_js_up "$1" || { cat "$WORK"/*.log; fail "JetStream on port $1 did not come up"; }
}

# nats_single MAX_AGE: one server n1 on port 4222, its stream LOGS on "fw.>" (1 replica).
nats_single() {
	nats_start n1 4222
	nats_ready 4222
	nats_cli 4222 create LOGS "fw.>" 1 "$1" >/dev/null || fail "cannot create the stream"
}

# nats_cli PORT ARGS...: nats_client.py against 127.0.0.1:PORT in the namespace.
nats_cli() { local port="$1"; shift; nats_ns python3 "$NATS_CLIENT" "127.0.0.1:$port" "$@"; }

# nats_nft_log TABLE SADDR PREFIX: nft in $B logs (and counts as "logged") UDP from SADDR to port 9999, group $G.
nats_nft_log() {
	ip netns exec "$B" nft -f - <<NFT || skip "nftables log group not available"
table inet $1 {
	counter logged { }
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr $2 udp dport 9999 counter name logged log group $G prefix "$3 "
	}
}
NFT
}

# nats_sluice N: the daemon on $WORK/live.yaml in $B, logging to $L, until its Nth start bound group $G.
nats_sluice() {
	ip netns exec "$B" "$SLUICE" -c "$WORK/live.yaml" >>"$L" 2>&1 &
	SLUICE_PID=$!
	at_exit "kill $SLUICE_PID"
	bound() { [ "$(grep -c "bound NFLOG group $G" "$L")" -ge "$1" ]; }
	wait_for 10 bound "$1" || { cat "$L"; fail "nflog did not start"; }
}

# nats_send NET TAG FIRST COUNT: datagrams TAG-FIRST.. from NET.1 (in $A) to NET.2:9999, a little paced.
nats_send() {
	ip netns exec "$A" python3 - "$@" <<'PY'
import socket, sys, time
net, tag, first, n = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((net + ".1", 30000))
for i in range(first, first + n):
    s.sendto(b"%s-%d" % (tag, i), (net + ".2", 9999))
    if i % 50 == 49:
        time.sleep(0.005)
PY
}

# stream_has N [PORT]: the stream LOGS holds N messages (asked on PORT, default 4222).
stream_has() { [ "$(nats_cli "${2:-4222}" count LOGS 2>/dev/null)" = "$1" ]; }

# lines_ge FILE N: FILE has at least N lines (for wait_for).
lines_ge() { [ "$(wc -l <"$1")" -ge "$2" ]; }

# nft_count NS TABLE COUNTER: packets the named counter saw.
nft_count() {
	ip netns exec "$1" nft -j list counter inet "$2" "$3" |
		python3 -c 'import json,sys; print([o["counter"]["packets"] for o in json.load(sys.stdin)["nftables"] if "counter" in o][0])'
}

# counter LOG INSTANCE NAME: a counter from the daemon's last "counters:" line.
counter() {
	sed -n "s/^sluice: counters: $2 ([a-z]*):.* $3=\([0-9]*\).*/\1/p" "$1" | tail -n 1
}
