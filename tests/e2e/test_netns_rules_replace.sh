#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog's `rules: true` through full ruleset replacements under traffic, as
# firewalld reloads do (`nft -f` of a file that flushes the ruleset): two
# rulesets log UDP to port 5001 with the same group and prefix at the same
# hook, one from the input chain (comment "v1", verdict accept), the other
# from a regular chain it jumps to (comment "v2", verdict drop), each
# setting its own mark before the log statement, so the mark each record
# carries says which ruleset logged it.  While a sender keeps sending,
# the two files are loaded in turn six times, each after records were
# attributed under the one before.  No record may be attributed to a rule
# of the other ruleset; the ones not attributed are counted in
# rule_unattributed; and after each replacement records are attributed
# again, so both rulesets have records attributed to them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rules_lib.sh"
need_root
need_cmd ip nft python3

rules_netns slrr
cat >"$WORK/v1.nft" <<NFT
flush ruleset
table inet f {
	chain input {
		type filter hook input priority 0; policy accept;
		udp dport 5001 meta mark set 1 log group $G prefix "p" accept comment "v1"
	}
}
NFT
cat >"$WORK/v2.nft" <<NFT
flush ruleset
table inet f {
	chain sub {
		meta mark set 2 log group $G prefix "p" drop comment "v2"
	}
	chain input {
		type filter hook input priority 0; policy accept;
		udp dport 5001 jump sub
	}
}
NFT
ip netns exec "$NS" nft -f "$WORK/v1.nft" || skip "nftables not available"

cat >"$WORK/c.yaml" <<YAML
stacks:
  j:
    - {plugin: nflog, group: $G, rules: true, qtimeout: 100ms}
    - decode
    - json
    - {plugin: file, file: "$WORK/out.json"}
YAML
rules_sluice_start

# the sender: until told to stop, then how many it sent
ip netns exec "$NS" python3 - "$WORK" <<'PY' &
import os, socket, sys, time
work = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
n = 0
while not os.path.exists(f"{work}/stop"):
    s.sendto(b"replace", ("127.0.0.1", 5001))
    n += 1
    time.sleep(0.0005)
open(f"{work}/sent.tmp", "w").write(str(n))
os.rename(f"{work}/sent.tmp", f"{work}/sent")
PY
SENDER=$!
at_exit "kill $SENDER"
at_exit "touch $WORK/stop"

# nflog's counter NAME from the counters line SIGUSR1 makes sluice log
counter() {
	grep "counters: j.nflog (nflog):" "$WORK/sluice.log" | tail -1 | sed -n "s/.* $1=\([0-9]*\).*/\1/p"
}
counters_now() {
	local lines
	lines=$(grep -c "counters: j.nflog" "$WORK/sluice.log")
	kill -USR1 "$SLUICE_PID"
	wait_for 10 eval '[ "$(grep -c "counters: j.nflog" "$WORK/sluice.log")" -gt '"$lines"' ]'
}
attributed() {
	counters_now || return 1
	echo $(($(counter in) - $(counter rule_unattributed) - $(counter rule_ambiguous)))
}
# records attributed grew by 50 since $1
grew() { local a; a=$(attributed) && [ "$a" -ge $(($1 + 50)) ]; }

# records of ruleset V (its mark) attributed to its rule, in the file so far
attributed_to() {
	grep -s "\"mark\":$1[,}]" "$WORK/out.json" | grep -c "\"rule_comment\":\"v$1\"" || true
}
# more of them than $2: the replacement is followed (growth of the counters
# alone could be the old ruleset's records still queued)
more_to() { [ "$(attributed_to "$1")" -gt "$2" ]; }

base=$(attributed) || fail "no counters"
wait_for 30 grew "$base" || { cat "$WORK/sluice.log"; fail "no record attributed"; }
for v in 2 1 2 1 2 1; do
	had=$(attributed_to $v)
	ip netns exec "$NS" nft -f "$WORK/v$v.nft" || fail "nft -f v$v.nft"
	wait_for 30 more_to $v "$had" ||
		{ tail -5 "$WORK/sluice.log"; fail "no record of v$v attributed to it after loading it"; }
done
touch "$WORK/stop"
wait_for 20 test -e "$WORK/sent" || fail "the sender did not stop"
sent=$(cat "$WORK/sent")
all_in() { counters_now && [ $(($(counter in) + $(counter lost))) -ge "$sent" ]; }
wait_for 30 all_in || { tail -3 "$WORK/sluice.log"; fail "sent $sent, sluice did not get them all"; }
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "sluice exited with $?"
unattributed=$(counter rule_unattributed)
ambiguous=$(counter rule_ambiguous)
[ "$ambiguous" = 0 ] || fail "rule_ambiguous=$ambiguous"

python3 - "$WORK/out.json" "$unattributed" <<'PY' || fail "a record was attributed to a rule not in force"
import json, sys
want = {1: dict(rule_chain="input", rule_comment="v1", rule_verdict="accept"),
        2: dict(rule_chain="sub", rule_comment="v2", rule_verdict="drop")}
n = {1: 0, 2: 0}
none = 0
for line in open(sys.argv[1]):
    rec = json.loads(line)
    if "rule_handle" not in rec:
        assert not any(k.startswith("rule_") for k in rec), rec
        none += 1
        continue
    got = {k: rec[k] for k in ("rule_chain", "rule_comment", "rule_verdict")}
    assert got == want[rec["mark"]], ("mark", rec["mark"], got)
    n[rec["mark"]] += 1
assert none == int(sys.argv[2]), (none, sys.argv[2])
assert n[1] >= 50 and n[2] >= 50, n
print(f"attributed: {n[1]} to v1, {n[2]} to v2; {none} unattributed")
PY
pass "$sent packets through 6 replacements: none attributed to a rule not in force"
