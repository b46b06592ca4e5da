#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog's `rules: true` in the outputs beyond json (issue 22): the ruleset
# of test_netns_rules (rules_lib.sh), its regular chain's rule carrying a
# hostile comment (= | ] \ '), logs UDP over loopback in a namespace; one
# nflog -> decode fans out to json, cef, cef (leef), logline -> syslog
# (RFC 5424 with structured data, over TCP to syslog_recv.py) and sql with
# its default columns on SQLite: the table of conf/sql/packets-sqlite.sql,
# the same table as made before the rule columns, and that one with the
# ALTER TABLEs the file's comment gives.  Every record's rule in each output
# must be the json record's: cef_check.py reads CEF's act/cs2 and LEEF's
# action/rule back, the SD element's rule_* params are read by an RFC 5424
# parser, the SQL row's rule columns are NULL exactly where json has no
# rule (the ambiguous records) and the table without them gets every row,
# and the logline text is the same as without rules.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rules_lib.sh"
need_root
need_cmd ip nft python3 ss sqlite3
[ -e "$SLUICE_PLUGIN_PATH/sql.so" ] || skip "sql output not built"
rules_netns slro
HOSTILE="s=1|x]y\\z'q"
rules_nft_load "$HOSTILE" "out 6001"
PORT=5514

# the table: the schema's; as made before the rule columns; that one with the ALTER TABLEs of the comment
SCHEMA="$SRCDIR/conf/sql/packets-sqlite.sql"
rule_cols() { sqlite3 "$1" "SELECT count(*) FROM pragma_table_info('packets') WHERE name LIKE 'rule_%'"; }
sqlite3 "$WORK/p.db" <"$SCHEMA" || fail "packets-sqlite.sql"
grep -v $'^\trule_' "$SCHEMA" | sed $'s/^\tmark\t\tINTEGER,$/\tmark\t\tINTEGER/' | sqlite3 "$WORK/old.db" ||
	fail "packets-sqlite.sql without the rule columns"
cp "$WORK/old.db" "$WORK/alt.db"
sed -n 's/^--   \(ALTER TABLE packets ADD COLUMN rule_.*\)/\1/p' "$SCHEMA" | sqlite3 "$WORK/alt.db" ||
	fail "the ALTER TABLEs of packets-sqlite.sql"
[ "$(rule_cols "$WORK/p.db")" = 6 ] && [ "$(rule_cols "$WORK/old.db")" = 0 ] && [ "$(rule_cols "$WORK/alt.db")" = 6 ] ||
	fail "packets-sqlite.sql does not have the six rule columns, or its comment their ALTER TABLEs"

ip netns exec "$NS" python3 "$SRCDIR/tests/e2e/syslog_recv.py" $PORT "$WORK/syslog.txt" &
RECV_PID=$!
at_exit "kill $RECV_PID"
listening() { ip netns exec "$NS" ss -Hltn "sport = :$PORT" | grep -q .; }
wait_for 10 listening || fail "syslog receiver did not listen"

cat >"$WORK/c.yaml" <<YAML
stacks:
  j: [{plugin: nflog, group: $G, rules: true}, decode, json, {plugin: file, file: "$WORK/out.json"}]
  c: [{plugin: nflog, group: $G, rules: true}, decode, cef, {plugin: file, file: "$WORK/out.cef"}]
  e: [{plugin: nflog, group: $G, rules: true}, decode, {plugin: cef, format: leef},
      {plugin: file, file: "$WORK/out.leef"}]
  l: [{plugin: nflog, group: $G, rules: true}, decode, logline, {plugin: file, file: "$WORK/out.log"}]
  s: [{plugin: nflog, group: $G, rules: true}, decode, logline,
      {plugin: syslog, transport: tcp, address: "127.0.0.1:$PORT", format: rfc5424, structured_data: true}]
  q: [{plugin: nflog, group: $G, rules: true}, decode,
      {plugin: sql, driver: sqlite, path: "$WORK/p.db", flush_interval: 100ms}]
  o: [{plugin: nflog, group: $G, rules: true}, decode,
      {plugin: sql, driver: sqlite, path: "$WORK/old.db", flush_interval: 100ms}]
  a: [{plugin: nflog, group: $G, rules: true}, decode,
      {plugin: sql, driver: sqlite, path: "$WORK/alt.db", flush_interval: 100ms}]
