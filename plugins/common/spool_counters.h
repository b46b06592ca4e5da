/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The counters an output shows for its disk spool (spool.h): spooled,
 * spool_sent, spool_bytes (the spool's current size), spool_dropped and
 * spool_corrupt (damaged records skipped and segments set aside), fed from
 * sl_spool_stats() by the differences since the last call.
 * Dropped records also go to host->dropped_add(), so the core's `dropped`
 * agrees.  All calls from the thread that owns the spool.
 */
#ifndef SLUICE_SPOOL_COUNTERS_H
#define SLUICE_SPOOL_COUNTERS_H

#include <sluice/plugin.h>

#include "spool.h"

struct sl_spool_counters {
	int spooled, sent, bytes, dropped, corrupt;	/* counter ids */
	struct sl_spool_stats seen;		/* what was published */
};

/* In configure(): create the five counters (in this order). */
void sl_spool_counters_new(struct sl_spool_counters *c, const struct sl_host *host,
			   struct sl_instance *inst);
/* Publish what changed in sp's stats since the last call. */
void sl_spool_counters_publish(struct sl_spool_counters *c, const struct sl_spool *sp,
			       const struct sl_host *host, struct sl_instance *inst);

#endif
