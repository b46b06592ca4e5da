-- SPDX-License-Identifier: GPL-2.0-or-later
-- The sql output's default packet table on SQLite (schema: packets).
-- Times are text, 2026-12-01 05:53:27.175145+00:00, which SQLite's date
-- functions read (datetime(time), unixepoch(time)); addresses are text.
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
	mark		INTEGER
);
