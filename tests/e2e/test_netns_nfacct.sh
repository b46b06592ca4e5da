#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The nfacct input against the kernel's extended accounting objects: in a
# namespace, `nfacct add` objects counted by iptables-nft `-m nfacct` rules
# for a known number of pings and UDP datagrams on loopback.
#  1. reset: false — the last poll's JSON records equal `nfacct list`
#     (exact packets and bytes, which also equal what was sent), logline's
#     lines equal `nfacct list`'s lines, polls are `interval` apart; when
#     ulogd2's NFACCT and JSON plugins are installed, ulogd2 polls the same
#     objects (zerocounter=0) and its last poll must be the same;
#  2. reset: true with names — the first poll reads what run 1 left, later
#     polls add up to exactly the new traffic, and afterwards `nfacct list`
#     shows the named objects zeroed while an object not named keeps its
#     count; a named object that does not exist is counted and warned about;
#  3. reload — SIGHUP changes the interval: the new instance replaces the
#     old, polls come at the new interval, and with reset every packet sent
#     before and after the reload is in exactly one record;
#  4. without CAP_NET_ADMIN (setpriv) every poll fails, dump or gets by
#     name: logged once per instance with the reason, counted in errors,
#     and the daemon keeps running.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nfacct iptables-nft ping python3

FACTOR=${SLUICE_TEST_TIME_FACTOR:-1}
CHECK="python3 $(dirname "$0")/nfacct_check.py"
NS=$(unique_name slacct)
make_netns "$NS"
in_ns() { ip netns exec "$NS" "$@"; }

for o in sl_ping sl_udp sl_keep; do
	in_ns nfacct add "$o" || skip "nfacct add failed: no nfnetlink_acct in this kernel"
done
in_ns nfacct add sl_quota packet 3	# exceeded by the first run's pings
in_ns iptables-nft -A INPUT -p icmp --icmp-type echo-request -m nfacct --nfacct-name sl_ping \
	2>"$WORK/ipt.err" ||
	skip "iptables-nft -m nfacct refused ($(head -1 "$WORK/ipt.err")): the kernel lacks xt_nfacct; nft named counters are not nfacct objects"
in_ns iptables-nft -A INPUT -p icmp --icmp-type echo-request -m nfacct --nfacct-name sl_quota
in_ns iptables-nft -A INPUT -p udp --dport 9999 -m nfacct --nfacct-name sl_udp
in_ns iptables-nft -A OUTPUT -p icmp --icmp-type echo-request -m nfacct --nfacct-name sl_keep

# ping COUNT SIZE: COUNT echo requests of SIZE + 28 bytes on loopback
ping_lo() { in_ns ping -q -c "$1" -s "$2" -i 0.05 -W 1 127.0.0.1 >/dev/null; }
# udp_lo COUNT SIZE: COUNT datagrams of SIZE + 28 bytes to port 9999 (nobody listens)
udp_lo() {
	in_ns python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(int(sys.argv[1])):
    s.sendto(b"x" * int(sys.argv[2]), ("127.0.0.1", 9999))' "$1" "$2"
}
# last_poll FILE: the newest poll's objects
last_poll() { $CHECK polls "$1" 2>/dev/null | tail -1 | cut -d' ' -f2-; }
npolls() { $CHECK polls "$1" 2>/dev/null | wc -l; }
nfacct_list() { in_ns nfacct list >"$WORK/list.txt" && $CHECK list "$WORK/list.txt"; }

# start_sluice NAME: run $WORK/NAME.yaml in the namespace until the input polls
start_sluice() {
	ip netns exec "$NS" "$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.log" 2>&1 &
	SLUICE_PID=$!
	at_exit "kill $SLUICE_PID"
	wait_for 10 grep -qs "nfacct: polling" "$WORK/$1.log" ||
		{ cat "$WORK/$1.log"; fail "$1: nfacct did not start"; }
}
stop_sluice() {
	kill -TERM "$SLUICE_PID"
	wait "$SLUICE_PID" || { cat "$WORK/$1.log"; fail "$1: sluice exited with an error"; }
}

