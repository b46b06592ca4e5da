/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The line `conntrack -E` (conntrack-tools 1.4.7, libnetfilter_conntrack
 * 1.0.9 __snprintf_conntrack_default) prints for a conntrack event, rebuilt
 * from a connection record (nfct) or a flow record (flow):
 *
 *   [1700000000.123456]<TAB>[DESTROY] tcp      6 119 TIME_WAIT src=.. dst=..
 *   sport=.. dport=.. packets=5 bytes=1268 src=.. dst=.. sport=.. dport=..
 *   packets=5 bytes=3268 [ASSURED] mark=1 zone=2 delta-time=0 id=..
 *   [USERSPACE] portid=1234
 *
 * Each part is printed only when the record has what the library tests
 * for (the kernel decides what an event carries: no counters or times in
 * new/update events, no mark when it is 0...).  Fields used:
 *   SL_F_CT_EVENT        "%9s " [NEW] / [UPDATE] / [DESTROY]; absent
 *                        (flow records): no event column, as conntrack -L
 *   SL_F_FAMILY          AF_INET6 prints IPv4-mapped addresses as IPv6
 *   SL_F_IP_PROTO        "%-8s %u " name and number
 *   ct_timeout (by id)   "%u " seconds left (CTA_TIMEOUT)
 *   SL_F_TCP_STATE       SYN_SENT, ESTABLISHED... (TCP only)
 *   SL_F_ORIG_*, SL_F_REPLY_*   the two tuples; ports, ICMP type/code/id
 *                        (id in *_sport, type<<8|code in *_dport), GRE keys
 *   SL_F_*_PACKETS/BYTES counters, after each tuple
 *   SL_F_CT_STATUS       [UNREPLIED], [HW_OFFLOAD] / [OFFLOAD] / [ASSURED]
 *   SL_F_MARK, SL_F_CT_ZONE, SL_F_FLOW_START/END (delta-time=), SL_F_CT_ID
 *   ct_portid (by id)    " [USERSPACE] portid=%u" (the event was caused by
 *                        a netlink request: conntrack -D/-F, a daemon)
 *   SL_F_TIMESTAMP       the "[sec.usec]\t" prefix (else SL_F_FLOW_END)
 */
#ifndef SLUICE_CTLINE_FMT_H
#define SLUICE_CTLINE_FMT_H

#include <sluice/record.h>

#include "fmt.h"

/* conntrack's -o flags. */
#define SL_CTLINE_TIMESTAMP 0x01	/* -o timestamp: "[sec.usec]\t" first */
#define SL_CTLINE_ID 0x02		/* -o id: "id=N" */
#define SL_CTLINE_EXTENDED 0x04		/* -o extended: "ipv4     2 " first */

/* Ids of the two registered fields nfct provides (-1: not in this config). */
struct sl_ctline_fields {
	int timeout;
	int portid;
};

/* Is r a connection or flow record (a tuple, no packet)? */
bool sl_ctline_applies(const struct sl_record *r);

/* Append the line for r (no newline); b overflows if it is too small. */
void sl_ctline_format(struct sl_fmt_buf *b, const struct sl_record *r, const struct sl_ctline_fields *f,
		      unsigned flags);

/* Longest line: 2 IPv6 tuples, all counters, every optional part. */
#define SL_CTLINE_MAX 640

#endif /* SLUICE_CTLINE_FMT_H */
