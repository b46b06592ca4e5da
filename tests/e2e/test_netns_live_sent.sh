#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Live traffic against what was SENT.  A generator in namespace A sends
# UDP, ICMP echo and TCP (SYN and segments with data) over IPv4 and IPv6
# and writes down every packet (addresses, ports, ICMP id/seq, TCP flags,
# IP length, payload bytes).  nftables in B logs them with `log group`
# to sluice (nflog -> pcap raw / ethernet / nflog, and nflog -> decode ->
# logline -> file, -> json -> file) and to a second group that
# `tcpdump -i nflog` records.  Checked:
#  - each pcap, read with `tcpdump -r` and with `tshark -r`, holds exactly
#    the sent packets (count, addresses, ports, protocol, length, payload);
#    the ethernet one also the veth MACs and ethertypes;
#  - every JSON line passes `python3 -m json.tool` and carries the sent values;
#  - replaying tcpdump's capture through the same stacks gives the same
#    text, JSON and pcap outputs as the live path (normalizations below).
# decode runs with `ifnames: false` on both paths: a capture replayed
# elsewhere has only interface indexes.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 tcpdump tshark

G=41
G2=42
netns_pair sls 96

LOG="log group $G prefix \"sent \" log group $G2 prefix \"sent \""
ip netns exec "$B" nft -f - <<NFT || skip "nftables log group not available"
table inet sluice_sent {
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr 10.96.0.1 meta l4proto { icmp, tcp, udp } $LOG
		ip6 saddr fd96::1 meta l4proto { tcp, udp } $LOG
		ip6 saddr fd96::1 icmpv6 type echo-request $LOG
	}
}
NFT

# conf INPUT-ELEMENT DIR: the same stacks for the live and the replay path
conf() {
	cat <<YAML
instances:
  in: $1
  dec: {plugin: decode, ifnames: false}
stacks:
  raw: [in, {plugin: pcap, file: "$2/raw.pcap", linktype: raw}]
  eth: [in, {plugin: pcap, file: "$2/eth.pcap", linktype: ethernet}]
  nf: [in, {plugin: pcap, file: "$2/nflog.pcap", linktype: nflog}]
  txt: [in, dec, logline, {plugin: file, file: "$2/text.log"}]
  js: [in, dec, {plugin: json, payload: true}, {plugin: file, file: "$2/out.json"}]
YAML
}
mkdir "$WORK/live" "$WORK/replay"
conf "{plugin: nflog, group: $G, qtimeout: 20ms}" "$WORK/live" >"$WORK/live.yaml"
conf "{plugin: replay, file: \"$WORK/kernel.pcap\"}" "$WORK/replay" >"$WORK/replay.yaml"

ip netns exec "$B" tcpdump -n -U -i nflog:$G2 -w "$WORK/kernel.pcap" 2>"$WORK/tcpdump.log" &
TCPDUMP_PID=$!
at_exit "kill $TCPDUMP_PID"
wait_for 10 grep -qs "listening on" "$WORK/tcpdump.log" || fail "tcpdump did not start"
ip netns exec "$B" "$SLUICE" -c "$WORK/live.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }

# The generator: every packet it sends goes into sent.json.  TCP segments
# are built by hand (raw socket, the kernel adds the IP header) so their
# flags, ports and data are exactly known; B answers them with RSTs.
ip netns exec "$A" python3 - "$WORK/sent.json" <<'PY'
import json, socket, struct, sys, time
def csum(b):
    if len(b) % 2: b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
def pseudo(fam, src, dst, proto, n):
    if fam == socket.AF_INET:
        return socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, proto, n)
    return (socket.inet_pton(fam, src) + socket.inet_pton(fam, dst) + struct.pack("!IxxxB", n, proto))
