#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Compare `nft -a monitor trace` output with sluice's nftrace records.

usage: nftrace_compare.py NFT_TXT SLUICE_TXT SLUICE_JSON

Each nft line and each sluice line is parsed into (id, family, table, chain,
kind, handle, verdict, target) and, for packet lines, the addresses and
protocol; the sluice json records give the same tuple from their fields.
All three lists must be equal, in order.  The rule text (what the line has
between "rule " and " # handle N", the json's rule_text) must be equal too
wherever nft knew the rule.  Prints counts on success.
"""
import json
import re
import sys

LINE = re.compile(r"^trace id ([0-9a-f]{8}) (\S+) (\S+) (\S+) (.*?)\s*$")
RULE = re.compile(r"^rule (.*) # handle (\d+) \(verdict (\S+)(?: (\S+))?\)$")
# nft 1.0.6 does not refresh its cache on ruleset changes: a rule added
# after it started is "unknown" to it (sluice dumps the ruleset again)
UNKNOWN = re.compile(r"^unknown rule handle (\d+) \(verdict (\S+)(?: (\S+))?\)$")
TEXTS = []  # per file: the rule text of each record (None: not a rule, or unknown to nft)


def packet_info(rest):
    out = {}
    for key in ("ip saddr", "ip daddr", "ip protocol", "ip6 saddr", "ip6 daddr", "ip6 nexthdr"):
        m = re.search(re.escape(key) + r" (\S+)", rest)
        if m:
            out[key] = m.group(1)
    return out


def parse_text(path):
    recs = []
    texts = []
    for line in open(path, encoding="utf-8", errors="replace"):
        m = LINE.match(line.rstrip("\n"))
        if not m:
            continue
        tid, fam, table, chain, rest = m.groups()
        if rest.startswith("packet:"):
            recs.append((tid, fam, table, chain, "packet", None, None, None, packet_info(rest)))
        elif rest.startswith("rule "):
            r = RULE.match(rest)
            if not r:
                sys.exit("unparsed rule line: " + line)
            recs.append((tid, fam, table, chain, "rule", int(r.group(2)), r.group(3), r.group(4), None))
            texts.append(r.group(1))
            continue
        elif rest.startswith("unknown rule handle "):
            r = UNKNOWN.match(rest)
            if not r:
                sys.exit("unparsed rule line: " + line)
            recs.append((tid, fam, table, chain, "rule", int(r.group(1)), r.group(2), r.group(3), None))
        elif rest.startswith("policy "):
            recs.append((tid, fam, table, chain, "policy", None, rest.split()[1], None, None))
        else:
            # an implicit return: nft prints "verdict continue" (or nothing)
            v = rest.split()
            verdict = v[1] if len(v) >= 2 and v[0] == "verdict" else None
            recs.append((tid, fam, table, chain, "return", None, verdict, None, None))
        texts.append(None)
    TEXTS.append(texts)
    return recs


FAMILY = {"inet": "inet", "ipv4": "ip", "ipv6": "ip6", "arp": "arp", "bridge": "bridge", "netdev": "netdev"}
PROTO = {"icmp": "icmp", "tcp": "tcp", "udp": "udp", "icmpv6": "ipv6-icmp", "ipv6-icmp": "ipv6-icmp"}


def parse_json(path):
    recs = []
    texts = []
    for line in open(path, encoding="utf-8"):
        j = json.loads(line)
        kind = j["trace_type"]
        pinfo = None
        if kind == "packet":
            ip, proto = ("ip6", "nexthdr") if j.get("ip_version") == 6 else ("ip", "protocol")
            pinfo = {ip + " saddr": j.get("src_ip"), ip + " daddr": j.get("dest_ip"),
                     ip + " " + proto: PROTO.get(j.get("proto"), j.get("proto"))}
            pinfo = {k: v for k, v in pinfo.items() if v is not None}
        verdict = j.get("verdict") if kind != "packet" else None
        if kind == "return" and verdict is None:
            verdict = None
        recs.append(("%08x" % j["trace_id"], FAMILY.get(j["family"], j["family"]), j["nft_table"],
                     j["nft_chain"], kind, j.get("rule_handle") if kind == "rule" else None,
                     verdict, j.get("jump_target"), pinfo))
        texts.append(j.get("rule_text") if kind == "rule" else None)
    TEXTS.append(texts)
    return recs


def main():
    nft, txt, js = (parse_text(sys.argv[1]), parse_text(sys.argv[2]), parse_json(sys.argv[3]))
    if not nft:
        sys.exit("nft monitor trace printed nothing")
    compared = 0
    for name, other, texts in (("sluice text", txt, TEXTS[1]), ("sluice json", js, TEXTS[2])):
        if len(other) != len(nft):
            sys.exit("%s: %d records, nft: %d" % (name, len(other), len(nft)))
        for i, (a, b) in enumerate(zip(nft, other)):
            if a != b:
                sys.exit("%s record %d differs:\n  nft    %s\n  sluice %s" % (name, i, a, b))
            want = TEXTS[0][i]
            if want is None:
                continue
            if texts[i] != want:
                sys.exit("%s record %d: rule text differs:\n  nft    %r\n  sluice %r" % (name, i, want, texts[i]))
            compared += 1
    if not compared:
        sys.exit("no rule text compared")
    kinds = {}
    for r in nft:
        kinds[r[4]] = kinds.get(r[4], 0) + 1
    print("records %d ids %d %s, rule texts equal %d (%d distinct)" % (
        len(nft), len({r[0] for r in nft}), " ".join("%s=%d" % kv for kv in sorted(kinds.items())),
        compared, len({t for t in TEXTS[0] if t is not None})))


main()
