#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check the cef filter's CEF and LEEF lines against the json filter's
objects for the same records: cef_check.py CEF LEEF JSON PREFIX_HEX...

The lines are read by a parser written here from the CEF Implementation
Standard (and IBM's LEEF 2.0), not from sluice's code:
  - CEF: "CEF:0|" then six header fields, each ended by an unescaped '|'
    ("\\|" and "\\\\" are the only escapes), then the extension: key=value
    pairs separated by spaces, a key being letters and digits before an
    unescaped '=', a value running to the space before the next key, with
    "\\=", "\\\\", "\\n", "\\r" as its only escapes;
  - LEEF:2.0: five header fields (the fifth the delimiter, "x09" for TAB),
    then pairs split on the delimiter, each at its first '='.
Connection records (nfct: no packet) are compared by their original
direction (orig_*), ports only for protocols with ports, in/out their two
directions' bytes, the conntrack id and event.
A packet nflog's rules: true attributed to its rule (json's rule_* keys)
has act (LEEF action) = its verdict, when it has one, and cs2
(cs2Label=rule; LEEF rule) = TABLE/CHAIN#HANDLE "COMMENT", a quote or
backslash of the comment with a backslash before it, then escaped as any
value.
Every line must be one line (no control byte but LEEF's TAB, valid UTF-8),
there must be exactly one per record (as many as json objects), and every
value must be the record's as json prints it.  Prefixes come back as
docs/PLUGINS.md says: U+FFFD for each control byte (LF and CR are \\n \\r in
a value), DEL, C1 control and byte outside valid UTF-8; PREFIX_HEX are the
raw prefixes the rules log, each of which must be seen (a record without
a prefix has none: signature and name "-", no cs1).
"""
import datetime
import json
import re
import sys

FFFD = "\ufffd"


def fail(msg):
    sys.exit("cef_check: " + msg)


def raw_to_str(raw):
    """Raw bytes as (char, invalid) pairs: valid UTF-8 decoded, invalid bytes one by one."""
    out = []
    for ch in raw.decode("utf-8", "surrogateescape"):
        if 0xDC80 <= ord(ch) <= 0xDCFF:
            out.append((chr(ord(ch) - 0xDC00), True))
        else:
            out.append((ch, False))
    return out


def json_view(raw):
    """What json prints (decoded) for raw bytes: an invalid byte as its Latin-1 character."""
    return "".join(c for c, _ in raw_to_str(raw))


def expected(raw, header, leef_delim=None):
    out = []
    for c, invalid in raw_to_str(raw):
        o = ord(c)
        if invalid or o == 0x7F or 0x80 <= o <= 0x9F or (o < 0x20 and (header or c not in "\n\r")):
            out.append(FFFD)
        else:
            out.append(c)
    return "".join(out)


def one_line(s, tab_ok):
    for c in s:
        o = ord(c)
        if (o < 0x20 and not (tab_ok and c == "\t")) or o == 0x7F or 0x80 <= o <= 0x9F:
            fail("control character %r in line %r" % (c, s))


def head_fields(s, at, count):
    fields, cur, i = [], [], at
    while len(fields) < count:
        if i >= len(s):
            fail("header cut short: %r" % s)
        c = s[i]
        if c == "\\":
            if i + 1 >= len(s) or s[i + 1] not in "|\\":
                fail("bad header escape in %r" % s)
            cur.append(s[i + 1])
            i += 2
        elif c == "|":
            fields.append("".join(cur))
            cur = []
            i += 1
        else:
            cur.append(c)
            i += 1
    return fields, s[i:]


def unescape(v, specials):
    out, i = [], 0
    while i < len(v):
        c = v[i]
        if c == "\\":
            if i + 1 >= len(v):
                fail("value ends in a backslash: %r" % v)
            n = v[i + 1]
            if n == "n":
                out.append("\n")
            elif n == "r":
                out.append("\r")
            elif n in specials:
                out.append(n)
            else:
                fail("bad value escape \\%s in %r" % (n, v))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def parse_cef(line):
    if not line.startswith("CEF:0|"):
        fail("not CEF:0: %r" % line)
    head, ext = head_fields(line, len("CEF:0|"), 6)
    # 8 parts: the version, six fields, the extension
    keys, i = [], 0
    while i < len(ext):
        if ext[i] == "\\":
            i += 2
            continue
        if ext[i] == "=":
            a = i
            while a > 0 and (ext[a - 1].isascii() and ext[a - 1].isalnum()):
                a -= 1
            if a == i or (a > 0 and ext[a - 1] != " ") or (not keys and a != 0):
                fail("unescaped '=' outside a key at %d of %r" % (i, ext))
            keys.append((a, i))
        i += 1
    if ext and not keys:
        fail("extension without a key: %r" % ext)
    pairs = []
    for j, (a, e) in enumerate(keys):
        end = keys[j + 1][0] - 1 if j + 1 < len(keys) else len(ext)
        pairs.append((ext[a:e], unescape(ext[e + 1:end], "\\=")))
    return head, pairs


def parse_leef(line):
    if not line.startswith("LEEF:2.0|"):
        fail("not LEEF:2.0: %r" % line)
    head, ext = head_fields(line, len("LEEF:2.0|"), 5)
    d = head[4]
    if re.fullmatch(r"(0?x)[0-9a-fA-F]{2}", d):
        delim = chr(int(d[-2:], 16))
    elif len(d) == 1:
        delim = d
    else:
        fail("bad LEEF delimiter %r" % d)
    pairs, cur, i = [], [], 0
    attrs = []
    while i <= len(ext):
        if i == len(ext) or ext[i] == delim:
            attrs.append("".join(cur))
            cur = []
            i += 1
            continue
        if ext[i] == "\\" and i + 1 < len(ext):
            cur.append(ext[i:i + 2])
            i += 2
            continue
        cur.append(ext[i])
        i += 1
    for a in attrs:
        k, eq, v = a.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z0-9]+", k):
            fail("bad LEEF attribute %r" % a)
        pairs.append((k, unescape(v, "\\" + delim)))
    return head, pairs, delim


def as_dict(pairs, line):
    d = {}
    for k, v in pairs:
        if k in d:
            fail("key %s twice in %r" % (k, line))
        d[k] = v
    return d


def ms(ts):
    t = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    us = (t - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) // datetime.timedelta(microseconds=1)
    return str(us // 1000)


def compare(kind, d, o, raw, line):
    leef = kind == "leef"
    K = {
        "rt": "devTime" if leef else "rt", "spt": "srcPort" if leef else "spt",
        "dpt": "dstPort" if leef else "dpt", "smac": "srcMAC" if leef else "smac",
        "dmac": "dstMAC" if leef else "dmac", "in": "srcBytes" if leef else "in",
        "group": "nflogGroup" if leef else "cn2", "mark": "mark" if leef else "cn3",
        "prefix": "prefix" if leef else "cs1",
    }
    want = {K["rt"]: ms(o["timestamp"])} if "timestamp" in o else {}
    if "group" in o:
        want[K["group"]] = str(o["group"])
        if not leef:
            want["cn2Label"] = "nflogGroup"
    if "proto" in o:
        want["proto"] = str(o["proto"]).upper()
    # a packet's addresses, or a connection's original direction
    conn = "src_ip" not in o and "orig_src_ip" in o
    src, dst = ("orig_src_ip", "orig_dest_ip") if conn else ("src_ip", "dest_ip")
    v6 = o.get("ip_version") == 6 or (conn and o.get("family") == "ipv6")
    if src in o:
        if not v6 or leef:
            want["src"], want["dst"] = o[src], o[dst]
        else:
            want.update({"c6a2": o[src], "c6a3": o[dst],
                         "c6a2Label": "Source IPv6 Address", "c6a3Label": "Destination IPv6 Address"})
    if conn:
        if o.get("proto") in ("tcp", "udp", "udplite", "sctp", "dccp"):
            for jk, ck in (("orig_src_port", K["spt"]), ("orig_dest_port", K["dpt"])):
                if jk in o:
                    want[ck] = str(o[jk])
        for jk, ck in (("orig_bytes", K["in"]), ("reply_bytes", "dstBytes" if leef else "out"),
                       ("ct_id", "conntrackId" if leef else "cn1")):
            if jk in o:
                want[ck] = str(o[jk])
        if "ct_id" in o and not leef:
            want["cn1Label"] = "conntrackId"
        if "ct_event" in o:
            want["conntrackEvent" if leef else "cs3"] = o["ct_event"].replace(" ", ",")
            if not leef:
                want["cs3Label"] = "conntrackEvent"
    for jk in ("flow_start", "flow_end"):
        if jk in o:
            want[jk[5:]] = ms(o[jk])
    for jk, ck in (("src_port", K["spt"]), ("dest_port", K["dpt"]), ("mac_src", K["smac"]),
                   ("mac_dst", K["dmac"]), ("in", "deviceInboundInterface"),
                   ("out", "deviceOutboundInterface"), ("len", K["in"]), ("mark", K["mark"]),
                   ("uid", "suid")):
        if jk in o:
            want[ck] = str(o[jk])
    if "rule_table" in o:
        text = "%s/%s" % (o["rule_table"], o["rule_chain"])
        if "rule_handle" in o:
            text += "#%d" % o["rule_handle"]
        if "rule_comment" in o:
            text += ' "%s"' % o["rule_comment"].replace("\\", "\\\\").replace('"', '\\"')
        want["rule" if leef else "cs2"] = expected(text.encode("utf-8"), header=False)
        if not leef:
            want["cs2Label"] = "rule"
        if "rule_verdict" in o:
            want["action" if leef else "act"] = expected(o["rule_verdict"].encode("utf-8"), header=False)
    if raw:
        want[K["prefix"]] = expected(raw, header=False)
    if leef:
        want["sev"] = "5"
    else:
        if "mark" in o:
            want["cn3Label"] = "mark"
        if raw:
            want["cs1Label"] = "prefix"
    if d != want:
        fail("%s line %r\n  read back as %r\n  expected    %r\n  json: %r" % (kind, line, d, want, o))


def main():
    cef_fn, leef_fn, json_fn = sys.argv[1:4]
    raws = [bytes.fromhex(h) for h in sys.argv[4:]]
    by_view = {json_view(r): r for r in raws}
    objs = [json.loads(l) for l in open(json_fn, encoding="utf-8")]
    cefs = open(cef_fn, "rb").read().decode("utf-8").split("\n")
    leefs = open(leef_fn, "rb").read().decode("utf-8").split("\n")
    if cefs[-1] != "" or leefs[-1] != "":
        fail("a file does not end in a newline")
    cefs, leefs = cefs[:-1], leefs[:-1]
    if not (len(cefs) == len(leefs) == len(objs)) or not objs:
        fail("%d CEF lines, %d LEEF lines, %d json objects: one line per record expected"
             % (len(cefs), len(leefs), len(objs)))
    seen = set()
    for c, l, o in zip(cefs, leefs, objs):
        raw = by_view.get(o["prefix"]) if "prefix" in o else b""
        if raw is None:
            fail("json prefix %r is none of the rules'" % o.get("prefix"))
        seen.add(raw)
        one_line(c, False)
        head, pairs = parse_cef(c)
        sig = expected(raw, header=True) or "-"
        if head != ["sluice", "sluice", head[2], sig, sig, "5"] or not head[2]:
            fail("CEF header %r, expected signature and name %r" % (head, sig))
        compare("cef", as_dict(pairs, c), o, raw, c)
        one_line(l, True)
        head, pairs, delim = parse_leef(l)
        if head[:2] != ["sluice", "sluice"] or head[3] != sig or delim != "\t":
            fail("LEEF header %r" % head)
        compare("leef", as_dict(pairs, l), o, raw, l)
    missing = [r for r in raws if r not in seen]
    if missing:
        fail("no record with prefix %r" % missing)
    print("cef_check: %d records, CEF and LEEF read back to json's values" % len(objs))


main()