YAML
rules_sluice_start

rules_send_all
wait_for 20 rules_logged 24 || { cat "$WORK/sluice.log"; fail "not every packet was logged"; }
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with $?"; }
wait_for 10 eval '[ "$(wc -l <"$WORK/syslog.txt")" -ge 24 ]' ||
	fail "the receiver has $(wc -l <"$WORK/syslog.txt") of 24 messages"

# CEF and LEEF against json, the rule included (cef_check.py); prefixes p, sub, dup
python3 "$SRCDIR/tests/e2e/cef_check.py" "$WORK/out.cef" "$WORK/out.leef" "$WORK/out.json" 70 737562 647570 ||
	fail "CEF/LEEF lines and json records differ"
for db in p old alt; do
	sqlite3 -json "$WORK/$db.db" "SELECT * FROM packets ORDER BY rowid" >"$WORK/$db.json" || fail "reading $db.db"
done

python3 - "$WORK" "$HOSTILE" <<'PY' || { cat "$WORK/sluice.log"; fail "an output's rule differs from json's"; }
import json, re, sys
work, hostile = sys.argv[1], sys.argv[2]
fields = ("rule_family", "rule_table", "rule_chain", "rule_handle", "rule_comment", "rule_verdict")
objs = [json.loads(l) for l in open(f"{work}/out.json")]
assert len(objs) == 24, len(objs)
rules = [{k: o[k] for k in fields if k in o} for o in objs]
assert sum(1 for r in rules if r) == 18 and sum(1 for r in rules if not r) == 6, rules
assert any(r.get("rule_comment") == hostile for r in rules), "no record of the hostile comment"

# syslog: RFC 5424's SD-ELEMENT read by the grammar of section 6.3
def sd(msg):
    m = re.match(r'<\d+>1 \S+ \S+ \S+ \S+ \S+ ', msg)
    assert m, msg
    s, i = msg, m.end()
    assert s[i] == "[", msg
    i += 1
    j = s.index(" ", i)
    assert s[i:j] == "sluice@32473", msg
    params = {}
    while s[j] == " ":
        k = s.index("=", j)
        name = s[j + 1:k]
        assert s[k + 1] == '"', msg
        v, i = [], k + 2
        while s[i] != '"':
            if s[i] == "\\" and s[i + 1] in '"\\]':
                i += 1
            else:
                assert s[i] not in '"]', ("unescaped", msg)
            v.append(s[i])
            i += 1
        params[name] = "".join(v)
        j = i + 1
    assert s[j] == "]" and s[j + 1] == " ", msg
    return params, s[j + 2:]
msgs = open(f"{work}/syslog.txt", encoding="utf-8").read().split("\n")[:-1]
lines = open(f"{work}/out.log", encoding="utf-8").read().split("\n")[:-1]
assert len(msgs) == len(lines) == 24, (len(msgs), len(lines))
for msg, line, o, r in zip(msgs, lines, objs, rules):
    params, text = sd(msg)
    got = {k: (int(v) if k == "rule_handle" else v) for k, v in params.items() if k.startswith("rule_")}
    assert got == r, (got, r, msg)
    assert params["dpt"] == str(o["dest_port"]), (params, o)
    assert text == line, (text, line)
    # logline's printk text says nothing of the rule (as without rules: true)
    assert "rule" not in line and "RULE" not in line and hostile not in line, line
    assert line.startswith(o["prefix"] + "IN=" if o["hook"] == "INPUT" else o["prefix"] + "IN= OUT=lo"), (line, o)

# sql: the rule columns, NULL where json has no rule; a table without them gets every row
for db in ("p", "old", "alt"):
    rows = json.load(open(f"{work}/{db}.json"))
    assert len(rows) == 24, (db, len(rows))
    for row, o, r in zip(rows, objs, rules):
        assert row["dport"] == o["dest_port"] and row["prefix"] == o["prefix"], (db, row, o)
        if db == "old":
            assert not any(k.startswith("rule_") for k in row), row
            continue
        assert {k: row[k] for k in fields if row[k] is not None} == r, (db, row, r)
print("24 records: CEF, LEEF, syslog SD and SQL rows carry json's rule (6 unattributed: none)")
PY
pass "the rule of every record in cef, leef, syslog structured data and sqlite's default columns equals json's; a table without them works; logline unchanged"
