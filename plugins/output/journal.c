/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * journal: each record as one entry of the systemd journal, written with
 * journald's native protocol (https://systemd.io/JOURNAL_NATIVE_PROTOCOL/)
 * on a socket of this output's own.
 *
 * An entry holds MESSAGE= the record's text (logline's line, or json's or
 * cef's text before it; without a text its prefix, else empty), PRIORITY=
 * (`priority`), SYSLOG_IDENTIFIER= (`identifier`), and every field of the
 * record the json filter would write, named after json's key in upper
 * case (SRC_IP, DEST_PORT, PREFIX, IN, ...), with json's value: a number
 * in decimal, a JSON string without its quotes (a string from the packet
 * or the ruleset as its own bytes, binary-safe: a value with a newline
 * goes in the protocol's binary form), decode_flags as its JSON array.
 * The entry is written by common/journal_entry.c from json's own table
 * and values (common/json_fields.h).
 * A field another plugin registered is named the same way, its name
 * mapped to what journald accepts (A-Z, 0-9, _; not a leading _ or
 * digit; 64 bytes at most).
 *
 * Sending: a SOCK_DGRAM|SOCK_NONBLOCK unix socket connected to
 * /run/systemd/journal/socket; each entry one datagram, built in one
 * buffer with the others of its batch (the records one process() brought,
 * JOURNAL_BATCH at most) and sent with sendmmsg(), many per system call.
 *  - journald's queue full (slow or stopped): EAGAIN, or a sendmmsg()
 *    cut short; the output pauses (wait_room(): about the time journald
 *    takes to read most of what waits, so a slower journald costs a
 *    wakeup per many entries, not one per entry) and polls for room when
 *    journald read nothing, at most SEND_WAIT_MS without progress; then
 *    the send fails: the sink engine (sink.h) retries it
 *    with backoff and then drops and counts it, or with spool_dir puts it
 *    in the disk spool.  The thread never waits longer, so a stalled
 *    journald wedges neither the daemon nor its stop.  Entries of a batch
 *    that went before the failure are not sent again
 *    (sl_sink_delivered()).
 *  - no socket, or no journald on it (ECONNREFUSED, ENOENT, ENOTCONN:
 *    journald restarting): the socket is connected again, once per send;
 *    failing that, the send fails as above.  The socket path is looked at
 *    (stat) after each sendmmsg(): another socket there than the one
 *    connected means journald was replaced meanwhile and what was sent
 *    may have gone to the old one; it is sent again to the new one (at
 *    least once: an entry the old journald still read is stored twice).
 *  - an entry too large for a datagram (EMSGSIZE; past the socket's
 *    send buffer, about 200 KiB): that one entry goes with libsystemd's
 *    sd_journal_sendv(), which passes it in a sealed memfd.  libsystemd
 *    is kept for that rare case only (it is what journald's authors keep
 *    right, and it is in every systemd system); its socket blocks, so the
 *    output waits (bounded, as above) for its own socket to be writable
 *    first: a journald stalling in that very moment could still hold
 *    the thread.  An entry even that refuses is dropped and counted.
 * The spool record of an entry is the spool form of journal_entry.h
 * (length-prefixed NAME=value fields, as before this output spoke the
 * protocol itself), turned into a datagram when it is sent from there;
 * one that does not read back is dropped and counted in spool_dropped.
 *
 * journald's own rate limit (RateLimitBurst=, per service) drops entries
 * it counts in its own log, out of sluice's sight: docs/PLUGINS.md says
 * how to lift it for sluice.service.
 */
#define SD_JOURNAL_SUPPRESS_LOCATION	/* no CODE_FILE=journal.c in the fallback's entries */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "journal_entry.h"
#include "plugin_state.h"
#include "sink.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"	/* journald's, fixed */
#define JOURNAL_BATCH 256	/* entries per batch, and per sendmmsg() */
#define SEND_WAIT_MS 500	/* longest wait for journald to take a datagram */
#define PACE_MIN_NS 20000LL	/* the pause after journald's queue was full: bounds */
#define PACE_MAX_NS 5000000LL
#define SEND_WARN_NS (10 * 1000000000LL)

static const char *const priority_names[] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug", NULL
};

struct journal_cfg {
	const char *identifier;
	int priority;
	struct sl_sink_cfg sink;	/* max_retries, retry_*, spool_*; batch_size is JOURNAL_BATCH */
};

