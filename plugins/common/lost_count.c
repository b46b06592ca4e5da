/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "lost_count.h"

/* lost = max(S, D + cut), never going back */
static uint64_t update(struct sl_lost_count *c)
{
	uint64_t bound = c->drops + c->cut, grew = 0;

	if (bound < c->seq_lost)
		bound = c->seq_lost;
	if (bound > c->lost) {
		grew = bound - c->lost;
		c->lost = bound;
	}
	return grew;
}

uint64_t sl_lost_gap(struct sl_lost_count *c, uint64_t n)
{
	c->seq_lost += n;
	return update(c);
}

uint64_t sl_lost_drops(struct sl_lost_count *c, uint64_t drops, bool cut)
{
	if (drops > c->drops)
		c->drops = drops;
	if (cut && c->seq_lost > c->drops && c->seq_lost - c->drops > c->cut)
		c->cut = c->seq_lost - c->drops;
	return update(c);
}
