/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kafka output's options and state (kafka.c; the disk spool of
 * spool_dir and its window are the sink engine's, sink_window.h).  All of
 * it is touched by the instance's thread only: the
 * delivery callbacks run inside rd_kafka_poll()/rd_kafka_flush(), which
 * only that thread calls (start() runs before it, on the main thread).
 */
#ifndef SLUICE_KAFKA_H
#define SLUICE_KAFKA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <librdkafka/rdkafka.h>

#include <sluice/plugin.h>

#include "plugin_state.h"
#include "sink.h"
#include "sink_window.h"

struct kafka_cfg {
	struct sl_strlist brokers;
	const char *topic;
	const char *key;
	int format;
	int compression;
	int acks;
	bool idempotence;
	uint64_t batch_size;
	uint64_t linger;
	uint64_t queue_size;
	uint64_t message_timeout;
	uint64_t stop_timeout;
	struct sl_strlist properties;
	/*
	 * spool_dir and spool_max_size only: librdkafka batches and retries,
	 * so the engine's batch and retry options are not kafka's (sink.h)
	 */
	struct sl_sink_cfg sink;
};

/* Why a message was not delivered: one counter each. */
enum {
	FAIL_QUEUE_FULL,	/* refused by produce(): librdkafka's queue is full */
	FAIL_MSG_TIMED_OUT,	/* not delivered within message_timeout */
	FAIL_MSG_TOO_LARGE,
	FAIL_UNKNOWN_TOPIC,	/* topic or partition does not exist */
	FAIL_BROKER_ERROR,	/* another error from a broker (after retries) */
	FAIL_AT_STOP,		/* still queued when stop_timeout ran out */
	FAIL_OTHER,
	FAIL_N
};

/* Records of the spool produced at once (one "window"), acknowledged in order. */
#define KSPOOL_WINDOW 2048u

struct kafka_state {
	SL_STATE_HEAD(struct kafka_cfg);

	rd_kafka_t *rk;
	rd_kafka_topic_t *rkt;
	rd_kafka_queue_t *mainq;
	int pipefd[2];
	int key_id;			/* field id, or -1 */
	enum sl_type key_type;
	bool stopping;
	bool destroying;		/* in destroy(): the event loop may be gone */
	uint64_t direct_inflight;	/* produced from process(), no report yet */

	/* spool_dir: the engine's spool and window; sw.ss.sp is NULL without it */
	struct sl_sink_window sw;
	uint8_t *sbuf;			/* one encoded record */
	int c_spooled_failed;

	int c_delivered, c_fail[FAIL_N], c_no_text, c_not_json, c_no_key;
	uint64_t fail_unlogged, fail_logged_at;
	rd_kafka_resp_err_t last_err;
	char errstr[512];
};

#endif /* SLUICE_KAFKA_H */