# ---- 1. reading without reset ----
cat >"$WORK/r1.yaml" <<YAML
stacks:
  json:
    - {plugin: nfacct, interval: 1s}
    - json
    - {plugin: file, file: "$WORK/r1.json"}
  text:
    - {plugin: nfacct, interval: 1s}
    - logline
    - {plugin: file, file: "$WORK/r1.txt"}
YAML
"$SLUICE" -t -c "$WORK/r1.yaml" >/dev/null || fail "r1.yaml does not pass sluice -t"
ULOGD_LIB=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/ulogd
ULOGD=false
if command -v ulogd >/dev/null && [ -e "$ULOGD_LIB/ulogd_inpflow_NFACCT.so" ] &&
	[ -e "$ULOGD_LIB/ulogd_output_JSON.so" ]; then
	ULOGD=true
	cat >"$WORK/ulogd.conf" <<INI
[global]
logfile="$WORK/ulogd.log"
loglevel=3
plugin="$ULOGD_LIB/ulogd_inpflow_NFACCT.so"
plugin="$ULOGD_LIB/ulogd_output_JSON.so"
stack=acct1:NFACCT,json1:JSON
[acct1]
pollinterval=1
zerocounter=0
timestamp=1
[json1]
sync=1
file="$WORK/ulogd.json"
INI
	ip netns exec "$NS" ulogd -c "$WORK/ulogd.conf" -p "$WORK/ulogd.pid" &
	ULOGD_PID=$!
	at_exit "kill $ULOGD_PID"
	wait_for 10 grep -qs "entering main loop" "$WORK/ulogd.log" ||
		{ cat "$WORK/ulogd.log"; fail "ulogd did not start"; }
else
	echo "NOTE: ulogd2 with NFACCT and JSON (Debian ulogd2, ulogd2-json) not installed: no comparison with ulogd2"
fi
start_sluice r1
ping_lo 5 100	# 5 x 128 bytes
udp_lo 7 200	# 7 x 228 bytes
WANT1="sl_keep=5/640 sl_ping=5/640 sl_quota=5/640 sl_udp=7/1596"
r1_done() { [ "$(last_poll "$WORK/r1.json")" = "$WANT1" ]; }
wait_for 15 r1_done || { cat "$WORK/r1.log"; $CHECK polls "$WORK/r1.json";
	fail "run 1: no poll saw $WANT1"; }
if $ULOGD; then
	u_done() { [ "$(last_poll "$WORK/ulogd.json")" = "$WANT1" ]; }
	wait_for 15 u_done || { $CHECK polls "$WORK/ulogd.json"; fail "ulogd2 never saw $WANT1"; }
	kill -TERM "$ULOGD_PID"
	wait "$ULOGD_PID" || true	# ulogd2 exits 0 or by the signal
	echo "ulogd2's last poll: $(last_poll "$WORK/ulogd.json")"
fi
n=$(npolls "$WORK/r1.json")
r1_more() { [ "$(npolls "$WORK/r1.json")" -ge $((n + 2)) ]; }
wait_for 10 r1_more || fail "run 1: polls stopped"
stop_sluice r1
cat "$WORK/r1.log"

LIST1=$(nfacct_list)
echo "nfacct list: $LIST1"
echo "last poll:   $(last_poll "$WORK/r1.json")"
[ "$LIST1" = "$WANT1" ] || fail "nfacct list shows $LIST1 after sending $WANT1"
[ "$(last_poll "$WORK/r1.json")" = "$LIST1" ] || fail "sluice's last poll differs from nfacct list"
if $ULOGD; then
	[ "$(last_poll "$WORK/ulogd.json")" = "$LIST1" ] || fail "ulogd2's last poll differs from nfacct list"
fi
# logline: the last poll's lines are nfacct list's lines, in the kernel's order
diff <(tail -4 "$WORK/r1.txt") "$WORK/list.txt" || fail "logline's lines differ from nfacct list's"
grep -q '^{ pkts = 00000000000000000005, .*, quota = 00000000000000000003, mode = packet, overquota = yes } = sl_quota;$' \
	"$WORK/list.txt" || fail "sl_quota is not over its quota: $(cat "$WORK/list.txt")"
