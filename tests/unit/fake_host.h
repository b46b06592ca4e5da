/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fake struct sl_host for the unit tests of plugins/common's engines:
 * counters kept by name, the core's dropped count, the last log line (and
 * the last config error, as "config OPTION: FORMAT"), and timers that run
 * only when the test fires them.  Single-threaded; fake_host_reset()
 * before each case.  The instance handed to the engine is never read.  A
 * test that asks for more counters or timers than it holds, or for a
 * counter never made, aborts (exit status non-zero: the test fails).
 */
#ifndef SLUICE_TEST_FAKE_HOST_H
#define SLUICE_TEST_FAKE_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include <sluice/plugin.h>

#define FAKE_MAX_COUNTERS 16
#define FAKE_MAX_TIMERS 4

struct sl_timer {
	sl_timer_cb cb;
	void *ctx;
	bool armed;
	uint64_t delay, period;
};

struct fake_host {
	const char *names[FAKE_MAX_COUNTERS];
	uint64_t val[FAKE_MAX_COUNTERS];
	int n;
	uint64_t dropped;
	char last_log[512];
	struct sl_timer timers[FAKE_MAX_TIMERS];
	int ntimers;
};

extern struct fake_host H;
extern const struct sl_host fake_host;

/* Everything forgotten: no counters, no timers, no log line. */
void fake_host_reset(void);
/* The value of the counter named name; the test aborts when there is none. */
uint64_t fake_counter(const char *name);
/* Fire a timer the way the event loop would: a one-shot one is disarmed first. */
void fake_fire(struct sl_timer *t);

#endif /* SLUICE_TEST_FAKE_HOST_H */
