// SPDX-License-Identifier: GPL-2.0-or-later
/* An output's spool counters from the spool's stats (spool_counters.h). */
#include "spool_counters.h"

void sl_spool_counters_new(struct sl_spool_counters *c, const struct sl_host *host,
			   struct sl_instance *inst)
{
	c->spooled = host->counter_new(inst, "spooled");
	c->sent = host->counter_new(inst, "spool_sent");
	c->bytes = host->counter_new(inst, "spool_bytes");
	c->dropped = host->counter_new(inst, "spool_dropped");
	c->corrupt = host->counter_new(inst, "spool_corrupt");
}

void sl_spool_counters_publish(struct sl_spool_counters *c, const struct sl_spool *sp,
			       const struct sl_host *host, struct sl_instance *inst)
{
	const struct sl_spool_stats *s = sl_spool_stats(sp);
	struct sl_spool_stats *seen = &c->seen;

	if (s->spooled != seen->spooled)
		host->counter_add(inst, c->spooled, s->spooled - seen->spooled);
	if (s->sent != seen->sent)
		host->counter_add(inst, c->sent, s->sent - seen->sent);
	if (s->dropped != seen->dropped) {
		host->counter_add(inst, c->dropped, s->dropped - seen->dropped);
		host->dropped_add(inst, s->dropped - seen->dropped);
	}
	if (s->corrupt != seen->corrupt)
		host->counter_add(inst, c->corrupt, s->corrupt - seen->corrupt);
	/* a current size: the difference wraps to a decrease (mod 2^64) */
	if (s->bytes != seen->bytes)
		host->counter_add(inst, c->bytes, s->bytes - seen->bytes);
	*seen = *s;
}
