-- SPDX-License-Identifier: GPL-2.0-or-later
-- The sql output's default packet table on PostgreSQL (schema: packets).
-- Column names are sluice's field names (sluice --describe); a field a
-- record lacks is NULL.  docs/MIGRATING.md shows a view with ulogd2's names.
-- No index: COPY is fastest without; add the ones your queries need
-- (an index on time roughly halves the insert rate).
CREATE TABLE IF NOT EXISTS packets (
	time		timestamptz,		-- the record's timestamp, microseconds
	prefix		text,			-- log prefix of the rule
	ifname_in	text,
	ifname_out	text,
	mac_src		macaddr,
	ip_version	smallint,
	src_addr	inet,
	dst_addr	inet,
	ip_proto	smallint,
	sport		integer,
	dport		integer,
	ip_len		integer,
	ip_ttl		smallint,
	tcp_flags	integer,		-- low 8 bits: FIN SYN RST PSH ACK URG ECE CWR
	icmp_type	smallint,
	icmp_code	smallint,
	mark		bigint
);
