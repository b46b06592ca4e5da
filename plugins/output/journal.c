/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * journal: each record as one entry of the systemd journal, sent with
 * libsystemd's sd_journal_sendv() to journald's native socket.
 *
 * An entry holds MESSAGE= the record's text (logline's line, or json's or
 * cef's text before it; without a text its prefix, else empty), PRIORITY=
 * (`priority`), SYSLOG_IDENTIFIER= (`identifier`), and every field of the
 * record the json filter would write, named after json's key in upper
 * case (SRC_IP, DEST_PORT, PREFIX, IN, ...), with json's value: a number
 * in decimal, a JSON string without its quotes (a string from the packet
 * or the ruleset as its own bytes, binary-safe: libsystemd sends a value
 * with a newline in journald's binary form), decode_flags as its JSON
 * array.  The entry is written by common/journal_entry.c from json's own
 * table and values (common/json_fields.h).
 * A field another plugin registered is named the same way, its name
 * mapped to what journald accepts (A-Z, 0-9, _; not a leading _ or
 * digit; 64 bytes at most).
 *
 * Delivery is the sink engine's (sink.h): a failed send is retried with
 * backoff, then dropped and counted, or with spool_dir goes to the disk
 * spool and is sent from there when journald takes entries again.  A
 * batch is one entry: journald takes or refuses each datagram on its own,
 * so a batch of several could fail half sent, and the engine would send
 * (or spool) its first half again.  The entry is encoded once as its
 * fields, each a 4-byte little-endian length and NAME=value, which is
 * also its spool record (read back checked: a damaged one is dropped and
 * counted in spool_dropped, never sent).
 *
 * What libsystemd does not say: with no socket at all (journald not
 * started, or between the old socket's removal and the new one's bind
 * while it restarts) sd_journal_sendv() returns success and drops the
 * entry.  So the socket is looked at before each send and again after:
 * missing, or another socket after the send, counts as a failed send,
 * sent again (at least once: an entry sent while the old journald still
 * read may be stored twice).  A journald that is alive but reads nothing
 * (stopped, or far behind) would block libsystemd's blocking socket for
 * ever, and with it this output's thread and the daemon's stop: after the
 * first send the socket libsystemd opened is found among the process's
 * descriptors (the one unnamed, unconnected AF_UNIX datagram socket that
 * was not there before) and given a send timeout, so a send waits at
 * most SEND_TIMEOUT_MS (twice: libsystemd tries a memfd after EAGAIN)
 * and then fails like any other.
 *
 * journald's own rate limit (RateLimitBurst=, per service) drops entries
 * it counts in its own log, out of sluice's sight: docs/PLUGINS.md says
 * how to lift it for sluice.service.
 */
#define SD_JOURNAL_SUPPRESS_LOCATION	/* no CODE_FILE=journal.c in every entry */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <systemd/sd-journal.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "journal_entry.h"
#include "plugin_state.h"
#include "sink.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"	/* libsystemd's, fixed */
#define SEND_TIMEOUT_MS 500
#define SEND_WARN_NS (10 * 1000000000LL)

static const char *const priority_names[] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug", NULL
};

struct journal_cfg {
	const char *identifier;
	int priority;
	struct sl_sink_cfg sink;	/* max_retries, retry_*, spool_*; batch_size is 1 */
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

struct journal {
	SL_SINK_STATE_HEAD(struct journal_cfg);
	struct sl_sink_cfg sink_cfg;	/* cfg->sink with batch_size 1 */

	struct sl_journal_fmt fmt;
	struct sl_journal_entry e;	/* the batch: one entry */
	struct iovec *iov;		/* SL_JOURNAL_MAX_FIELDS */

	bool fd_looked;		/* libsystemd's socket looked for (timeout set or not) */
	int timeout_fd;		/* libsystemd's socket, with the send timeout; -1: not known */
	unsigned char *pre_fds;	/* candidates before the first send, a bit per fd */
	int pre_nfd;

	int c_entries, c_send_errors, c_retries, c_dropped;
	int64_t warned_ns;
	uint64_t errors_total;
};

/* ---- sending ---- */

/* An unnamed, unconnected AF_UNIX datagram socket: what libsystemd's journal socket is. */
static bool journal_like(int fd)
{
	struct sockaddr_un sa;
	socklen_t l = sizeof(int);
	int v;

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l) < 0 || v != SOCK_DGRAM)
		return false;
	l = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l) < 0 || v != AF_UNIX)
		return false;
	l = sizeof(sa);
	if (getpeername(fd, (struct sockaddr *)&sa, &l) == 0)
		return false;
	l = sizeof(sa);
	return getsockname(fd, (struct sockaddr *)&sa, &l) == 0 && l <= sizeof(sa_family_t);
}

