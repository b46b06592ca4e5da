#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nftrace against nft monitor trace.  Namespace B has a ruleset of a raw
# prerouting chain setting nftrace for packets from A, an input chain
# (policy drop) that jumps to a user chain, which accepts TCP to port 22,
# returns ICMP echo requests and falls off its end for UDP (which meets
# input's policy).  `nft -a monitor trace` and sluice (nftrace -> decode ->
# logline -> file, -> json -> file, -> pcap) listen at the same time while A sends
# pings (IPv4 and IPv6), TCP SYNs and UDP datagrams; every record sluice wrote must equal
# the line nft printed (trace id, family, table, chain, kind, rule handle,
# verdict, jump target, packet addresses, and the rule's text exactly as nft
# prints it), the pcap must hold the traced packets as tcpdump reads them,
# and a rule inserted while they run (unknown to nft 1.0.6) must have the
# text `nft -a list chain` gives it.
. "$(dirname "$0")/lib.sh"
need_root
[ -e "$BUILDDIR/plugins/nftrace.so" ] || skip "built without SLUICE_WITH_NFTRACE"
need_cmd ip nft python3 tcpdump

netns_pair slnt 41

ip netns exec "$B" nft -f - <<'NFT' || skip "nftables not available"
table inet sl_trace {
	set traced {
		type ipv4_addr
		elements = { 10.41.0.1 }
	}
	chain raw {
		type filter hook prerouting priority -300; policy accept;
		ip saddr @traced meta nftrace set 1
		ip6 saddr fd41::1 icmpv6 type echo-request meta nftrace set 1
	}
	chain uc {
		meta l4proto { tcp, udp } th dport != 53 counter comment "tcp or udp"
		tcp dport 22 counter accept comment "ssh ok"
		icmp type echo-request counter return comment "pings back"
	}
	chain input {
		type filter hook input priority 0; policy drop;
		jump uc
		ip protocol icmp counter
	}
}
NFT

cat >"$WORK/c.yaml" <<YAML
stacks:
  text:
    - nftrace
    - decode
    - logline
    - {plugin: file, file: "$WORK/out.txt"}
  json:
    - nftrace
    - decode
    - json
    - {plugin: file, file: "$WORK/out.json"}
  pcap:
    - nftrace
    - {plugin: pcap, file: "$WORK/out.pcap"}
YAML
ip netns exec "$B" nft -a monitor trace >"$WORK/nft.txt" 2>&1 &
NFT_PID=$!
at_exit "kill $NFT_PID"
ip netns exec "$B" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
started() { grep -q 'listening to nftables trace events' "$WORK/sluice.log"; }
wait_for 10 started || { cat "$WORK/sluice.log"; fail "nftrace did not start"; }
# nft monitor subscribes as it starts: until its netlink socket (port id:
# its PID) is in the trace group (NFNLGRP_NFTRACE 9: bit 0x100).
nft_subscribed() {
	local sk eth pid groups rest
	while read -r sk eth pid groups rest; do
		[ "$pid" = "$NFT_PID" ] && ((0x$groups & 0x100)) && return 0
	done < <(ip netns exec "$B" cat /proc/net/netlink)
	return 1
}
wait_for 10 nft_subscribed || fail "nft monitor trace did not subscribe"

ip netns exec "$A" ping -c 3 -i 0.2 -W 1 10.41.0.2 >/dev/null 2>&1 || true
ip netns exec "$A" ping -6 -c 2 -i 0.2 -W 1 fd41::2 >/dev/null 2>&1 || true
ip netns exec "$A" python3 - <<'PY'
import socket
for _ in range(2):
    s = socket.socket()
    s.settimeout(1)
    try:
        s.connect(("10.41.0.2", 22))   # accepted by the rule, refused by the host (RST)
    except OSError:
        pass
    s.close()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(2):
    u.sendto(b"trace me", ("10.41.0.2", 9999))
PY

# A rule added while both run: its text must come from a new dump.
ip netns exec "$B" nft insert rule inet sl_trace uc udp dport 9998 counter drop comment '"added later"'
ip netns exec "$A" python3 -c '
import socket
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"late", ("10.41.0.2", 9998))'

# 3 pings x 8 lines, 2 SYNs x 7, 2 UDP x 7 (counted from the ruleset; the
# end of uc that UDP reaches comes as a rule-less event nft prints nothing for),
# 6 for the datagram the added rule drops (inserted first in uc), 2 IPv6 pings x 6
want=$((3 * 8 + 2 * 7 + 2 * 7 + 6 + 2 * 6))
# sluice's files are written at the latest when it stops: wait for nft,
# then for each of sluice's three nftrace inputs to have had as many events
have_all() { [ "$(grep -c '^trace id' "$WORK/nft.txt")" -ge $want ]; }
wait_for 10 have_all || true
sluice_has_all() {
	local s e
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	for s in text json pcap; do
		e=$(grep "counters: $s.nftrace (nftrace):" "$WORK/sluice.log" | tail -1 | sed -n 's/.* events=\([0-9]*\).*/\1/p')
		[ "${e:-0}" -ge "$want" ] || return 1
	done
}
wait_for 10 sluice_has_all || true	# the comparison below says what is missing
at_stop=$(wc -l <"$WORK/sluice.log")
kill "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
kill "$NFT_PID"; wait "$NFT_PID" 2>/dev/null || true

