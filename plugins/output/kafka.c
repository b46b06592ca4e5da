/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kafka output: each record's text (the json filter's JSON, or logline's
 * line) as one Kafka message on `topic`, keyed by a record field printed as
 * text, through librdkafka.
 *
 * librdkafka keeps its own bounded queue (queue_size) and its own threads;
 * we copy each message into it (RD_KAFKA_MSG_F_COPY: the batch is reused
 * after process()) and never block.  Its main queue, where delivery
 * reports arrive, is tied to a pipe the event loop watches
 * (rd_kafka_queue_io_event_enable), so reports are served on our thread
 * without a polling timer.  Every record ends as `delivered`, or in one
 * failed_* counter and dropped_add(): refused because the queue is full,
 * timed out, refused by the broker, or left over at stop after the
 * bounded flush.
 *
 * With spool_dir, what the queue refuses (and every newer record while
 * the spool holds anything), what fails with an error worth retrying, and
 * what is left at stop goes to a disk spool instead; the sink engine's
 * window (sink_window.h) produces it again, in order, once librdkafka
 * holds none of process()'s records (older than the spool), so order per
 * key holds through an outage shorter than message_timeout.  A failed
 * report of process()'s is older than the spool but can only go behind
 * it, except at stop, where the purged queue goes in front.
 *
 * One spooled record: 'k', i64 LE timestamp (ms, 0: none), u32 LE key
 * length (0: no key), the key, the value (tests/e2e/spool_read.py --kafka).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "fmt.h"
#include "kafka.h"

#define LOG_EVERY_MS 10000
#define KREC_HDR 13u
#define KREC_MAX (256u << 10)		/* the spool takes up to 256 KiB - 24 */
#define SPOOL_TIMER_MS 100		/* the window's timer: lock, stalled or failed windows */

enum { FMT_JSON, FMT_TEXT };
enum { ACKS_ALL, ACKS_1, ACKS_0 };

static const char *const format_names[] = { "json", "text", NULL };
static const char *const compression_names[] = { "none", "lz4", "zstd", "gzip", "snappy", NULL };
static const char *const acks_names[] = { "all", "1", "0", NULL };
static const char *const acks_values[] = { "all", "1", "0" };


static const struct sl_option kafka_opts[] = {
	SL_OPT_LIST("brokers", struct kafka_cfg, brokers, SL_REQUIRED,
		    "bootstrap brokers, host:port each"),
	SL_OPT_STR("topic", struct kafka_cfg, topic, SL_REQUIRED, "topic the records go to"),
	SL_OPT_STR("key", struct kafka_cfg, key, "none",
		   "field whose value, as text, is the message key (e.g. src_addr), or none"),
	SL_OPT_ENUM("format", struct kafka_cfg, format, "json", format_names,
		    "json: the text of the json filter (checked to be an object); text: any text"),
	SL_OPT_ENUM("compression", struct kafka_cfg, compression, "none", compression_names,
		    "compression.codec of the message sets"),
	SL_OPT_ENUM("acks", struct kafka_cfg, acks, "all", acks_names,
		    "acknowledgements the leader waits for: all in-sync replicas, 1, or none"),
	SL_OPT_BOOL("idempotence", struct kafka_cfg, idempotence, "true",
		    "with acks all: librdkafka's retries never write a message twice (enable.idempotence)"),
	SL_OPT_SIZE("batch_size", struct kafka_cfg, batch_size, "1MiB", 1024, (int64_t)1 << 30,
		    "largest message set sent to a partition at once (batch.size)"),
	SL_OPT_DURATION("linger", struct kafka_cfg, linger, "5ms", 0, 900000,
			"how long messages wait to fill a batch (linger.ms)"),
	SL_OPT_SIZE("queue_size", struct kafka_cfg, queue_size, "64MiB", 1024, (int64_t)1 << 40,
		    "messages kept while brokers are slow or away (queue.buffering.max.kbytes)"),
	SL_OPT_DURATION("message_timeout", struct kafka_cfg, message_timeout, "5m", 1, 24 * 86400000,
			"a message not delivered by then fails (message.timeout.ms)"),
	SL_OPT_DURATION("stop_timeout", struct kafka_cfg, stop_timeout, "5s", 0, 3600000,
			"at stop, wait this long for queued messages to be delivered"),
	SL_OPT_SECRET_MAP("properties", struct kafka_cfg, properties,
			  "more librdkafka properties (security.protocol, sasl.*, ssl.*, ...)"),
	SL_SINK_OPT_SPOOL_OF(struct kafka_cfg, sink, "what the queue cannot hold", "messages"),
	SL_OPT_END
};