grep -q '"acct_name":"sl_quota","acct_packets":5,"acct_bytes":640,"acct_quota":3,"acct_quota_mode":"packet","acct_overquota":1}$' \
	"$WORK/r1.json" || fail "sl_quota's JSON record lacks its quota: $(grep sl_quota "$WORK/r1.json" | tail -1)"
GAPS=$($CHECK interval "$WORK/r1.json" 1000 "$FACTOR") || fail "interval not respected: $GAPS"
echo "run 1: $(npolls "$WORK/r1.json") polls, $GAPS"

# ---- 2. reset: true, named objects ----
cat >"$WORK/r2.yaml" <<YAML
stacks:
  zero:
    - {plugin: nfacct, interval: 1s, reset: true, names: [sl_ping, sl_udp, sl_gone]}
    - json
    - {plugin: file, file: "$WORK/r2.json"}
YAML
start_sluice r2
r2_first() { [ "$(npolls "$WORK/r2.json")" -ge 1 ]; }
wait_for 10 r2_first || fail "run 2: no poll"
FIRST=$($CHECK polls "$WORK/r2.json" | head -1 | cut -d' ' -f2-)
[ "$FIRST" = "sl_ping=5/640 sl_udp=7/1596" ] || fail "run 2: first poll $FIRST, not what run 1 left"
ping_lo 3 60	# 3 x 88 bytes
udp_lo 2 50	# 2 x 78 bytes
WANT2="sl_ping=3/264 sl_udp=2/156"
r2_done() { [ "$($CHECK sum "$WORK/r2.json" 1)" = "$WANT2" ]; }
wait_for 15 r2_done || { $CHECK polls "$WORK/r2.json"; fail "run 2: polls after the first do not add up to $WANT2"; }
n=$(npolls "$WORK/r2.json")
r2_more() { [ "$(npolls "$WORK/r2.json")" -ge $((n + 1)) ]; }
wait_for 10 r2_more || fail "run 2: polls stopped"
stop_sluice r2
cat "$WORK/r2.log"
$CHECK polls "$WORK/r2.json"

[ "$($CHECK sum "$WORK/r2.json" 1)" = "$WANT2" ] || fail "run 2: traffic after the first poll counted twice"
LIST2=$(nfacct_list)
echo "nfacct list after reset: $LIST2"
[ "$LIST2" = "sl_keep=8/904 sl_ping=0/0 sl_quota=8/904 sl_udp=0/0" ] ||
	fail "after reset: nfacct list shows $LIST2 (named objects zeroed, sl_keep untouched expected)"
grep -q "no accounting object sl_gone" "$WORK/r2.log" || fail "the missing object was not warned about"
grep -Eq "\(nfacct\): .* missing=[1-9]" "$WORK/r2.log" || fail "the missing object was not counted"
if grep -q '"sl_keep"\|"sl_quota"' "$WORK/r2.json"; then fail "run 2 read an object it was not given"; fi

# ---- 3. reload: 1 s -> 500 ms, reset, every object ----
r3_conf() {
	cat >"$WORK/r3.yaml" <<YAML
stacks:
  all:
    - {plugin: nfacct, interval: $1, reset: true}
    - json
    - {plugin: file, file: "$WORK/r3.json"}
YAML
}
r3_conf 1s
start_sluice r3
wait_for 10 eval '[ "$(npolls "$WORK/r3.json")" -ge 1 ]' || fail "run 3: no poll"
ping_lo 4 20	# 4 x 48 bytes, also counted in sl_keep
r3_conf 500ms
T_HUP=$(date +%s.%N)
kill -HUP "$SLUICE_PID"
wait_for 10 grep -qs "reload: .* kept" "$WORK/r3.log" ||
	{ cat "$WORK/r3.log"; fail "run 3: no reload verdict"; }
