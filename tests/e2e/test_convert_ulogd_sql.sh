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
# is a warning.
. "$(dirname "$0")/lib.sh"
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
pass "converted SQLITE3 stack wrote $(sqlite3 "$DB" 'SELECT count(*) FROM ulog_pkt') rows into ulogd2's ulog_pkt"