static const struct sl_field_decl kafka_needs[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	SL_FIELD_END
};

static const struct sl_field_decl kafka_reads[] = {
	SL_FIELD_DECL(SL_F_TIMESTAMP),
	SL_FIELD_END
};

static const char *const fail_names[FAIL_N] = {
	"failed_queue_full", "failed_msg_timed_out", "failed_msg_too_large",
	"failed_unknown_topic", "failed_broker_error", "failed_at_stop", "failed_other",
};

/* ---- configuration: one function builds the conf, for checking and for use ---- */

/* Set one property; on error blame `option` (0) or report it (-1). */
static int conf_set(const struct sl_host *host, struct sl_instance *inst, rd_kafka_conf_t *conf,
		    const char *option, const char *name, const char *value)
{
	char err[512];

	switch (rd_kafka_conf_set(conf, name, value, err, sizeof(err))) {
	case RD_KAFKA_CONF_OK:
		return 0;
	case RD_KAFKA_CONF_UNKNOWN:
		host->config_error(inst, option, "unknown librdkafka property '%s'", name);
		return -1;
	default:
		host->config_error(inst, option, "%s: %s", name, err);
		return -1;
	}
}

/*
 * librdkafka opens its *.location files (CA, certificate, key, CRL,
 * keystore) and the keytab by name, blocking, when the handle is made: a
 * FIFO there would hang the start.  Refuse what is not a regular file or a
 * folder (ssl.ca.location may be one) first.  This checks the name before
 * librdkafka opens it, so it catches a FIFO already there, not one swapped
 * in between; a name that does not open is left to librdkafka ("probe").
 */