static const struct sl_option journal_options[] = {
	SL_OPT_STR("identifier", struct journal_cfg, identifier, "sluice",
		   "SYSLOG_IDENTIFIER of every entry (journalctl -t)"),
	SL_OPT_ENUM("priority", struct journal_cfg, priority, "info", priority_names,
		    "PRIORITY of every entry, a syslog level (info is 6)"),
	SL_SINK_OPT_RETRY(struct journal_cfg, sink, "3", 100,
			  "retries of an entry journald does not take before it is dropped "
			  "(with spool_dir: none, it goes to the spool)"),
	SL_SINK_OPT_SPOOL_OF(struct journal_cfg, sink, "entries journald does not take now",
			     "entries"),
	SL_OPT_END
};

/* Datagrams one after another in a buffer: datagram i is d.buf[off[i] .. off[i + 1]). */
struct dgrams {
	struct sl_journal_entry d;	/* native */
	size_t off[JOURNAL_BATCH + 1];
	unsigned n;
};

struct journal {
	SL_SINK_STATE_HEAD(struct journal_cfg);
	struct sl_sink_cfg sink_cfg;	/* cfg->sink with batch_size JOURNAL_BATCH */

	struct sl_journal_fmt fmt;
	struct dgrams batch;		/* the batch's entries */
	unsigned done;			/* of them sent (the rest failed) */
	struct dgrams spooled;		/* spool records as datagrams */
	bool from_spool;		/* sending those */
	struct sl_journal_entry scratch;	/* one entry in the spool's form */
	struct iovec *iov;		/* SL_JOURNAL_MAX_FIELDS */
	struct sl_journal_field *fields;	/* SL_JOURNAL_MAX_FIELDS */
	struct mmsghdr msg[JOURNAL_BATCH];
	struct iovec miov[JOURNAL_BATCH];

	int64_t pace_ns;		/* the pause when journald's queue is full; 0: none yet */
	int fd;				/* connected to JOURNAL_SOCKET; -1: not */
	dev_t dev;			/* the socket connected to */
	ino_t ino;

	int c_entries, c_send_errors, c_retries, c_dropped, c_large;
	int64_t warned_ns;
	uint64_t errors_total;
};

/* ---- the socket ---- */

static void disconnect(struct journal *st)
{
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
}

