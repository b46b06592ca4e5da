/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nflog's `conntrack: true` without the kernel's glue: on a kernel without
 * CONFIG_NETFILTER_NETLINK_GLUE_CT the NFLOG instance refuses
 * NFULNL_CFG_F_CONNTRACK (EOPNOTSUPP) and no packet carries NFULA_CT, so the
 * input asks conntrack itself: for each record without ct_id, the
 * connection of the packet's tuple (plugins/common/ct_lookup.h) through
 * ctnetlink (IPCTNL_MSG_CT_GET), on a socket of its own in the input's
 * network namespace, and sets ct_id from its CTA_ID.
 *
 * Cost: one request and its reply (a sendto() and a recv(), answered in
 * the same system call) per lookup; the ids found are cached per packet
 * tuple for SL_NFLOG_CT_LIFETIME_MS, so a busy connection costs a lookup
 * per lifetime, not per packet.  A TCP SYN (without ACK) is always looked
 * up: a new connection may have reused the tuple.
 *
 * A connection can end before its packets are read (conntrack destroys a
 * connection whose SYN was answered by a RST at once, and the kernel holds
 * logged packets up to its flush timeout): the input also listens to
 * conntrack's destroy events (NFNLGRP_CONNTRACK_DESTROY) and keeps both
 * tuples of each ended connection for the flush timeout and a second; a
 * lookup that finds no live connection reads the events that came and
 * takes the id from there (by the packet's tuple or, after NAT, its
 * inverse).  Lookups that find
 * nothing are not cached: a connection is only in the table once its first
 * packet was accepted (confirmed), and a later packet of it must find it.
 *
 * Counters: ct_lookups (requests sent), ct_missing (records left without
 * ct_id: no connection, as for a first packet the rule set dropped; not an
 * IP packet, or cut before its ports; an ICMP error; a conntrack zone
 * other than 0 is not looked up).
 *
 * ct_state (NFULA_CT_INFO) is not filled: it is the packet's state when it
 * was logged (new, established, related, reply), which the connection's
 * state at the lookup, later, does not tell.
 *
 * All on the input's thread; no allocation per record.
 */
#ifndef SLUICE_NFLOG_CT_H
#define SLUICE_NFLOG_CT_H

#include <sluice/plugin.h>

/* How long a connection id found stays cached for its packet tuple. */
#define SL_NFLOG_CT_LIFETIME_MS 250

struct nflog_ct;

/*
 * In configure(): its counters registered; NULL if out of memory (logged).
 * flush_timeout_ms: the longest the kernel holds a logged packet (qtimeout).
 */
struct nflog_ct *nflog_ct_new(const struct sl_host *host, struct sl_instance *inst,
			      uint64_t flush_timeout_ms);

/*
 * In start(), once the kernel refused its own conntrack glue: open the
 * socket and ask once (a tuple with no connection) that ctnetlink
 * answers.  0, or -1 with the error logged.
 */
int nflog_ct_start(struct nflog_ct *c);

/* Whether nflog_ct_start() succeeded: the lookups are on. */
bool nflog_ct_active(const struct nflog_ct *c);

/* ct_id for each record of b that has none, where conntrack has its connection. */
void nflog_ct_fill(struct nflog_ct *c, struct sl_batch *b);

void nflog_ct_stop(struct nflog_ct *c);
void nflog_ct_free(struct nflog_ct *c);

#endif