static int check_location(const struct sl_host *host, struct sl_instance *inst,
			  const char *option, const char *name, const char *value)
{
	size_t n = strlen(name);
	struct stat sb;
	int fd, bad;

	if ((n < 9 || strcmp(name + n - 9, ".location") != 0) &&
	    strcmp(name, "sasl.kerberos.keytab") != 0)
		return 0;
	fd = open(value, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return 0;
	bad = fstat(fd, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode);
	close(fd);
	if (bad)
		host->config_error(inst, option, "%s: %s is not a regular file or a directory",
				   name, value);
	return bad ? -1 : 0;
}

static int conf_build(const struct sl_host *host, struct sl_instance *inst,
		      const struct kafka_cfg *c, rd_kafka_conf_t *conf)
{
	char num[32], where[160], servers[4096];
	size_t used = 0;

	for (unsigned i = 0; i < c->brokers.n; i++) {
		const char *b = c->brokers.v[i];

		if (!*b || strchr(b, ',') || strchr(b, ' ')) {
			host->config_error(inst, "brokers", "'%s' is not host:port", b);
			return -1;
		}
		used += (size_t)snprintf(servers + used, sizeof(servers) - used, "%s%s",
					 i ? "," : "", b);
		if (used >= sizeof(servers)) {
			host->config_error(inst, "brokers", "too long");
			return -1;
		}
	}
	if (!c->brokers.n) {
		host->config_error(inst, "brokers", "needs at least one broker");
		return -1;
	}
	if (conf_set(host, inst, conf, "brokers", "bootstrap.servers", servers) ||
	    conf_set(host, inst, conf, "compression", "compression.codec",
		     compression_names[c->compression]) ||
	    conf_set(host, inst, conf, "acks", "acks", acks_values[c->acks]))
		return -1;
	/*
	 * A produce request the broker wrote but whose answer was lost (the
	 * broker went away) is retried by librdkafka: without idempotence the
	 * record is then in the log twice.  It needs acks all; with acks 1 or 0
	 * the user chose to lose or repeat records anyway.
	 */
	if (c->idempotence && c->acks == ACKS_ALL &&
	    conf_set(host, inst, conf, "idempotence", "enable.idempotence", "true"))
		return -1;
	snprintf(num, sizeof(num), "%" PRIu64, c->batch_size);
	if (conf_set(host, inst, conf, "batch_size", "batch.size", num))
		return -1;
	snprintf(num, sizeof(num), "%" PRIu64, c->linger);
	if (conf_set(host, inst, conf, "linger", "linger.ms", num))
		return -1;
	snprintf(num, sizeof(num), "%" PRIu64, c->queue_size / 1024);
	if (conf_set(host, inst, conf, "queue_size", "queue.buffering.max.kbytes", num) ||
	    /* the byte bound is the one that counts */
	    conf_set(host, inst, conf, "queue_size", "queue.buffering.max.messages", "2147483647"))
		return -1;
	snprintf(num, sizeof(num), "%" PRIu64, c->message_timeout);
	if (conf_set(host, inst, conf, "message_timeout", "message.timeout.ms", num))
		return -1;
	/* properties last: they may override what the options set */
	for (unsigned i = 0; i + 1 < c->properties.n; i += 2) {
		snprintf(where, sizeof(where), "properties/%s", c->properties.v[i]);
		if (check_location(host, inst, where, c->properties.v[i], c->properties.v[i + 1]) ||
		    conf_set(host, inst, conf, where, c->properties.v[i], c->properties.v[i + 1]))
			return -1;
	}
	return 0;
}

static int kafka_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			   void **state)
{
	const struct kafka_cfg *c = config;
	struct kafka_state *st;
	rd_kafka_conf_t *scratch;
	int key_id = -1;

	if (!*c->topic || strlen(c->topic) > 249) {
		host->config_error(inst, "topic", "must be 1 to 249 characters");
		return -1;
	}
	if (sl_sink_check(&c->sink, host, inst) < 0)
		return -1;
	if (strcmp(c->key, "none") != 0) {
		key_id = host->need_field(inst, "key", c->key);
		if (key_id < 0)
			return -1;
	}
	/* Every property is checked now, by librdkafka itself, on a conf we throw away. */
	scratch = rd_kafka_conf_new();
	if (!scratch) {
		host->config_error(inst, NULL, "out of memory");
		return -1;
	}
	if (conf_build(host, inst, c, scratch) < 0) {
		rd_kafka_conf_destroy(scratch);
		return -1;
	}
	rd_kafka_conf_destroy(scratch);

	st = sl_state_new(struct kafka_state, host, inst, c);
	if (!st)
		return -1;
	st->pipefd[0] = st->pipefd[1] = -1;
	st->key_id = key_id;
	st->key_type = key_id >= 0 ? host->field_type(inst, key_id) : (enum sl_type)0;
	st->c_delivered = host->counter_new(inst, "delivered");
	for (int i = 0; i < FAIL_N; i++)
		st->c_fail[i] = host->counter_new(inst, fail_names[i]);
	st->c_no_text = host->counter_new(inst, "no_text");
	st->c_not_json = host->counter_new(inst, "not_json");
	st->c_no_key = host->counter_new(inst, "no_key");
	sl_sink_spool_init(&st->sw.ss, host, inst, c->sink.spool_dir);
	if (c->sink.spool_dir)
		st->c_spooled_failed = host->counter_new(inst, "spooled_failed");
	*state = st;
	return 0;
}

/* ---- failures ---- */

static void log_failures(struct kafka_state *st, bool force)
{
	uint64_t now = sl_mono_ms();

	if (!st->fail_unlogged || (!force && now - st->fail_logged_at < LOG_EVERY_MS &&
				   st->fail_logged_at))
		return;
	st->host->log(st->inst, SL_LOG_WARNING, "%" PRIu64 " messages not delivered to %s (last: %s)",
		      st->fail_unlogged, st->cfg->topic, rd_kafka_err2str(st->last_err));
	st->fail_unlogged = 0;
	st->fail_logged_at = now;
}

static void kafka_count_failed(struct kafka_state *st, int why, rd_kafka_resp_err_t err, uint64_t n)
{
	st->host->counter_add(st->inst, st->c_fail[why], n);
	st->host->dropped_add(st->inst, n);
	st->fail_unlogged += n;
	st->last_err = err;
	if (!st->stopping)
		log_failures(st, false);
}

