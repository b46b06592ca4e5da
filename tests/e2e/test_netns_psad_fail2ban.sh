#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tools that read kern.log read sluice's file the same way.  In a
# namespace B one nftables rule logs a port scan from namespace A (20 TCP
# SYNs from 10.97.0.1 to ports 2001-2020, 5 UDP packets from a spoofed
# 10.97.0.77 to ports 3001-3005; raw frames, so each is sent once) twice:
# with `log prefix` (printk, read back from /dev/kmsg and written as rsyslog
# writes kern.log: "MMM dd HH:MM:SS fw kernel: [uptime] line", from the kmsg
# timestamp) and with `log group` to sluice (nflog -> decode -> logline ->
# file with line_header: syslog and, in a second file, rfc3339, both with
# header_uptime).  Then:
#   - the three files hold the same lines once the date and uptime stamp
#     are set aside; the stamps agree with the kernel's (measured);
#   - psad -A -m FILE (private config, run and log directories; no DNS,
#     whois, mail or syslog) prints the same analysis for the three files:
#     the two sources, their packet counts, the scanned port ranges, the
#     log prefix counter;
#   - fail2ban-regex FILE FILTER, with a filter for the kernel LOG format
#     (SRC=<HOST>, the port as F-PORT), matches every line of each file and
#     reports the same source and port for each, and the dates it parsed
#     from the headers are within 1 s of when the packets were sent;
#   - logwatch --service iptables reports the same sources, destinations,
#     ports and packet counts for the three files.
# TZ is Europe/Berlin (when tzdata has it), so the headers are local time.
# net.netfilter.nf_log_all_netns is set to 1 (printk from a non-initial
# namespace) and restored at exit.  fail2ban-regex only reads: no server,
# no jail, nothing is banned.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 psad fail2ban-regex logwatch
[ -r /dev/kmsg ] || skip "cannot read /dev/kmsg"
SYSCTL=/proc/sys/net/netfilter/nf_log_all_netns
modprobe nf_log_syslog 2>/dev/null || true
[ -w "$SYSCTL" ] || skip "no $SYSCTL (nf_log_syslog not available)"
[ -f /etc/psad/psad.conf ] || skip "no /etc/psad/psad.conf (psad not installed from Debian's package)"
if [ -f /usr/share/zoneinfo/Europe/Berlin ]; then
	export TZ=Europe/Berlin
else
	export TZ=UTC
fi

TF=${SLUICE_TEST_TIME_FACTOR:-1}

lock_netfilter	# before the global sysctl: another run's test restores its own value
OLD_ALL_NETNS=$(cat "$SYSCTL")
at_exit "echo $OLD_ALL_NETNS > $SYSCTL"
echo 1 >"$SYSCTL"

TAG="PSD$$"
G=31
netns_pair psd 97
ip netns exec "$B" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.vb.rp_filter=0
ip netns exec "$B" nft -f - <<NFT || skip "nftables log not available"
table inet sluice_psad {
	chain in {
		type filter hook input priority 0; policy accept;
		iifname "vb" meta l4proto { tcp, udp } log prefix "${TAG} " log group $G prefix "${TAG} " drop
	}
}
NFT

cat >"$WORK/psd.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
  kernel-text: {plugin: logline}
stacks:
  syslog:
    - fw
    - decode
    - kernel-text
    - {plugin: file, file: "$WORK/sluice-syslog.log", flush_interval: 50ms,
       line_header: syslog, header: {host: fw, uptime: true}}
  rfc3339:
    - fw
    - decode
    - kernel-text
    - {plugin: file, file: "$WORK/sluice-rfc3339.log", flush_interval: 50ms,
       line_header: rfc3339, header: {host: fw, uptime: true}}
YAML

