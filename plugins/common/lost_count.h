/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Counting the events a netlink overrun lost when a datagram may hold
 * several events (nflog's batches), from two exact facts:
 *   S, the events in sequence-number gaps between received events, and
 *   D, the datagrams the kernel dropped on the socket (SK_MEMINFO_DROPS),
 *      each holding at least one event.
 * Only S says how many events, but only D sees a loss no later event
 * reveals (an overrun at the end of the traffic).  Take a cut C in the
 * kernel's order of datagrams, with S_C the gaps before it and D_C the
 * drops before it: the events lost after C are at least S - S_C and at
 * least D - D_C, so
 *     lost >= S_C + max(S - S_C, D - D_C).
 * The start (0, 0) is a cut; so is each moment a read finds the socket
 * empty, with D read just after it (an upper bound of D_C; a gap found
 * later that reaches back before the cut only adds to the left side).
 * `cut` keeps the best of them, max(S_C - D_C), and lost is
 * max(S, D + cut): never more than what was lost, no gap counted twice (a
 * gap found later replaces the drops that bounded it), and exact when each
 * dropped datagram held one event or once a later event reveals the gap.
 */
#ifndef SLUICE_LOST_COUNT_H
#define SLUICE_LOST_COUNT_H

#include <stdbool.h>
#include <stdint.h>

struct sl_lost_count {
	uint64_t seq_lost;	/* S */
	uint64_t drops;		/* D, as last read */
	uint64_t cut;		/* max(S_C - D_C) over the cuts */
	uint64_t lost;		/* the count reported so far */
};

/* A gap of n events between two received ones: how much lost grew. */
uint64_t sl_lost_gap(struct sl_lost_count *c, uint64_t n);

/*
 * The kernel's drop count was read (the total since the socket was
 * opened); `cut`: just after a read found the socket empty.  Returns how
 * much lost grew.
 */
uint64_t sl_lost_drops(struct sl_lost_count *c, uint64_t drops, bool cut);

#endif
