# SPDX-License-Identifier: GPL-2.0-or-later
"""sql_compare.py SCHEMA JSON TSV: the rows of the sql output's default table
(packets or flows; TSV of `SELECT <COLUMNS[SCHEMA]>`, tab separated, NULL as
\\N, from psql -At or sqlite3) are the records the json output of the same
stack wrote, field by field: every column, NULL exactly where the json
object lacks the field.  `sql_compare.py columns SCHEMA` prints the column
list for the query."""
import ipaddress, json, re, sys

PROTOS = {"icmp": 1, "tcp": 6, "udp": 17, "icmpv6": 58, "sctp": 132, "gre": 47, "esp": 50, "ah": 51}
TCP = {"FIN": 1, "SYN": 2, "RST": 4, "PSH": 8, "ACK": 16, "URG": 32, "ECE": 64, "CWR": 128}
END = {"idle": 1, "active": 2, "eof": 3, "evicted": 4, "destroy": 5}
FAMILY = {"ipv4": 2, "ipv6": 10, "inet": 1, "arp": 3, "bridge": 7}


def t_json(v):
    m = re.fullmatch(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)\.(\d{6})Z", v)
    if not m:
        sys.exit("json time %r" % v)
    return "%s %s.%s" % m.groups()


def t_sql(v):
    # PostgreSQL drops trailing zeros of the fraction; both print a zero offset
    m = re.fullmatch(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?(?:Z|\+00(?::00)?)", v)
    if not m:
        sys.exit("sql time %r" % v)
    return "%s %s.%s" % (m.group(1), m.group(2), (m.group(3) or "").ljust(6, "0"))


def addr(v):
    a = ipaddress.ip_address(v)
    return str((a.ipv4_mapped if a.version == 6 else None) or a)


def proto(v):
    return v if isinstance(v, int) else PROTOS[v]


def flags(v):
    return sum(TCP[f] for f in v.split()) if v else 0


# column: (json key, json value -> canonical, sql text -> canonical)
TIME = (t_json, t_sql)
ADDR = (addr, addr)
INT = (int, int)
STR = (str, str)
SCHEMAS = {
    "packets": [("time", "timestamp", TIME), ("prefix", "prefix", STR), ("ifname_in", "in", STR),
                ("ifname_out", "out", STR), ("mac_src", "mac_src", (str.lower, str.lower)),
                ("ip_version", "ip_version", INT), ("src_addr", "src_ip", ADDR),
                ("dst_addr", "dest_ip", ADDR), ("ip_proto", "proto", (proto, int)),
                ("sport", "src_port", INT), ("dport", "dest_port", INT), ("ip_len", "len", INT),
                ("ip_ttl", "ttl", INT), ("tcp_flags", "tcp_flags", (flags, int)),
                ("icmp_type", "icmp_type", INT), ("icmp_code", "icmp_code", INT),
                ("mark", "mark", INT)],
    "flows": [("time", "timestamp", TIME), ("ct_event", "ct_event", INT), ("ct_id", "ct_id", INT),
              ("family", "family", (lambda v: FAMILY[v], int)), ("ip_version", "ip_version", INT),
              ("ip_proto", "proto", (proto, int)), ("orig_src", "orig_src_ip", ADDR),
              ("orig_dst", "orig_dest_ip", ADDR), ("orig_sport", "orig_src_port", INT),
              ("orig_dport", "orig_dest_port", INT), ("reply_src", "reply_src_ip", ADDR),
              ("reply_dst", "reply_dest_ip", ADDR), ("reply_sport", "reply_src_port", INT),
              ("reply_dport", "reply_dest_port", INT), ("orig_packets", "orig_packets", INT),
              ("orig_bytes", "orig_bytes", INT), ("reply_packets", "reply_packets", INT),
              ("reply_bytes", "reply_bytes", INT), ("flow_start", "flow_start", TIME),
              ("flow_end", "flow_end", TIME), ("flow_tcp_flags", "flow_tcp_flags", (flags, int)),
              ("flow_end_reason", "flow_end_reason", (lambda v: END[v], int)),
              ("tcp_state", "tcp_state", INT), ("mark", "mark", INT), ("ct_zone", "ct_zone", INT)],
}

if sys.argv[1] == "columns":
    print(", ".join(c[0] for c in SCHEMAS[sys.argv[2]]))
    sys.exit(0)
cols = SCHEMAS[sys.argv[1]]
want = []
for line in open(sys.argv[2]):
    o = json.loads(line)
    row = []
    for name, key, (fj, _) in cols:
        v = o.get(key)
        row.append(fj(v) if v is not None else None)
    want.append(tuple(row))
got = []
for line in open(sys.argv[3]):
    f = line.rstrip("\n").split("\t")
    if len(f) != len(cols):
        sys.exit("%d cells in %r, %d columns" % (len(f), line, len(cols)))
    row = [None if v == "\\N" else fs(v) for v, (_, _, (_, fs)) in zip(f, cols)]
    # json leaves a zero mark out: a 0 in the table is that
    got.append(tuple(None if c[0] == "mark" and v == 0 else v for v, c in zip(row, cols)))
key = lambda r: tuple("" if v is None else str(v) for v in r)
want.sort(key=key)
got.sort(key=key)
if len(got) != len(want):
    sys.exit("%d rows, %d json objects" % (len(got), len(want)))
for g, w in zip(got, want):
    if g != w:
        sys.exit("row  %r\njson %r" % (g, w))
nulls = sum(v is None for r in got for v in r)
print("%d rows equal the json output in %d columns (%d NULL cells)" % (len(got), len(cols), nulls))
