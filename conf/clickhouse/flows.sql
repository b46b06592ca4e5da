-- SPDX-License-Identifier: GPL-2.0-or-later
-- Connections logged by sluice (nfct [-> flow] -> clickhouse, schema: flows).
-- Works on ClickHouse 18.16.  Column <- record field and conversion:
--   time        <- timestamp:sec     DateTime of the event
--   time_us     <- timestamp:usec    microseconds within that second
--   flow_start  <- flow_start:sec    first packet (when known)
--   flow_end    <- flow_end:sec      last packet / destroy time
--   orig_src, orig_dst, reply_src, reply_dst <- the address fields: 16 raw bytes,
--     IPv4 as IPv4-mapped (IPv6NumToString() prints ::ffff:a.b.c.d)
--   ct_event (SL_CT_EVENT_* bits: 1 new, 2 update, 4 destroy), ct_id, family,
--   ip_proto, orig_sport, orig_dport (ICMP: type<<8|code), reply_sport, reply_dport,
--   orig_packets, orig_bytes, reply_packets, reply_bytes (need nf_conntrack_acct=1),
--   tcp_state, mark, ct_zone <- the field of the same name
-- A current ClickHouse would use DateTime64(6) for the times, IPv6 for the addresses
-- and LowCardinality for low-cardinality strings; SummingMergeTree or a materialized
-- view for per-minute aggregates.
CREATE TABLE IF NOT EXISTS flows (
	time DateTime,
	time_us UInt32,
	ct_event UInt8,
	ct_id UInt32,
	family UInt8,
	ip_proto UInt8,
	orig_src FixedString(16),
	orig_dst FixedString(16),
	orig_sport UInt16,
	orig_dport UInt16,
	reply_src FixedString(16),
	reply_dst FixedString(16),
	reply_sport UInt16,
	reply_dport UInt16,
	orig_packets UInt64,
	orig_bytes UInt64,
	reply_packets UInt64,
	reply_bytes UInt64,
	flow_start DateTime,
	flow_end DateTime,
	tcp_state UInt8,
	mark UInt32,
	ct_zone UInt16
) ENGINE = MergeTree
PARTITION BY toYYYYMMDD(time)
ORDER BY (time, orig_src, orig_dst);