# The kernel's lines with our tag, as rsyslog's imklog + RSYSLOG_TraditionalFileFormat
# write them to kern.log: the kmsg stamp (microseconds of CLOCK_MONOTONIC) as local
# wall time and as "[%5lu.%06lu]".
python3 - "$TAG" "$WORK/kern.log" <<'PY' &
import os, sys, time
tag, out = sys.argv[1], sys.argv[2]
MON = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
boot = time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)
fd = os.open("/dev/kmsg", os.O_RDONLY)
os.lseek(fd, 0, os.SEEK_END)
with open(out, "w") as f:
    while True:
        try:
            rec = os.read(fd, 8192)
        except OSError:      # EPIPE: overwritten records; go on
            continue
        head, msg = rec.decode("utf-8", "replace").split("\n")[0].split(";", 1)
        if not msg.startswith(tag):
            continue
        us = int(head.split(",")[2])
        tm = time.localtime(boot + us / 1e6)
        f.write("%s %2d %02d:%02d:%02d fw kernel: [%5d.%06d] %s\n" % (
            MON[tm.tm_mon - 1], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
            us // 1000000, us % 1000000, msg))
        f.flush()
PY
KMSG_PID=$!
at_exit "kill $KMSG_PID"
wait_for 5 test -e "$WORK/kern.log" || fail "kmsg reader did not start"

ip netns exec "$B" "$SLUICE" -c "$WORK/psd.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }

date +%s.%N >"$WORK/sent.start"
ip netns exec "$A" python3 - <<'PY'
import socket, struct, time
MA, MB = bytes.fromhex("020000970001"), bytes.fromhex("020000970002")
def csum(d):
    if len(d) % 2: d += b"\0"
    s = sum(struct.unpack("!%dH" % (len(d) // 2), d))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
def ip4(proto, pl, src, ident):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(pl), ident, 0x4000, 64, proto, 0,
                    socket.inet_aton(src), socket.inet_aton("10.97.0.2"))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + pl
def syn(sp, dp):
    return struct.pack("!HHIIBBHHH", sp, dp, 1000 + dp, 0, 5 << 4, 0x02, 64240, 0, 0)
def udp(sp, dp): return struct.pack("!HHHH", sp, dp, 8 + 4, 0) + b"scan"
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("va", 0))
frames = [ip4(6, syn(40000 + p, 2000 + p), "10.97.0.1", 2000 + p) for p in range(1, 21)]
frames += [ip4(17, udp(50000, 3000 + p), "10.97.0.77", 3000 + p) for p in range(1, 6)]
for l3 in frames:
    s.send(MB + MA + struct.pack("!H", 0x0800) + l3)
    time.sleep(0.005)
PY
date +%s.%N >"$WORK/sent.end"

N=25
lines() { grep -ac "$TAG IN=" "$1" 2>/dev/null || true; }
settled() {
	[ "$(lines "$WORK/kern.log")" -ge $N ] && [ "$(lines "$WORK/sluice-syslog.log")" -ge $N ] &&
		[ "$(lines "$WORK/sluice-rfc3339.log")" -ge $N ]
}
wait_for 15 settled || true
sleep 0.3
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
kill "$KMSG_PID" 2>/dev/null || true
for f in kern.log sluice-syslog.log sluice-rfc3339.log; do
	[ "$(lines "$WORK/$f")" = $N ] || { cat "$WORK/$f"; fail "$f: $(lines "$WORK/$f") lines for $N packets"; }
done
head -1 "$WORK/kern.log"
head -1 "$WORK/sluice-syslog.log"
head -1 "$WORK/sluice-rfc3339.log"

# Same lines once the stamps are set aside; the stamps measured against the kernel's.
python3 - "$WORK" "$TAG" "$TF" <<'PY' || fail "sluice's files differ from the kernel's"
import re, sys, time, datetime
work, tag, tf = sys.argv[1], sys.argv[2], float(sys.argv[3])
T = r"fw kernel: \[ *(\d+)\.(\d{6})\] (%s IN=.*)$" % tag
SYS = re.compile(r"^([A-Z][a-z]{2}) ([ \d]\d) (\d\d):(\d\d):(\d\d) " + T)
RFC = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}[+-]\d\d:\d\d) " + T)
MON = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
year = time.localtime().tm_year
def read(fn, rx):
    out = {}
    for l in open("%s/%s" % (work, fn)):
        m = rx.match(l.rstrip("\n"))
        if not m:
            sys.exit("%s: not a kern.log line: %r" % (fn, l))
        g = m.groups()
        if rx is SYS:
            wall = time.mktime((year, MON.index(g[0]) + 1, int(g[1]), int(g[2]), int(g[3]), int(g[4]), 0, 0, -1))
        else:
            wall = datetime.datetime.fromisoformat(g[0]).timestamp()
        out[g[-1]] = (wall, int(g[-3]) + int(g[-2]) / 1e6)
    return out
kern = read("kern.log", SYS)
boot = time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)
for fn, rx in (("sluice-syslog.log", SYS), ("sluice-rfc3339.log", RFC)):
    got = read(fn, rx)
    if sorted(got) != sorted(kern):
        for l in sorted(set(kern) ^ set(got)):
            print(("only kernel: " if l in kern else "only sluice: ") + l)
        sys.exit("%s: the lines differ from the kernel's" % fn)
    # the syslog date has whole seconds (a second may begin between the two
    # stamps); rfc3339's is against the kernel's stamp as wall time
    if rx is SYS:
        dw = max(abs(got[l][0] - kern[l][0]) for l in kern)
    else:
        dw = max(abs(got[l][0] - (boot + kern[l][1])) for l in kern)
    du = max(abs(got[l][1] - kern[l][1]) for l in kern)
    # sluice's stamp is when nflog read the packet (no skb timestamp): qtimeout later
    if dw > (1.0 if rx is SYS else 0.5 * tf) or du > 0.5 * tf:
        sys.exit("%s: stamps too far from the kernel's: date %.6f s, uptime %.6f s" % (fn, dw, du))
    print("ok: %s: %d lines equal to the kernel's; date within %.6f s, uptime within %.6f s" %
          (fn, len(got), dw, du))