sent = []
for fam, v, src, dst in ((socket.AF_INET, 4, "10.96.0.1", "10.96.0.2"),
                         (socket.AF_INET6, 6, "fd96::1", "fd96::2")):
    hl = 20 if v == 4 else 40
    u = socket.socket(fam, socket.SOCK_DGRAM)
    u.bind((src, 40001))
    for i in range(3):
        pl = b"sent-udp-%d-v%d-" % (i, v) + b"u" * (7 * i)
        u.sendto(pl, (dst, 9999))
        sent.append(dict(v=v, proto="udp", src=src, dst=dst, sport=40001, dport=9999,
                         len=hl + 8 + len(pl), payload=pl.hex()))
    if v == 4:
        s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    else:
        s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)   # the kernel sums ICMPv6
    for seq in (1, 2):
        pl = b"sent-ping-%d" % seq
        m = struct.pack("!BBHHH", 8 if v == 4 else 128, 0, 0, 0x5196, seq) + pl
        if v == 4:
            m = m[:2] + struct.pack("!H", csum(m)) + m[4:]
        s.sendto(m, (dst, 0))
        sent.append(dict(v=v, proto="icmp" if v == 4 else "icmpv6", src=src, dst=dst,
                         icmp_type=8 if v == 4 else 128, icmp_id=0x5196, icmp_seq=seq,
                         len=hl + 8 + len(pl), payload=pl.hex()))
    t = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_TCP)
    for flags, names, pl in ((0x02, "SYN", b""), (0x18, "ACK PSH", b"sent-tcp-data-1"),
                             (0x19, "ACK PSH FIN", b"sent-tcp-data-2-longer")):
        h = struct.pack("!HHIIBBHHH", 40100, 8081, 1000, 1 if flags & 0x10 else 0, 5 << 4, flags, 512, 0, 0)
        seg = h + pl
        c = csum(pseudo(fam, src, dst, 6, len(seg)) + seg)
        seg = seg[:16] + struct.pack("!H", c) + seg[18:]
        t.sendto(seg, (dst, 0))
        sent.append(dict(v=v, proto="tcp", src=src, dst=dst, sport=40100, dport=8081, tcp_flags=names,
                         len=hl + 20 + len(pl), payload=pl.hex()))
    time.sleep(0.05)
json.dump(sent, open(sys.argv[1], "w"), indent=1)
PY
N=$(python3 -c "import json; print(len(json.load(open('$WORK/sent.json'))))")

live_has_all() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	grep -q "(nflog): in=$N " "$WORK/sluice.log"
}
wait_for 10 live_has_all || true
kernel_has_all() { [ "$(tcpdump --count -r "$WORK/kernel.pcap" 2>/dev/null | sed -n 's/ packets\?$//p')" -ge "$N" ]; }
wait_for 5 kernel_has_all || true	# tcpdump sets no qtimeout: the kernel holds events up to 1 s
kill -INT "$TCPDUMP_PID"
wait "$TCPDUMP_PID" || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
grep -q "errors=[1-9]" "$WORK/sluice.log" && { cat "$WORK/sluice.log"; fail "errors counted"; }

# ---- 1. the pcaps hold the sent packets: tcpdump -r and tshark -r ----
cat >"$WORK/check.py" <<'PY'
import json, re, subprocess, sys
sent = json.load(open(sys.argv[2]))
def key(p):
    # what identifies a sent packet and must be read back identically
    return (p["v"], p["proto"], p["src"], p["dst"], p.get("sport"), p.get("dport"),
            p.get("icmp_seq"), p["len"], p["payload"])
want = sorted(key(p) for p in sent)
def ip_fields(b):
    """(version, proto name, l4 offset, total length) of an IP packet"""
    if b[0] >> 4 == 4:
        proto = b[9]
        return 4, {1: "icmp", 6: "tcp", 17: "udp"}.get(proto, str(proto)), (b[0] & 15) * 4, int.from_bytes(b[2:4], "big")
    proto = b[6]
    return 6, {58: "icmpv6", 6: "tcp", 17: "udp"}.get(proto, str(proto)), 40, 40 + int.from_bytes(b[4:6], "big")
def l4(proto, b, off):
    """(sport, dport, icmp_seq, payload hex) from the layer-4 header on"""
    if proto in ("tcp",):
        return (int.from_bytes(b[off:off + 2], "big"), int.from_bytes(b[off + 2:off + 4], "big"), None,
                b[off + (b[off + 12] >> 4) * 4:].hex())
    if proto == "udp":
        return int.from_bytes(b[off:off + 2], "big"), int.from_bytes(b[off + 2:off + 4], "big"), None, b[off + 8:].hex()
    return None, None, int.from_bytes(b[off + 6:off + 8], "big"), b[off + 8:].hex()

