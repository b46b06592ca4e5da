-- SPDX-License-Identifier: GPL-2.0-or-later
-- ulogd2's column names over the sql output's packets table
-- (packets-postgresql.sql): the view `ulog` has the columns of the view of
-- the same name in ulogd2's pgsql-ulogd2-flat.sql that sluice records
-- carry, so queries written for ulogd2 keep working.  Ports and ICMP
-- fields appear only under their protocol's names (tcp_sport for TCP,
-- udp_sport for UDP, icmpv6_type for ICMPv6), as ulogd2 stores them.
-- Run it after packets-postgresql.sql; docs/MIGRATING.md.
CREATE OR REPLACE VIEW ulog AS SELECT
	floor(extract(epoch FROM time))::integer AS oob_time_sec,
	(extract(microseconds FROM time)::integer % 1000000) AS oob_time_usec,
	prefix::varchar(32) AS oob_prefix,
	mark::integer AS oob_mark,
	ifname_in::varchar(32) AS oob_in,
	ifname_out::varchar(32) AS oob_out,
	(CASE ip_version WHEN 4 THEN 2 WHEN 6 THEN 10 END)::smallint AS oob_family,
	src_addr AS ip_saddr_str,
	dst_addr AS ip_daddr_str,
	ip_proto AS ip_protocol,
	ip_ttl,
	ip_len AS ip_totlen,
	CASE WHEN ip_proto = 6 THEN sport END AS tcp_sport,
	CASE WHEN ip_proto = 6 THEN dport END AS tcp_dport,
	CASE WHEN ip_proto = 6 THEN tcp_flags & 32 <> 0 END AS tcp_urg,
	CASE WHEN ip_proto = 6 THEN tcp_flags & 16 <> 0 END AS tcp_ack,
	CASE WHEN ip_proto = 6 THEN tcp_flags & 8 <> 0 END AS tcp_psh,
	CASE WHEN ip_proto = 6 THEN tcp_flags & 4 <> 0 END AS tcp_rst,
	CASE WHEN ip_proto = 6 THEN tcp_flags & 2 <> 0 END AS tcp_syn,
	CASE WHEN ip_proto = 6 THEN tcp_flags & 1 <> 0 END AS tcp_fin,
	CASE WHEN ip_proto = 17 THEN sport END AS udp_sport,
	CASE WHEN ip_proto = 17 THEN dport END AS udp_dport,
	CASE WHEN ip_proto = 132 THEN sport END AS sctp_sport,
	CASE WHEN ip_proto = 132 THEN dport END AS sctp_dport,
	CASE WHEN ip_proto = 1 THEN icmp_type END AS icmp_type,
	CASE WHEN ip_proto = 1 THEN icmp_code END AS icmp_code,
	CASE WHEN ip_proto = 58 THEN icmp_type END AS icmpv6_type,
	CASE WHEN ip_proto = 58 THEN icmp_code END AS icmpv6_code,
	mac_src AS mac_saddr_str
FROM packets;
