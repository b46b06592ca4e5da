-- SPDX-License-Identifier: GPL-2.0-or-later
-- The sql output's default packet table on PostgreSQL (schema: packets).
-- Column names are sluice's field names (sluice --describe); a field a
-- record lacks is NULL.  docs/MIGRATING.md shows a view with ulogd2's names.
-- No index: COPY is fastest without; add the ones your queries need
-- (an index on time roughly halves the insert rate).
--
-- The packet <-> flow join (docs/JSON.md "Packets and their flows"): with
-- nflog's conntrack: true and nfct's destroy events in flows-postgresql.sql's
-- table, add the conntrack id here and to the output's columns map (the
-- default columns have none: list it with the others),
--   ALTER TABLE packets ADD COLUMN ct_id bigint;
--   columns: { time: timestamp, prefix: prefix, ..., ct_id: ct_id }
-- and each packet finds its connection (ids are reused: match the time too):
--   SELECT p.time, p.prefix, p.ct_id, f.orig_bytes + f.reply_bytes AS bytes
--   FROM packets p JOIN flows f ON f.ct_id = p.ct_id AND f.ct_event = 4 AND p.time <= f.time;
--
-- The rule that logged each packet (nflog's rules: true, docs/PLUGINS.md):
-- the rule_* columns, NULL for a packet no single rule logged.  A table
-- made before them keeps working without them; to have them, add them:
--   ALTER TABLE packets ADD COLUMN rule_family text, ADD COLUMN rule_table text,
--     ADD COLUMN rule_chain text, ADD COLUMN rule_handle bigint,
--     ADD COLUMN rule_comment text, ADD COLUMN rule_verdict text;
-- (sluice writes them from its next start), then, e.g., the packets each
-- rule logged:
--   SELECT rule_table, rule_chain, rule_handle, rule_comment, count(*)
--   FROM packets GROUP BY 1, 2, 3, 4 ORDER BY 5 DESC;
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
	mark		bigint,
	rule_family	text,			-- the rule (nflog's rules: true), else NULL
	rule_table	text,
	rule_chain	text,
	rule_handle	bigint,
	rule_comment	text,
	rule_verdict	text
);