def from_tcpdump(fn, eth):
    # -e (link header) only on Ethernet: on RAW it turns "IP6" into "ip:"
    out = subprocess.run(["tcpdump", "-nn", "-x", "-r", fn] + (["-e"] if eth else []), capture_output=True, text=True, check=True).stdout
    pkts, macs = [], set()
    for line in out.splitlines():
        if line.startswith("\t0x"):
            pkts[-1][1].extend(bytes.fromhex("".join(line.split(":", 1)[1].split())))
        else:
            pkts.append([line, bytearray()])
    got = []
    for summ, b in pkts:
        # with -e the ethertype replaces the "IP"/"IP6" label
        m = re.search(r"(?:\b(IP6?)|ethertype (IPv[46]) \(0x[0-9a-f]+\), length \d+:) (\S+) > (\S+?): ", summ)
        if not m:
            sys.exit("tcpdump: cannot parse %r" % summ)
        v, proto, off, tot = ip_fields(bytes(b))
        # NFLOG: tcpdump dumps the payload TLV with its padding to 4 bytes
        if not eth and len(b) > tot and len(b) - tot < 4 and not any(b[tot:]):
            del b[tot:]
        label = m.group(1) or {"IPv4": "IP", "IPv6": "IP6"}[m.group(2)]
        src, dst = m.group(3), m.group(4)
        sport = dport = None
        if proto in ("tcp", "udp"):
            src, sport = src.rsplit(".", 1)
            dst, dport = dst.rsplit(".", 1)
            sport, dport = int(sport), int(dport)
        hs, hd, seq, pl = l4(proto, bytes(b), off)
        if (hs, hd) != (sport, dport) or len(b) != tot:
            sys.exit("tcpdump: summary and bytes disagree: %r: ports %r, %d bytes of %d: %s" %
                     (summ, (hs, hd), len(b), tot, bytes(b).hex()))
        if label != ("IP" if v == 4 else "IP6"):
            sys.exit("tcpdump: version: %r" % summ)
        got.append((v, proto, src, dst, sport, dport, seq, tot, pl))
        if eth:
            e = re.match(r"\S+ (\S+) > (\S+), ethertype (\S+) \((0x[0-9a-f]+)\)", summ)
            macs.add(e.groups() if e else summ)
    return got, macs

def from_tshark(fn, eth):
    f = ["ip.version", "ipv6.version", "ip.src", "ipv6.src", "ip.dst", "ipv6.dst", "ip.proto", "ipv6.nxt",
         "ip.len", "ipv6.plen", "udp.srcport", "tcp.srcport", "udp.dstport", "tcp.dstport",
         "icmp.seq", "icmpv6.echo.sequence_number", "udp.payload", "tcp.payload", "data.data",
         "eth.src", "eth.dst", "eth.type"]
    cmd = ["tshark", "-r", fn, "-T", "fields", "-E", "separator=/t", "-E", "occurrence=f"]
    for x in f:
        cmd += ["-e", x]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    got, macs = [], set()
    for line in out.splitlines():
        c = dict(zip(f, line.split("\t")))
        v = int(c["ip.version"] or c["ipv6.version"])
        pn = int(c["ip.proto"] or c["ipv6.nxt"])
        proto = {1: "icmp", 58: "icmpv6", 6: "tcp", 17: "udp"}.get(pn, str(pn))
        tot = int(c["ip.len"]) if v == 4 else 40 + int(c["ipv6.plen"])
        num = lambda *k: next((int(c[x]) for x in k if c[x]), None)
        pl = (c["udp.payload"] or c["tcp.payload"] or c["data.data"]).replace(":", "")
        got.append((v, proto, c["ip.src"] or c["ipv6.src"], c["ip.dst"] or c["ipv6.dst"],
                    num("udp.srcport", "tcp.srcport"), num("udp.dstport", "tcp.dstport"),
                    num("icmp.seq", "icmpv6.echo.sequence_number"), tot, pl))
        if eth:
            macs.add((c["eth.src"], c["eth.dst"], c["eth.type"]))
    return got, macs

