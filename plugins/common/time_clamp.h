/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one rule for times outside the calendar (docs/RELIABILITY.md, "Times
 * outside the calendar"): a record's time comes from the kernel or from a
 * capture, and a replayed capture can say anything (2^63-1 s, year 10000).
 * Every output writes such a time clamped, never drops the record for it:
 *
 * - the calendar is 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z (four-digit
 *   years from 1, which RFC 3339, ISO 8601 parsers, SQLite and PostgreSQL
 *   all take); a time before it is written as its first second, a time
 *   after it as its last second, both with a zero fraction: the same
 *   instant in every output whatever its resolution (SQLite's date
 *   functions round .999999 up into the year 10000, which they refuse);
 * - an output whose format holds less (a pcap's or ClickHouse DateTime's
 *   unsigned 32-bit seconds, IPFIX's and nfdump's unsigned milliseconds
 *   since 1970) clamps the same way to the ends of its own range.
 *
 * Clamping keeps the record and its order in a file; the first or last
 * second of the range says "out of range" to anyone reading it.
 */
#ifndef SLUICE_TIME_CLAMP_H
#define SLUICE_TIME_CLAMP_H

#include <stdint.h>

#include <sluice/record.h>

#define SL_TIME_SEC_MIN (-62135596800LL)	/* 0001-01-01T00:00:00Z */
#define SL_TIME_SEC_MAX 253402300799LL		/* 9999-12-31T23:59:59Z */
#define SL_TIME_SEC_U32_MAX 4294967295LL	/* 2106-02-07T06:28:15Z */

/*
 * t within [lo, hi] seconds: below lo it becomes lo.000000000, above hi
 * hi.000000000; nanoseconds beyond a second (a corrupt capture) are cut
 * to 999999999.
 */
static inline struct sl_time sl_time_clamp(struct sl_time t, int64_t lo, int64_t hi)
{
	if (t.sec < lo) {
		t.sec = lo;
		t.nsec = 0;
	} else if (t.sec > hi) {
		t.sec = hi;
		t.nsec = 0;
	} else if (t.nsec > 999999999) {
		t.nsec = 999999999;
	}
	return t;
}

/* Clamped to the calendar. */
static inline struct sl_time sl_time_calendar(struct sl_time t)
{
	return sl_time_clamp(t, SL_TIME_SEC_MIN, SL_TIME_SEC_MAX);
}

/* Milliseconds since the epoch, clamped to 1970-01-01 .. the calendar's end. */
static inline uint64_t sl_time_ms_clamped(struct sl_time t)
{
	t = sl_time_clamp(t, 0, SL_TIME_SEC_MAX);
	return (uint64_t)t.sec * 1000 + t.nsec / 1000000;
}

/*
 * Nanoseconds since the epoch in an int64_t, for the filters' clocks (flow,
 * dedup, ratelimit): seconds clamped to what fits (1677..2262), so a
 * capture's 2^63-1 s is not a signed overflow.
 */
#define SL_TIME_NS_SEC_MAX 9223372035LL	/* 2262-04-11T23:47:15Z */

static inline int64_t sl_time_ns_clamped(struct sl_time t)
{
	t = sl_time_clamp(t, -SL_TIME_NS_SEC_MAX, SL_TIME_NS_SEC_MAX);
	return t.sec * 1000000000 + (int64_t)t.nsec;
}

#endif /* SLUICE_TIME_CLAMP_H */
