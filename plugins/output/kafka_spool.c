/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kafka output's disk spool (spool_dir; the engine is spool.h).
 *
 * Where records are: librdkafka's bounded queue (queue_size), the spool,
 * or still to come.  A record goes to the spool when librdkafka refuses it
 * (queue full), and so does every newer record while the spool holds
 * anything, so what is in librdkafka is always older than the spool.  The
 * spool is drained only when librdkafka holds none of process()'s records
 * any more (direct_inflight == 0): a window of up to KSPOOL_WINDOW spooled
 * records is produced (msg_opaque = its index + 1), and once every report
 * of the window is in, the delivered prefix is acknowledged; records whose
 * delivery failed are produced again in the next window, those delivered
 * after them are not (wstate remembers them).  Order per key (partition)
 * therefore holds through an outage shorter than message_timeout.  A
 * window that holds all the spool has (wtail) lets newer records go
 * straight to librdkafka again, behind it, so a steady stream leaves the
 * spool instead of going through it for ever; should one of the window's
 * records fail then, it is produced after them.  A
 * record of process() whose report fails (message_timeout, or purged at
 * stop) is older than the spool but can only be appended behind it,
 * except at stop, where the purged queue goes in front (spool.h).
 *
 * One spooled record: 'k', i64 LE timestamp (ms, 0: none), u32 LE key
 * length (0: no key), the key, the value (tests/e2e/spool_read.py --kafka).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kafka.h"

#define KREC_HDR 13u
#define KREC_MAX (256u << 10)		/* the spool takes up to 256 KiB - 24 */
#define RETRY_MS 100			/* timer: lock, stalled or failed windows */

enum { KW_TODO, KW_INFLIGHT, KW_DONE };

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void spool_log(void *ctx, int level, const char *msg)
{
	struct kafka_state *st = ctx;

	st->host->log(st->inst, level, "%s", msg);
}

/* The spool's counts since the last call into the counters (as syslog's). */
void kspool_publish(struct kafka_state *st)
{
	if (st->spool)
		sl_spool_counters_publish(&st->spool_ctr, st->spool, st->host, st->inst);
}

bool kspool_takes(const struct kafka_state *st)
{
	return st->spool && !st->wtail && (st->wn || st->wout || sl_spool_pending(st->spool));
}

void kspool_put(struct kafka_state *st, const void *key, size_t keylen, int64_t ts,
		const void *val, size_t len)
{
	uint8_t *p = st->sbuf;

	st->wtail = false;	/* the spool now holds more than the window */
	if (KREC_HDR + keylen + len > KREC_MAX) {
		/* refused by its length before any byte is read: counted in spool_dropped */
		sl_spool_append(st->spool, p, KREC_HDR + keylen + len);
		return;
	}
	p[0] = 'k';
	put32(p + 1, (uint32_t)(uint64_t)ts);
	put32(p + 5, (uint32_t)((uint64_t)ts >> 32));
	put32(p + 9, (uint32_t)keylen);
	if (keylen)
		memcpy(p + KREC_HDR, key, keylen);
	if (len)
		memcpy(p + KREC_HDR + keylen, val, len);
	sl_spool_append(st->spool, p, KREC_HDR + keylen + len);	/* a refusal is counted there */
}

/* Failures worth another try later; the others would fail again. */
static bool spoolable(rd_kafka_resp_err_t err)
{
	switch (err) {
	case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
	case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
	case RD_KAFKA_RESP_ERR__PURGE_QUEUE:
	case RD_KAFKA_RESP_ERR__PURGE_INFLIGHT:
	case RD_KAFKA_RESP_ERR__TRANSPORT:
	case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
	case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
	case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
	case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
	case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
	case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
	case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
		return true;
	default:
		return false;
	}
}

