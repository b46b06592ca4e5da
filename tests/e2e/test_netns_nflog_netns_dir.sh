#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog's `netns:` glob over a directory that does not exist at start (as
# /run/netns before the first `ip netns add`, /var/run/docker/netns before
# docker): the start succeeds with a warning, the directory is looked for
# and watched once made, a namespace bind-mounted there is joined and its
# records carry the file's name; the directory removed, its member is left
# and the directory looked for again; made again, the member is joined again.
# A reload replacing the instance fails (the group is held in the member's
# namespace until the new one has started) and the running one goes on.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 mount umount

G=32
NS=$(unique_name snsd)
make_netns "$NS"
ip netns exec "$NS" nft -f - <<NFT || skip "nftables log group not available"
table inet sluice_netns {
	counter udp9999 {}
	chain out {
		type filter hook output priority 0; policy accept;
		udp dport 9999 counter name udp9999 log group $G
	}
}
NFT
D="$WORK/nsdir"
cat >"$WORK/c.yaml" <<YAML
stacks:
  glob: [{plugin: nflog, group: $G, netns: "$D/t-*", qtimeout: 20ms}, json, {plugin: file, file: "$WORK/out.json"}]
YAML
run_sluice_bg "$WORK/sluice.log" -c "$WORK/c.yaml"
wait_for 10 grep -q "bound NFLOG group $G" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "did not start without the directory"; }
grep -q "cannot watch $D: No such file or directory (looked for every second)" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "no warning about the missing directory"; }

# bind NAME: the namespace on $D/NAME, as `ip netns add` does
bind() {
	mkdir -p "$D"
	touch "$D/$1"
	mount --bind "/run/netns/$NS" "$D/$1" || skip "cannot bind-mount a namespace"
	at_exit "umount $D/$1"
}
send() {
	ip netns exec "$NS" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(b"x", ("127.0.0.1", 9999))' "$1"
}
counter() {
	nft_counter "$NS" inet sluice_netns udp9999
}
records() {
	[ -s "$WORK/out.json" ] || { echo 0; return; }
	python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l).get("netns") == sys.argv[2]))' "$WORK/out.json" "$1"
}

bind t-1
wait_for 10 grep -q "netns t-1: joined" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "t-1 not joined once the directory was made"; }
send 4
equal1() { [ "$(records t-1)" = "$(counter)" ]; }
wait_for 20 equal1 || { cat "$WORK/sluice.log"; fail "t-1: $(records t-1) records, counter $(counter)"; }

# the directory removed: its member left, the directory looked for again
umount "$D/t-1"
rm -rf "$D"
wait_for 10 grep -q "netns t-1: gone" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "t-1 not left when the directory went"; }
grep -q "the directory is gone" "$WORK/sluice.log" || fail "the directory's removal not logged"

# made again: joined again under another name
bind t-2
wait_for 10 grep -q "netns t-2: joined" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "t-2 not joined once the directory was made again"; }
send 3
equal2() { [ "$(records t-2)" = 3 ] && [ "$(counter)" = 7 ]; }
wait_for 20 equal2 || { cat "$WORK/sluice.log"; fail "t-2: $(records t-2) records, want 3"; }
[ "$(records t-1)" = 4 ] || fail "t-1: $(records t-1) records, want 4"

# a reload that changes the instance: the new one would need the group the
# running one holds in t-2, so its start fails, the reload with it, and the
# running instance goes on (not a new one that joined nothing)
sed -i 's/qtimeout: 20ms/qtimeout: 30ms/' "$WORK/c.yaml"
kill -HUP "$SLUICE_PID"
wait_for 10 grep -q "which it would replace, holds the same group $G" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "the reload did not fail as it should"; }
send 2
equal3() { [ "$(records t-2)" = 5 ] && [ "$(counter)" = 9 ]; }
wait_for 20 equal3 || { cat "$WORK/sluice.log"; fail "after the reload: t-2 $(records t-2) records, want 5"; }
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
pass
