-- SPDX-License-Identifier: GPL-2.0-or-later
-- The sql output's default packet table on SQLite (schema: packets).
-- Times are text, 2026-12-01 05:53:27.175145+00:00, which SQLite's date
-- functions read (datetime(time), unixepoch(time)); addresses are text.
-- The packet <-> flow join (docs/JSON.md "Packets and their flows"): add
--   ALTER TABLE packets ADD COLUMN ct_id INTEGER;
-- and `ct_id: ct_id` to the output's columns map (with the others), then
--   SELECT p.time, p.prefix, p.ct_id, f.orig_bytes + f.reply_bytes AS bytes
--   FROM packets p JOIN flows f ON f.ct_id = p.ct_id AND f.ct_event = 4
--   AND unixepoch(p.time) <= unixepoch(f.time);
-- The rule that logged each packet (nflog's rules: true, docs/PLUGINS.md):
-- the rule_* columns, NULL for a packet no single rule logged.  A table
-- made before them keeps working without them; to have them, add them:
--   ALTER TABLE packets ADD COLUMN rule_family TEXT;
--   ALTER TABLE packets ADD COLUMN rule_table TEXT;
--   ALTER TABLE packets ADD COLUMN rule_chain TEXT;
--   ALTER TABLE packets ADD COLUMN rule_handle INTEGER;
--   ALTER TABLE packets ADD COLUMN rule_comment TEXT;
--   ALTER TABLE packets ADD COLUMN rule_verdict TEXT;
-- (sluice writes them from its next start), then, e.g., the packets each
-- rule logged:
--   SELECT rule_table, rule_chain, rule_handle, rule_comment, count(*)
--   FROM packets GROUP BY 1, 2, 3, 4 ORDER BY 5 DESC;
CREATE TABLE IF NOT EXISTS packets (
	time		TEXT,
	prefix		TEXT,
	ifname_in	TEXT,
	ifname_out	TEXT,
	mac_src		TEXT,
	ip_version	INTEGER,
	src_addr	TEXT,
	dst_addr	TEXT,
	ip_proto	INTEGER,
	sport		INTEGER,
	dport		INTEGER,
	ip_len		INTEGER,
	ip_ttl		INTEGER,
	tcp_flags	INTEGER,
	icmp_type	INTEGER,
	icmp_code	INTEGER,
	mark		INTEGER,
	rule_family	TEXT,			-- the rule (nflog's rules: true), else NULL
	rule_table	TEXT,
	rule_chain	TEXT,
	rule_handle	INTEGER,
	rule_comment	TEXT,
	rule_verdict	TEXT
);
