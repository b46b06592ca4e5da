/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The engine of a batching network output: see sink.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "sink.h"

static uint64_t mono_ms(void *ctx)
{
	(void)ctx;
	return sl_mono_ms();
}

static void mono_sleep(void *ctx, uint64_t ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000 };

	(void)ctx;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static uint64_t now_ms(const struct sl_sink *sk)
{
	return sk->clock.now_ms(sk->clock.ctx);
}

static uint64_t doubled(const struct sl_sink *sk, uint64_t delay)
{
	return delay * 2 > sk->cfg->retry_max ? sk->cfg->retry_max : delay * 2;
}

static bool spool_usable(struct sl_sink *sk)
{
	return sk->ss.sp && sl_spool_ready(sk->ss.sp);
}

static bool spool_pending(const struct sl_sink *sk)
{
	return sk->ss.sp && sl_spool_pending(sk->ss.sp);
}

int sl_sink_check_spool_dir(const char *spool_dir, const struct sl_host *host,
			    struct sl_instance *inst)
{
	if (spool_dir && spool_dir[0] != '/') {
		host->config_error(inst, "spool_dir", "expected an absolute directory path");
		return -1;
	}
	return 0;
}

int sl_sink_check(const struct sl_sink_cfg *cfg, const struct sl_host *host,
		  struct sl_instance *inst)
{
	if (cfg->retry_min > cfg->retry_max) {
		host->config_error(inst, "retry_min", "is larger than retry_max");
		return -1;
	}
	return sl_sink_check_spool_dir(cfg->spool_dir, host, inst);
}

void sl_sink_init(struct sl_sink *sk, const struct sl_host *host, struct sl_instance *inst,
		  const struct sl_sink_cfg *cfg, const struct sl_sink_def *def, void *ctx,
		  int c_retries, int c_dropped)
{
	*sk = (struct sl_sink){
		.host = host, .inst = inst, .cfg = cfg, .def = def, .ctx = ctx,
		.clock = { mono_ms, mono_sleep, NULL },
		.c_retries = c_retries, .c_dropped = c_dropped,
	};
	sl_sink_spool_init(&sk->ss, host, inst, cfg->spool_dir);
}

void sl_sink_clock(struct sl_sink *sk, const struct sl_sink_clock *clock)
{
	sk->clock = *clock;
}

void sl_sink_spool_dropped(struct sl_sink *sk, uint64_t n)
{
	sk->host->counter_add(sk->inst, sk->ss.ctr.dropped, n);
	sk->host->dropped_add(sk->inst, n);
}

/* Units lost: the output's counter and the core's dropped. */
static void lost(struct sl_sink *sk, uint64_t n)
{
	sk->host->counter_add(sk->inst, sk->c_dropped, n);
	sk->host->dropped_add(sk->inst, n);
}

static void reset(struct sl_sink *sk)
{
	sk->def->ops->reset(sk->ctx);
	sk->units = 0;
	sk->done = 0;
}

/* ---- the spool ---- */

static int spool_open(struct sl_sink *sk)
{
	sk->peek = sk->def->spool_peek ? sk->def->spool_peek : (unsigned)sk->cfg->batch_size;
	sk->iov = calloc(sk->peek, sizeof(*sk->iov));
	if (!sk->iov) {
		sk->host->log(sk->inst, SL_LOG_ERR, "spool_dir: out of memory");
		return -1;
	}
	if (sl_sink_spool_open(&sk->ss, sk->cfg->spool_dir, sk->cfg->spool_max_size) < 0)
		return -1;
	sk->delay = sk->cfg->retry_min;
	sk->next_try = 0;
	return 0;
}

static void spool_close(struct sl_sink *sk)
{
	sl_sink_spool_close(&sk->ss, NULL);	/* flushed, published */
	free(sk->iov);
	sk->iov = NULL;
}