static int kafka_fail_reason(rd_kafka_resp_err_t err)
{
	switch (err) {
	case RD_KAFKA_RESP_ERR__QUEUE_FULL:
		return FAIL_QUEUE_FULL;
	case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
		return FAIL_MSG_TIMED_OUT;
	case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
		return FAIL_MSG_TOO_LARGE;
	case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
	case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
	case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
		return FAIL_UNKNOWN_TOPIC;
	case RD_KAFKA_RESP_ERR__PURGE_QUEUE:
	case RD_KAFKA_RESP_ERR__PURGE_INFLIGHT:
		return FAIL_AT_STOP;
	default:
		/* librdkafka's own errors are negative; a broker's are >= 0 */
		return err > 0 ? FAIL_BROKER_ERROR : FAIL_OTHER;
	}
}

/* ---- the spool: kafka's record in it, produced from the window ---- */

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void spool_put(struct kafka_state *st, const void *key, size_t keylen, int64_t ts,
		      const void *val, size_t len)
{
	uint8_t *p = st->sbuf;

	if (KREC_HDR + keylen + len > KREC_MAX) {
		/* refused by its length before any byte is read: counted in spool_dropped */
		sl_sink_window_append(&st->sw, p, KREC_HDR + keylen + len);
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
	sl_sink_window_append(&st->sw, p, KREC_HDR + keylen + len);
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

/* A failed report of a record produced by process(): true when spooled. */
static bool spool_take_back(struct kafka_state *st, const rd_kafka_message_t *m)
{
	rd_kafka_timestamp_type_t tstype;
	int64_t ts;

	if (!st->sw.ss.sp || !spoolable(m->err))
		return false;
	ts = rd_kafka_message_timestamp(m, &tstype);
	if (tstype == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE || ts < 0)
		ts = 0;
	spool_put(st, m->key, m->key_len, ts, m->payload, m->len);
	st->host->counter_add(st->inst, st->c_spooled_failed, 1);
	return true;
}

/* The report of a record produced from the spool (msg_opaque: its index + 1). */
static void spool_report(struct kafka_state *st, const rd_kafka_message_t *m)
{
	uintptr_t i = (uintptr_t)m->_private - 1;
	enum sl_win_report r = !m->err ? SL_WIN_DELIVERED : spoolable(m->err) ? SL_WIN_AGAIN
									       : SL_WIN_FAILED;

	if (i >= KSPOOL_WINDOW || !sl_sink_window_report(&st->sw, (unsigned)i, r))
		return;		/* not one of ours: cannot happen */
	if (r == SL_WIN_DELIVERED)
		st->host->counter_add(st->inst, st->c_delivered, 1);
	else if (r == SL_WIN_FAILED)	/* would fail again: taken off */
		kafka_count_failed(st, kafka_fail_reason(m->err), m->err, 1);
}

/* The window's callback: produce one spooled record. */
static enum sl_win_produced spool_produce(void *ctx, const struct iovec *rec, unsigned i)
{
	struct kafka_state *st = ctx;
	const uint8_t *p = rec->iov_base;
	size_t len = rec->iov_len;
	const void *key;
	uint32_t keylen;
	int64_t ts;
	rd_kafka_resp_err_t err;

	if (len < KREC_HDR || p[0] != 'k' || (keylen = get32(p + 9)) > len - KREC_HDR) {
		/* not a record of ours (another output's spool directory?) */
		kafka_count_failed(st, FAIL_OTHER, RD_KAFKA_RESP_ERR__BAD_MSG, 1);
		return SL_WIN_GONE;
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
		return SL_WIN_FULL;
	if (err) {
		kafka_count_failed(st, kafka_fail_reason(err), err, 1);
		return SL_WIN_GONE;
	}
	return SL_WIN_IN_FLIGHT;
}

/* No window while librdkafka holds process()'s records (older), nor at stop. */
static bool spool_busy(void *ctx)
{
	const struct kafka_state *st = ctx;

	return st->stopping || st->direct_inflight;
}

static const struct sl_sink_window_ops spool_ops = {
	.produce = spool_produce,
	.busy = spool_busy,
};

/*
 * At stop, before librdkafka's queue is flushed: send what the spool holds
 * while the brokers take it and timeout_ms lasts (what is left stays on
 * disk for the next start).  The time it took.
 */
static uint64_t spool_stop_drain(struct kafka_state *st, uint64_t timeout_ms)
{
	uint64_t start = sl_mono_ms(), now = start;

	while (st->sw.ss.sp && now - start < timeout_ms) {
		if (!sl_sink_window_outstanding(&st->sw)) {
			if (sl_sink_window_failing(&st->sw) || !sl_spool_pending(st->sw.ss.sp))
				break;	/* failing, or done */
			sl_sink_window_fill(&st->sw);
			if (!sl_sink_window_outstanding(&st->sw) && !st->direct_inflight)
				break;	/* nothing could be produced */
		}
		rd_kafka_poll(st->rk, (int)(timeout_ms - (now - start) < 100 ? timeout_ms - (now - start)
									       : 100));
		now = sl_mono_ms();
	}
	return now - start;
}

static int spool_open(struct kafka_state *st)
{
	if (!st->cfg->sink.spool_dir)
		return 0;
	st->sbuf = malloc(KREC_MAX);
	if (!st->sbuf) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	return sl_sink_window_open(&st->sw, st->cfg->sink.spool_dir, st->cfg->sink.spool_max_size,
				   KSPOOL_WINDOW, SPOOL_TIMER_MS, &spool_ops, st);
}

static void spool_close(struct kafka_state *st)
{
	sl_sink_window_close(&st->sw, st->cfg->topic, st->destroying);
	free(st->sbuf);
	st->sbuf = NULL;
}

/*
 * Delivery report, served from rd_kafka_poll() (or rd_kafka_flush() at
 * stop) on our thread: librdkafka calls dr_msg_cb only from the thread
 * that polls, never from its own threads.
 */
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct kafka_state *st = opaque;

	if (m->_private) {	/* produced from the spool */
		spool_report(st, m);
		return;
	}
	st->direct_inflight--;
	if (!m->err)
		st->host->counter_add(st->inst, st->c_delivered, 1);
	else if (!spool_take_back(st, m))
		kafka_count_failed(st, kafka_fail_reason(m->err), m->err, 1);
}

/* Served from rd_kafka_poll() on our thread too (log.queue). */
static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	struct kafka_state *st = rd_kafka_opaque(rk);

	/*
	 * syslog levels, as ours; chatter below notice is left out, and FAIL
	 * lines repeat what on_error reports.
	 */
	if (level <= SL_LOG_NOTICE && strcmp(fac, "FAIL") != 0)
		st->host->log(st->inst, level < SL_LOG_ERR ? SL_LOG_ERR : (enum sl_log_level)level,
			      "librdkafka %s: %s", fac, buf);
}

/* librdkafka's error events (a broker down, all brokers down...). */
static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	struct kafka_state *st = opaque;
	bool fatal = err == RD_KAFKA_RESP_ERR__FATAL;

	st->host->log(st->inst, fatal ? SL_LOG_ERR : SL_LOG_WARNING, "librdkafka: %s%s",
		      fatal ? "fatal: " : "", reason);
}

