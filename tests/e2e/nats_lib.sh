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
	at_exit "kill -CONT $! 2>/dev/null; kill $!"
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

# nats_cli PORT ARGS...: nats_client.py against 127.0.0.1:PORT in the namespace.
nats_cli() { local port="$1"; shift; nats_ns python3 "$NATS_CLIENT" "127.0.0.1:$port" "$@"; }

# nft_count NS TABLE COUNTER: packets the named counter saw.
nft_count() {
	ip netns exec "$1" nft -j list counter inet "$2" "$3" |
		python3 -c 'import json,sys; print([o["counter"]["packets"] for o in json.load(sys.stdin)["nftables"] if "counter" in o][0])'
}

# counter LOG INSTANCE NAME: a counter from the daemon's last "counters:" line.
counter() {
	sed -n "s/^sluice: counters: $2 ([a-z]*):.* $3=\([0-9]*\).*/\1/p" "$1" | tail -n 1
}