/* The batch into the spool, behind what it holds; the batch is empty afterwards. */
static void spool_batch(struct sl_sink *sk)
{
	static const char too_long;

	for (unsigned i = sk->done; i < sk->units; i++) {
		size_t len = 0;
		const void *rec = sk->def->ops->spool_rec(sk->ctx, i, &len);

		/* one the spool refuses, and counts in spool_dropped */
		if (!rec)
			sl_spool_append(sk->ss.sp, &too_long, SL_SPOOL_MAX_RECORD + 1);
		else
			sl_spool_append(sk->ss.sp, rec, len);
	}
	sl_spool_flush(sk->ss.sp);		/* one write per batch */
	sl_sink_spool_publish(&sk->ss);
	reset(sk);
}

/*
 * Send from the spool, oldest first, while the destination takes it and
 * for at most budget_ms; after a failure not before the delay has passed.
 * The ms until the next try is due (0: nothing left to send).
 */
static uint64_t drain_some(struct sl_sink *sk, uint64_t budget_ms)
{
	uint64_t t = now_ms(sk), start = t, wait;
	unsigned n, used;

	/* ready() takes the lock a reload's old instance has let go */
	if (!sk->ss.sp || !sl_spool_ready(sk->ss.sp) || !sl_spool_pending(sk->ss.sp))
		return 0;
	if (t < sk->next_try)
		return sk->next_try - t;
	while ((n = sl_spool_peekv(sk->ss.sp, sk->iov, sk->peek))) {
		enum sl_sink_result r;

		used = n;
		r = sk->def->ops->send_spooled(sk->ctx, sk->iov, n, &used);
		if (r == SL_SINK_RETRY) {
			wait = sk->delay;
			sk->next_try = now_ms(sk) + wait;
			sk->delay = doubled(sk, sk->delay);
			sl_sink_spool_publish(&sk->ss);
			return wait;
		}
		sl_spool_ack(sk->ss.sp, used < 1 ? 1 : used > n ? n : used);
		sk->delay = sk->cfg->retry_min;
		sk->next_try = 0;
		if (now_ms(sk) - start >= budget_ms) {
			sl_sink_spool_publish(&sk->ss);
			return spool_pending(sk) ? 1 : 0;	/* the rest after the input */
		}
	}
	sl_sink_spool_publish(&sk->ss);
	/* pending but nothing readable now (a segment in use): not a busy loop */
	return spool_pending(sk) ? sk->cfg->retry_min : 0;
}

/* From the spool for a while; the retry timer brings the rest. */
static void drain(struct sl_sink *sk)
{
	uint64_t wait;

	if (!sk->ss.sp)
		return;
	wait = drain_some(sk, SL_SINK_DRAIN_BUDGET_MS);
	if (wait && !sk->stopping)
		sk->host->timer_arm(sk->retry_timer, wait, 0);
}

/* ---- the batch ---- */

/* A batch that failed goes to the spool: its first send from there after retry_min. */
static void spool_failed(struct sl_sink *sk)
{
	sk->host->log(sk->inst, SL_LOG_NOTICE, "%u rows go to the spool, %s", sk->units - sk->done,
		      sk->def->from_spool);
	sk->delay = sk->cfg->retry_min;
	sk->next_try = now_ms(sk) + sk->delay;
	spool_batch(sk);
	if (!sk->stopping)
		sk->host->timer_arm(sk->retry_timer, sk->cfg->retry_min, 0);
}

/* Send the batch, retrying with backoff; the batch is empty afterwards. */
static void send_batch(struct sl_sink *sk)
{
	const struct sl_sink_cfg *c = sk->cfg;
	uint64_t delay = c->retry_min;
	int64_t tries = sk->stopping && c->max_retries > SL_SINK_STOP_RETRIES ? SL_SINK_STOP_RETRIES
									      : c->max_retries;
	unsigned n = sk->units;

	if (!n)
		return;
	/* once units are spooled, everything newer follows them there */
	if (spool_usable(sk) && spool_pending(sk)) {
		spool_batch(sk);
		return;
	}
	for (int64_t i = 0;; i++) {
		enum sl_sink_result r = sk->def->ops->send(sk->ctx, n);

		if (r == SL_SINK_SENT) {
			if (i && sk->def->ops->retried)
				sk->def->ops->retried(sk->ctx, n, i, true);
			else if (i)
				sk->host->log(sk->inst, SL_LOG_NOTICE, "%s of %u rows %s after %lld retries",
					      sk->def->batch, n, sk->def->done, (long long)i);
			break;
		}
		if (r == SL_SINK_RETRY && spool_usable(sk)) {
			spool_failed(sk);
			return;
		}
		if (i >= tries || (r == SL_SINK_REJECTED && i >= sk->def->reject_retries)) {
			/* the units the output said were delivered are not lost */
			if (sk->def->ops->retried)
				sk->def->ops->retried(sk->ctx, n - sk->done, i, false);
			else
				sk->host->log(sk->inst, SL_LOG_ERR, "%u rows dropped after %lld retries",
					      n - sk->done, (long long)i);
			lost(sk, n - sk->done);
			break;
		}
		sk->host->counter_add(sk->inst, sk->c_retries, 1);
		sk->clock.sleep_ms(sk->clock.ctx, delay);
		delay = doubled(sk, delay);
	}
	reset(sk);
}