fn, kind = sys.argv[1], sys.argv[3]
eth = kind == "ethernet"
ok = True
for name, reader in (("tcpdump", from_tcpdump), ("tshark", from_tshark)):
    got, macs = reader(fn, eth)
    if sorted(got) != want:
        ok = False
        print("%s -r %s: %d packets, %d sent" % (name, fn, len(got), len(want)))
        for x in sorted(set(want) - set(got)): print("  sent, not read:", x)
        for x in sorted(set(got) - set(want)): print("  read, not sent:", x)
    if eth:
        if name == "tcpdump":
            w = {("02:00:00:96:00:01", "02:00:00:96:00:02", "IPv4", "0x0800"),
                 ("02:00:00:96:00:01", "02:00:00:96:00:02", "IPv6", "0x86dd")}
        else:
            w = {("02:00:00:96:00:01", "02:00:00:96:00:02", "0x0800"),
                 ("02:00:00:96:00:01", "02:00:00:96:00:02", "0x86dd")}
        if macs != w:
            ok = False
            print("%s -r %s: link headers %r" % (name, fn, macs))
print("%s (%s): %s" % (fn, kind, "ok" if ok else "DIFFERENT"))
sys.exit(0 if ok else 1)
PY
for lt in raw ethernet nflog; do
	f=$lt
	[ $lt = ethernet ] && f=eth
	python3 "$WORK/check.py" "$WORK/live/$f.pcap" "$WORK/sent.json" $lt || fail "$lt pcap does not hold the sent packets"
done

# ---- 3. JSON: valid, and the sent values ----
python3 -m json.tool --json-lines "$WORK/live/out.json" >/dev/null || fail "python3 -m json.tool rejects out.json"
python3 - "$WORK/live/out.json" "$WORK/sent.json" <<'PY' || fail "JSON records do not carry the sent values"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
sent = json.load(open(sys.argv[2]))
bad = []
if len(recs) != len(sent):
    bad.append("%d records, %d sent" % (len(recs), len(sent)))
for p in sent:
    m = [r for r in recs if r.get("payload", "") == p["payload"] and r.get("proto") == p["proto"]
         and r.get("src_ip") == p["src"]]
    if len(m) != 1:
        bad.append("%d records for %r" % (len(m), p)); continue
    r = m[0]
    w = {"prefix": "sent ", "hook": "INPUT", "ip_version": p["v"], "src_ip": p["src"], "dest_ip": p["dst"],
         "proto": p["proto"], "len": p["len"], "family": "ipv4" if p["v"] == 4 else "ipv6",
         "mac_src": "02:00:00:96:00:01", "mac_dst": "02:00:00:96:00:02"}
    if p["proto"] in ("tcp", "udp"):
        w.update(src_port=p["sport"], dest_port=p["dport"])
    if p["proto"] == "udp":
        w["udp_len"] = 8 + len(p["payload"]) // 2
    if p["proto"] == "tcp":
        w["tcp_flags"] = p["tcp_flags"]
    if p["proto"].startswith("icmp"):
        w.update(icmp_type=p["icmp_type"], icmp_code=0, icmp_id=p["icmp_id"], icmp_seq=p["icmp_seq"])
    for k, v in w.items():
        if r.get(k) != v:
            bad.append("%s=%r, sent %r: %s" % (k, r.get(k), v, json.dumps(r)))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
echo "ok: JSON lines valid and equal to what was sent"

# ---- 5. replaying tcpdump's capture gives the live outputs ----
"$SLUICE" -c "$WORK/replay.yaml" >"$WORK/replay.log" 2>&1 || { cat "$WORK/replay.log"; fail "replay failed"; }
python3 - "$WORK/live" "$WORK/replay" "$WORK/kernel.pcap" <<'PY' || fail "the replayed outputs differ from the live ones"
import json, struct, sys
live, rep, kern = sys.argv[1:]
def pcap(fn):
    d = open(fn, "rb").read()
    e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, out = 24, []
    while off + 16 <= len(d):
        s, f, incl, orig = struct.unpack(e + "IIII", d[off:off + 16])
        out.append(((s, f), orig, d[off + 16:off + 16 + incl]))
        off += 16 + incl
    return d[:24], out
def tlvs(rec):
    p, out = 4, []
    while p + 4 <= len(rec):
        l, t = struct.unpack("=HH", rec[p:p + 4])
        out.append((t & 0x3fff, rec[p + 4:p + l]))
        p += (l + 3) & ~3
    return out
