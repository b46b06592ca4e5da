/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The spool of a stream or asynchronous network output: see sink_spool.h.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "sink_spool.h"

static void spool_log(void *ctx, int level, const char *msg)
{
	struct sl_sink_spool *ss = ctx;

	ss->host->log(ss->inst, (enum sl_log_level)level, "%s", msg);
}

void sl_sink_spool_init(struct sl_sink_spool *ss, const struct sl_host *host,
			struct sl_instance *inst, const char *spool_dir)
{
	*ss = (struct sl_sink_spool){ .host = host, .inst = inst };
	if (spool_dir)
		sl_spool_counters_new(&ss->ctr, host, inst);
}

int sl_sink_spool_open(struct sl_sink_spool *ss, const char *dir, uint64_t max_size)
{
	char err[600];

	ss->adopted = ss->front = false;
	ss->iov = calloc(SL_SINK_SPOOL_ACK_STEP, sizeof(*ss->iov));
	if (!ss->iov) {
		ss->host->log(ss->inst, SL_LOG_ERR, "spool_dir: out of memory");
		return -1;
	}
	ss->sp = sl_spool_open(dir, max_size, spool_log, ss, err, sizeof(err));
	if (!ss->sp) {
		ss->host->log(ss->inst, SL_LOG_ERR, "spool_dir: %s", err);
		return -1;
	}
	sl_sink_spool_publish(ss);
	return 0;
}

void sl_sink_spool_publish(struct sl_sink_spool *ss)
{
	if (ss->sp)
		sl_spool_counters_publish(&ss->ctr, ss->sp, ss->host, ss->inst);
}

bool sl_sink_spool_takes(const struct sl_sink_spool *ss)
{
	return ss->sp && sl_spool_pending(ss->sp);
}

int sl_sink_spool_append(struct sl_sink_spool *ss, const void *rec, size_t len)
{
	return sl_spool_append(ss->sp, rec, len);	/* a refusal is counted there */
}

void sl_sink_spool_ack(struct sl_sink_spool *ss, uint64_t n)
{
	/* a peek returns one piece of one segment at a time */
	while (n) {
		unsigned k = sl_spool_peekv(ss->sp, ss->iov,
					    n < SL_SINK_SPOOL_ACK_STEP ? (unsigned)n
								       : SL_SINK_SPOOL_ACK_STEP);

		if (!k)
			break;
		sl_spool_ack(ss->sp, k);
		n -= k;
	}
}

bool sl_sink_spool_adopt(struct sl_sink_spool *ss, sl_sink_requeue_fn requeue, void *ctx)
{
	unsigned moved;

	if (ss->adopted)
		return true;
	if (!sl_spool_ready(ss->sp))
		return false;
	ss->adopted = true;
	if (!sl_spool_pending(ss->sp))
		return true;
	moved = requeue(ctx);
	sl_spool_flush(ss->sp);
	sl_sink_spool_publish(ss);
	if (moved)
		ss->host->log(ss->inst, SL_LOG_NOTICE,
			      "took over the spool: %u queued messages appended behind it", moved);
	return true;
}

unsigned sl_sink_spool_save_queue(struct sl_sink_spool *ss, unsigned n, sl_sink_requeue_fn requeue,
				  void *ctx, const char *where)
{
	unsigned saved;

	if (!n || sl_spool_front_begin(ss->sp) < 0)
		return 0;
	saved = requeue(ctx);
	sl_spool_front_end(ss->sp);
	sl_sink_spool_publish(ss);
	ss->host->log(ss->inst, SL_LOG_NOTICE, "%u queued messages for %s kept in the spool at shutdown",
		      saved, where);
	return saved;
}

int sl_sink_spool_front_begin(struct sl_sink_spool *ss)
{
	if (sl_spool_front_begin(ss->sp) < 0)
		return -1;
	ss->front = true;
	return 0;
}

void sl_sink_spool_close(struct sl_sink_spool *ss, const char *where)
{
	if (ss->sp) {
		if (ss->front)
			sl_spool_front_end(ss->sp);
		ss->front = false;
		sl_spool_flush(ss->sp);
		sl_sink_spool_publish(ss);
		if (where && sl_spool_pending(ss->sp))
			ss->host->log(ss->inst, SL_LOG_NOTICE,
				      "%" PRIu64 " bytes for %s stay in the spool for the next start",
				      sl_spool_stats(ss->sp)->bytes, where);
		sl_spool_close(ss->sp);
		ss->sp = NULL;
	}
	free(ss->iov);
	ss->iov = NULL;
}