/* ---- the output's callbacks ---- */

/* Whether r goes into the batch: a batch without room for it is sent first. */
static bool admitted(struct sl_sink *sk, const struct sl_record *r)
{
	enum sl_sink_admit a;

	if (!sk->def->ops->admit)
		return true;
	a = sk->def->ops->admit(sk->ctx, r);
	if (a == SL_SINK_FULL && sk->units) {
		send_batch(sk);
		a = sk->def->ops->admit(sk->ctx, r);
	}
	if (a == SL_SINK_FULL)
		lost(sk, 1);	/* no room even in an empty batch */
	return a == SL_SINK_TAKE;
}

int sl_sink_process(struct sl_sink *sk, struct sl_batch *b)
{
	for (unsigned i = 0; i < b->count; i++) {
		if (!admitted(sk, b->rec[i]))
			continue;
		if (!sk->def->ops->encode(sk->ctx, b->rec[i])) {
			if (!sk->oom_logged)
				sk->host->log(sk->inst, SL_LOG_ERR, "out of memory for the batch");
			sk->oom_logged = true;
			lost(sk, 1);
			continue;
		}
		if (++sk->units >= (uint64_t)sk->cfg->batch_size)
			send_batch(sk);
	}
	if (spool_pending(sk))
		drain(sk);
	return 0;
}

static void on_flush_timer(void *ctx)
{
	send_batch(ctx);
	drain(ctx);
}

static void on_retry_timer(void *ctx)
{
	drain(ctx);
}

int sl_sink_start(struct sl_sink *sk)
{
	sk->started = true;
	sk->flush_timer = sk->host->timer_new(sk->inst, on_flush_timer, sk);
	if (!sk->flush_timer)
		return -1;
	sk->host->timer_arm(sk->flush_timer, sk->cfg->flush_interval, sk->cfg->flush_interval);
	if (!sk->cfg->spool_dir)
		return 0;
	if (spool_open(sk) < 0)
		return -1;
	sk->retry_timer = sk->host->timer_new(sk->inst, on_retry_timer, sk);
	if (!sk->retry_timer)
		return -1;
	/* units left by an earlier run go first */
	sk->host->timer_arm(sk->retry_timer, 0, 0);
	return 0;
}

void sl_sink_send(struct sl_sink *sk)
{
	if (sk->started)
		send_batch(sk);
}

void sl_sink_delivered(struct sl_sink *sk, unsigned k)
{
	sk->done = k < sk->units ? k : sk->units;
}

void sl_sink_flush(struct sl_sink *sk)
{
	if (!sk->started)
		return;
	sk->stopping = true;
	send_batch(sk);
	sk->stopping = false;
}

void sl_sink_stop(struct sl_sink *sk)
{
	if (sk->flush_timer)
		sk->host->timer_disarm(sk->flush_timer);
	if (sk->retry_timer)
		sk->host->timer_disarm(sk->retry_timer);
	if (!sk->started)
		return;
	sk->stopping = true;
	send_batch(sk);
	if (sk->ss.sp) {
		/* the last units, if the destination answers; the rest waits on disk */
		sk->next_try = 0;
		drain_some(sk, SL_SINK_STOP_DRAIN_MS);
	}
	sk->stopping = false;
	spool_close(sk);
	sk->started = false;
}

void sl_sink_destroy(struct sl_sink *sk)
{
	spool_close(sk);	/* nothing to do unless it was opened */
}