static const struct timeval send_timeout = {
	.tv_sec = SEND_TIMEOUT_MS / 1000, .tv_usec = (SEND_TIMEOUT_MS % 1000) * 1000
};

/* Whether fd has this output's send timeout. */
static bool has_timeout(int fd)
{
	struct timeval tv;
	socklen_t l = sizeof(tv);

	return getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &l) == 0 &&
	       tv.tv_sec == send_timeout.tv_sec && tv.tv_usec == send_timeout.tv_usec;
}

/*
 * The descriptors that look like libsystemd's socket: with pre, those
 * not in pre (a bit per fd) into *found, with how many; without, the set
 * into a new bitmap.  -1 when /proc/self/fd cannot be read.
 */
static int scan_fds(struct journal *st, bool after, int *found, int *nfound)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int self;

	if (!d)
		return -1;
	self = dirfd(d);
	*nfound = 0;
	while ((de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (*end || end == de->d_name || fd == self || fd < 0 || fd > 65535)
			continue;
		if (!journal_like((int)fd))
			continue;
		if (!after) {
			if (fd >= st->pre_nfd) {
				int nn = (int)((fd / 8 + 1) * 8);
				unsigned char *g = realloc(st->pre_fds, (size_t)nn / 8);

				if (!g) {
					closedir(d);
					return -1;
				}
				memset(g + st->pre_nfd / 8, 0, (size_t)(nn - st->pre_nfd) / 8);
				st->pre_fds = g;
				st->pre_nfd = nn;
			}
			st->pre_fds[fd / 8] |= (unsigned char)(1u << (fd % 8));
		} else if (fd >= st->pre_nfd || !(st->pre_fds[fd / 8] & (1u << (fd % 8)))) {
			*found = (int)fd;
			++*nfound;
		} else if (has_timeout((int)fd)) {
			st->timeout_fd = (int)fd;	/* set by an earlier instance (a reload's) */
		}
	}
	closedir(d);
	return 0;
}

/*
 * After the first send: libsystemd's socket (the one new candidate) gets
 * the send timeout; one that has it already (an earlier instance of this
 * process set it) is enough; else a notice says a stall would block.
 */
static void bound_send_time(struct journal *st)
{
	int fd = -1, n = 0;

	st->fd_looked = true;
	st->timeout_fd = -1;
	if (scan_fds(st, true, &fd, &n) == 0 && n == 1 &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout)) == 0)
		st->timeout_fd = fd;
	else if (n)
		st->timeout_fd = -1;
	if (st->timeout_fd >= 0)
		st->host->log(st->inst, SL_LOG_DEBUG, "libsystemd's journal socket is fd %d: sends wait %d ms at most",
			      st->timeout_fd, SEND_TIMEOUT_MS);
	else
		st->host->log(st->inst, SL_LOG_NOTICE,
			      "cannot tell libsystemd's journal socket (%d candidates): a journald that "
			      "reads nothing blocks this output for as long as it stalls", n);
	free(st->pre_fds);
	st->pre_fds = NULL;
}

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

/*
 * One entry (n iovecs) to journald: 0, or the errno.  The socket must be
 * there before and the same one after (libsystemd says nothing of an
 * entry it could not send for want of a socket).
 */
static int send_entry(struct journal *st, unsigned n)
{
	struct stat before, after;
	int r, fd, nfd;

	if (stat(JOURNAL_SOCKET, &before) < 0)
		return errno;
	if (!S_ISSOCK(before.st_mode))
		return ENOTSOCK;
	if (!st->fd_looked && !st->pre_fds && scan_fds(st, false, &fd, &nfd) < 0) {
		st->fd_looked = true;
		st->host->log(st->inst, SL_LOG_NOTICE, "cannot read /proc/self/fd: a journald that reads "
			      "nothing blocks this output for as long as it stalls");
	}
	r = sd_journal_sendv(st->iov, (int)n);
	if (!st->fd_looked)
		bound_send_time(st);
	if (r < 0)
		return -r;
	if (stat(JOURNAL_SOCKET, &after) < 0 || after.st_ino != before.st_ino ||
	    after.st_dev != before.st_dev)
		return ECONNRESET;	/* replaced meanwhile: this entry may be lost */
	st->host->counter_add(st->inst, st->c_entries, 1);
	return 0;
}

