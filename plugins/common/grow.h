/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A byte buffer that grows by doubling and is reused, so the hot path
 * allocates only while a buffer is still growing: the batch buffers of the
 * outputs that build a request per batch (clickhouse, sql: from 1 MiB),
 * nats' batch of units and the OTLP encoder's buffers (from their own
 * first size).
 */
#ifndef SLUICE_GROW_H
#define SLUICE_GROW_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * Make the buffer whose pointer is at bufp (a char ** or uint8_t **;
 * capacity *cap) hold at least `need` bytes: first `first` bytes, doubled
 * until it does.  False when out of memory (buffer and *cap as they were).
 * The pointer is read and written by memcpy, as the caller's own type.
 */
static inline bool sl_grow_from(void *bufp, size_t *cap, size_t need, size_t first)
{
	size_t ncap = *cap;
	void *old, *nb;

	if (need <= *cap)
		return true;
	while (ncap < need)
		ncap = ncap ? ncap * 2 : first;
	memcpy(&old, bufp, sizeof(old));
	nb = realloc(old, ncap);
	if (!nb)
		return false;
	memcpy(bufp, &nb, sizeof(nb));
	*cap = ncap;
	return true;
}

/* Make *buf (capacity *cap) hold at least `need` bytes, from 1 MiB; false when out of memory. */
static inline bool sl_grow(char **buf, size_t *cap, size_t need)
{
	return sl_grow_from(buf, cap, need, 1 << 20);
}

#endif