PY

# psad with a private configuration: its state, run and archive directories
# in $WORK, only lines with the scan's prefix (FW_SEARCH_ALL N, FW_MSG_SEARCH),
# no DNS, whois, mail or syslog.
mkdir -p "$WORK/psad"
ARCHIVE_BEFORE=$(ls -d /etc/psad/archive 2>/dev/null || true)
sed -e "s|^HOSTNAME .*|HOSTNAME fw;|" \
	-e "s|^PSAD_DIR .*|PSAD_DIR $WORK/psad/log;|" \
	-e "s|^PSAD_RUN_DIR .*|PSAD_RUN_DIR $WORK/psad/run;|" \
	-e "s|^PSAD_FIFO_DIR .*|PSAD_FIFO_DIR $WORK/psad/lib;|" \
	-e "s|^CONF_ARCHIVE_DIR .*|CONF_ARCHIVE_DIR $WORK/psad/archive;|" \
	-e "s|^FW_SEARCH_ALL .*|FW_SEARCH_ALL N;|" \
	-e "s|^FW_MSG_SEARCH .*|FW_MSG_SEARCH $TAG;|" \
	-e "s|^ENABLE_WHOIS_LOOKUPS .*|ENABLE_WHOIS_LOOKUPS N;|" \
	-e "s|^ENABLE_DNS_LOOKUPS .*|ENABLE_DNS_LOOKUPS N;|" \
	-e "s|^ALERTING_METHODS .*|ALERTING_METHODS noemail,nosyslog;|" \
	-e "s|^ENABLE_SIG_MSG_SYSLOG .*|ENABLE_SIG_MSG_SYSLOG N;|" \
	/etc/psad/psad.conf >"$WORK/psad/psad.conf"
for k in HOSTNAME PSAD_DIR PSAD_RUN_DIR PSAD_FIFO_DIR CONF_ARCHIVE_DIR FW_SEARCH_ALL FW_MSG_SEARCH ENABLE_DNS_LOOKUPS; do
	grep -q "^$k .*$WORK\|^$k .*$TAG\|^$k  *fw;\|^$k  *N;" "$WORK/psad/psad.conf" ||
		fail "psad.conf: could not set $k (Debian's psad.conf changed?)"
done
for f in kern sluice-syslog sluice-rfc3339; do
	rm -rf "$WORK/psad/log"	# every file analysed from the same empty state
	timeout 60 psad -c "$WORK/psad/psad.conf" -A -m "$WORK/$f.log" --no-fwcheck --no-whois \
		--no-rdns --no-netstat >"$WORK/$f.psad" 2>&1 ||
		{ cat "$WORK/$f.psad"; fail "psad -A failed on $f.log"; }
	# the analysis without the file names, sorted: psad lists ports and
	# sources in perl's hash order
	grep -v "Parsing \|results are available in" "$WORK/$f.psad" | sort >"$WORK/$f.psad.cmp"
done
grep -q "Found $N iptables log messages out of $N total lines" "$WORK/kern.psad" ||
	{ cat "$WORK/kern.psad"; fail "psad did not take the kernel's $N lines"; }
grep -Eq "10\.97\.0\.1 +DL: [0-9], Packets: 20," "$WORK/kern.psad" &&
	grep -Eq "10\.97\.0\.77 +DL: [0-9], Packets: 5," "$WORK/kern.psad" &&
	grep -q "Scanned ports: TCP 2001-2020, Pkts: 20, Chain: INPUT, Intf: vb" "$WORK/kern.psad" &&
	grep -q "Scanned ports: UDP 3001-3005, Pkts: 5, Chain: INPUT, Intf: vb" "$WORK/kern.psad" &&
	grep -q "\"$TAG\": $N" "$WORK/kern.psad" ||
	{ cat "$WORK/kern.psad"; fail "psad's analysis of the kernel's lines is not the scan that was sent"; }
for f in sluice-syslog sluice-rfc3339; do
	diff -u "$WORK/kern.psad.cmp" "$WORK/$f.psad.cmp" >&2 || fail "psad: $f.log analysed differently from kern.log"
