/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plugins' clock readings, one copy instead of a private helper in
 * each plugin: CLOCK_MONOTONIC for timeouts and rate limits,
 * CLOCK_REALTIME for the time a record is given.  Not time(): glibc's
 * reads the coarse clock, up to a tick behind.
 *
 * Every plugin and the sink engine read it (the core has its own in
 * runtime/); a plugin calling clock_gettime() itself is a reason to add
 * a helper here.
 */
#ifndef SLUICE_CLOCK_H
#define SLUICE_CLOCK_H

#include <stdint.h>
#include <time.h>

#include <sluice/record.h>

/* Nanoseconds on clock id. */
static inline int64_t sl_clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Milliseconds on clock id. */
static inline int64_t sl_clock_ms(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Monotonic milliseconds, the unit of the host's timers. */
static inline uint64_t sl_mono_ms(void)
{
	return (uint64_t)sl_clock_ms(CLOCK_MONOTONIC);
}

/* Clock id as a record's time. */
static inline struct sl_time sl_clock_time(clockid_t id)
{
	struct timespec t;
	struct sl_time s;

	clock_gettime(id, &t);
	s.sec = t.tv_sec;
	s.nsec = (uint32_t)t.tv_nsec;
	return s;
}

#endif /* SLUICE_CLOCK_H */