bool kspool_take_back(struct kafka_state *st, const rd_kafka_message_t *m)
{
	rd_kafka_timestamp_type_t tstype;
	int64_t ts;

	if (!st->spool || !spoolable(m->err))
		return false;
	ts = rd_kafka_message_timestamp(m, &tstype);
	if (tstype == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE || ts < 0)
		ts = 0;
	kspool_put(st, m->key, m->key_len, ts, m->payload, m->len);
	st->host->counter_add(st->inst, st->c_spooled_failed, 1);
	return true;
}

/* Every report of the window is in: acknowledge the delivered prefix. */
static void window_done(struct kafka_state *st)
{
	unsigned k = 0;

	while (k < st->wn && st->wstate[k] == KW_DONE)
		k++;
	if (k) {
		sl_spool_ack(st->spool, k);
		st->wn -= k;
		memmove(st->wstate, st->wstate + k, st->wn);
	}
	if (st->wn)
		st->wtail = false;
	kspool_publish(st);
}

void kspool_report(struct kafka_state *st, const rd_kafka_message_t *m)
{
	uintptr_t i = (uintptr_t)m->_private - 1;

	if (i >= st->wn || st->wstate[i] != KW_INFLIGHT)
		return;		/* not one of ours: cannot happen */
	if (!m->err) {
		st->host->counter_add(st->inst, st->c_delivered, 1);
		st->wstate[i] = KW_DONE;
	} else if (spoolable(m->err)) {
		st->wstate[i] = KW_TODO;	/* still in the spool: sent again */
		st->wretry = true;
		st->wtail = false;
	} else {
		kafka_count_failed(st, kafka_fail_reason(m->err), m->err, 1);
		st->wstate[i] = KW_DONE;	/* would fail again: taken off */
	}
	if (!--st->wout)
		window_done(st);
}

/* Produce one spooled record; 0, 1 when librdkafka's queue is full. */
static int produce_spooled(struct kafka_state *st, unsigned i)
{
	const uint8_t *p = st->iov[i].iov_base;
	size_t len = st->iov[i].iov_len;
	const void *key;
	uint32_t keylen;
	int64_t ts;
	rd_kafka_resp_err_t err;

	if (len < KREC_HDR || p[0] != 'k' || (keylen = get32(p + 9)) > len - KREC_HDR) {
		/* not a record of ours (another output's spool directory?) */
		kafka_count_failed(st, FAIL_OTHER, RD_KAFKA_RESP_ERR__BAD_MSG, 1);
		st->wstate[i] = KW_DONE;
		return 0;
	}
	ts = (int64_t)((uint64_t)get32(p + 1) | (uint64_t)get32(p + 5) << 32);
	key = keylen ? p + KREC_HDR : NULL;	/* one name: the macro casts its argument */
	err = rd_kafka_producev(st->rk, RD_KAFKA_V_RKT(st->rkt),
				RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
				RD_KAFKA_V_VALUE((void *)(p + KREC_HDR + keylen), len - KREC_HDR - keylen),
				RD_KAFKA_V_KEY(key, keylen),
				RD_KAFKA_V_TIMESTAMP(ts),
				RD_KAFKA_V_OPAQUE((void *)(uintptr_t)(i + 1)), RD_KAFKA_V_END);
	if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
		return 1;
	if (err) {
		kafka_count_failed(st, kafka_fail_reason(err), err, 1);
		st->wstate[i] = KW_DONE;
		return 0;
	}
	st->wstate[i] = KW_INFLIGHT;
	st->wout++;
	return 0;
}

void kspool_drain(struct kafka_state *st)
{
	unsigned n, i;

	if (!st->spool || st->stopping || st->wout || st->direct_inflight || st->wretry ||
	    !sl_spool_ready(st->spool))
		return;
	n = sl_spool_peekv(st->spool, st->iov, KSPOOL_WINDOW);
	if (!n)
		return;
	/* the first wn are the last window's unacknowledged records */
	if (n > st->wn)
		memset(st->wstate + st->wn, KW_TODO, n - st->wn);
	st->wn = n;
	for (i = 0; i < n; i++)
		if (st->wstate[i] == KW_TODO && produce_spooled(st, i))
			break;	/* the rest waits for the next window */
	st->wtail = i == n && n < KSPOOL_WINDOW && st->wout && sl_spool_tail_loaded(st->spool);
	if (!st->wout)
		window_done(st);
	else
		kspool_publish(st);
}

