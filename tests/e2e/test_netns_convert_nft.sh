#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sluice convert nft, live: namespace B has printk `log` rules (several
# prefixes, levels info/warn/notice/err/debug, flags tcp sequence,options,
# ip options, skuid, all; accept and drop; IPv4 and IPv6).  The same
# crafted frames (fixed addresses, ports, IP IDs, TCP sequence numbers and
# options, so every field of the kernel's line is the same each time) and
# one UDP datagram B sends as nobody are sent twice:
#   1. with the printk rules: the kernel's lines read from /dev/kmsg;
#   2. after `sluice convert nft --apply` inside B and with sluice running
#      the generated YAML: the lines of its file output, and the messages
#      of its syslog output (a unix socket this test reads).
# The file's lines must equal the kernel's, the syslog messages' text too, with the severity the
# kernel gave the line (kmsg's level) as their PRI (facility kern).  One
# field is masked: the IP ID of the datagram B sends (the kernel picks a
# random one per socket; A's frames carry fixed IDs and are compared
# whole).  No
# printk line may appear in phase 2; the ruleset's JSON after the apply
# must equal the one before but for each printk `log` turned into
# `log group N` with the same prefix (a prefix with a quote, backslash and
# tab included).  Also: --apply when `sluice -t` fails (a broken
# logline.so first in the plugin path) leaves the ruleset as it was and
# writes no YAML; --check on tests/data/nft/unconvertible.json exits 1
# naming each statement; a ruleset with no printk log says nothing is to
# be done.  net.netfilter.nf_log_all_netns is set to 1 and restored.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 setpriv
[ -r /dev/kmsg ] || skip "cannot read /dev/kmsg"
SYSCTL=/proc/sys/net/netfilter/nf_log_all_netns
modprobe nf_log_syslog 2>/dev/null || true
[ -w "$SYSCTL" ] || skip "no $SYSCTL (nf_log_syslog not available)"

# --- the converter on files: no namespace needed ---
rc=0
"$SLUICE" convert nft --check --file "$SRCDIR/tests/data/nft/unconvertible.json" \
	>"$WORK/check.out" 2>"$WORK/check.err" || rc=$?
[ $rc = 1 ] || fail "--check on unconvertible.json: exit $rc, want 1"
for want in 'unconvertible.json:1:[0-9]*: inet f in handle 4: `log` cannot be converted: a log statement inside an expression' \
	'inet f __chain0 handle 5: `log prefix "anon "` cannot be converted: an anonymous (binding) chain' \
	'inet f in handle 6: `log prefix "audited " level audit` cannot be converted: level audit' \
	'arp a in handle 2: `log prefix "arp "` cannot be converted: the arp family' \
	'inet f in handle 7: .* unknown log flag'; do
	grep -q "$want" "$WORK/check.err" || { cat "$WORK/check.err"; fail "--check did not say: $want"; }
done
grep -q '^6 printk log statements in 5 rules: 1 convertible, 5 not$' "$WORK/check.out" ||
	{ cat "$WORK/check.out"; fail "--check summary"; }
rc=0
"$SLUICE" convert nft --check --file "$SRCDIR/tests/data/nft/nolog.json" >/dev/null || rc=$?
[ $rc = 0 ] || fail "--check on nolog.json: exit $rc, want 0"
"$SLUICE" convert nft --file - <"$SRCDIR/tests/data/nft/nolog.json" >"$WORK/nolog.out" ||
	fail "a ruleset without printk log is an error"
grep -q 'no printk log statements to convert in 3 rules (1 already log to a group): nothing to do' \
	"$WORK/nolog.out" || { cat "$WORK/nolog.out"; fail "nothing-to-do message"; }

lock_netfilter	# before the global sysctl: another run's test restores its own value
OLD_ALL_NETNS=$(cat "$SYSCTL")
at_exit "echo $OLD_ALL_NETNS > $SYSCTL"
echo 1 >"$SYSCTL"

