#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Reads YAML that `sluice convert ulogd` wrote back (PyYAML, an independent
# reader) and checks its structure against what the ulogd.conf said:
#   convert_ulogd_check.py CASE FILE.yaml FEATURES
# FEATURES: comma-separated plugins/options this build has (line_header,
# sql, nfacct), which decide what the converter may write.
import sys
import yaml

case, path, feats = sys.argv[1], sys.argv[2], set(sys.argv[3].split(","))
doc = yaml.safe_load(open(path))
inst = doc.get("instances") or {}
stacks = doc.get("stacks") or {}
errors = []


def el(e):
    if isinstance(e, str):
        return e
    return "%s(%s)" % (e["plugin"], ",".join("%s=%s" % (k, e[k]) for k in sorted(e) if k != "plugin"))


def want_inst(name, **kv):
    got = inst.get(name)
    if got is None:
        errors.append("no instance %s" % name)
        return
    for k, v in kv.items():
        if got.get(k) != v:
            errors.append("%s.%s: %r, expected %r" % (name, k, got.get(k), v))


def want_stacks(exp):
    got = {k: [el(e) for e in v] for k, v in stacks.items()}
    if got != exp:
        for k in sorted(set(got) | set(exp)):
            if got.get(k) != exp.get(k):
                errors.append("stack %s: %s, expected %s" % (k, got.get(k), exp.get(k)))


def emu(name, path, sync=None):
    want_inst(name, plugin="file", file=path, sync=sync)
    if "line_header" in feats:
        want_inst(name, line_header="syslog")


if case == "debian":
    want_inst("log1", plugin="nflog", group=0)
    want_inst("log2", plugin="nflog", group=1)
    want_inst("log3", plugin="nflog", group=2)
    want_inst("ct1", plugin="nfct", events=["destroy"])
    emu("emu1", "/var/log/ulog/syslogemu.log", True)
    want_inst("gp1", plugin="file", file="/var/log/ulog/gprint.log", sync=True)
    want_inst("pcap1", plugin="pcap", file="/var/log/ulogd.pcap", linktype="raw", sync=True)
    want_inst("json1", plugin="file", file="/var/log/ulogd.json", sync=True)
    want_inst("sys1", plugin="syslog", facility="user", severity="notice", app_name="ulogd")
    if doc.get("daemon", {}).get("log_level") != "info":
        errors.append("daemon.log_level %r" % doc.get("daemon"))
    exp = {
        "log1_emu1": ["log1", "decode", "logline", "emu1"],
        "log2_emu1": ["log2", "decode", "logline", "emu1"],
        "log2_emu1_2": ["log2", "where(expr=mark == 0x1)", "decode", "logline", "emu1"],
        "log1_gp1": ["log1", "decode", "logline", "gp1"],
        "ct1_emu1": ["ct1", "logline", "emu1"],
        "ct1_gp1": ["ct1", "logline", "gp1"],
        "log2_pcap1": ["log2", "pcap1"],
        "log2_json1": ["log2", "decode", "json", "json1"],
        "log3_sys1": ["log3", "decode", "logline", "sys1"],
    }
    if "sql" in feats:
        for s, i, d in (("log2_pgsql1", "pgsql1", True), ("ct1_pgsql2", "pgsql2", False),
                        ("ct1_pgsql3", "pgsql3", False), ("ct1_sqlite3_ct", "sqlite3_ct", False),
                        ("log1_sqlite3_pkt", "sqlite3_pkt", True)):
            exp[s] = [s.split("_")[0]] + (["decode"] if d else []) + [i]
        # ulog2's ports and ICMP fields: a stack and an instance per protocol
        others = "not (ip_proto in {tcp, udp, icmp, icmpv6})"
        exp["log2_pgsql1"] = ["log2", "decode", "where(expr=%s)" % others, "pgsql1"]
        ports = {"tcp": ("tcp_sport", "sport"), "udp": ("udp_dport", "dport"),
                 "icmp": ("icmp_type", "icmp_type"), "icmpv6": ("icmpv6_code", "icmp_code")}
        for p in ["", "_tcp", "_udp", "_icmp", "_icmpv6"]:
            want_inst("pgsql1" + p, plugin="sql", driver="postgresql", table="ulog",
                      dsn="host='localhost' dbname='nulog' user='nupik' password='changeme'")
            cols = inst.get("pgsql1" + p, {}).get("columns") or {}
            if p:
                exp["log2_pgsql1" + p] = ["log2", "decode", "where(expr=ip_proto == %s)" % p[1:],
                                          "pgsql1" + p]
                col, field = ports[p[1:]]
                if cols.get(col) != field or cols.get("oob_prefix") != "prefix":
                    errors.append("pgsql1%s: columns has no %s: %s" % (p, col, field))
            # each column of the others' map is in every protocol's map
            if any(c.startswith(("tcp_", "udp_", "icmp")) for c in cols) != bool(p) or \
                    not set(inst.get("pgsql1", {}).get("columns") or {"-": 0}) <= set(cols):
                errors.append("pgsql1%s: columns %s" % (p, sorted(cols)))
        # the columns of ulogd2's own tables, so the stacks write into them
        want_inst("sqlite3_ct", plugin="sql", driver="sqlite", table="ulog_ct",
                  path="/var/log/ulog/ulogd.sqlite3db", schema=None)
        want_inst("sqlite3_pkt", plugin="sql", schema=None, columns={
            "raw_pktlen": "ip_len", "oob_prefix": "prefix", "oob_time_sec": "timestamp:sec",
            "oob_time_usec": "timestamp:usec", "oob_mark": "mark", "oob_hook": "hook",
            "oob_uid": "uid", "oob_gid": "gid"})
        for i, col, field in (("sqlite3_ct", "flow_start_sec", "flow_start:sec"),
                              ("sqlite3_ct", "orig_raw_pktcount", "orig_packets"),
                              ("pgsql1", "ip_saddr_str", "src_addr"),
                              ("pgsql1", "oob_time_usec", "timestamp:usec"),
                              ("pgsql2", "orig_ip_saddr_str", "orig_src"),
                              ("pgsql2", "flow_end_sec", "flow_end:sec")):
            if (inst.get(i, {}).get("columns") or {}).get(col) != field:
                errors.append("%s: columns has no %s: %s" % (i, col, field))
    if "nfacct" in feats:
        exp["acct1_gp1"] = ["acct1", "logline", "gp1"]
        want_inst("acct1", plugin="nfacct", interval="2s", reset=True)
    want_stacks(exp)