/* Takes the lock after a reload, retries stalled and failed windows. */
static void on_spool_timer(void *ctx)
{
	struct kafka_state *st = ctx;

	if (!st->wout)
		st->wretry = false;
	kspool_drain(st);
	kspool_publish(st);
}

/*
 * At stop, before librdkafka's queue is flushed: send what the spool holds
 * while the brokers take it and timeout_ms lasts (what is left stays on
 * disk for the next start).  The time it took.
 */
uint64_t kspool_stop_drain(struct kafka_state *st, uint64_t timeout_ms)
{
	uint64_t start = sl_mono_ms(), now = start;

	while (st->spool && now - start < timeout_ms) {
		if (!st->wout) {
			if (st->wretry || !sl_spool_pending(st->spool))
				break;	/* failing, or done */
			kspool_drain(st);
			if (!st->wout && !st->direct_inflight)
				break;	/* nothing could be produced */
		}
		rd_kafka_poll(st->rk, (int)(timeout_ms - (now - start) < 100 ? timeout_ms - (now - start)
									       : 100));
		now = sl_mono_ms();
	}
	return now - start;
}

int kspool_open(struct kafka_state *st)
{
	const struct kafka_cfg *c = st->cfg;
	char err[600];

	if (!c->sink.spool_dir)
		return 0;
	st->sbuf = malloc(KREC_MAX);
	st->iov = calloc(KSPOOL_WINDOW, sizeof(*st->iov));
	st->wstate = calloc(KSPOOL_WINDOW, 1);
	if (!st->spool_timer)	/* a start() after a stop() keeps it */
		st->spool_timer = st->host->timer_new(st->inst, on_spool_timer, st);
	if (!st->sbuf || !st->iov || !st->wstate || !st->spool_timer) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	st->spool = sl_spool_open(c->sink.spool_dir, c->sink.spool_max_size, spool_log, st, err,
				  sizeof(err));
	if (!st->spool) {
		st->host->log(st->inst, SL_LOG_ERR, "spool_dir: %s", err);
		return -1;
	}
	st->host->timer_arm(st->spool_timer, RETRY_MS, RETRY_MS);
	kspool_publish(st);
	return 0;
}

void kspool_stop_begin(struct kafka_state *st)
{
	/* only records of process() are in librdkafka then, all older than the spool */
	if (st->spool && st->direct_inflight && !st->wn && !st->wout &&
	    sl_spool_front_begin(st->spool) == 0)
		st->front = true;
}

void kspool_close(struct kafka_state *st)
{
	/*
	 * as plugin.h asks, the timer is created in start() and disarmed in
	 * stop() only: at destroy() the event loop may be gone
	 */
	if (st->spool_timer && !st->destroying)
		st->host->timer_disarm(st->spool_timer);
	if (st->spool) {
		if (st->front)
			sl_spool_front_end(st->spool);
		st->front = false;
		sl_spool_flush(st->spool);
		kspool_publish(st);
		if (sl_spool_pending(st->spool))
			st->host->log(st->inst, SL_LOG_NOTICE,
				      "%" PRIu64 " bytes for %s stay in the spool for the next start",
				      sl_spool_stats(st->spool)->bytes, st->cfg->topic);
		sl_spool_close(st->spool);
		st->spool = NULL;
	}
	free(st->sbuf);
	free(st->iov);
	free(st->wstate);
	st->sbuf = NULL;
	st->iov = NULL;
	st->wstate = NULL;
}