A=$(unique_name scnva)
B=$(unique_name scnvb)
make_netns "$A"
make_netns "$B"
veth_pair "$A" "$B" 57
TAG="SCN$$"
ip netns exec "$B" nft -f - <<NFT || skip "nftables log not available"
table inet convtest {
	chain in {
		type filter hook input priority filter; policy accept;
		iifname "vb" tcp dport 22 log prefix "${TAG}ssh " level info flags tcp sequence,options accept
		iifname "vb" udp dport 5353 log prefix "${TAG}mdns " accept
		iifname "vb" icmp type echo-request log prefix "${TAG}ping " level notice flags ip options accept
		iifname "vb" meta nfproto ipv6 udp dport 53 log prefix "${TAG}dns6 " level err drop
		iifname "vb" tcp dport 81 log prefix "${TAG}all " flags all drop
	}
	chain out {
		type filter hook output priority filter; policy accept;
		oifname "vb" udp dport 9999 log prefix "${TAG}uid " level debug flags skuid
	}
}
NFT
# a prefix nft's text cannot hold (quote, backslash, tab), in a chain no packet reaches
ip netns exec "$B" nft -j -f - <<'JSON' || fail "cannot load the escapes rule"
{"nftables": [{"add": {"table": {"family": "ip", "name": "esc"}}},
{"add": {"chain": {"family": "ip", "table": "esc", "name": "unused"}}},
{"add": {"rule": {"family": "ip", "table": "esc", "chain": "unused", "expr": [{"log": {"prefix": "q\"b\\s\tt "}}]}}}]}
JSON
EXPECT=7

