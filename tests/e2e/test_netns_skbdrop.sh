#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The skbdrop input (eBPF on skb:kfree_skb): packets the kernel drops,
# without a `log` rule.  Namespace B has a bare `drop` rule with a named
# counter for UDP port 7777; A sends to it, and to the closed port 7778.
# sluice runs in the root namespace (the tracepoint sees every namespace);
# records are told apart by B's namespace inode (the host may drop too).
#  1. reasons: [NETFILTER_DROP], no rate limit: 3,000 datagrams give
#     3,000 records of B with drop_reason NETFILTER_DROP, decoded to A's
#     address and port and B's, equal to the rule's counter; the 50
#     datagrams to the closed port (NO_SOCKET) are not reported;
#  2. reasons: [NETFILTER_DROP, NO_SOCKET]: the 50 now come as NO_SOCKET;
#     IPv6 drops are decoded too;
#  3. rate: 100: fewer records than drops, and the `suppressed` counter
#     holds the rest (records + suppressed = packets);
#  4. an unknown reason is a configuration error at its file:line:column
#     naming close matches;
#  5. without capabilities (root's uid, empty sets: what the daemon has
#     after dropping to daemon.user, as far as BPF goes) the start fails,
#     naming CAP_BPF and CAP_PERFMON;
#  6. without the kernel's BTF (an empty tmpfs over /sys/kernel/btf)
#     `sluice -t` passes (the names cannot be checked) and the start fails
#     saying the kernel has no BTF.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3
[ -e "$BUILDDIR/plugins/skbdrop.so" ] || skip "built without SLUICE_WITH_BPF"
[ -e /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF (/sys/kernel/btf/vmlinux)"

CHECK="python3 $(dirname "$0")/skbdrop_check.py"
netns_pair slskb 61
INODE=$(stat -L -c %i "/run/netns/$B")
ip netns exec "$B" nft -f - <<'NFT'
table inet skb {
	counter c7777 { }
	chain in {
		type filter hook input priority 0;
		udp dport 7777 counter name c7777 drop
	}
}
NFT
# send PORT COUNT [6]: COUNT datagrams from A (10.61.0.1:5555, or fd61::1) to B's PORT
send() {
	ip netns exec "$A" python3 -c 'import socket, sys
v6 = len(sys.argv) > 3
s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("fd61::1" if v6 else "10.61.0.1", 5555))
for i in range(int(sys.argv[2])):
    s.sendto(b"d%05d" % i, ("fd61::2" if v6 else "10.61.0.2", int(sys.argv[1])))' "$@"
}
nft_count() { nft_counter "$B" inet skb c7777; }
# counter LOG NAME: the last value of skbdrop's counter NAME printed on SIGUSR1
counter() { grep "counters: drops.skbdrop (skbdrop):" "$1" | tail -1 | sed -n "s/.* $2=\([0-9]*\).*/\1/p"; }

# run NAME REASONS RATE: start sluice with $WORK/NAME.yaml, in the root namespace
run() {
	cat >"$WORK/$1.yaml" <<YAML
stacks:
  drops:
    - {plugin: skbdrop, reasons: $2, rate: $3}
    - decode
    - json
    - {plugin: file, file: "$WORK/$1.json"}
YAML
	"$SLUICE" -t -c "$WORK/$1.yaml" >/dev/null || fail "$1.yaml does not pass sluice -t"
	run_sluice_bg "$WORK/$1.log" -c "$WORK/$1.yaml"
	wait_for 20 grep -qs "reporting drops" "$WORK/$1.log" ||
		{ cat "$WORK/$1.log"; fail "$1: skbdrop did not start"; }
}
stop() {
	kill -TERM "$SLUICE_PID"
	wait "$SLUICE_PID" || { cat "$WORK/$1.log"; fail "$1: sluice exited with an error"; }
}
# records NAME REASON: "N OTHER" of run NAME (B's records of REASON, others')
records() { $CHECK "$WORK/$1.json" "$INODE" "$2" 10.61.0.1 10.61.0.2 5555 "$3"; }
records6() { $CHECK "$WORK/$1.json" "$INODE" "$2" fd61::1 fd61::2 5555 "$3"; }

