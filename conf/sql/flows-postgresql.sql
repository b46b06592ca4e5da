-- SPDX-License-Identifier: GPL-2.0-or-later
-- The sql output's default flow table on PostgreSQL (schema: flows): the
-- records of the nfct input or the flow filter.  Column names are sluice's
-- field names; a field a record lacks is NULL.
CREATE TABLE IF NOT EXISTS flows (
	time		timestamptz,		-- the event's time (none from the flow filter)
	ct_event	smallint,		-- 1 new, 2 update, 4 destroy
	ct_id		bigint,
	family		smallint,		-- 2 IPv4, 10 IPv6
	ip_version	smallint,
	ip_proto	smallint,
	orig_src	inet,
	orig_dst	inet,
	orig_sport	integer,
	orig_dport	integer,
	reply_src	inet,
	reply_dst	inet,
	reply_sport	integer,
	reply_dport	integer,
	orig_packets	bigint,
	orig_bytes	bigint,
	reply_packets	bigint,
	reply_bytes	bigint,
	flow_start	timestamptz,
	flow_end	timestamptz,
	flow_tcp_flags	integer,		-- OR of the TCP flags seen
	flow_end_reason	smallint,		-- 1 idle, 2 active, 3 eof, 4 evicted, 5 destroy
	tcp_state	smallint,
	mark		bigint,
	ct_zone		integer
);
