#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Live packets into the systemd journal: nftables in a namespace logs UDP,
# ICMP and TCP (some to port 22) over IPv4 and IPv6 to an NFLOG group;
# nflog -> decode -> logline -> journal runs beside nflog -> decode -> json
# -> file and nflog -> decode -> logline -> file, all inside a mount
# namespace with a private systemd-journald.  Read back with journalctl:
# every packet nft counted is one entry, its fields are the json output's
# record (keys in upper case, values as json wrote them, the registered
# community_id too), its MESSAGE the logline text, and
# `journalctl -t sluice DEST_PORT=22` finds exactly the packets to port 22.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/journal_lib.sh"
E2E=$(dirname "$0")
G=7
journal_netns_start sljo 97
journald_start
ip netns exec "$B" nft -f - <<NFT || skip "nftables log group not available"
table inet sluice_e2e {
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr 10.97.0.1 meta l4proto { icmp, tcp, udp } counter log group $G prefix "sluice-test "
		ip6 saddr fd97::1 meta l4proto { tcp, udp } counter log group $G prefix "sluice-test "
		ip6 saddr fd97::1 icmpv6 type echo-request counter log group $G prefix "sluice-test "
	}
	chain ssh {
		type filter hook input priority -1; policy accept;
		tcp dport 22 counter
	}
}
NFT
has_cid=false
SLUICE_PLUGIN_PATH=$SLUICE_PLUGIN_PATH "$SLUICE" --describe decode | grep -q '^  community_id ' && has_cid=true
cat >"$WORK/j.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
  dec: {plugin: decode, community_id: $has_cid}
stacks:
  j: [fw, dec, json, {plugin: file, file: "$WORK/live.json", flush_interval: 50ms}]
  t: [fw, dec, logline, {plugin: file, file: "$WORK/live.txt", flush_interval: 50ms}]
  jn: [fw, dec, logline, {plugin: journal}]
YAML
"$SLUICE" -t -c "$WORK/j.yaml" >/dev/null || fail "sluice -t refused the configuration"
journal_sluice_start
# 16 packets of mixed traffic, then 3 SYNs to port 22 per IP version (closed: one SYN each)
ip netns exec "$A" python3 "$E2E/send_mixed.py" 10.97.0.2 fd97::2 sluice-e2e
ip netns exec "$A" python3 - <<'PY'
import socket
for dst, fam in (("10.97.0.2", socket.AF_INET), ("fd97::2", socket.AF_INET6)):
    for _ in range(3):
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect((dst, 22))
        except OSError:
            pass
        s.close()
PY
counts=$(ip netns exec "$B" nft list table inet sluice_e2e | sed -n 's/.*counter packets \([0-9]*\) .*/\1/p')
sent=$(echo "$counts" | head -3 | awk '{ s += $1 } END { print s + 0 }')
ssh=$(echo "$counts" | tail -1)
wait_for 10 have_entries "$sent" || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || true
wait_for 10 have_entries "$sent" || true	# what journald has yet to read
jctl -t sluice -o json >"$WORK/journal.json" || fail "journalctl cannot read the journal"
jctl -t sluice -o json DEST_PORT=22 >"$WORK/ssh.json" || fail "journalctl cannot query DEST_PORT=22"
n=$(wc -l <"$WORK/journal.json")
[ "$sent" -ge 22 ] && [ "$ssh" -ge 6 ] && [ "$n" = "$sent" ] ||
	{ cat "$WORK/sluice.log"; fail "$n journal entries, nft counted $sent packets ($ssh to port 22; 22 sent)"; }
python3 "$E2E/journal_compare.py" "$WORK/live.json" "$WORK/live.txt" "$WORK/journal.json" sluice 6 ||
	fail "journal entries differ from the json output"
n22=$(wc -l <"$WORK/ssh.json")
j22=$(grep -c '"dest_port":22[,}]' "$WORK/live.json" || true)
[ "$n22" = "$ssh" ] && [ "$j22" = "$ssh" ] ||
	fail "journalctl DEST_PORT=22 found $n22 entries, json has $j22 such records, nft counted $ssh"
python3 - "$WORK/ssh.json" <<'PY' || fail "DEST_PORT=22 found an entry of another port"
import json, sys
for line in open(sys.argv[1]):
    assert json.loads(line)["DEST_PORT"] == "22"
PY
pass "$sent packets counted by nft: $n journal entries equal to the json output, $n22 found by DEST_PORT=22"
