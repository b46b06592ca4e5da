-- SPDX-License-Identifier: GPL-2.0-or-later
-- The sql output's default flow table on SQLite (schema: flows).
CREATE TABLE IF NOT EXISTS flows (
	time		TEXT NOT NULL,
	ct_event	INTEGER,
	ct_id		INTEGER,
	family		INTEGER,
	ip_proto	INTEGER,
	orig_src	TEXT,
	orig_dst	TEXT,
	orig_sport	INTEGER,
	orig_dport	INTEGER,
	reply_src	TEXT,
	reply_dst	TEXT,
	reply_sport	INTEGER,
	reply_dport	INTEGER,
	orig_packets	INTEGER,
	orig_bytes	INTEGER,
	reply_packets	INTEGER,
	reply_bytes	INTEGER,
	flow_start	TEXT,
	flow_end	TEXT,
	tcp_state	INTEGER,
	mark		INTEGER,
	ct_zone		INTEGER
);
