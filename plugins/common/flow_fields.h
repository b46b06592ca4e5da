/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fields of a flow record (flow filter, nfct).
 *
 * SL_FLOW_OPTIONAL_FIELDS: what the flow outputs (flowfile, ipfix) read
 * when a record has them, beyond the four they need (orig_src, orig_dst,
 * flow_start, flow_end): one list, so the two outputs' `reads` cannot
 * drift apart.
 *
 * SL_FLOW_COUNT_FIELDS: both directions' counters and the flow's start
 * and end, which both producers provide in this order: one list, so
 * neither leaves out what the outputs count on.
 *
 * SL_CT_TUPLE_FIELDS: a connection's addresses and ports in both
 * directions, as nfct provides them and the flow schemas of the
 * clickhouse and sql outputs read them.
 */
#ifndef SLUICE_FLOW_FIELDS_H
#define SLUICE_FLOW_FIELDS_H

#include <sluice/plugin.h>

#define SL_FLOW_OPTIONAL_FIELDS                                               \
	SL_FIELD_DECL(SL_F_FLOW_END_REASON), SL_FIELD_DECL(SL_F_FLOW_TCP_FLAGS), \
	SL_FIELD_DECL(SL_F_IFINDEX_IN), SL_FIELD_DECL(SL_F_IFINDEX_OUT),         \
	SL_FIELD_DECL(SL_F_IP_PROTO), SL_FIELD_DECL(SL_F_ORIG_BYTES),            \
	SL_FIELD_DECL(SL_F_ORIG_PACKETS), SL_FIELD_DECL(SL_F_ORIG_SPORT),        \
	SL_FIELD_DECL(SL_F_ORIG_DPORT), SL_FIELD_DECL(SL_F_REPLY_SRC),           \
	SL_FIELD_DECL(SL_F_REPLY_DST), SL_FIELD_DECL(SL_F_REPLY_SPORT),          \
	SL_FIELD_DECL(SL_F_REPLY_DPORT), SL_FIELD_DECL(SL_F_REPLY_BYTES),        \
	SL_FIELD_DECL(SL_F_REPLY_PACKETS)

#define SL_FLOW_COUNT_FIELDS                                                    \
	SL_FIELD_DECL(SL_F_ORIG_PACKETS), SL_FIELD_DECL(SL_F_ORIG_BYTES),          \
	SL_FIELD_DECL(SL_F_REPLY_PACKETS), SL_FIELD_DECL(SL_F_REPLY_BYTES),        \
	SL_FIELD_DECL(SL_F_FLOW_START), SL_FIELD_DECL(SL_F_FLOW_END)

#define SL_CT_TUPLE_FIELDS                                                     \
	SL_FIELD_DECL(SL_F_ORIG_SRC), SL_FIELD_DECL(SL_F_ORIG_DST),             \
	SL_FIELD_DECL(SL_F_ORIG_SPORT), SL_FIELD_DECL(SL_F_ORIG_DPORT),         \
	SL_FIELD_DECL(SL_F_REPLY_SRC), SL_FIELD_DECL(SL_F_REPLY_DST),           \
	SL_FIELD_DECL(SL_F_REPLY_SPORT), SL_FIELD_DECL(SL_F_REPLY_DPORT)

#endif