done
echo "ok: psad: the same analysis of the three files: $(grep -E '^ +10\.97\.0\.' "$WORK/kern.psad" | tr -s ' ' | tr '\n' ';')"
[ -n "$ARCHIVE_BEFORE" ] || [ ! -e /etc/psad/archive ] || fail "psad created /etc/psad/archive"

# fail2ban-regex: a filter for the kernel's LOG lines with our prefix.
cat >"$WORK/kernel-scan.conf" <<EOF
# SPDX-License-Identifier: GPL-2.0-or-later
[Definition]
failregex = kernel: (?:\[\s*\d+\.\d+\] )?$TAG IN=\S* OUT=\S* .*SRC=<HOST> DST=\S+ .*DPT=<F-PORT>\d+</F-PORT> 
EOF
for f in kern sluice-syslog sluice-rfc3339; do
	timeout 60 fail2ban-regex -r "$WORK/$f.log" "$WORK/kernel-scan.conf" >"$WORK/$f.f2b" 2>&1 ||
		{ cat "$WORK/$f.f2b"; fail "fail2ban-regex failed on $f.log"; }
	grep -q "^Lines: $N lines, 0 ignored, $N matched, 0 missed" "$WORK/$f.f2b" ||
		{ cat "$WORK/$f.f2b"; fail "fail2ban-regex: not every line of $f.log matched"; }
	timeout 60 fail2ban-regex -r -o '<ip> <F-PORT>' "$WORK/$f.log" "$WORK/kernel-scan.conf" 2>&1 |
		sort >"$WORK/$f.hits"
	timeout 60 fail2ban-regex -r -o row "$WORK/$f.log" "$WORK/kernel-scan.conf" >"$WORK/$f.rows" 2>&1
done
{
	for p in $(seq 2001 2020); do echo "10.97.0.1 $p"; done
	for p in $(seq 3001 3005); do echo "10.97.0.77 $p"; done
} | sort >"$WORK/want.hits"
for f in kern sluice-syslog sluice-rfc3339; do
	diff -u "$WORK/want.hits" "$WORK/$f.hits" >&2 || fail "fail2ban-regex: $f.log's sources and ports are not the scan's"
done
python3 - "$WORK" <<'PY' || fail "fail2ban-regex parsed the wrong dates"
import re, sys
work = sys.argv[1]
t0, t1 = (float(open("%s/sent.%s" % (work, w)).read()) for w in ("start", "end"))
for f in ("kern", "sluice-syslog", "sluice-rfc3339"):
    ts = [float(m) for m in re.findall(r"^\['[\d.]+',\s+([\d.]+),", open("%s/%s.rows" % (work, f)).read(), re.M)]
    if len(ts) != 25:
        sys.exit("%s: %d dated matches" % (f, len(ts)))
    off = max(max(t0 - 1 - t, t - t1 - 1, 0) for t in ts)
    if off > 1:
        sys.exit("%s: a date %.3f s outside the sending time (+-1 s)" % (f, off))
    print("ok: fail2ban-regex: %s.log: 25 matches dated within the sending time +-1 s" % f)
PY

# logwatch's iptables service, on each file as the "messages" of a log dir of its own.
for f in kern sluice-syslog sluice-rfc3339; do
	mkdir "$WORK/lw-$f"
	cp "$WORK/$f.log" "$WORK/lw-$f/messages"
	timeout 60 logwatch --logdir "$WORK/lw-$f" --service iptables --range All --output stdout \
		--detail High --numeric >"$WORK/$f.lw" 2>&1 || { cat "$WORK/$f.lw"; fail "logwatch failed on $f.log"; }
	grep -v "Processing Initiated:" "$WORK/$f.lw" >"$WORK/$f.lw.cmp"
done
grep -q "From 10.97.0.1 - 20 packets" "$WORK/kern.lw" && grep -q "From 10.97.0.77 - 5 packets" "$WORK/kern.lw" &&
	[ "$(grep -c "Service: .*($TAG) - 1 packet" "$WORK/kern.lw")" = $N ] ||
	{ cat "$WORK/kern.lw"; fail "logwatch's report of the kernel's lines is not the scan that was sent"; }
for f in sluice-syslog sluice-rfc3339; do
	diff -u "$WORK/kern.lw.cmp" "$WORK/$f.lw.cmp" >&2 || fail "logwatch: $f.log reported differently from kern.log"
done
echo "ok: logwatch: the same report of the three files: $(grep -E '^ +From ' "$WORK/kern.lw" | tr -s ' ' | tr '\n' ';')"
pgrep -x fail2ban-server >/dev/null && echo "note: a fail2ban-server runs on this machine (not started by this test)"
pass "psad, fail2ban and logwatch see the same scan in sluice's files as in the kernel's ($N lines, TZ=$TZ)"