/* The main queue became non-empty: empty the pipe, serve the reports. */
static void on_pipe(void *ctx, int fd, uint32_t events)
{
	struct kafka_state *st = ctx;
	char buf[64];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
	rd_kafka_poll(st->rk, 0);
	if (st->sw.ss.sp) {
		sl_spool_flush(st->sw.ss.sp);	/* what failed reports appended */
		sl_sink_window_fill(&st->sw);
	}
}

/* ---- producing ---- */

/* The key field as text into buf; its length, or 0 when absent. */
static size_t format_key(const struct kafka_state *st, const struct sl_record *r, char *buf,
			 size_t cap, const void **out)
{
	const union sl_value *v = &r->v[st->key_id];
	struct sl_fmt_buf b;

	if (!sl_has(r, (sl_field)st->key_id))
		return 0;
	switch (st->key_type) {
	case SL_T_STRING:
	case SL_T_BYTES:	/* as they are: a key is bytes to Kafka */
		*out = v->bytes.ptr;
		return v->bytes.len;
	case SL_T_U64:
		sl_fmt_init(&b, buf, cap);
		sl_fmt_u64(&b, v->u64);
		break;
	case SL_T_ADDR:
		sl_fmt_init(&b, buf, cap);
		sl_fmt_addr_in(&b, v->addr, sl_fmt_rec_v6(r));
		break;
	case SL_T_MAC:
		sl_fmt_init(&b, buf, cap);
		sl_fmt_mac(&b, v->addr);
		break;
	case SL_T_TIME: {	/* seconds.microseconds since the epoch, in the calendar */
		struct sl_time c = sl_time_calendar(v->time);
		int n = snprintf(buf, cap, "%" PRId64 ".%06u", c.sec, c.nsec / 1000);

		*out = buf;
		return n > 0 && (size_t)n < cap ? (size_t)n : 0;
	}
	default:
		return 0;
	}
	*out = buf;
	return b.overflow ? 0 : b.len;
}