# ---- 1. NETFILTER_DROP only ----
run r1 "[NETFILTER_DROP]" 0
send 7777 3000
send 7778 50
# (veth hands packets to B's backlog: the rule may count the last ones a moment later)
counted() { [ "$(nft_count)" = "$1" ]; }
wait_for 10 counted 3000 || fail "the rule counted $(nft_count) packets, not 3000"
r1_done() { [ -s "$WORK/r1.json" ] && [ "$(records r1 NETFILTER_DROP 7777 | cut -d' ' -f1)" = 3000 ]; }
wait_for 20 r1_done || { tail -5 "$WORK/r1.log"; records r1 NETFILTER_DROP 7777;
	fail "run 1: not 3000 NETFILTER_DROP records of namespace $B"; }
stop r1
got=$(records r1 NETFILTER_DROP 7777) || fail "run 1: $got"
[ "${got% *}" = "$(nft_count)" ] || fail "run 1: ${got% *} records, the counter says $(nft_count)"
# the namespace's name, and vb's index as netns_ifindex (not ifindex_in: not ours)
rec=$(grep -m1 "\"netns_inode\":$INODE" "$WORK/r1.json" | python3 -c 'import json,sys
r = json.load(sys.stdin)
print(r.get("netns"), r.get("netns_ifindex"), r.get("in") or r.get("ifindex_in"), r.get("drop_location", "")[:2])')
vb=$(ip -n "$B" -o link show vb | cut -d: -f1)
# (nft_do_chain on 6.x with a drop verdict's reason, nf_hook_slow before)
[ "$rec" = "$B $vb None nf" ] ||
	fail "run 1: record says 'netns netns_ifindex in location[:2]' = '$rec', want '$B $vb None nf'"
nosock=$(records r1 NO_SOCKET 7778) || fail "run 1: $nosock"
[ "${nosock% *}" = 0 ] || fail "run 1: ${nosock% *} NO_SOCKET records although only NETFILTER_DROP is listed"

# ---- 2. NO_SOCKET listed too ----
run r2 "[NETFILTER_DROP, NO_SOCKET]" 0
send 7778 50
send 7777 10
send 7777 20 6
r2_done() { [ -s "$WORK/r2.json" ] && [ "$(records r2 NO_SOCKET 7778 | cut -d' ' -f1)" = 50 ] &&
	[ "$(records r2 NETFILTER_DROP 7777 | cut -d' ' -f1)" = 10 ] &&
	[ "$(records6 r2 NETFILTER_DROP 7777 | cut -d' ' -f1)" = 20 ]; }
wait_for 20 r2_done || { records r2 NO_SOCKET 7778; records6 r2 NETFILTER_DROP 7777
	fail "run 2: not 50 NO_SOCKET, 10 NETFILTER_DROP and 20 IPv6 NETFILTER_DROP records"; }
stop r2

# ---- 3. the rate limit counts what it leaves out ----
run r3 "[NETFILTER_DROP]" 100
before=$(nft_count)
send 7777 3000
wait_for 10 counted $((before + 3000)) || fail "run 3: the rule counted $(( $(nft_count) - before )) packets, not 3000"
r3_done() {
	kill -USR1 "$SLUICE_PID"
	local rec sup
	rec=$(counter "$WORK/r3.log" records) sup=$(counter "$WORK/r3.log" suppressed)
	[ -n "$rec" ] && [ -n "$sup" ] && [ $((rec + sup)) -ge 3000 ]
}
wait_for 20 r3_done || { tail -3 "$WORK/r3.log"; fail "run 3: records + suppressed never reached 3000"; }
stop r3
got=$(records r3 NETFILTER_DROP 7777) || fail "run 3: $got"
n=${got% *} other=${got#* }
rec=$(counter "$WORK/r3.log" records) sup=$(counter "$WORK/r3.log" suppressed)
# drops of other namespaces (the host's) may take the sending CPU's tokens
[ "$n" -lt 3000 ] && { [ "$n" -gt 0 ] || [ "$other" -gt 0 ]; } ||
	fail "run 3: $n records at rate 100/s per CPU"
[ "$rec" = $((n + other)) ] || fail "run 3: counter records=$rec, but $((n + other)) records written"
if [ "$other" = 0 ]; then
	[ $((n + sup)) = 3000 ] || fail "run 3: $n records + $sup suppressed != 3000 packets"
else
	# the host dropped packets of its own meanwhile, some of them suppressed too
	[ $((n + sup)) -ge 3000 ] || fail "run 3: $n records + $sup suppressed < 3000 packets"
	echo "NOTE: $other drops of other namespaces during run 3: suppressed checked as >="
fi

# ---- 4. an unknown reason ----
cat >"$WORK/bad.yaml" <<'YAML'
stacks:
  drops:
    - {plugin: skbdrop, reasons: [NETFILTER_DORP]}
    - json
    - {plugin: file, file: /dev/null}
YAML
if "$SLUICE" -t -c "$WORK/bad.yaml" >"$WORK/bad.out" 2>&1; then fail "an unknown reason passed sluice -t"; fi
grep -q "bad.yaml:3:[0-9]*:.*unknown drop reason 'NETFILTER_DORP' (did you mean NETFILTER_DROP" "$WORK/bad.out" ||
	{ cat "$WORK/bad.out"; fail "the unknown reason's error does not name its position and NETFILTER_DROP"; }
# ---- 5. no CAP_BPF ----
if command -v setpriv >/dev/null; then
	if setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all \
		"$SLUICE" -c "$WORK/r1.yaml" >"$WORK/nocap.log" 2>&1; then
		cat "$WORK/nocap.log"; fail "skbdrop started without CAP_BPF"
	fi
	grep -q "skbdrop: error: cannot load the BPF program: .*needs CAP_BPF and CAP_PERFMON" "$WORK/nocap.log" ||
		{ cat "$WORK/nocap.log"; fail "no start error naming CAP_BPF without capabilities"; }
else
	echo "NOTE: no setpriv: the start without capabilities is not tried"
fi
# ---- 6. no BTF ----
# (libbpf also looks in /boot and /lib/modules: a machine with a vmlinux there is not tried)
if ! ls /boot/vmlinux-"$(uname -r)" /lib/modules/"$(uname -r)"/vmlinux* /usr/lib/debug/boot/vmlinux-"$(uname -r)" \
	>/dev/null 2>&1 && unshare --mount true 2>/dev/null; then
	unshare --mount --propagation private bash -c 'mount -t tmpfs none /sys/kernel/btf &&
		"$1" -t -c "$2" && echo CHECK-PASSED && exec "$1" -c "$2"' nobtf "$SLUICE" "$WORK/r1.yaml" \
		>"$WORK/nobtf.log" 2>&1 && { cat "$WORK/nobtf.log"; fail "skbdrop started without BTF"; }
	grep -q CHECK-PASSED "$WORK/nobtf.log" || { cat "$WORK/nobtf.log"; fail "sluice -t failed without BTF"; }
	grep -q "skbdrop: error: the kernel has no BTF (/sys/kernel/btf/vmlinux: missing)" "$WORK/nobtf.log" ||
		{ cat "$WORK/nobtf.log"; fail "no start error saying the kernel has no BTF"; }
else
	echo "NOTE: a vmlinux with BTF outside /sys, or no mount namespace: the start without BTF is not tried"
fi
pass "3000 NETFILTER_DROP records = the rule's counter, NO_SOCKET only when listed, rate limit counted ($n + $sup)"