# Timestamps: the kernel puts NFULA_TIMESTAMP in every event of the
# prerouting/input/forward hooks, the skb's time when it has one, else the
# time it builds that group's event.  The two groups' copies of a packet
# are built one after the other, so they may differ by microseconds: times
# are compared to within 100 ms, nothing else is.  (Older kernels
# sent no timestamp for unstamped skbs: then live records carry the time
# sluice received them, replayed ones the time tcpdump did, which the
# kernel may have held back for up to its 1 s default flush timeout.)
_, krecs = pcap(kern)
kts = [any(t == 3 for t, _ in tlvs(r)) for _, _, r in krecs]
print("kernel timestamps on %d of %d events" % (sum(kts), len(kts)))
TOL = 100000 if all(kts) else 2000000   # microseconds
def us_rfc3339(t):
    import datetime
    return int(datetime.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp() * 10**6)
ok = True
def differ(what, a, b):
    global ok
    ok = False
    print("%s differs:\n  live:   %r\n  replay: %r" % (what, a, b))

# text: logline prints neither times nor sequence numbers: byte for byte
a, b = open(live + "/text.log").read(), open(rep + "/text.log").read()
if a != b or not a:
    differ("text.log", a[:500], b[:500])

# JSON: "group" is the NFLOG group, and tcpdump had to have its own (a group
# has one listener); "seq_local"/"seq_global" are absent from tcpdump's
# capture because tcpdump does not ask for sequence numbers.
def norm(line):
    o = json.loads(line)
    for k in ("group", "seq_local", "seq_global"):
        o.pop(k, None)
    return o
la = open(live + "/out.json").read().splitlines()
lb = open(rep + "/out.json").read().splitlines()
if len(la) != len(kts) or len(lb) != len(kts):
    differ("out.json line count", len(la), len(lb))
else:
    for i, (x, y) in enumerate(zip(la, lb)):
        ox, oy = norm(x), norm(y)
        if abs(us_rfc3339(ox.pop("timestamp")) - us_rfc3339(oy.pop("timestamp"))) > TOL or ox != oy:
            differ("out.json line %d" % (i + 1), x, y)

# pcaps: same file header and frames, record times within TOL.  NFLOG
# frames: the nfgenmsg resource id is the group, the sequence TLVs (12, 13)
# are missing from tcpdump's capture (so the frame lengths differ by
# theirs), and the timestamp TLV (3) is compared within TOL, all as above.
def us(t):
    return t[0] * 10**6 + t[1] // 1000   # nanosecond pcaps
for name in ("raw", "eth", "nflog"):
    ha, ra = pcap("%s/%s.pcap" % (live, name))
    hb, rb = pcap("%s/%s.pcap" % (rep, name))
    if ha != hb:
        differ(name + ".pcap header", ha, hb)
    if len(ra) != len(kts) or len(rb) != len(kts):
        differ(name + ".pcap record count", len(ra), len(rb)); continue
    for i, ((ta, oa, da), (tb, ob, db)) in enumerate(zip(ra, rb)):
        if abs(us(ta) - us(tb)) > TOL:
            differ("%s.pcap record %d time" % (name, i), ta, tb)
        if name == "nflog":
            xa, xb = dict(tlvs(da)), dict(tlvs(db))
            if 3 not in xa or 3 not in xb:
                differ("nflog.pcap record %d: no timestamp TLV" % i, xa, xb)
                continue
            sa, ua = struct.unpack(">QQ", xa[3])
            sb, ub = struct.unpack(">QQ", xb[3])
            if abs((sa - sb) * 10**6 + ua - ub) > TOL:
                differ("nflog.pcap record %d timestamp TLV" % i, xa[3], xb[3])
            # the family byte and version; not the resource id (the group)
            da = (da[:2], [t for t in tlvs(da) if t[0] not in (3, 12, 13)])
            db = (db[:2], [t for t in tlvs(db) if t[0] not in (3, 12, 13)])
            oa = ob = None
        if (oa, da) != (ob, db):
            differ("%s.pcap record %d" % (name, i), (oa, da), (ob, db))
print("text, JSON and 3 pcaps: live and replay", "equal" if ok else "DIFFER")
sys.exit(0 if ok else 1)
PY
pass "$N sent packets in 3 pcaps (tcpdump and tshark), JSON and replay"
