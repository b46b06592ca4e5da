#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The `netns` of the netlink inputs as an OTLP attribute (issue 23 §1):
# nflog reading a namespace's group from the root namespace, to the otlp
# output (OTLP/JSON) on a test receiver: every log record carries
# netfilter.netns with the namespace's name, as many as the rule counted.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3
. "$(dirname "$0")/otlp_lib.sh"
G=35
NS=$(unique_name snso)
make_netns "$NS"
ip netns exec "$NS" nft -f - <<NFT || skip "nftables log group not available"
table inet sluice_netns {
	counter udp9999 {}
	chain out { type filter hook output priority 0; policy accept; udp dport 9999 counter name udp9999 log group $G; }
}
NFT
start_receiver - "$WORK/recv"
cat >"$WORK/c.yaml" <<YAML
stacks:
  o: [{plugin: nflog, group: $G, netns: "$NS", qtimeout: 20ms}, decode, json,
      {plugin: otlp, url: "http://127.0.0.1:$RECV_PORT/v1/logs", encoding: json, compression: none,
       batch_size: 8, flush_interval: 100ms}]
YAML
run_sluice_bg "$WORK/sluice.log" -c "$WORK/c.yaml"
wait_for 10 grep -q "netns $NS: joined" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "not joined"; }
ip netns exec "$NS" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(6):
    s.sendto(b"x", ("127.0.0.1", 9999))'
# tagged: "WITH WITHOUT" log records with and without netfilter.netns = NS
tagged() {
	python3 - "$WORK/recv" "$NS" <<'PY'
import glob, json, sys
yes = no = 0
for fn in glob.glob(sys.argv[1] + "/*.body"):
    for rl in json.load(open(fn)).get("resourceLogs", []):
        for sl in rl.get("scopeLogs", []):
            for rec in sl.get("logRecords", []):
                v = [a["value"].get("stringValue") for a in rec.get("attributes", [])
                     if a["key"] == "netfilter.netns"]
                if v == [sys.argv[2]]:
                    yes += 1
                else:
                    no += 1
print(yes, no)
PY
}
counter() {
	nft_counter "$NS" inet sluice_netns udp9999
}
wait_for 20 eval '[ "$(tagged)" = "6 0" ]' ||
	{ cat "$WORK/sluice.log"; fail "log records with/without netfilter.netns: $(tagged), want 6 0"; }
[ "$(counter)" = 6 ] || fail "counter $(counter)"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
pass
