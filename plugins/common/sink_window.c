/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The window of spooled records in flight to an asynchronous destination:
 * see sink_window.h.
 */
#include <stdlib.h>
#include <string.h>

#include "sink_window.h"

enum { W_TODO, W_IN_FLIGHT, W_DONE };

/* No report outstanding: acknowledge the DONE prefix, keep what follows it. */
static void window_done(struct sl_sink_window *w)
{
	unsigned k = 0;

	while (k < w->n && w->state[k] == W_DONE)
		k++;
	if (k) {
		sl_spool_ack(w->ss.sp, k);
		w->n -= k;
		memmove(w->state, w->state + k, w->n);
	}
	if (w->n)
		w->tail = false;
	sl_sink_spool_publish(&w->ss);
}

bool sl_sink_window_takes(const struct sl_sink_window *w)
{
	return w->ss.sp && !w->tail && (w->n || w->out || sl_spool_pending(w->ss.sp));
}

void sl_sink_window_append(struct sl_sink_window *w, const void *rec, size_t len)
{
	w->tail = false;	/* the spool now holds more than the window */
	sl_sink_spool_append(&w->ss, rec, len);
}

bool sl_sink_window_report(struct sl_sink_window *w, unsigned i, enum sl_win_report r)
{
	if (i >= w->n || w->state[i] != W_IN_FLIGHT)
		return false;
	if (r == SL_WIN_AGAIN) {
		w->state[i] = W_TODO;	/* still in the spool: produced again */
		w->retry = true;
		w->tail = false;
	} else {
		w->state[i] = W_DONE;
	}
	if (!--w->out)
		window_done(w);
	return true;
}

void sl_sink_window_fill(struct sl_sink_window *w)
{
	unsigned n, i;

	if (!w->ss.sp || w->out || w->retry || w->ops->busy(w->ctx) || !sl_spool_ready(w->ss.sp))
		return;
	n = sl_spool_peekv(w->ss.sp, w->iov, w->cap);
	if (!n)
		return;
	/* the first n are the last window's unacknowledged records */
	if (n > w->n)
		memset(w->state + w->n, W_TODO, n - w->n);
	w->n = n;
	for (i = 0; i < n; i++) {
		enum sl_win_produced p;

		if (w->state[i] != W_TODO)
			continue;
		p = w->ops->produce(w->ctx, &w->iov[i], i);
		if (p == SL_WIN_FULL)
			break;	/* the rest waits for the next window */
		if (p == SL_WIN_GONE) {
			w->state[i] = W_DONE;
		} else {
			w->state[i] = W_IN_FLIGHT;
			w->out++;
		}
	}
	w->tail = i == n && n < w->cap && w->out && sl_spool_tail_loaded(w->ss.sp);
	if (!w->out)
		window_done(w);
	else
		sl_sink_spool_publish(&w->ss);
}

/* Takes the lock after a reload, retries stalled and failed windows. */
static void on_timer(void *ctx)
{
	struct sl_sink_window *w = ctx;

	if (!w->out)
		w->retry = false;
	sl_sink_window_fill(w);
	sl_sink_spool_publish(&w->ss);
}

int sl_sink_window_open(struct sl_sink_window *w, const char *dir, uint64_t max_size, unsigned cap,
			uint64_t period_ms, const struct sl_sink_window_ops *ops, void *ctx)
{
	if (!dir)
		return 0;
	w->ops = ops;
	w->ctx = ctx;
	w->cap = cap;
	w->n = w->out = 0;
	w->retry = w->tail = false;
	w->iov = calloc(cap, sizeof(*w->iov));
	w->state = calloc(cap, 1);
	if (!w->timer)	/* a start() after a stop() keeps it */
		w->timer = w->ss.host->timer_new(w->ss.inst, on_timer, w);
	if (!w->iov || !w->state || !w->timer) {
		w->ss.host->log(w->ss.inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	if (sl_sink_spool_open(&w->ss, dir, max_size) < 0)
		return -1;
	w->ss.host->timer_arm(w->timer, period_ms, period_ms);
	return 0;
}

int sl_sink_window_front_begin(struct sl_sink_window *w)
{
	/* only the destination's own records are in flight then, all older than the spool */
	if (!w->ss.sp || w->n || w->out)
		return -1;
	return sl_sink_spool_front_begin(&w->ss);
}

void sl_sink_window_close(struct sl_sink_window *w, const char *where, bool destroying)
{
	/*
	 * as plugin.h asks, the timer is created in start() and disarmed in
	 * stop() only: at destroy() the event loop may be gone
	 */
	if (w->timer && !destroying)
		w->ss.host->timer_disarm(w->timer);
	sl_sink_spool_close(&w->ss, where);
	free(w->iov);
	free(w->state);
	w->iov = NULL;
	w->state = NULL;
	w->n = w->out = 0;
}
