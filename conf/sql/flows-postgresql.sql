-- SPDX-License-Identifier: GPL-2.0-or-later
-- The sql output's default flow table on PostgreSQL (schema: flows): the
-- records of the nfct input or the flow filter.  Column names are sluice's
-- field names; a field a record lacks is NULL.
CREATE TABLE IF NOT EXISTS flows (
	time		timestamptz NOT NULL,	-- when the record was made
	ct_event	smallint,		-- 1 new, 2 update, 4 destroy
	ct_id		bigint,
	family		smallint,		-- 2 IPv4, 10 IPv6
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
	tcp_state	smallint,
	mark		bigint,
	ct_zone		integer
);
