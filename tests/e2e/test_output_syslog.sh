#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# syslog output against a real rsyslogd on 127.0.0.1 (own config, high
# ports, own unix socket): every message arrives over UDP, TCP (octet
# counting and LF framing) and a unix socket with the right PRI, app name,
# pid and text, RFC 5424 with structured data and the record's timestamp.
# Then the receiver is stopped mid-stream and started again: sluice keeps
# running, reconnects, counts what it had to drop (dropped_messages, shown
# by SIGUSR1) and loses nothing else but what was in flight.
. "$(dirname "$0")/lib.sh"
need_cmd rsyslogd python3 ss
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
export TZ=UTC
RS="$WORK/rs"
mkdir "$RS"

PORT=$(python3 -c '
import socket
for _ in range(50):
    t = socket.socket(); t.bind(("127.0.0.1", 0)); p = t.getsockname()[1]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.bind(("127.0.0.1", p)); print(p); break
    except OSError: pass
')
[ -n "$PORT" ] || skip "no free port"

cat >"$RS/rs.conf" <<CONF
global(workDirectory="$RS")
module(load="imudp")
module(load="imtcp")
module(load="imuxsock" SysSock.Use="off")
template(name="t" type="string"
	string="%PRI%|%APP-NAME%|%PROCID%|%HOSTNAME%|%TIMESTAMP:::date-rfc3339%|%STRUCTURED-DATA%|%msg%\n")
ruleset(name="udp") { action(type="omfile" file="$RS/udp.txt" template="t") }
ruleset(name="tcp") { action(type="omfile" file="$RS/tcp.txt" template="t") }
ruleset(name="unix") { action(type="omfile" file="$RS/unix.txt" template="t") }
input(type="imudp" address="127.0.0.1" port="$PORT" ruleset="udp" rcvbufSize="4m")
input(type="imtcp" address="127.0.0.1" port="$PORT" ruleset="tcp")
input(type="imuxsock" Socket="$RS/log.sock" ruleset="unix")
CONF
rsyslogd -N1 -f "$RS/rs.conf" >"$RS/check.log" 2>&1 || { cat "$RS/check.log"; skip "rsyslogd rejects the test config"; }

RS_PID=""
listening() { ss -Hltn "sport = :$PORT" | grep -q .; }
rs_start() {
	rsyslogd -n -f "$RS/rs.conf" -i "$RS/pid" >>"$RS/rs.log" 2>&1 &
	RS_PID=$!
	at_exit "kill $RS_PID"
	wait_for 10 listening || fail "rsyslogd did not listen: $(cat "$RS/rs.log")"
	wait_for 10 test -S "$RS/log.sock" || fail "rsyslogd made no unix socket"
}
rs_stop() {
	kill "$RS_PID"
	wait "$RS_PID" 2>/dev/null || true
	rm -f "$RS/log.sock"
}
rs_start

# fields FILE: messages as "pri|app|procid|host|time|sd|msg" (msg without rsyslog's leading space)
fields() { sed 's/^\(\([^|]*|\)\{6\}\) /\1/' "$1"; }
# lines_ge FILE N: FILE has at least N lines (re-evaluated by wait_for)
lines_ge() { [ "$(wc -l <"$1")" -ge "$2" ]; }
counter() { grep "counters: $2 " "$1" | tail -1 | sed -nE "s/.* $3=([0-9]+).*/\1/p"; }

# run_case NAME RSFILE COUNT SYSLOG-OPTIONS: gen COUNT records through syslog
run_case() {
	local name=$1 file=$2 n=$3 opts=$4
	: >"$RS/$file"
	cat >"$WORK/$name.yaml" <<YAML
stacks:
  s:
    - {plugin: gen, count: $n, text: "msg \\"q\\" ]", per_tick: 100, interval: 1ms}
    - {plugin: syslog, $opts}
YAML
	"$SLUICE" -c "$WORK/$name.yaml" >"$WORK/$name.log" 2>&1 || { cat "$WORK/$name.log"; fail "$name: sluice failed"; }
	wait_for 10 lines_ge "$RS/$file" "$n" || true
}

# check NAME RSFILE COUNT PRI APP: every record once, right header fields
check() {
	local name=$1 file=$2 n=$3 pri=$4 app=$5 got
	got=$(wc -l <"$RS/$file")
	[ "$got" = "$n" ] || { head -3 "$RS/$file"; cat "$WORK/$name.log"; fail "$name: $got of $n messages arrived"; }
	fields "$RS/$file" | awk -F'|' -v pri="$pri" -v app="$app" -v host="$(hostname)" '
		$1 != pri || $2 != app || $3 !~ /^[0-9]+$/ || $4 != host { print "bad header: " $0; exit 1 }' ||
		fail "$name: wrong PRI/app/pid/host (want $pri $app)"
	[ "$(fields "$RS/$file" | cut -d'|' -f7- | sort -k4n)" = "$(seq 0 $((n - 1)) | sed 's/^/msg "q" ] /')" ] ||
		{ fields "$RS/$file" | head -3; fail "$name: texts differ"; }
	grep -q "dropped_messages=0 " "$WORK/$name.log" || fail "$name: drops counted"
	echo "ok: $name: $n messages, PRI $pri"
}

run_case udp3164 udp.txt 500 "transport: udp, address: '127.0.0.1:$PORT'"
check udp3164 udp.txt 500 166 sluice
run_case tcp5424 tcp.txt 500 "transport: tcp, address: '127.0.0.1:$PORT', format: rfc5424, facility: daemon, severity: warning, app_name: sl-test"
check tcp5424 tcp.txt 500 28 sl-test
run_case tcplf tcp.txt 500 "transport: tcp, address: '127.0.0.1:$PORT', framing: lf, facility: kern, severity: err"
check tcplf tcp.txt 500 3 sluice
run_case unix unix.txt 500 "transport: unix, address: '$RS/log.sock', facility: local7, severity: debug"
check unix unix.txt 500 191 sluice
run_case udp5424 udp.txt 300 "transport: udp, address: '[::ffff:127.0.0.1]:$PORT', format: rfc5424, hostname: fw-1"
[ "$(cut -d'|' -f4 "$RS/udp.txt" | sort -u)" = fw-1 ] || fail "hostname option not used"

# RFC 5424 with structured data, from packets: the capture's timestamps.
DATA="$SRCDIR/tests/data"
if [ -e "$SLUICE_PLUGIN_PATH/../plugins/logline.so" ] || "$SLUICE" --describe logline >/dev/null 2>&1; then
	: >"$RS/tcp.txt"
	cat >"$WORK/sd.yaml" <<YAML
stacks:
  s:
    - {plugin: replay, file: "$DATA/raw-mixed.pcap"}
    - decode
    - logline
    - {plugin: syslog, transport: tcp, address: '127.0.0.1:$PORT', format: rfc5424, structured_data: true}
YAML
	"$SLUICE" -c "$WORK/sd.yaml" >"$WORK/sd.log" 2>&1 || { cat "$WORK/sd.log"; fail "sd: sluice failed"; }
	wait_for 10 lines_ge "$RS/tcp.txt" 40 || fail "sd: $(wc -l <"$RS/tcp.txt") of 40 messages"
	python3 - "$RS/tcp.txt" "$DATA/raw-mixed.pcap" <<'PY' || fail "structured data or timestamps wrong"
import datetime, ipaddress, re, struct, sys
lines = open(sys.argv[1]).read().splitlines()
d = open(sys.argv[2], "rb").read()
e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
nano = d[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
off, pk = 24, []
while off + 16 <= len(d):
    s, f, incl, _ = struct.unpack(e + "IIII", d[off:off + 16])
    pk.append((s, f // 1000 if nano else f, d[off + 16:off + 16 + incl]))
    off += 16 + incl
assert len(lines) == len(pk), (len(lines), len(pk))
for line, (s, us, p) in zip(lines, pk):
    f = line.split("|", 6)
    want = datetime.datetime.fromtimestamp(s, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + ".%06d+00:00" % us
    assert f[4] == want, (f[4], want)
    if p[0] >> 4 == 4:
        src, dst, proto, l4 = ipaddress.ip_address(p[12:16]), ipaddress.ip_address(p[16:20]), p[9], p[(p[0] & 15) * 4:]
    else:
        src, dst, proto, l4 = ipaddress.ip_address(p[8:24]), ipaddress.ip_address(p[24:40]), p[6], p[40:]
    sd = '[sluice@32473 src="%s" dst="%s" proto="%d"' % (src, dst, proto)
    if proto in (6, 17):
        sd += ' spt="%d" dpt="%d"' % struct.unpack("!HH", l4[:4])
    assert f[5] == sd + "]", (f[5], sd)
    assert "SRC=" in f[6], f[6]
PY
	echo "ok: rfc5424 structured data and record timestamps"
fi

# Hostile text: the NFLOG capture with "\nFAKE LINE" and ESC sequences in
# every prefix, through logline and syslog over TCP with LF framing (where a
# newline would be a second message): one message per packet, each the
# line logline wrote to a file.  And text some other plugin made (gen's,
# with a newline, ESC and DEL) is escaped by syslog itself.
if "$SLUICE" --describe logline >/dev/null 2>&1; then
	EVIL=$(printf 'x\nFAKE LINE \033[2J\033]0;pwned\007 a\\b\tc\177 \303\251\377\302\233 ' | od -An -tx1 | tr -d ' \n')
	python3 "$SRCDIR/tests/e2e/nflog_prefix.py" "$DATA/nflog-mixed.pcap" "$WORK/evil.pcap" "$EVIL"
	: >"$RS/tcp.txt"
	cat >"$WORK/evil.yaml" <<YAML
stacks:
  s:
    - {plugin: replay, file: "$WORK/evil.pcap"}
    - decode
    - logline
    - {plugin: syslog, transport: tcp, framing: lf, address: '127.0.0.1:$PORT'}
  f: [{plugin: replay, file: "$WORK/evil.pcap"}, decode, logline, {plugin: file, file: "$WORK/evil.txt"}]
YAML
	"$SLUICE" -c "$WORK/evil.yaml" >"$WORK/evil.log" 2>&1 || { cat "$WORK/evil.log"; fail "evil: sluice failed"; }
	wait_for 10 lines_ge "$RS/tcp.txt" 40 || true
	sleep 0.3
	got=$(wc -l <"$RS/tcp.txt")
	[ "$got" = 40 ] || { head -3 "$RS/tcp.txt"; fail "hostile prefix: $got messages for 40 packets"; }
	[ "$(fields "$RS/tcp.txt" | cut -d'|' -f7- | sort)" = "$(sort "$WORK/evil.txt")" ] ||
		{ fields "$RS/tcp.txt" | head -2; head -2 "$WORK/evil.txt"; fail "hostile prefix: messages differ from the lines"; }
	grep -qF 'x\x0aFAKE LINE \x1b[2J' "$RS/tcp.txt" || fail "hostile prefix not escaped"
	grep -q "counters: s.syslog (syslog): .* escaped=0" "$WORK/evil.log" || fail "syslog re-escaped logline's text"

	: >"$RS/udp.txt"
	cat >"$WORK/gen-evil.yaml" <<YAML
stacks:
  s:
    - {plugin: gen, count: 50, multiline: true, text: "a\\nFAKE\\e[31m\\x7f\\u00e9\\\\x"}
    - {plugin: syslog, transport: udp, address: '127.0.0.1:$PORT'}
YAML
	"$SLUICE" -c "$WORK/gen-evil.yaml" >"$WORK/gen-evil.log" 2>&1 || { cat "$WORK/gen-evil.log"; fail "gen-evil failed"; }
	wait_for 10 lines_ge "$RS/udp.txt" 50 || true
	sleep 0.3
	[ "$(wc -l <"$RS/udp.txt")" = 50 ] || fail "gen text: $(wc -l <"$RS/udp.txt") messages for 50"
	[ "$(fields "$RS/udp.txt" | cut -d'|' -f7- | sort -k2n | head -1)" = 'a\x0aFAKE\x1b[31m\x7f'$'\303\251''\x 0' ] ||
		{ fields "$RS/udp.txt" | head -2; fail "gen text not escaped as expected"; }
	grep -q "counters: s.syslog (syslog): .* escaped=50" "$WORK/gen-evil.log" ||
		{ cat "$WORK/gen-evil.log"; fail "escaped counter"; }
	echo "ok: hostile text: one message per record, escaped"
fi

# ---- the receiver goes away mid-stream and comes back ----
outage() {
	local tr=$1 file=$2
	: >"$RS/$file"
	cat >"$WORK/out-$tr.yaml" <<YAML
stacks:
  s:
    - {plugin: gen, count: -1, interval: 10ms, per_tick: 10}
    - {plugin: syslog, transport: $tr, address: '127.0.0.1:$PORT', queue_size: 64KiB,
       message_size: 256, reconnect_min: 50ms, reconnect_max: 500ms}
YAML
	run_sluice_bg "$WORK/out-$tr.log" -c "$WORK/out-$tr.yaml"
	wait_for 10 lines_ge "$RS/$file" 500 || fail "$tr: messages do not arrive"
	rs_stop
	# Away until more came than the 64 KiB queue holds: drops counted.
	queue_overflowed() {
		kill -0 "$SLUICE_PID" || fail "$tr: sluice died when the receiver went away"
		kill -USR1 "$SLUICE_PID"
		sleep 0.1
		[ "$(counter "$WORK/out-$tr.log" s.syslog dropped_messages)" -gt 0 ] 2>/dev/null
	}
	wait_for 20 queue_overflowed || fail "$tr: nothing dropped with the receiver away"
	local before
	before=$(wc -l <"$RS/$file")
	rs_start
	wait_for 10 lines_ge "$RS/$file" $((before + 1500)) || fail "$tr: no messages after the receiver came back"
	kill -USR1 "$SLUICE_PID"
	wait_for 5 grep -q "counters: s.syslog " "$WORK/out-$tr.log" || fail "$tr: SIGUSR1 logged no counters"
	kill -TERM "$SLUICE_PID"
	wait "$SLUICE_PID" || fail "$tr: exit status $?"
	sleep 0.3
	local sent got dropped rec plost core
	sent=$(counter "$WORK/out-$tr.log" s.gen out)
	dropped=$(counter "$WORK/out-$tr.log" s.syslog dropped_messages)
	plost=$(counter "$WORK/out-$tr.log" s.syslog possibly_lost)
	core=$(counter "$WORK/out-$tr.log" s.syslog dropped)
	rec=$(counter "$WORK/out-$tr.log" s.syslog reconnects)
	got=$(wc -l <"$RS/$file")
	grep -q "connected to $tr:127.0.0.1:$PORT again; [0-9]* messages were dropped" "$WORK/out-$tr.log" ||
		{ cat "$WORK/out-$tr.log"; fail "$tr: reconnection not reported"; }
	[ "${rec:-0}" -ge 1 ] || fail "$tr: reconnects=$rec"
	[ "${dropped:-0}" -gt 0 ] || fail "$tr: nothing counted as dropped"
	# No duplicates; lost = sent - got - dropped - possibly_lost is what
	# rsyslogd had taken and not written when it stopped, or the first UDP
	# datagrams before the ICMP error: small.  (TCP: what was unacknowledged
	# at the failure is counted in possibly_lost; the core's dropped has both.)
	[ "$(fields "$RS/$file" | cut -d'|' -f7- | sort | uniq -d | wc -l)" = 0 ] || fail "$tr: duplicate messages"
	[ "$core" = $((dropped + plost)) ] || fail "$tr: core dropped=$core, dropped_messages=$dropped possibly_lost=$plost"
	local lost=$((sent - got - dropped - plost))
	echo "$tr outage: sent $sent, received $got, counted dropped $dropped, possibly lost $plost, uncounted $lost"
	[ "$lost" -ge 0 ] && [ "$lost" -le 200 ] || fail "$tr: $lost messages lost uncounted"
}
outage tcp tcp.txt
outage udp udp.txt

pass "rsyslogd got every message over udp, tcp and unix; outages counted"
