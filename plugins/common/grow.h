/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A byte buffer that grows by doubling (from 1 MiB) and is reused: the
 * batch buffers of the outputs that build a request per batch (clickhouse,
 * sql), so the hot path allocates only while a buffer is still growing.
 */
#ifndef SLUICE_GROW_H
#define SLUICE_GROW_H

#include <stdbool.h>
#include <stdlib.h>

/* Make *buf (capacity *cap) hold at least `need` bytes; false when out of memory. */
static inline bool sl_grow(char **buf, size_t *cap, size_t need)
{
	size_t ncap = *cap;
	char *nb;

	if (need <= *cap)
		return true;
	while (ncap < need)
		ncap = ncap ? ncap * 2 : 1 << 20;
	nb = realloc(*buf, ncap);
	if (!nb)
		return false;
	*buf = nb;
	*cap = ncap;
	return true;
}

#endif