cat >"$WORK/send.py" <<'PY'
# The frames A sends to B: fixed in every field.
import socket, struct, time
MA, MB = bytes.fromhex("020000570001"), bytes.fromhex("020000570002")
def csum(d):
    if len(d) % 2: d += b"\0"
    s = sum(struct.unpack("!%dH" % (len(d) // 2), d))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
def ip4(proto, pl, opts=b"", ident=0x1234):
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | (5 + len(opts) // 4), 0, 20 + len(opts) + len(pl), ident,
                    0x4000, 64, proto, 0, socket.inet_aton("10.57.0.1"), socket.inet_aton("10.57.0.2")) + opts
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + pl
def ip6(nh, pl):
    return struct.pack("!IHBB16s16s", 6 << 28, len(pl), nh, 64, socket.inet_pton(socket.AF_INET6, "fd57::1"),
                       socket.inet_pton(socket.AF_INET6, "fd57::2")) + pl
def udp(sp, dp, d=b"sluice"): return struct.pack("!HHHH", sp, dp, 8 + len(d), 0) + d
def tcp(sp, dp, fl=0x02, opts=b"", seq=1000, ack=0):
    return struct.pack("!HHIIBBHHH", sp, dp, seq, ack, (5 + len(opts) // 4) << 4, fl, 64240, 0, 0) + opts
OPTS = bytes.fromhex("020405b40402080a0001e2400000000001030307")
frames = [
    (0x0800, ip4(6, tcp(40001, 22, opts=OPTS, seq=123456789))),
    (0x86dd, ip6(6, tcp(50000, 22, opts=OPTS, seq=987654321))),
    (0x0800, ip4(17, udp(1234, 5353))),
    (0x0800, ip4(1, struct.pack("!BBHHH", 8, 0, 0, 42, 7) + b"ping", opts=b"\x94\x04\x00\x00")),
    (0x86dd, ip6(17, udp(5001, 53, b"six"))),
    (0x0800, ip4(6, tcp(40002, 81, 0x12, seq=5, ack=6))),
]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("va", 0))
for et, l3 in frames:
    s.send(MB + MA + struct.pack("!H", et) + l3)
    time.sleep(0.01)
PY
# an unprivileged user cannot run a python3 under /root (pyenv shims)
SYSPY=python3
for p in /usr/bin/python3 /usr/local/bin/python3; do
	[ -x "$p" ] && { SYSPY=$p; break; }
done
send_traffic() {
	ip netns exec "$A" python3 "$WORK/send.py"
	# unconnected with DF: IP ID 0 every time; a fixed source port
	ip netns exec "$B" setpriv --reuid 65534 --regid 65534 --clear-groups "$SYSPY" -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('10.57.0.2', 40999))
s.sendto(b'uid', ('10.57.0.1', 9999))"
}

# printk lines with our tag, as LEVEL;TEXT
python3 - "$TAG" "$WORK/kmsg.txt" <<'PY' &
import os, sys
tag, out = sys.argv[1], sys.argv[2]
fd = os.open("/dev/kmsg", os.O_RDONLY)
os.lseek(fd, 0, os.SEEK_END)
with open(out, "w") as f:
    f.flush()
    while True:
        try:
            rec = os.read(fd, 8192)
        except OSError:      # EPIPE: overwritten records; go on
            continue
        head, msg = rec.decode("utf-8", "replace").split("\n")[0].split(";", 1)
        if msg.startswith(tag):
            f.write("%d;%s\n" % (int(head.split(",")[0]) & 7, msg))
            f.flush()
PY
KMSG_PID=$!
at_exit "kill $KMSG_PID"
wait_for 5 test -e "$WORK/kmsg.txt" || fail "kmsg reader did not start"
lines() { grep -ac "$TAG" "$1" 2>/dev/null || true; }
# has_lines FILE N: FILE holds at least N lines with our tag (for wait_for)
has_lines() { [ "$(lines "$1")" -ge "$2" ]; }

# --- phase 1: printk ---
send_traffic
wait_for 10 has_lines "$WORK/kmsg.txt" $EXPECT ||
	{ cat "$WORK/kmsg.txt"; fail "the kernel logged $(lines "$WORK/kmsg.txt") lines, want $EXPECT"; }
sleep 0.5
[ "$(lines "$WORK/kmsg.txt")" = $EXPECT ] || { cat "$WORK/kmsg.txt"; fail "more kernel lines than packets"; }

# --- --apply when sluice -t fails: nothing changes ---
ip netns exec "$B" nft -j list ruleset >"$WORK/before.json"
mkdir "$WORK/broken"
for f in "$SLUICE_PLUGIN_PATH"/*.so; do ln -s "$f" "$WORK/broken/"; done
rm "$WORK/broken/logline.so"
echo "not a plugin" >"$WORK/broken/logline.so"
SLUICE_PLUGIN_PATH="$WORK/broken" ip netns exec "$B" "$SLUICE" convert nft --apply --yaml "$WORK/bad.yaml" \
	>"$WORK/bad.out" 2>"$WORK/bad.err" && fail "--apply succeeded with a broken logline.so"
grep -q 'sluice -t rejected the generated configuration; nothing changed' "$WORK/bad.err" ||
	{ cat "$WORK/bad.err"; fail "no message for the failed check"; }
ip netns exec "$B" nft -j list ruleset >"$WORK/after-bad.json"
cmp -s "$WORK/before.json" "$WORK/after-bad.json" || fail "the ruleset changed although sluice -t failed"
ls "$WORK" | grep -q '^bad\.yaml' && fail "a YAML was left behind after the failed check"

# --- convert and apply ---
python3 - "$WORK/syslog.sock" "$WORK/syslog.txt" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "wb") as f:
    while True:
        f.write(s.recv(65536) + b"\n")
        f.flush()
PY
at_exit "kill $!"
wait_for 5 test -S "$WORK/syslog.sock" || fail "syslog receiver did not start"
ip netns exec "$B" "$SLUICE" convert nft --apply --group 40 --yaml "$WORK/conv.yaml" \
	--log-file "$WORK/fw.log" --syslog "$WORK/syslog.sock" >"$WORK/conv.out" 2>"$WORK/conv.err" ||
	{ cat "$WORK/conv.err"; fail "convert --apply failed"; }
grep -q "^replace rule inet convtest in handle [0-9]* iifname \"vb\" tcp dport 22 log prefix \"${TAG}ssh \" group 40 accept$" \
	"$WORK/conv.out" || { cat "$WORK/conv.out"; fail "the text batch lacks the ssh rule"; }
ip netns exec "$B" nft -j list ruleset >"$WORK/after.json"
# every rule as before, but each printk log now `log group N` with its prefix
python3 - "$WORK/before.json" "$WORK/after.json" <<'PY' || fail "the applied ruleset is not the old one with log group"
import json, sys
def rules(p):
    return {(r["family"], r["table"], r["chain"], r["handle"]): r["expr"]
            for r in (o["rule"] for o in json.load(open(p))["nftables"] if "rule" in o)}
before, after = rules(sys.argv[1]), rules(sys.argv[2])
assert before.keys() == after.keys(), (before.keys(), after.keys())
groups = set()
for k, expr in before.items():
    want = []
    for st in expr:
        if "log" in st:
            log = st["log"] or {}
            assert "group" in after[k][len(want)]["log"], (k, after[k])
            g = after[k][len(want)]["log"]["group"]
            groups.add(g)
            st = {"log": dict(([("prefix", log["prefix"])] if "prefix" in log else []) + [("group", g)])}
        want.append(st)
    assert want == after[k], (k, want, after[k])
esc = [e for k, e in after.items() if k[:3] == ("ip", "esc", "unused")]
assert esc and esc[0][0]["log"]["prefix"] == 'q"b\\s\tt ', esc
print("rules compared: %d, groups %s" % (len(before), sorted(groups)))
assert groups == set(range(40, 40 + len(groups))), groups
PY
ip netns exec "$B" "$SLUICE" convert nft >"$WORK/again.out" || fail "convert after apply failed"
grep -q 'nothing to do' "$WORK/again.out" || { cat "$WORK/again.out"; fail "printk log left after --apply"; }

# --- phase 2: sluice on the generated YAML ---
ip netns exec "$B" "$SLUICE" -c "$WORK/conv.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
NGROUPS=$(grep -c 'plugin: nflog' "$WORK/conv.yaml")
NGROUPS=$((NGROUPS / 2))
bound() { [ "$(grep -c 'bound NFLOG group' "$WORK/sluice.log")" -ge $NGROUPS ]; }
wait_for 10 bound ||
	{ cat "$WORK/sluice.log"; fail "sluice did not bind its $NGROUPS groups"; }
send_traffic
wait_for 15 has_lines "$WORK/fw.log" $EXPECT || true
wait_for 5 has_lines "$WORK/syslog.txt" $EXPECT || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
sleep 0.3
kill "$KMSG_PID" 2>/dev/null || true

python3 - "$WORK" "$TAG" <<'PY' || { cat "$WORK/sluice.log"; fail "sluice's lines differ from the kernel's"; }
import re, sys
work, tag = sys.argv[1:]
def mask(line):
    # the IP ID of B's own datagram is the kernel's random choice
    return re.sub(r" ID=\d+ ", " ID=_ ", line, 1) if line.startswith(tag + "uid ") else line
kern = [(lvl, mask(t)) for lvl, t in (l.rstrip("\n").split(";", 1) for l in open(work + "/kmsg.txt"))]
want = sorted(t for _, t in kern)
# a kern.log header, when this build's file output writes one (line_header: syslog)
hdr = re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ kernel: (\[ *\d+\.\d+\] )?")
got = sorted(mask(hdr.sub("", l.rstrip("\n"))) for l in open(work + "/fw.log"))
ok = want == got
print("file: kernel %d lines, sluice %d lines, %s" % (len(want), len(got), "equal" if ok else "DIFFERENT"))
for w, g in zip(want, got):
    if w != g:
        print("kernel: %s|\nsluice: %s|" % (w, g))
# syslog: <PRI>Mmm dd hh:mm:ss APP[PID]: TEXT, PRI = kern (0) * 8 + the kernel's level
msg = re.compile(r"^<(\d+)>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [^ ]+\[\d+\]: (.*)$")
sys_got = []
for l in open(work + "/syslog.txt", encoding="utf-8"):
    m = msg.match(l.rstrip("\n"))
    assert m, l
    sys_got.append((m.group(1), mask(m.group(2))))
sys_want = sorted((lvl, t) for lvl, t in kern)
sys_got.sort()
print("syslog: kernel %d lines, sluice %d messages, %s" % (len(sys_want), len(sys_got),
      "equal with the kernel's levels" if sys_want == sys_got else "DIFFERENT"))
for w, g in zip(sys_want, sys_got):
    if w != g:
        print("kernel: %s|\nsluice: %s|" % (w, g))
print("levels:", sorted(set(l for l, _ in kern)))
sys.exit(0 if ok and sys_want == sys_got else 1)
PY
[ "$(lines "$WORK/kmsg.txt")" = $EXPECT ] || { cat "$WORK/kmsg.txt"; fail "printk still logged after the conversion"; }
pass "$EXPECT kernel lines = sluice's file lines = its syslog messages (with the kernel's levels), $NGROUPS groups"
