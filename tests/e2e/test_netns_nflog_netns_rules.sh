#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog's `rules: true` with `netns:` (issue 23 §1): a daemon in the root
# namespace attributes the records of a namespace's group to that
# namespace's own rules (its ruleset listed, and its changes followed,
# through sockets made inside it): each record's rule_comment is the
# comment of the rule in that namespace that logged it, also for a rule
# added while running; the root namespace's ruleset has none of them.  The
# ECS documents of the same records carry labels.netns and rule.name.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3
[ -e "$BUILDDIR/plugins/nftrace.so" ] || skip "built without SLUICE_WITH_NFTRACE (no libnftables)"
G=34
NS=$(unique_name snsr)
make_netns "$NS"
ip netns exec "$NS" nft -f - <<NFT || skip "nftables not available"
table inet fns {
	chain out {
		type filter hook output priority 0; policy accept;
		udp dport 5101 counter log group $G prefix "a" comment "ns 5101"
		udp dport 5102 counter log group $G prefix "b" comment "ns 5102"
	}
}
NFT
cat >"$WORK/c.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, netns: "$NS", rules: true, qtimeout: 20ms}
stacks:
  r: [fw, json, {plugin: file, file: "$WORK/out.json"}]
  e: [fw, {plugin: json, schema: ecs}, {plugin: file, file: "$WORK/ecs.json"}]
YAML
"$SLUICE" -t -c "$WORK/c.yaml" || fail "sluice -t refused rules with a named netns"
run_sluice_bg "$WORK/sluice.log" -c "$WORK/c.yaml"
wait_for 10 grep -q "bound NFLOG group $G.*rules" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "did not start"; }
send() {
	ip netns exec "$NS" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[2])):
    s.sendto(b"x", ("127.0.0.1", int(sys.argv[1])))' "$1" "$2"
}
# comments: "COMMENT COUNT" per rule_comment of the records (none: "-")
comments() {
	[ -s "$WORK/out.json" ] || return 0
	python3 -c 'import json, sys, collections
c = collections.Counter(json.loads(l).get("rule_comment", "-") for l in open(sys.argv[1]))
print(" ".join("%s=%d" % (k.replace(" ", "_"), v) for k, v in sorted(c.items())))' "$WORK/out.json"
}
send 5101 2
send 5102 3
want1="ns_5101=2 ns_5102=3"
wait_for 20 eval '[ "$(comments)" = "$want1" ]' ||
	{ cat "$WORK/sluice.log"; fail "records: '$(comments)', want '$want1'"; }

# a rule added in the namespace while running: followed
ip netns exec "$NS" nft add rule inet fns out udp dport 5103 counter log group $G prefix c comment '"ns 5103"'
send 5103 4
want2="ns_5101=2 ns_5102=3 ns_5103=4"
wait_for 20 eval '[ "$(comments)" = "$want2" ]' ||
	{ cat "$WORK/sluice.log"; fail "after a change: '$(comments)', want '$want2'"; }

# the ECS documents: labels.netns and rule.name from the namespace's ruleset
ecs() {
	python3 -c 'import json, sys, collections
c = collections.Counter((d.get("labels", {}).get("netns"), d.get("rule", {}).get("name"))
                        for d in map(json.loads, open(sys.argv[1])))
print(" ".join("%s/%s=%d" % (k[0], str(k[1]).replace(" ", "_"), v) for k, v in sorted(c.items())))' "$WORK/ecs.json"
}
want3="$NS/ns_5101=2 $NS/ns_5102=3 $NS/ns_5103=4"
wait_for 20 eval '[ "$(ecs)" = "$want3" ]' || fail "ECS documents: '$(ecs)', want '$want3'"

# a glob with rules is refused at -t
cat >"$WORK/glob.yaml" <<YAML
stacks:
  r: [{plugin: nflog, group: $G, netns: "/run/netns/x-*", rules: true}, json, {plugin: file, file: "$WORK/g.json"}]
YAML
if "$SLUICE" -t -c "$WORK/glob.yaml" >"$WORK/glob.err" 2>&1; then fail "rules with a glob accepted"; fi
grep -q "not with a netns glob" "$WORK/glob.err" || { cat "$WORK/glob.err"; fail "no reason given"; }
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
pass