elif case == "groups-syslog":
    want_inst("wan", plugin="nflog", group=10, nlbufsiz=65536, netlink_buffer=4194304,
              qthreshold=20, qtimeout="50ms")
    want_inst("lan", plugin="nflog", group=11)
    want_inst("fwlog", plugin="syslog", facility="local7", severity="info")
    want_inst("lanlog", plugin="syslog", facility="local7", severity="warning")
    want_inst("dump", plugin="pcap", file="/var/log/ulog/wan.pcap", sync=None)
    want_stacks({"wan_fwlog": ["wan", "decode", "logline", "fwlog"],
                 "wan_dump": ["wan", "dump"],
                 "lan_lanlog": ["lan", "decode", "logline", "lanlog"]})
elif case == "flows-json-unix":
    want_inst("ct", plugin="nfct", events=["new", "update", "destroy"], reliable=True,
              netlink_buffer=1085440, protocols=["tcp", "udp"])
    want_inst("siem", plugin="syslog", transport="unix", address="/run/siem/ulogd.sock")
    want_inst("pk", plugin="nflog", group=3)
    want_inst("jfile", plugin="file", file="/var/log/ulog/packets.json", sync=True)
    want_stacks({"ct_siem": ["ct", "where(expr=orig_src in {192.168.10.0/24,2001:db8:10::/48})",
                             "json", "siem"],
                 "pk_jfile": ["pk", "decode", "json(host=fw-office-1)", "jfile"]})
elif case == "unknown-plugin":
    want_inst("log1", plugin="nflog", group=4)
    want_stacks({"log1_pcap1": ["log1", "pcap1"]})
elif case == "mark-filter":
    emu("emu5", "/var/log/ulog/mark5.log")
    emu("emu10", "/var/log/ulog/mark10.log", True)
    want_stacks({"log1_emu5": ["log1", "where(expr=mark == 0x5)", "decode", "logline", "emu5"],
                 "log1_emu10": ["log1", "where(expr=not mark & 0xe0 and mark & 0x10)", "decode",
                                "logline", "emu10"]})
elif case == "nfct-ipfix":
    want_inst("ct1", plugin="nfct", events=["destroy"])
    want_inst("ct2", plugin="nfct", events=["new"])
    want_inst("ipfix1", plugin="ipfix", address="192.0.2.50:4740", observation_domain=7, mtu=1400)
    emu("emu1", "/var/log/ulog/flows.log")
    want_stacks({"ct1_ipfix1": ["ct1", "ipfix1"], "ct2_emu1": ["ct2", "logline", "emu1"]})
else:
    sys.exit("unknown case " + case)
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("%s: %d instances, %d stacks as expected" % (case, len(inst), len(stacks)))
