#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# clickhouse with times outside the calendar (issue 19, section 4): a
# replayed NFLOG capture (conform_pcap.py times) with NFULA_TIMESTAMPs
# 1700000000.123456, 2^63-1 and 253402300800 (10000-01-01) seconds, into a
# DateTime column (unsigned 32-bit seconds) and its :usec column, as
# JSONEachRow (mapped columns) and as RowBinary (conf/clickhouse/packets.sql).  ClickHouse used to store 0000-00-00 (the
# JSON number did not fit) or a truncated second; now both formats store
# the last second DateTime holds, 2106-02-07 06:28:15 UTC, with 0 us, as
# docs/RELIABILITY.md says, and every row arrives.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse_lib.sh"

python3 "$E2E/conform_pcap.py" times "$WORK/t.pcap" 1700000000 9223372036854775807 253402300800
ch_start a
ch_query a "CREATE TABLE js (t DateTime, us UInt32, dport UInt16) ENGINE = MergeTree ORDER BY dport"
sed 's/EXISTS packets (/EXISTS rb (/' "$SQL/packets.sql" | clickhouse-client --port "$CH_TCP_a" -n
cat >"$WORK/t.yaml" <<YAML
instances:
  cap: {plugin: replay, file: "$WORK/t.pcap"}
  dec: {plugin: decode, ifnames: false}
stacks:
  j: [cap, dec, {plugin: clickhouse, url: "http://127.0.0.1:$CH_HTTP_a", table: js,
                 columns: ["t=timestamp", "us=timestamp:usec", "dport=dport"]}]
  r: [cap, dec, {plugin: clickhouse, url: "http://127.0.0.1:$CH_HTTP_a", table: rb, format: RowBinary}]
YAML
timeout $((60 * TIME_FACTOR)) "$SLUICE" -c "$WORK/t.yaml" >"$WORK/t.log" 2>&1 || { cat "$WORK/t.log"; fail "sluice failed"; }
want=$'1000\t1700000000\t123456,1001\t4294967295\t0,1002\t4294967295\t0'
for q in "dport, toUnixTimestamp(t), us FROM js" "dport, toUnixTimestamp(time), time_us FROM rb"; do
	got=$(ch_query a "SELECT $q ORDER BY dport FORMAT TSV" | paste -sd,)
	[ "$got" = "$want" ] || fail "${q##* }: got '$got', want '$want'"$'\n'"$(cat "$WORK/t.log")"
done
pass "JSONEachRow and RowBinary: 3 rows, the two out of range at DateTime's last second"
