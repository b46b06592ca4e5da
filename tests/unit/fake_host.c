/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fake host of the engines' unit tests (contract in fake_host.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"

/* A test asking for what the fake cannot give is a broken test: it stops here. */
static void fake_broken(const char *what, const char *name)
{
	fprintf(stderr, "fake_host: %s%s\n", what, name ? name : "");
	abort();
}

struct fake_host H;

static void h_log(struct sl_instance *inst, enum sl_log_level level, const char *fmt, ...)
{
	va_list ap;

	(void)inst;
	(void)level;
	va_start(ap, fmt);
	vsnprintf(H.last_log, sizeof(H.last_log), fmt, ap);
	va_end(ap);
}

static void h_config_error(struct sl_instance *inst, const char *opt, const char *fmt, ...)
{
	(void)inst;
	snprintf(H.last_log, sizeof(H.last_log), "config %s: %s", opt ? opt : "", fmt);
}

static int h_counter_new(struct sl_instance *inst, const char *name)
{
	(void)inst;
	if (H.n == FAKE_MAX_COUNTERS)
		fake_broken("too many counters at ", name);
	H.names[H.n] = name;
	return H.n++;
}

static void h_counter_add(struct sl_instance *inst, int c, uint64_t n)
{
	(void)inst;
	H.val[c] += n;
}

static void h_dropped_add(struct sl_instance *inst, uint64_t n)
{
	(void)inst;
	H.dropped += n;
}

static struct sl_timer *h_timer_new(struct sl_instance *inst, sl_timer_cb cb, void *ctx)
{
	struct sl_timer *t;

	(void)inst;
	if (H.ntimers == FAKE_MAX_TIMERS)
		fake_broken("too many timers", NULL);
	t = &H.timers[H.ntimers++];
	*t = (struct sl_timer){ .cb = cb, .ctx = ctx };
	return t;
}

static void h_timer_arm(struct sl_timer *t, uint64_t delay, uint64_t period)
{
	t->armed = true;
	t->delay = delay;
	t->period = period;
}

static void h_timer_disarm(struct sl_timer *t)
{
	t->armed = false;
}

const struct sl_host fake_host = {
	.size = sizeof(struct sl_host),
	.log = h_log,
	.config_error = h_config_error,
	.timer_new = h_timer_new,
	.timer_arm = h_timer_arm,
	.timer_disarm = h_timer_disarm,
	.counter_new = h_counter_new,
	.counter_add = h_counter_add,
	.dropped_add = h_dropped_add,
};

void fake_host_reset(void)
{
	memset(&H, 0, sizeof(H));
}

uint64_t fake_counter(const char *name)
{
	for (int i = 0; i < H.n; i++)
		if (!strcmp(H.names[i], name))
			return H.val[i];
	fake_broken("no counter ", name);
	return 0;
}

void fake_fire(struct sl_timer *t)
{
	if (!t->period)
		t->armed = false;
	t->cb(t->ctx);
}