static enum sl_sink_result result_of(struct journal *st, int err)
{
	send_failed(st, err);
	/* the entry itself is refused: the same bytes will not go later */
	return err == EINVAL || err == E2BIG || err == EMSGSIZE ? SL_SINK_REJECTED : SL_SINK_RETRY;
}

/* ---- the sink's callbacks (sink.h) ---- */

static bool journal_encode(void *ctx, const struct sl_record *r)
{
	struct journal *st = ctx;

	return sl_journal_encode(&st->fmt, &st->e, r);
}

static enum sl_sink_result journal_send(void *ctx, unsigned n)
{
	struct journal *st = ctx;
	unsigned k = sl_journal_entry_iov(st->e.buf, st->e.len, st->iov, SL_JOURNAL_MAX_FIELDS);
	int err;

	(void)n;	/* 1: batch_size */
	err = send_entry(st, k);
	return err ? result_of(st, err) : SL_SINK_SENT;
}

static const void *journal_spool_rec(void *ctx, unsigned i, size_t *len)
{
	struct journal *st = ctx;

	(void)i;
	*len = st->e.len;
	return st->e.buf;
}

static void journal_reset(void *ctx)
{
	struct journal *st = ctx;

	st->e.len = 0;
}

/* The oldest spooled entries, one by one, until one fails. */
static enum sl_sink_result journal_send_spooled(void *ctx, const struct iovec *rec, unsigned n,
					       unsigned *used)
{
	struct journal *st = ctx;

	for (unsigned i = 0; i < n; i++) {
		unsigned k = sl_journal_entry_iov(rec[i].iov_base, rec[i].iov_len, st->iov,
						  SL_JOURNAL_MAX_FIELDS);
		int err;

		if (!k) {
			sl_sink_spool_dropped(&st->sink, 1);
			continue;
		}
		err = send_entry(st, k);
		if (err) {
			enum sl_sink_result r = result_of(st, err);

			if (r == SL_SINK_REJECTED) {
				/* dropped, counted: the rest after it */
				sl_sink_spool_dropped(&st->sink, 1);
				continue;
			}
			if (!i)
				return SL_SINK_RETRY;
			*used = i;
			return SL_SINK_SENT;
		}
	}
	*used = n;
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
	.batch = "entry",
	.done = "sent",
	.from_spool = "sent from there when journald takes entries again",
	.spool_peek = 256,
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
	st->iov = calloc(SL_JOURNAL_MAX_FIELDS, sizeof(*st->iov));
	if (sl_journal_fmt_init(&st->fmt, cfg->priority, cfg->identifier) < 0 || !st->iov ||
	    find_extra(st) < 0) {
		journal_destroy(st);
		host->config_error(inst, NULL, "out of memory");
		return -1;
	}
	st->c_entries = host->counter_new(inst, "entries");
	st->c_send_errors = host->counter_new(inst, "send_errors");
	st->c_retries = host->counter_new(inst, "retries");
	st->c_dropped = host->counter_new(inst, "dropped");
	st->sink_cfg = cfg->sink;
	st->sink_cfg.batch_size = 1;
	st->sink_cfg.flush_interval = 1000;	/* nothing waits: a batch is full at once */
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

static void journal_stop(void *state)
{
	struct journal *st = state;

	sl_sink_stop(&st->sink);
}

static void journal_destroy(void *state)
{
	struct journal *st = state;

	sl_sink_destroy(&st->sink);
	sl_journal_fmt_free(&st->fmt);
	free(st->e.buf);
	free(st->iov);
	free(st->pre_fds);
	free(st);
}

static const struct sl_plugin journal_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "journal",
	.description = "records as systemd journal entries (sd_journal_sendv), fields named as json's "
		       "keys in upper case (journalctl -t sluice DEST_PORT=22)",
	.config_size = sizeof(struct journal_cfg),
	.options = journal_options,
	.configure = journal_configure,
	.start = journal_start,
	.process = sl_sink_plugin_process,
	.flush = sl_sink_plugin_flush,
	.stop = journal_stop,
	.destroy = journal_destroy,
	.flags = SL_PLUGIN_NETWORK,
};

SLUICE_PLUGIN(journal_plugin)
