# SPDX-License-Identifier: GPL-2.0-or-later
# Compare the log records decoded by otlp_decode.js (one JSON object per
# line) with the json filter's lines of the same records (the oracle,
# written by a file output beside the otlp one):
#   - as many records as lines, each line's text the body of exactly one
#     record (no record lost, none twice);
#   - every attribute equal to what json prints for it, with its type:
#     the semantic-convention names (security_rule.* for the rule) and
#     netfilter.<json key> (docs/PLUGINS.md),
#     hook and tcp_flags as numbers of json's names; no attribute without a
#     json key, no json key without its attribute;
#   - time_unix_nano the json timestamp (to its microseconds), observed
#     time set, severity INFO (9), the resource's service.name and host.name.
#   otlp_compare.py REF.json DECODED.jsonl [path=P] [encoding=E] [gzip=0|1] [expect=N]
import datetime, json, socket, sys

ref_lines = [l.rstrip("\n") for l in open(sys.argv[1], encoding="utf-8")]
got = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
opts = dict(a.split("=", 1) for a in sys.argv[3:])
bad = []

if "path" in opts:
    got = [g for g in got if g["path"] == opts["path"]]
if not got:
    sys.exit("no records decoded" + (" for path " + opts["path"] if "path" in opts else ""))

# json key -> (attribute, kind)
SEMCONV = {"src_ip": ("source.address", "str"), "src_port": ("source.port", "int"),
           "dest_ip": ("destination.address", "str"), "dest_port": ("destination.port", "int"),
           "proto": ("network.transport", "str"), "ip_version": ("network.type", "ipver"),
           "in": ("network.interface.name", "str")}
NF_INT = ["group", "eth_type", "tcp_urgp", "icmp_mtu", "icmp_param", "spi", "arp_op", "caplen",
          "physindex_in", "physindex_out", "flowlabel", "ifindex_in", "ifindex_out", "mark", "uid", "gid", "vlan", "len", "tos",
          "ttl", "ip_id", "tcp_seq", "tcp_ack", "tcp_window", "udp_len", "icmp_type",
          "icmp_code", "icmp_id", "icmp_seq", "pktlen", "seq_local", "seq_global", "ct_id",
          "ct_status", "ct_zone", "orig_src_port", "orig_dest_port", "reply_src_port",
          "reply_dest_port", "orig_packets", "orig_bytes", "reply_packets", "reply_bytes"]
NF_STR = ["prefix", "icmp_gateway", "arp_sha", "arp_spa", "arp_tha", "arp_tpa", "out", "physin", "physout", "mac_src", "mac_dst", "orig_src_ip",
          "orig_dest_ip", "reply_src_ip", "reply_dest_ip"]
MAP = dict(SEMCONV)
MAP.update({k: ("netfilter." + k, "int") for k in NF_INT})
MAP.update({k: ("netfilter." + k, "str") for k in NF_STR})
# the rule nflog's rules: true attributed the record to
MAP.update({"rule_family": ("netfilter.rule_family", "str"), "rule_table": ("security_rule.ruleset.name", "str"),
            "rule_chain": ("netfilter.rule_chain", "str"), "rule_handle": ("netfilter.rule_handle", "int"),
            "rule_comment": ("security_rule.name", "str"), "rule_verdict": ("netfilter.rule_verdict", "str")})
MAP["hook"] = ("netfilter.hook", "hook")
MAP["tcp_flags"] = ("netfilter.tcp_flags", "tcpflags")
# keys json prints that have no attribute (family: network.type says it; the
# IP flags and decode flags: not mapped)
NO_ATTR = {"timestamp", "family", "ip_flags", "frag_offset", "decode_flags"}
# attributes json does not print
ONLY_ATTR = {"netfilter.ip_options", "netfilter.tcp_options", "netfilter.ct_state"}
HOOKS = ["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"]
FLAGS = {"FIN": 1, "SYN": 2, "RST": 4, "PSH": 8, "ACK": 16, "URG": 32, "ECE": 64, "CWR": 128, "AE": 256}


def want_value(kind, v):
    if kind == "int":
        return {"int": str(v)}
    if kind == "str":
        return {"str": v}
    if kind == "ipver":
        return {"str": "ipv%d" % v}
    if kind == "hook":
        return {"int": str(HOOKS.index(v))}
    if kind == "tcpflags":
        return {"int": str(sum(FLAGS[f] for f in v.split()))}
    raise ValueError(kind)


def ns_of(ts):
    t = datetime.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    return int(t.timestamp()) * 10**9 + t.microsecond * 1000


by_body = {}
for g in got:
    by_body.setdefault(g["body"], []).append(g)
if "expect" in opts and len(ref_lines) != int(opts["expect"]):
    bad.append("the json file has %d lines, expected %s" % (len(ref_lines), opts["expect"]))
if len(got) != len(ref_lines):
    bad.append("%d records decoded, %d json lines" % (len(got), len(ref_lines)))
host = socket.gethostname()
for line in ref_lines:
    recs = by_body.get(line, [])
    if len(recs) != 1:
        bad.append("json line is the body of %d records: %s" % (len(recs), line[:200]))
        continue
    g, j = recs[0], json.loads(line)
    attrs = dict(g["attrs"])
    for k, v in j.items():
        if k in NO_ATTR:
            continue
        if k not in MAP:
            bad.append("json key %s has no attribute mapping in this test" % k)
            continue
        name, kind = MAP[k]
        want = want_value(kind, v)
        if attrs.pop(name, None) != want:
            bad.append("%s: %s, want %s (json %s=%r)" % (name, g["attrs"].get(name), want, k, v))
    extra = set(attrs) - ONLY_ATTR
    if extra:
        bad.append("attributes without a json key: %s" % sorted(extra))
    if int(g["time"]) // 1000 != ns_of(j["timestamp"]) // 1000:
        bad.append("time %s, json timestamp %s" % (g["time"], j["timestamp"]))
    if not g.get("observed") or int(g["observed"]) < int(g["time"]):
        bad.append("observed time %s before time %s" % (g.get("observed"), g["time"]))
    if g["severity"] != 9 or g["severityText"] != "INFO":
        bad.append("severity %s %s" % (g["severity"], g["severityText"]))
    if g["resource"].get("service.name") != {"str": "sluice"} or \
       g["resource"].get("host.name") != {"str": host}:
        bad.append("resource %s" % g["resource"])
    if g["scope"].get("name") != "sluice":
        bad.append("scope %s" % g["scope"])
    if "encoding" in opts and g["encoding"] != opts["encoding"]:
        bad.append("content-type %s" % g["encoding"])
    if "gzip" in opts and g["gzip"] != (opts["gzip"] == "1"):
        bad.append("gzip %s" % g["gzip"])
uniq = list(dict.fromkeys(bad))
for b in uniq[:20]:
    print(b)
if len(uniq) > 20:
    print("... %d more" % (len(uniq) - 20))
sys.exit(1 if bad else 0)
