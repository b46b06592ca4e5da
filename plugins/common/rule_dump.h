/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rule index (rule_index.h) of the ruleset in force, asked of the
 * kernel over netlink (a NETLINK_NETFILTER socket of its own, libmnl):
 * dumps of the chains, the sets, the elements of each verdict map and the
 * rules chain by chain, read by rule_index_nl.h, between two NFT_MSG_GETGEN answers that
 * agree (dumped again when they do not, or when the kernel says a dump was
 * interrupted).  What `nft -j list ruleset` would be built from, without
 * libnftables' cache and JSON printing: 10,000 rules in about 50 ms of CPU
 * instead of about a second (bench/rules.sh).
 *
 * Blocking requests on the caller's thread; the object is for one thread.
 */
#ifndef SLUICE_RULE_DUMP_H
#define SLUICE_RULE_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "rule_index.h"

struct sl_rule_dump;

/* Where the last sl_rule_dump_index() spent its time (for bench/rules.sh). */
struct sl_rule_dump_stats {
	uint64_t kernel_ns;	/* in requests and receives: the kernel's dump */
	uint64_t parse_ns;	/* reading the messages and building the index */
	unsigned tries;		/* dumps made (more than 1: the ruleset changed meanwhile) */
	size_t bytes;		/* of messages read */
};

/* NULL when out of memory; the socket opens at the first request. */
struct sl_rule_dump *sl_rule_dump_new(void);
void sl_rule_dump_free(struct sl_rule_dump *d);

/*
 * Dump the ruleset of the network namespace nsfd (sl_netns_open(); the
 * caller keeps it open while d is used), -1: ours.  The socket is made
 * again, in that namespace, at the next request.
 */
void sl_rule_dump_set_netns(struct sl_rule_dump *d, int nsfd);

/* The ruleset's generation now (one NFT_MSG_GETGEN round trip): 0 or -errno. */
int sl_rule_dump_gen(struct sl_rule_dump *d, uint32_t *gen);

/*
 * The index of one generation into *ix and that generation into *gen: 0,
 * or -errno (EPERM: no CAP_NET_ADMIN here; EPROTO: the messages did not
 * make an index, why in err, errlen bytes; EINTR: the ruleset kept changing).
 */
int sl_rule_dump_index(struct sl_rule_dump *d, struct sl_rule_index **ix, uint32_t *gen,
		       char *err, size_t errlen);

/* Of the last sl_rule_dump_index(). */
const struct sl_rule_dump_stats *sl_rule_dump_stats(const struct sl_rule_dump *d);

#endif