res=$(python3 "$SRCDIR/tests/e2e/nftrace_compare.py" "$WORK/nft.txt" "$WORK/out.txt" "$WORK/out.json") ||
	{ cat "$WORK/nft.txt"; echo ---; cat "$WORK/out.txt"; fail "records differ from nft monitor trace: $res"; }
lines=$(grep -c '^trace id' "$WORK/nft.txt")
[ "$lines" = $want ] || { cat "$WORK/nft.txt"; fail "nft printed $lines lines, expected $want"; }

# the rule texts as nft prints them (compared above with nft's for every rule line)
grep -q 'uc rule tcp dport 22 counter packets 0 bytes 0 accept comment "ssh ok" # handle [0-9]* (verdict accept)' "$WORK/out.txt" ||
	fail "no accept line with nft's rule text"
grep -q 'raw rule ip saddr @traced meta nftrace set 1 # handle [0-9]* (verdict continue)' "$WORK/out.txt" || fail "no raw rule line"
grep -q 'uc rule icmp type echo-request counter packets 0 bytes 0 return comment "pings back" # handle [0-9]* (verdict return)' "$WORK/out.txt" ||
	fail "no return line"
grep -q 'input policy drop$' "$WORK/out.txt" || fail "no policy drop line"
# the added rule: nft's listing of it now, counter values masked (sluice listed it when the datagram was traced)
mask() { sed -E 's/counter packets [0-9]+ bytes [0-9]+/counter packets N bytes N/'; }
listed=$(ip netns exec "$B" nft -a list chain inet sl_trace uc | grep 'added later' | sed -E 's/^\s+//; s/ # handle [0-9]+$//' | mask)
logged=$(grep 'uc rule .* comment "added later" # handle [0-9]* (verdict drop)' "$WORK/out.txt" |
	sed -E 's/^.* uc rule //; s/ # handle [0-9]+ \(verdict drop\)$//' | mask)
[ -n "$listed" ] && [ "$logged" = "$listed" ] ||
	fail "the rule added after the start: logged '$logged', nft lists '$listed' (the ruleset was not listed again?)"
tail -n +$((at_stop + 1)) "$WORK/sluice.log" | grep -q ' ruleset_dumps=2' || { grep counters "$WORK/sluice.log"; fail "not one dump at start and one after the change"; }
grep -q 'packet: iif "vb" ether saddr 02:00:00:41:00:01 ether daddr 02:00:00:41:00:02 ip saddr 10.41.0.1 ip daddr 10.41.0.2 .* tcp dport 22 tcp flags == syn' "$WORK/out.txt" ||
	fail "no TCP SYN packet line"

# pcap: one packet per packet record (2 base chains per traced packet)
tcpdump -nr "$WORK/out.pcap" >"$WORK/tcpdump.txt" 2>"$WORK/tcpdump.err" || { cat "$WORK/tcpdump.err"; fail "tcpdump cannot read the pcap"; }
icmp=$(grep -c '10.41.0.1 > 10.41.0.2: ICMP echo request' "$WORK/tcpdump.txt" || true)
syn=$(grep -c '10.41.0.1\.[0-9]* > 10.41.0.2\.22: Flags \[S\]' "$WORK/tcpdump.txt" || true)
udp=$(grep -c '10.41.0.1\.[0-9]* > 10.41.0.2\.9999: UDP' "$WORK/tcpdump.txt" || true)
total=$(wc -l <"$WORK/tcpdump.txt")
late=$(grep -c '10.41.0.1\.[0-9]* > 10.41.0.2\.9998: UDP' "$WORK/tcpdump.txt" || true)
icmp6=$(grep -c 'fd41::1 > fd41::2: ICMP6, echo request' "$WORK/tcpdump.txt" || true)
[ "$icmp" = 6 ] && [ "$syn" = 4 ] && [ "$udp" = 4 ] && [ "$late" = 2 ] && [ "$icmp6" = 4 ] && [ "$total" = 20 ] ||
	{ cat "$WORK/tcpdump.txt"; fail "pcap: $icmp echo requests, $syn SYNs, $udp+$late UDP, $icmp6 ICMPv6 of $total packets (want 6, 4, 4+2, 4 of 20)"; }
grep -q "counters: [a-z.]*nftrace (nftrace): in=$want " "$WORK/sluice.log" || { grep counters "$WORK/sluice.log"; fail "nftrace did not count $want records"; }
pass "$res; pcap $total packets"
