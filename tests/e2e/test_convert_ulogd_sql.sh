#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A converted SQLITE3 stack writes into ulogd2's own table: the database is
# made with Debian's ulogd2 schema (/usr/share/doc/ulogd2/sqlite3.table,
# unchanged), `sluice convert ulogd` converts a ulogd.conf whose stack ends
# in that table, the converted configuration runs (its NFLOG input read
# from tests/data/nflog-mixed.pcap through replay, everything else as
# converted), and sqlite3 reads the rows back: one per record of a json
# output of the same replay, with its prefix, time, mark, hook and length
# in ulogd2's columns.  The key ulogd takes and sluice does not (buffer=200)
# is a warning.  With Debian's postgresql and pgsql-ulogd2-flat.sql (and
# root, for the private server of pg_lib.sh), a PGSQL stack likewise into
# ulogd2's flat ulog2 table: a stack per protocol writes its ports and ICMP
# fields into their per-protocol columns, one more the other protocols,
# and every record is one row.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_lib.sh"
need_cmd sqlite3 python3
python3 -c 'import yaml' 2>/dev/null || skip "needs python3-yaml"
[ -e "$SLUICE_PLUGIN_PATH/sql.so" ] || skip "sql output not built"
SCHEMA=/usr/share/doc/ulogd2/sqlite3.table
[ -r "$SCHEMA" ] || skip "no $SCHEMA (Debian's ulogd2 package)"
CAP="$SRCDIR/tests/data/nflog-mixed.pcap"
[ -f "$CAP" ] || skip "no captures in tests/data"

DB="$WORK/ulogd.sqlite3db"
sqlite3 "$DB" <"$SCHEMA" || fail "sqlite3 refused $SCHEMA"
cat >"$WORK/ulogd.conf" <<EOF2
[global]
logfile="syslog"
loglevel=3
stack=log1:NFLOG,base1:BASE,ifi1:IFINDEX,sqlite3_pkt:SQLITE3

[log1]
group=5

[sqlite3_pkt]
table="ulog_pkt"
db="$DB"
buffer=200
EOF2
"$SLUICE" convert ulogd "$WORK/ulogd.conf" >"$WORK/conv.yaml" 2>"$WORK/conv.err" ||
	{ cat "$WORK/conv.err"; fail "convert failed"; }
grep -q "ulogd.conf:12: warning: \[sqlite3_pkt\] (SQLITE3): buffer=200 is not carried over" "$WORK/conv.err" ||
	{ cat "$WORK/conv.err"; fail "no warning for buffer=200"; }
"$SLUICE" -t -c "$WORK/conv.yaml" >/dev/null || fail "sluice -t refused the converted file"

# The NFLOG input reads the capture instead of group 5; a json output of
# the same records is the reference.
python3 - "$WORK/conv.yaml" "$WORK/run.yaml" "$CAP" "$WORK/ref.json" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
assert doc["instances"]["log1"]["plugin"] == "nflog", doc["instances"]["log1"]
doc["instances"]["log1"] = {"plugin": "replay", "file": sys.argv[3]}
doc["stacks"]["ref"] = ["log1", {"plugin": "decode", "ifnames": False}, "json",
                        {"plugin": "file", "file": sys.argv[4]}]
yaml.safe_dump(doc, open(sys.argv[2], "w"))
PY
"$SLUICE" -c "$WORK/run.yaml" >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log"; fail "the converted configuration did not run"; }
grep -q 'counters: sqlite3_pkt (sql): in=\([0-9]*\) out=\1 .* failed=0 .*dropped_rows=0' "$WORK/run.log" ||
	{ cat "$WORK/run.log"; fail "sql counters"; }
