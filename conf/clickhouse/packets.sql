-- SPDX-License-Identifier: GPL-2.0-or-later
-- Packets logged by sluice (nflog or replay -> decode -> clickhouse, schema: packets).
-- Works on ClickHouse 18.16 (Debian 12's clickhouse-server): no IPv4/IPv6/DateTime64
-- types there.  Column <- record field (sluice --describe-fields) and conversion:
--   time        <- timestamp:sec   DateTime (the output sends Unix seconds)
--   time_us     <- timestamp:usec  microseconds within that second
--   prefix      <- prefix          log prefix of the rule
--   ifname_in/ifname_out, ip_version, ip_proto, sport, dport, ip_len, ip_ttl,
--   tcp_flags, icmp_type, icmp_code, mark <- the field of the same name
--   src_addr    <- src_addr        16 raw bytes; IPv4 as IPv4-mapped ::ffff:a.b.c.d,
--   dst_addr    <- dst_addr        so IPv6NumToString() prints both families
--   src_ip4/dst_ip4: computed here from the addresses (0 for IPv6), for IPv4 queries
--     with IPv4NumToString()/IPv4StringToNum().
-- A field a record lacks (sport on ICMP) is left out of its row: the column's default.
-- A current ClickHouse (>= 21) would use: time DateTime64(6) instead of time/time_us,
-- src_addr/dst_addr IPv6 (its toIPv6 maps IPv4 the same way) and no *_ip4 columns,
-- prefix/ifname_* LowCardinality(String) (18.16: needs allow_experimental_low_cardinality_type).
--
-- The packet <-> flow join (docs/JSON.md "Packets and their flows"): with
-- nflog's conntrack: true and nfct's destroy events going to flows.sql's
-- table, add the conntrack id here and to the output's columns (the
-- built-in mapping has none: list it with the others),
--   ALTER TABLE packets ADD COLUMN ct_id UInt32;
--   columns: [time=timestamp:sec, time_us=timestamp:usec, prefix=prefix, ..., ct_id=ct_id]
-- and each packet finds its connection (ids are reused: match the time too):
--   SELECT time, prefix, ct_id, orig_bytes + reply_bytes AS bytes
--   FROM packets ALL INNER JOIN
--     (SELECT ct_id, time AS end_time, orig_bytes, reply_bytes FROM flows WHERE ct_event = 4)
--   USING ct_id WHERE time <= end_time;
--
-- The rule that logged each packet (nflog's rules: true, docs/PLUGINS.md):
-- add its columns, Nullable so that a packet no single rule logged has NULL
-- (the field is left out of its row), and list them in the output's columns
-- with the others (the built-in mapping has none, so a table without them
-- keeps working as it is):
--   ALTER TABLE packets ADD COLUMN rule_family Nullable(String),
--     ADD COLUMN rule_table Nullable(String), ADD COLUMN rule_chain Nullable(String),
--     ADD COLUMN rule_handle Nullable(UInt64), ADD COLUMN rule_comment Nullable(String),
--     ADD COLUMN rule_verdict Nullable(String);
--   columns: [time=timestamp:sec, time_us=timestamp:usec, prefix=prefix, ...,
--             rule_family=rule_family, rule_table=rule_table, rule_chain=rule_chain,
--             rule_handle=rule_handle, rule_comment=rule_comment, rule_verdict=rule_verdict]
CREATE TABLE IF NOT EXISTS packets (
	time DateTime,
	time_us UInt32,
	prefix String,
	ifname_in String,
	ifname_out String,
	ip_version UInt8,
	src_addr FixedString(16),
	dst_addr FixedString(16),
	ip_proto UInt8,
	sport UInt16,
	dport UInt16,
	ip_len UInt16,
	ip_ttl UInt8,
	tcp_flags UInt16,
	icmp_type UInt8,
	icmp_code UInt8,
	mark UInt32,
	src_ip4 UInt32 MATERIALIZED if(substring(src_addr, 1, 12) = unhex('00000000000000000000FFFF'),
		reinterpretAsUInt32(reverse(substring(src_addr, 13, 4))), 0),
	dst_ip4 UInt32 MATERIALIZED if(substring(dst_addr, 1, 12) = unhex('00000000000000000000FFFF'),
		reinterpretAsUInt32(reverse(substring(dst_addr, 13, 4))), 0)
) ENGINE = MergeTree
PARTITION BY toYYYYMMDD(time)
ORDER BY (time, src_addr, dst_addr);
