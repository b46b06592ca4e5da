#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog's `netns:` (issue 23 §1): one daemon in the root namespace reads
# the same NFLOG group in five namespaces: two by name, three through a
# glob, one of which is created after the start.  Each namespace's
# records equal its own nft counter and carry its name (`netns`); the
# daemon's threads all stay in the root namespace; a namespace deleted
# while running is left and logged, and the others go on.  With the metrics
# module built, /metrics has each namespace's records (netns label), the
# deleted one gone.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3

G=31
N1=$(unique_name snsa)
N2=$(unique_name snsb)
P=$(unique_name sngl)
make_netns "$N1"
make_netns "$N2"
make_netns "$P-1"
make_netns "$P-2"

# log_rules NS: every UDP packet to port 9999 counted and logged to group $G
log_rules() {
	ip netns exec "$1" nft -f - <<NFT
table inet sluice_netns {
	counter udp9999 {}
	chain out {
		type filter hook output priority 0; policy accept;
		udp dport 9999 counter name udp9999 log group $G
	}
}
NFT
}
log_rules "$N1" || skip "nftables log group not available"
for ns in "$N2" "$P-1" "$P-2"; do log_rules "$ns"; done

METRICS=false
if command -v curl >/dev/null && [ -e "${SLUICE_PLUGIN_PATH%%:*}/metrics_http.so" ]; then
	METRICS=true
	# a free port of the root namespace (other tests' daemons may listen there)
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
{
	if $METRICS; then echo "daemon: { metrics: { listen: \"127.0.0.1:$PORT\" } }"; fi
	cat <<YAML
instances:
  out: {plugin: file, file: "$WORK/out.json"}
stacks:
  one:
    - {plugin: nflog, group: $G, netns: "$N1", qtimeout: 20ms}
    - json
    - out
  two:
    - {plugin: nflog, group: $G, netns: "/run/netns/$N2", qtimeout: 20ms}
    - json
    - out
  glob:
    - {plugin: nflog, group: $G, netns: "/run/netns/$P-*", qtimeout: 20ms}
    - json
    - out
YAML
} >"$WORK/netns.yaml"
"$SLUICE" -t -c "$WORK/netns.yaml" || fail "sluice -t refused the configuration"
run_sluice_bg "$WORK/sluice.log" -c "$WORK/netns.yaml"
started() { [ "$(grep -c "bound NFLOG group $G" "$WORK/sluice.log")" = 3 ]; }
wait_for 10 started || { cat "$WORK/sluice.log"; fail "nflog did not start"; }
for ns in "$N1" "$N2" "$P-1" "$P-2"; do
	grep -q "netns $ns: joined" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "$ns not joined"; }
done

# every thread of the daemon in the root namespace
root_ns=$(readlink /proc/self/ns/net)
for t in /proc/"$SLUICE_PID"/task/*; do
	[ "$(readlink "$t/ns/net")" = "$root_ns" ] || fail "thread ${t##*/} is in $(readlink "$t/ns/net")"
done

# send NS COUNT: COUNT UDP datagrams to port 9999 on the namespace's loopback
send() {
	ip netns exec "$1" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(b"sluice-netns-%d" % i, ("127.0.0.1", 9999))' "$2"
}
counter() {
	nft_counter "$1" inet sluice_netns udp9999
}
# records NS: the records of the output tagged with NS
records() {
	python3 - "$WORK/out.json" "$1" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("netns") == sys.argv[2]:
        n += 1
print(n)
PY
}
# all_equal NS...: each namespace's records equal its counter (and more than none)
all_equal() {
	local ns c
	for ns in "$@"; do
		c=$(counter "$ns")
		[ "$c" -gt 0 ] && [ "$(records "$ns")" = "$c" ] || return 1
	done
}

send "$N1" 3
send "$N2" 4
send "$P-1" 5
send "$P-2" 6

# a namespace matching the glob after the start is joined (within a second)
make_netns "$P-3"
wait_for 10 grep -q "netns $P-3: joined" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "$P-3, made after the start, was not joined"; }
log_rules "$P-3"
send "$P-3" 7
wait_for 20 all_equal "$N1" "$N2" "$P-1" "$P-2" "$P-3" || {
	for ns in "$N1" "$N2" "$P-1" "$P-2" "$P-3"; do
		echo "$ns: counter $(counter "$ns"), records $(records "$ns")"
	done
	cat "$WORK/sluice.log"
	fail "records do not equal the counters"
}

# deleting a namespace while running: left and logged, the others go on
gone=$(counter "$P-2")
ip netns del "$P-2"
wait_for 10 grep -q "netns $P-2: gone" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "the deleted $P-2 was not left"; }
send "$N1" 2
send "$P-1" 3
send "$P-3" 4
wait_for 20 all_equal "$N1" "$N2" "$P-1" "$P-3" || {
	cat "$WORK/sluice.log"
	fail "records do not equal the counters after a namespace was deleted"
}
[ "$(records "$P-2")" = "$gone" ] || fail "$P-2: $(records "$P-2") records, its counter said $gone"
[ "$(counter "$N1")" = 5 ] && [ "$(counter "$P-3")" = 11 ] || fail "unexpected counters"
if $METRICS; then
	curl -sS --max-time 5 -o "$WORK/m.txt" "http://127.0.0.1:$PORT/metrics" || fail "no /metrics"
	# metric NS: the netns series of NS
	metric() { sed -n "s/^sluice_netns_records_total{.*netns=\"$1\"} \([0-9]*\)$/\1/p" "$WORK/m.txt"; }
	for ns in "$N1" "$N2" "$P-1" "$P-3"; do
		[ "$(metric "$ns")" = "$(counter "$ns")" ] ||
			{ cat "$WORK/m.txt"; fail "/metrics: $ns has '$(metric "$ns")', its counter $(counter "$ns")"; }
	done
	[ -z "$(metric "$P-2")" ] || fail "/metrics still has the deleted $P-2"
else
	echo "note: /metrics not checked (no curl or metrics module)"
fi
# every record tagged: no record without netns
untagged=$(python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if "netns" not in json.loads(l)))' "$WORK/out.json")
[ "$untagged" = 0 ] || fail "$untagged records without netns"

kill -0 "$SLUICE_PID" || fail "sluice died"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
pass "5 namespaces, one joined after the start, one deleted while running"