udp_lo 3 10	# 3 x 38 bytes
# sl_keep's and sl_quota's 8/904 left by run 2, plus the new traffic
WANT3="sl_keep=12/1096 sl_ping=4/192 sl_quota=12/1096 sl_udp=3/114"
r3_done() { [ "$($CHECK sum "$WORK/r3.json" 0)" = "$WANT3" ]; }
wait_for 15 r3_done || { cat "$WORK/r3.log"; $CHECK polls "$WORK/r3.json";
	fail "run 3: polls across the reload do not add up to $WANT3"; }
after_hup() { [ "$($CHECK polls "$WORK/r3.json" | awk -v t="$T_HUP" '$1 > t + 0.2' | wc -l)" -ge 4 ]; }
wait_for 10 after_hup || fail "run 3: too few polls after the reload"
stop_sluice r3
cat "$WORK/r3.log"
$CHECK polls "$WORK/r3.json"
[ "$($CHECK sum "$WORK/r3.json" 0)" = "$WANT3" ] || fail "run 3: a packet counted twice across the reload"
GAPS3=$($CHECK interval "$WORK/r3.json" 500 "$FACTOR" "$(python3 -c "print($T_HUP + 0.2)")") ||
	fail "run 3: the new interval is not respected: $GAPS3"
echo "run 3: after the reload $GAPS3"
[ "$(nfacct_list)" = "sl_keep=0/0 sl_ping=0/0 sl_quota=0/0 sl_udp=0/0" ] || fail "run 3: nfacct list after reset: $(nfacct_list)"
# the reset also ended sl_quota's overquota state
grep -q 'quota = 00000000000000000003, mode = packet, overquota = no } = sl_quota;$' "$WORK/list.txt" ||
	fail "run 3: sl_quota still over quota after the reset: $(cat "$WORK/list.txt")"

# ---- 4. no CAP_NET_ADMIN: refused polls are counted, not fatal ----
if command -v setpriv >/dev/null; then
	cat >"$WORK/r4.yaml" <<YAML
stacks:
  a:
    - {plugin: nfacct, interval: 200ms}
    - json
    - {plugin: file, file: "$WORK/r4.json"}
  b:
    - {plugin: nfacct, interval: 200ms, names: [sl_ping, sl_udp]}
    - json
    - {plugin: file, file: "$WORK/r4b.json"}
YAML
	ip netns exec "$NS" setpriv --inh-caps=-net_admin --bounding-set=-net_admin \
		"$SLUICE" -c "$WORK/r4.yaml" >"$WORK/r4.log" 2>&1 &
	SLUICE_PID=$!
	at_exit "kill $SLUICE_PID"
	wait_for 10 grep -qs "started:" "$WORK/r4.log" ||
		{ cat "$WORK/r4.log"; fail "run 4: sluice did not start"; }
	r4_errors() {
		kill -USR1 "$SLUICE_PID"
		sleep 0.1
		grep -Eq "a\.nfacct \(nfacct\): in=0 .*errors=([3-9]|[1-9][0-9]+) polls=0" "$WORK/r4.log" &&
			grep -Eq "b\.nfacct \(nfacct\): in=0 .*errors=([3-9]|[1-9][0-9]+) polls=0" "$WORK/r4.log"
	}
	wait_for 10 r4_errors || { cat "$WORK/r4.log"; fail "run 4: refused polls not counted"; }
	stop_sluice r4
	# once for each instance: the dump, and the gets by name
	[ "$(grep -c "nfacct request: Operation not permitted (needs CAP_NET_ADMIN)" "$WORK/r4.log")" = 2 ] ||
		{ cat "$WORK/r4.log"; fail "run 4: the refusal was not logged once per instance"; }
	# every refused poll was answered: none waited for the next interval
	if grep -Eq "abandoned|skipped=[1-9]" "$WORK/r4.log"; then cat "$WORK/r4.log"; fail "run 4: refused polls left waiting"; fi
	echo "run 4: $(grep '(nfacct)' "$WORK/r4.log" | tail -2 | tr '\n' ' ')"
else
	echo "NOTE: no setpriv: the run without CAP_NET_ADMIN is left out"
fi
pass "run 1 = nfacct list = ulogd2 = $WANT1; run 2 reset $WANT2, named objects zeroed; run 3 reload $WANT3; run 4 refused polls counted"
