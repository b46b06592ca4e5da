#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nfct's `netns:` (issue 23 §1): one daemon in the root namespace reads the
# conntrack events of two namespaces, one by name and one by path, with two
# instances (b tracks connections: its dump socket is made in the namespace
# too).  Each namespace's NEW events for its UDP flows equal its own
# nft counter of new connections to those ports, and carry its name.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nfct_lib.sh"
need_root
need_cmd ip nft python3
[ -e "$SLUICE_PLUGIN_PATH/nfct.so" ] && [ -e "$SLUICE_PLUGIN_PATH/json.so" ] ||
	skip "nfct or json plugin not built"
A=$(unique_name snca)
B=$(unique_name sncb)
for ns in "$A" "$B"; do
	ct_netns "$ns"
	ip netns exec "$ns" nft -f - <<'NFT'
table inet sluice_ctns {
	counter newflows {}
	chain out { type filter hook output priority 0; udp dport 7000-7999 ct state new counter name newflows; }
}
NFT
done

cat >"$WORK/c.yaml" <<CONF
instances:
  out: { plugin: file, file: $WORK/out.json, flush_interval: 50ms }
stacks:
  a: [{ plugin: nfct, events: [new], netns: "$A" }, json, out]
  b: [{ plugin: nfct, events: [new, destroy], netns: "/run/netns/$B" }, json, out]
CONF
"$SLUICE" -t -c "$WORK/c.yaml" || fail "sluice -t refused the configuration"
run_sluice_bg "$WORK/sluice.log" -c "$WORK/c.yaml"
started() { [ "$(grep -c "conntrack events: new.*netns" "$WORK/sluice.log")" = 2 ]; }
wait_for 10 started || { cat "$WORK/sluice.log"; fail "nfct did not start"; }

# flows NS FIRST COUNT: COUNT UDP flows (one datagram each) to ports FIRST...
flows() {
	ip netns exec "$1" python3 -c '
import socket, sys
first, n = int(sys.argv[1]), int(sys.argv[2])
for p in range(first, first + n):
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", p))' "$2" "$3"
}
counter_of() {
	nft_counter "$1" inet sluice_ctns newflows
}
# records NS: NEW records of UDP flows to 7000-7999 tagged with NS
records() {
	python3 - "$WORK/out.json" "$1" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if (r.get("netns") == sys.argv[2] and "NEW" in r.get("ct_event", "")
            and 7000 <= r.get("orig_dest_port", 0) <= 7999):
        n += 1
print(n)
PY
}
equal() {
	local ns
	for ns in "$A" "$B"; do
		[ "$(records "$ns")" = "$(counter_of "$ns")" ] || return 1
	done
}
flows "$A" 7000 3
flows "$B" 7100 5
wait_for 20 equal || {
	for ns in "$A" "$B"; do echo "$ns: counter $(counter_of "$ns"), records $(records "$ns")"; done
	cat "$WORK/sluice.log"
	fail "records do not equal the counters"
}
[ "$(counter_of "$A")" = 3 ] && [ "$(counter_of "$B")" = 5 ] || fail "unexpected counters"
untagged=$(python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if "netns" not in json.loads(l)))' "$WORK/out.json")
[ "$untagged" = 0 ] || fail "$untagged records without netns"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
pass "two namespaces' conntrack events, each equal to its counter"
