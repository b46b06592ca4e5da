-- SPDX-License-Identifier: GPL-2.0-or-later
-- A cluster: on every server the local table of packets.sql (here named packets_local),
-- and a Distributed table over them that sluice inserts into (table: packets).  The
-- cluster `sluice` is declared in each server's config, see remote_servers.xml.
-- Rows are split across the shards by rand(); with internal_replication and
-- ReplicatedMergeTree each shard can have replicas (a replicated table drops a
-- re-inserted identical block: a retried INSERT is not stored twice).  Works on 18.16.
-- Run packets.sql first with the table name packets_local, e.g.
--   sed 's/EXISTS packets (/EXISTS packets_local (/' packets.sql | clickhouse-client -n
-- The columns are listed, not copied with AS packets_local: 18.16 forwards a
-- MATERIALIZED column of a Distributed table to the shards, which refuse it
-- ("Cannot insert column src_ip4"); the shards compute src_ip4/dst_ip4 themselves.
CREATE TABLE IF NOT EXISTS packets (
	time DateTime,
	time_us UInt32,
	prefix String,
	ifname_in String,
	ifname_out String,
	ip_version UInt8,
	src_addr FixedString(16),
	dst_addr FixedString(16),
	ip_proto UInt8,
	sport UInt16,
	dport UInt16,
	ip_len UInt16,
	ip_ttl UInt8,
	tcp_flags UInt16,
	icmp_type UInt8,
	icmp_code UInt8,
	mark UInt32
) ENGINE = Distributed(sluice, currentDatabase(), packets_local, rand());