sqlite3 -batch -json "$DB" "SELECT * FROM ulog_pkt ORDER BY rowid" >"$WORK/rows.json"
python3 - "$WORK/ref.json" "$WORK/rows.json" <<'PY' || fail "ulog_pkt rows differ from the json output"
import json, sys
from datetime import datetime, timezone
ref = [json.loads(l) for l in open(sys.argv[1])]
rows = json.load(open(sys.argv[2])) if open(sys.argv[2]).read().strip() else []
assert len(ref) > 10 and len(rows) == len(ref), (len(ref), len(rows))
hooks = {"PREROUTING": 0, "INPUT": 1, "FORWARD": 2, "OUTPUT": 3, "POSTROUTING": 4}
for i, (j, r) in enumerate(zip(ref, rows)):
    t = datetime.strptime(j["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    want = {"oob_prefix": j.get("prefix"), "oob_time_sec": int(t.timestamp()),
            "oob_time_usec": t.microsecond, "oob_mark": j.get("mark"),
            "raw_pktlen": j.get("len"), "oob_uid": j.get("uid"), "oob_gid": j.get("gid")}
    for k, v in want.items():
        assert r[k] == v, "row %d: %s is %r, the record has %r" % (i, k, r[k], v)
    if "hook" in j and j["hook"] in hooks:
        assert r["oob_hook"] == hooks[j["hook"]], "row %d: oob_hook %r, hook %s" % (i, r["oob_hook"], j["hook"])
    assert r["raw_pktcount"] is None
print("%d rows in ulog_pkt match the records" % len(rows))
PY
sqlite="the converted SQLITE3 stack wrote $(sqlite3 "$DB" 'SELECT count(*) FROM ulog_pkt') rows into ulogd2's ulog_pkt"

# ---- PostgreSQL: ulogd2's flat schema, loaded unchanged ----
FLAT=/usr/share/doc/ulogd2/pgsql-ulogd2-flat.sql.gz
if [ "$(id -u)" != 0 ] || ! pg_have || [ ! -f "$FLAT" ] || ! command -v psql >/dev/null; then
	pass "$sqlite; PGSQL not run (needs root, Debian's postgresql and $FLAT)"
fi
export PGTZ=UTC PGOPTIONS="-c client_min_messages=warning"
pg_start "$WORK/pg" || fail "cannot start PostgreSQL"
pg_sql -c "CREATE DATABASE ulogd"
zcat "$FLAT" | psql "$PG_DSN dbname=ulogd" -X -q -v ON_ERROR_STOP=1 >/dev/null || fail "ulogd2's schema does not load"
printf '%s\n' '[global]' 'stack=log2:NFLOG,base1:BASE,ifi1:IFINDEX,ip2str1:IP2STR,mac2str1:HWHDR,pgsql1:PGSQL' \
	'[log2]' 'group=5' '[pgsql1]' 'db="ulogd"' 'host="127.0.0.1"' "port=$PG_PORT" 'user="postgres"' \
	'table="ulog2"' 'reconnect=5' >"$WORK/pg.conf"
"$SLUICE" convert ulogd "$WORK/pg.conf" >"$WORK/pg.yaml" 2>"$WORK/pg.err" || { cat "$WORK/pg.err"; fail "PGSQL: convert failed"; }
grep -q "pg.conf:11: warning: \[pgsql1\] (PGSQL): reconnect=5 is not carried over" "$WORK/pg.err" ||
	{ cat "$WORK/pg.err"; fail "PGSQL: no warning for reconnect=5"; }
! grep -q "not written" "$WORK/pg.err" || { cat "$WORK/pg.err"; fail "PGSQL: a warning about unwritten fields"; }
"$SLUICE" -t -c "$WORK/pg.yaml" >/dev/null || fail "PGSQL: sluice -t refused the converted file"

# The capture has TCP, UDP, ICMP and ICMPv6 packets: one more of another
# protocol (a copy of a UDP packet as GRE) must land in ulog2 once too.
python3 - "$CAP" "$WORK/pg.pcap" <<'PY' || fail "PGSQL: cannot add a GRE packet to the capture"
import struct, sys
# Appends to an NFLOG capture (linktype 239) a copy of its first IPv4 UDP
# record with another protocol (GRE, 47) and a later time: a packet of none
# of ulog2's per-protocol columns.
src, dst = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
hdr, off, recs = data[:24], 24, []
bo = "<" if data[:4] == b"\xd4\xc3\xb2\xa1" else ">"
assert struct.unpack(bo + "I", hdr[20:24])[0] == 239, "not an NFLOG capture"
while off < len(data):
    sec, usec, incl, orig = struct.unpack(bo + "IIII", data[off:off + 16])
    recs.append((sec, usec, data[off + 16:off + 16 + incl]))
    off += 16 + incl
def gre(rec):
    r, o = bytearray(rec), 4
    while o + 4 <= len(r):
        tl, tt = struct.unpack("<HH", r[o:o + 4])
        if tl < 4:
            return None
        if tt & 0x7fff == 9 and r[o + 4] >> 4 == 4 and r[o + 4 + 9] == 17:
            ip = o + 4
            r[ip + 9] = 47
            r[ip + 10:ip + 12] = b"\0\0"
            ihl = (r[ip] & 15) * 4
            s = sum(struct.unpack("!%dH" % (ihl // 2), bytes(r[ip:ip + ihl])))
            while s >> 16:
                s = (s & 0xffff) + (s >> 16)
            r[ip + 10:ip + 12] = struct.pack("!H", ~s & 0xffff)
            return bytes(r)
        o += (tl + 3) & ~3
    return None
new = next(g for g in (gre(r[2]) for r in recs) if g)
sec, usec = max((r[0], r[1]) for r in recs)
out = bytearray(data) + struct.pack(bo + "IIII", sec + 1, usec, len(new), len(new)) + new
open(dst, "wb").write(out)
PY
python3 - "$WORK/pg.yaml" "$WORK/pgrun.yaml" "$WORK/pg.pcap" "$WORK/pgref.json" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
assert doc["instances"]["log2"]["plugin"] == "nflog", doc["instances"]["log2"]
doc["instances"]["log2"] = {"plugin": "replay", "file": sys.argv[3]}
doc["stacks"]["ref"] = ["log2", {"plugin": "decode", "ifnames": False}, "json",
                        {"plugin": "file", "file": sys.argv[4]}]
yaml.safe_dump(doc, open(sys.argv[2], "w"))
PY
"$SLUICE" -c "$WORK/pgrun.yaml" >"$WORK/pgrun.log" 2>&1 || { cat "$WORK/pgrun.log"; fail "PGSQL: the converted configuration did not run"; }
for sql in pgsql1 pgsql1_tcp pgsql1_udp pgsql1_icmp pgsql1_icmpv6; do
	grep -q "counters: $sql (sql): in=\([0-9]*\) out=\1 .* failed=0 .*dropped_rows=0" "$WORK/pgrun.log" ||
		{ cat "$WORK/pgrun.log"; fail "PGSQL: $sql's counters"; }
done
# Five instances write concurrently: rows and records are compared as
# sorted lists, so a row missing or written twice is a difference too.
psql "$PG_DSN dbname=ulogd" -X -q -At -F $'\t' -P null='\N' -c "SELECT oob_prefix, oob_time_sec,
	oob_time_usec, oob_mark, ip_saddr_str, ip_daddr_str, ip_totlen, ip_ttl, ip_protocol,
	tcp_sport, tcp_dport, tcp_seq, tcp_window, udp_sport, udp_dport, udp_len,
	icmp_type, icmp_code, icmp_echoid, icmp_echoseq,
	icmpv6_type, icmpv6_code, icmpv6_echoid, icmpv6_echoseq FROM ulog2" >"$WORK/ulog2.tsv"
python3 - "$WORK/pgref.json" "$WORK/ulog2.tsv" <<'PY' || fail "PGSQL: ulog2 rows differ from the json output"
import json, sys
from datetime import datetime, timezone
ref = [json.loads(l) for l in open(sys.argv[1])]
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
protos = {"tcp": 6, "udp": 17, "icmp": 1, "icmpv6": 58, "gre": 47}
assert {j.get("proto") for j in ref} == set(protos), {j.get("proto") for j in ref}
assert len(ref) > 10 and len(rows) == len(ref), "%d rows for %d records" % (len(rows), len(ref))
s = lambda v: "\\N" if v is None else str(v)
def want(j):
    t = datetime.strptime(j["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    p = j.get("proto")
    on = lambda proto, k: j.get(k) if p == proto else None
    return [s(v) for v in [j.get("prefix"), int(t.timestamp()), t.microsecond, j.get("mark"),
            j.get("src_ip"), j.get("dest_ip"), j.get("len"), j.get("ttl"), protos[p],
            on("tcp", "src_port"), on("tcp", "dest_port"), on("tcp", "tcp_seq"),
            on("tcp", "tcp_window"), on("udp", "src_port"), on("udp", "dest_port"),
            on("udp", "udp_len"), on("icmp", "icmp_type"), on("icmp", "icmp_code"),
            on("icmp", "icmp_id"), on("icmp", "icmp_seq"), on("icmpv6", "icmp_type"),
            on("icmpv6", "icmp_code"), on("icmpv6", "icmp_id"), on("icmpv6", "icmp_seq")]]
wanted = sorted(want(j) for j in ref)
rows.sort()
for i, (r, w) in enumerate(zip(rows, wanted)):
    assert r == w, "row %d (sorted): %r, the records give %r" % (i, r, w)
assert any(r[9] != "\\N" for r in rows) and any(r[16] != "\\N" for r in rows)
print("%d rows in ulog2 match the records" % len(rows))
PY
pass "$sqlite; the converted PGSQL stacks wrote $(wc -l <"$WORK/ulog2.tsv") rows (ports and ICMP fields in their protocol's columns) into ulogd2's ulog2"
