-- SPDX-License-Identifier: GPL-2.0-or-later
-- The sql output's default flow table on SQLite (schema: flows).
CREATE TABLE IF NOT EXISTS flows (
	time		TEXT,
	ct_event	INTEGER,
	ct_id		INTEGER,
	family		INTEGER,
	ip_version	INTEGER,
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
	flow_tcp_flags	INTEGER,
	flow_end_reason	INTEGER,
	tcp_state	INTEGER,
	mark		INTEGER,
	ct_zone		INTEGER
);