/* A new socket connected to journald's: 0, or the errno. */
static int reconnect(struct journal *st)
{
	static const struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
	struct stat sb;
	int err;

	disconnect(st);
	st->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (st->fd < 0) {
		err = errno;
		st->fd = -1;
		return err;
	}
	if (connect(st->fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    stat(JOURNAL_SOCKET, &sb) < 0) {
		err = errno;
		disconnect(st);
		return err;
	}
	st->dev = sb.st_dev;
	st->ino = sb.st_ino;
	return 0;
}

/* Whether JOURNAL_SOCKET is still the socket connected to. */
static bool same_socket(const struct journal *st)
{
	struct stat sb;

	return stat(JOURNAL_SOCKET, &sb) == 0 && sb.st_dev == st->dev && sb.st_ino == st->ino;
}

/*
 * Wait for the socket to take a datagram, SEND_WAIT_MS at most since
 * *deadline was set (0: now): whether it may.
 */
static bool wait_writable(struct journal *st, int64_t *deadline)
{
	int64_t now = sl_clock_ns(CLOCK_MONOTONIC);
	struct pollfd p = { .fd = st->fd, .events = POLLOUT };

	if (!*deadline)
		*deadline = now + SEND_WAIT_MS * 1000000LL;
	while (now < *deadline) {
		int r = poll(&p, 1, (int)((*deadline - now + 999999) / 1000000));

		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
		now = sl_clock_ns(CLOCK_MONOTONIC);
	}
	return false;
}

/* Bytes of this socket's datagrams journald has not read yet (SIOCOUTQ); -1 unknown. */
static int64_t unread(const struct journal *st)
{
	int q;

	return ioctl(st->fd, SIOCOUTQ, &q) < 0 ? -1 : q;
}

/*
 * journald's queue is full.  Waking as soon as one entry fits (poll)
 * would send one entry per wakeup while journald is the slower side, a
 * context switch per entry; so the output pauses for about the time
 * journald takes to read three quarters of what waits, learnt from the
 * last pause: `full` bytes unread before it, fewer after.  A pause after
 * which journald read nothing waits for room with poll (bounded by
 * *deadline, see wait_writable) and the next pause is longer.  Whether
 * to send again.
 */
static bool wait_room(struct journal *st, int64_t *deadline)
{
	int64_t full = unread(st), left, p;
	struct timespec ts = { 0, 0 };

	if (!st->pace_ns)
		st->pace_ns = PACE_MIN_NS * 10;
	if (*deadline && sl_clock_ns(CLOCK_MONOTONIC) + st->pace_ns > *deadline)
		return wait_writable(st, deadline);
	ts.tv_nsec = (long)st->pace_ns;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	left = unread(st);
	if (full <= 0 || left < 0)
		return wait_writable(st, deadline);	/* cannot tell: the plain wait */
	if (left >= full) {
		p = st->pace_ns * 2;
		st->pace_ns = p > PACE_MAX_NS ? PACE_MAX_NS : p;
		return wait_writable(st, deadline);
	}
	p = st->pace_ns * 3 * full / (4 * (full - left));
	st->pace_ns = p < PACE_MIN_NS ? PACE_MIN_NS : p > PACE_MAX_NS ? PACE_MAX_NS : p;
	return true;
}

/* ---- sending ---- */

/* One failed send: counted, and warned at most every SEND_WARN_NS. */
static void send_failed(struct journal *st, int err)
{
	int64_t now;

	st->errors_total++;
	st->host->counter_add(st->inst, st->c_send_errors, 1);
	st->host->error_add(st->inst, 1);
	now = sl_clock_ns(CLOCK_MONOTONIC);
	if (st->warned_ns && now - st->warned_ns < SEND_WARN_NS)
		return;
	st->warned_ns = now;
	st->host->log(st->inst, SL_LOG_WARNING, "cannot send to journald (" JOURNAL_SOCKET "): %s "
		      "(%llu failed sends so far)", strerror(err), (unsigned long long)st->errors_total);
}

/* An entry nothing will take: dropped and counted (from the spool: in spool_dropped). */
static void drop_entry(struct journal *st, int err)
{
	st->host->log(st->inst, SL_LOG_ERR, "journald does not take an entry: %s; dropped",
		      strerror(err));
	if (st->from_spool) {
		sl_sink_spool_dropped(&st->sink, 1);
		return;
	}
	st->host->counter_add(st->inst, st->c_dropped, 1);
	st->host->dropped_add(st->inst, 1);
}

static bool away(int err)
{
	return err == ECONNREFUSED || err == ENOTCONN || err == ECONNRESET || err == ENOENT ||
	       err == EPIPE;
}

/*
 * An entry too large for a datagram, with libsystemd (a sealed memfd),
 * once our own socket says journald takes datagrams.  0 sent or dropped
 * (counted), else the errno to try again for.
 */
static int send_large(struct journal *st, const void *dgram, size_t len, int64_t *deadline)
{
	unsigned n;
	int r;

	if (!wait_writable(st, deadline))
		return EAGAIN;
	if (!sl_journal_native_entry(dgram, len, st->fields, SL_JOURNAL_MAX_FIELDS, &st->scratch) ||
	    !(n = sl_journal_entry_iov(st->scratch.buf, st->scratch.len, st->iov, SL_JOURNAL_MAX_FIELDS))) {
		drop_entry(st, st->scratch.oom ? ENOMEM : EINVAL);
		return 0;
	}
	r = sd_journal_sendv(st->iov, (int)n);
	if (r < 0 && (away(-r) || -r == EAGAIN))
		return -r;
	if (r < 0)
		drop_entry(st, -r);
	else
		st->host->counter_add(st->inst, st->c_large, 1);
	return 0;
}

/* sendmmsg() of datagrams [i, i + k) of g: how many went, or -1 with errno. */
static int send_some(struct journal *st, const struct dgrams *g, unsigned i, unsigned k)
{
	for (unsigned j = 0; j < k; j++) {
		st->miov[j].iov_base = g->d.buf + g->off[i + j];
		st->miov[j].iov_len = g->off[i + j + 1] - g->off[i + j];
		memset(&st->msg[j], 0, sizeof(st->msg[j]));
		st->msg[j].msg_hdr.msg_iov = &st->miov[j];
		st->msg[j].msg_hdr.msg_iovlen = 1;
	}
	return sendmmsg(st->fd, st->msg, k, MSG_NOSIGNAL);
}

/*
 * Datagrams [*i, g->n) of g to journald; *i moves past each one taken
 * (or dropped, counted).  0, or the errno that stopped it.
 */
static int send_all(struct journal *st, const struct dgrams *g, unsigned *i)
{
	int64_t deadline = 0;
	bool again = false;	/* connected anew in this send */

	while (*i < g->n) {
		int r, err;

		if (st->fd < 0) {
			if ((err = reconnect(st)))
				return err;
			again = true;
		}
		r = send_some(st, g, *i, g->n - *i);
		if (r > 0 && !same_socket(st)) {
			r = -1;		/* may have gone to a journald going away: again */
			errno = ECONNRESET;
		}
		if (r > 0) {
			*i += (unsigned)r;
			st->host->counter_add(st->inst, st->c_entries, (uint64_t)r);
			deadline = 0;
			/* cut short: journald's queue is full (what fits now is a slot or two) */
			if (*i < g->n && !wait_room(st, &deadline))
				return EAGAIN;
			continue;
		}
		err = r < 0 ? errno : EAGAIN;
		if (err == EINTR)
			continue;
		if (err == EAGAIN || err == EWOULDBLOCK) {
			if (!wait_room(st, &deadline))
				return EAGAIN;
			continue;
		}
		if (err == EMSGSIZE) {
			if ((err = send_large(st, g->d.buf + g->off[*i], g->off[*i + 1] - g->off[*i],
					      &deadline)))
				return err;
			++*i;
			continue;
		}
		disconnect(st);
		if (!away(err) || again)
			return err;
	}
	return 0;
}

/* ---- the sink's callbacks (sink.h) ---- */

static void dgrams_reset(struct dgrams *g)
{
	g->d.len = 0;
	g->n = 0;
}

static bool journal_encode(void *ctx, const struct sl_record *r)
{
	struct journal *st = ctx;

	if (!sl_journal_encode(&st->fmt, &st->batch.d, r))
		return false;
	st->batch.off[++st->batch.n] = st->batch.d.len;
	return true;
}

static enum sl_sink_result journal_send(void *ctx, unsigned n)
{
	struct journal *st = ctx;
	int err;

	(void)n;	/* st->batch.n */
	st->from_spool = false;
	err = send_all(st, &st->batch, &st->done);
	if (!err)
		return SL_SINK_SENT;
	send_failed(st, err);
	if (st->done)
		sl_sink_delivered(&st->sink, st->done);
	return SL_SINK_RETRY;
}

static const void *journal_spool_rec(void *ctx, unsigned i, size_t *len)
{
	struct journal *st = ctx;
	const struct dgrams *g = &st->batch;

	if (!sl_journal_native_entry(g->d.buf + g->off[i], g->off[i + 1] - g->off[i], st->fields,
				     SL_JOURNAL_MAX_FIELDS, &st->scratch))
		return NULL;
	*len = st->scratch.len;
	return st->scratch.buf;
}

static void journal_reset(void *ctx)
{
	struct journal *st = ctx;

	dgrams_reset(&st->batch);
	st->done = 0;
}

/* The oldest spooled entries, as datagrams, until one fails. */
static enum sl_sink_result journal_send_spooled(void *ctx, const struct iovec *rec, unsigned n,
					       unsigned *used)
{
	struct journal *st = ctx;
	struct dgrams *g = &st->spooled;
	unsigned sent = 0;
	int err;

	dgrams_reset(g);
	for (unsigned i = 0; i < n && i < JOURNAL_BATCH; i++) {
		if (!sl_journal_entry_native(rec[i].iov_base, rec[i].iov_len, st->iov,
					     SL_JOURNAL_MAX_FIELDS, &g->d))
			break;	/* sent up to it; it comes first next time */
		g->off[++g->n] = g->d.len;
	}
	if (!g->n) {
		sl_sink_spool_dropped(&st->sink, 1);	/* not an entry (or no memory for it) */
		*used = 1;
		return SL_SINK_SENT;
	}
	st->from_spool = true;
	err = send_all(st, g, &sent);
	st->from_spool = false;
	if (err)
		send_failed(st, err);
	if (!sent)
		return SL_SINK_RETRY;
	*used = sent;
	return SL_SINK_SENT;
}

/* Each failed send was warned, rate-limited: an entry given up on is in `dropped`. */
static void journal_retried(void *ctx, unsigned n, int64_t retries, bool sent)
{
	(void)ctx;
	(void)n;
	(void)retries;
	(void)sent;
}

static const struct sl_sink_ops journal_sink_ops = {
	.encode = journal_encode,
	.send = journal_send,
	.spool_rec = journal_spool_rec,
	.reset = journal_reset,
	.send_spooled = journal_send_spooled,
	.retried = journal_retried,
};

static const struct sl_sink_def journal_sink_def = {
	.ops = &journal_sink_ops,
	.batch = "batch of entries",
	.done = "sent",
	.from_spool = "sent from there when journald takes entries again",
	.spool_peek = JOURNAL_BATCH,
	.reject_retries = 1,
};

/* ---- lifecycle ---- */

/* The fields plugins registered (ids after the well-known ones).  0 or -1. */
static int find_extra(struct journal *st)
{
	const char *name;
	int id;

	for (id = SL_F_WELL_KNOWN_COUNT;
	     id < SL_MAX_FIELDS && (name = st->host->field_name(st->inst, id)); id++) {
		int r = sl_journal_fmt_add(&st->fmt, (sl_field)id, st->host->field_type(st->inst, id), name);

		if (r < 0)
			return -1;
		if (!r)
			st->host->log(st->inst, SL_LOG_WARNING,
				      "field '%s' has the journal name of another field: not written", name);
	}
	return 0;
}

static void journal_destroy(void *state);

static int journal_configure(const struct sl_host *host, struct sl_instance *inst,
			     const void *config, void **state)
{
	const struct journal_cfg *cfg = config;
	struct journal *st;

	if (sl_sink_check(&cfg->sink, host, inst) < 0)
		return -1;
	if (!cfg->identifier[0]) {
		host->config_error(inst, "identifier", "must not be empty");
		return -1;
	}
	st = sl_sink_state_new(struct journal, host, inst, cfg);
	if (!st)
		return -1;
	st->fd = -1;
	st->batch.d.native = true;
	st->spooled.d.native = true;
	st->iov = calloc(SL_JOURNAL_MAX_FIELDS, sizeof(*st->iov));
	st->fields = calloc(SL_JOURNAL_MAX_FIELDS, sizeof(*st->fields));
	if (sl_journal_fmt_init(&st->fmt, cfg->priority, cfg->identifier) < 0 || !st->iov ||
	    !st->fields || find_extra(st) < 0) {
		journal_destroy(st);
		host->config_error(inst, NULL, "out of memory");
		return -1;
	}
	st->c_entries = host->counter_new(inst, "entries");
	st->c_send_errors = host->counter_new(inst, "send_errors");
	st->c_retries = host->counter_new(inst, "retries");
	st->c_dropped = host->counter_new(inst, "dropped");
	st->c_large = host->counter_new(inst, "large_entries");
	st->sink_cfg = cfg->sink;
	st->sink_cfg.batch_size = JOURNAL_BATCH;
	st->sink_cfg.flush_interval = 1000;	/* nothing waits: each process() sends its batch */
	sl_sink_init(&st->sink, host, inst, &st->sink_cfg, &journal_sink_def, st, st->c_retries,
		     st->c_dropped);
	*state = st;
	return 0;
}

static int journal_start(void *state)
{
	struct journal *st = state;

	if (sl_sink_start(&st->sink) < 0)
		return -1;
	st->host->log(st->inst, SL_LOG_INFO, "sending to journald (" JOURNAL_SOCKET ") as %s",
		      st->cfg->identifier);
	return 0;
}

static int journal_process(void *state, struct sl_batch *b)
{
	struct journal *st = state;

	sl_sink_process(&st->sink, b);
	sl_sink_send(&st->sink);	/* what this batch of records brought, now */
	return 0;
}

static void journal_stop(void *state)
{
	struct journal *st = state;

	sl_sink_stop(&st->sink);
	disconnect(st);
}

static void journal_destroy(void *state)
{
	struct journal *st = state;

	sl_sink_destroy(&st->sink);
	sl_journal_fmt_free(&st->fmt);
	disconnect(st);
	free(st->batch.d.buf);
	free(st->spooled.d.buf);
	free(st->scratch.buf);
	free(st->iov);
	free(st->fields);
	free(st);
}

static const struct sl_plugin journal_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "journal",
	.description = "records as systemd journal entries (journald's native protocol, many per "
		       "sendmmsg), fields named as json's keys in upper case "
		       "(journalctl -t sluice DEST_PORT=22)",
	.config_size = sizeof(struct journal_cfg),
	.options = journal_options,
	.configure = journal_configure,
	.start = journal_start,
	.process = journal_process,
	.flush = sl_sink_plugin_flush,
	.stop = journal_stop,
	.destroy = journal_destroy,
	.flags = SL_PLUGIN_NETWORK,
};

SLUICE_PLUGIN(journal_plugin)