static void produce_one(struct kafka_state *st, const struct sl_record *r)
{
	const struct sl_bytes *t = &r->v[SL_F_TEXT].bytes;
	char keybuf[64];
	const void *key = NULL;
	size_t keylen = 0;
	int64_t ts = 0;
	rd_kafka_resp_err_t err;

	if (st->key_id >= 0) {
		keylen = format_key(st, r, keybuf, sizeof(keybuf), &key);
		if (!keylen)
			st->host->counter_add(st->inst, st->c_no_key, 1);
	}
	if (sl_has(r, SL_F_TIMESTAMP))	/* Kafka's timestamps are >= 0 ms */
		ts = (int64_t)sl_time_ms_clamped(r->v[SL_F_TIMESTAMP].time);
	if (sl_sink_window_takes(&st->sw)) {	/* behind what is spooled */
		spool_put(st, key, keylen, ts, t->ptr, t->len);
		return;
	}
	err = rd_kafka_producev(st->rk, RD_KAFKA_V_RKT(st->rkt),
				RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
				RD_KAFKA_V_VALUE((void *)t->ptr, t->len),
				RD_KAFKA_V_KEY(key, keylen),
				RD_KAFKA_V_TIMESTAMP(ts), RD_KAFKA_V_END);
	if (!err)
		st->direct_inflight++;
	else if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL && st->sw.ss.sp)
		spool_put(st, key, keylen, ts, t->ptr, t->len);
	else
		kafka_count_failed(st, kafka_fail_reason(err), err, 1);
}

static int kafka_process(void *state, struct sl_batch *batch)
{
	struct kafka_state *st = state;
	uint64_t no_text = 0, not_json = 0;

	for (unsigned i = 0; i < batch->count; i++) {
		const struct sl_record *r = batch->rec[i];

		if (!sl_has(r, SL_F_TEXT)) {
			no_text++;
			continue;
		}
		if (st->cfg->format == FMT_JSON &&
		    (!r->v[SL_F_TEXT].bytes.len || r->v[SL_F_TEXT].bytes.ptr[0] != '{')) {
			not_json++;
			continue;
		}
		produce_one(st, r);
	}
	if (no_text) {
		st->host->counter_add(st->inst, st->c_no_text, no_text);
		st->host->dropped_add(st->inst, no_text);
	}
	if (not_json) {
		st->host->counter_add(st->inst, st->c_not_json, not_json);
		st->host->dropped_add(st->inst, not_json);
	}
	if (st->sw.ss.sp) {
		sl_spool_flush(st->sw.ss.sp);	/* one write per batch */
		sl_sink_spool_publish(&st->sw.ss);
	}
	return 0;
}

/* ---- lifecycle ---- */

static int kafka_start(void *state)
{
	struct kafka_state *st = state;
	rd_kafka_conf_t *conf;

	if (spool_open(st) < 0)
		return -1;
	conf = rd_kafka_conf_new();
	if (!conf || conf_build(st->host, st->inst, st->cfg, conf) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot build the librdkafka configuration");
		if (conf)
			rd_kafka_conf_destroy(conf);
		return -1;
	}
	rd_kafka_conf_set_opaque(conf, st);
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	rd_kafka_conf_set_log_cb(conf, on_log);
	rd_kafka_conf_set_error_cb(conf, on_error);
	/* log lines wait in a queue for our thread, as the reports do */
	rd_kafka_conf_set(conf, "log.queue", "true", st->errstr, sizeof(st->errstr));
	st->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, st->errstr, sizeof(st->errstr));
	if (!st->rk) {
		rd_kafka_conf_destroy(conf);
		st->host->log(st->inst, SL_LOG_ERR, "cannot create the producer: %s", st->errstr);
		return -1;
	}
	st->rkt = rd_kafka_topic_new(st->rk, st->cfg->topic, NULL);
	if (!st->rkt) {
		st->host->log(st->inst, SL_LOG_ERR, "topic %s: %s", st->cfg->topic,
			      rd_kafka_err2str(rd_kafka_last_error()));
		return -1;
	}
	if (pipe2(st->pipefd, O_NONBLOCK | O_CLOEXEC) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "pipe: %s", strerror(errno));
		return -1;
	}
	st->mainq = rd_kafka_queue_get_main(st->rk);
	rd_kafka_set_log_queue(st->rk, NULL);	/* the main queue */
	rd_kafka_queue_io_event_enable(st->mainq, st->pipefd[1], "1", 1);
	if (st->host->watch_fd(st->inst, st->pipefd[0], EPOLLIN, on_pipe, st) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot watch the delivery report pipe");
		return -1;
	}
	/* reports queued before the pipe was attached */
	rd_kafka_poll(st->rk, 0);
	return 0;
}

static int kafka_flush(void *state)
{
	struct kafka_state *st = state;

	if (st->rk)
		rd_kafka_poll(st->rk, 0);
	if (st->sw.ss.sp) {
		sl_spool_flush(st->sw.ss.sp);
		sl_sink_window_fill(&st->sw);
		sl_sink_spool_publish(&st->sw.ss);
	}
	return 0;
}

static void kafka_stop(void *state)
{
	struct kafka_state *st = state;
	uint64_t spent;	/* then the time left */
	int left;

	if (!st->rk)
		goto close_pipe;
	spent = spool_stop_drain(st, st->cfg->stop_timeout);
	st->stopping = true;
	spent = spent < st->cfg->stop_timeout ? st->cfg->stop_timeout - spent : 0;
	if (rd_kafka_flush(st->rk, (int)spent) != RD_KAFKA_RESP_ERR_NO_ERROR) {
		left = rd_kafka_outq_len(st->rk);
		st->host->log(st->inst, SL_LOG_WARNING,
			      "%d messages not delivered to %s within stop_timeout", left,
			      st->cfg->topic);
		/*
		 * each purged message comes back as a report, counted
		 * failed_at_stop, or with spool_dir put in front of the spool
		 */
		if (st->direct_inflight)
			sl_sink_window_front_begin(&st->sw);
		rd_kafka_purge(st->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
		rd_kafka_flush(st->rk, 100);
	}
	rd_kafka_poll(st->rk, 0);
	log_failures(st, true);
	if (st->mainq) {
		rd_kafka_queue_io_event_enable(st->mainq, -1, NULL, 0);
		rd_kafka_queue_destroy(st->mainq);
		st->mainq = NULL;
	}
	if (st->rkt)
		rd_kafka_topic_destroy(st->rkt);
	st->rkt = NULL;
	rd_kafka_destroy(st->rk);
	st->rk = NULL;
close_pipe:
	spool_close(st);
	if (st->pipefd[0] >= 0) {
		st->host->unwatch_fd(st->inst, st->pipefd[0]);
		close(st->pipefd[0]);
		close(st->pipefd[1]);
		st->pipefd[0] = st->pipefd[1] = -1;
	}
}

static void kafka_destroy(void *state)
{
	struct kafka_state *st = state;

	if (!st)
		return;
	st->destroying = true;
	if (st->rk)
		kafka_stop(st);
	spool_close(st);	/* when start() failed half way */
	free(st);
}

static const struct sl_plugin kafka_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "kafka",
	.description = "produce each record's text (JSON or a line) to a Kafka topic (librdkafka)",
	.config_size = sizeof(struct kafka_cfg),
	.options = kafka_opts,
	.needs = kafka_needs,
	.reads = kafka_reads,
	.configure = kafka_configure,
	.start = kafka_start,
	.process = kafka_process,
	.flush = kafka_flush,
	.stop = kafka_stop,
	.destroy = kafka_destroy,
	.flags = SL_PLUGIN_NETWORK,
};

SLUICE_PLUGIN(kafka_plugin)
