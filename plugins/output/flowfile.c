/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * flowfile output: flow records into nfdump flow files, the way nfcapd
 * writes them, so nfdump, nfsen and nfexpire work on the directory.
 *
 * Files and names (as nfcapd 1.7 does it):
 *   - Time is cut into slots of rotate_interval seconds, aligned on the
 *     epoch (UTC): slot start = now - now % interval.  A flow goes into the
 *     file of the slot in which it reaches this output (nfcapd: the slot in
 *     which it was received), whatever its own first/last times.
 *   - The file being written is DIR/nfcapd.current.PID.INSTANCE; at the end
 *     of the slot it is finished (last block, ident + stat appendix,
 *     header) and renamed to DIR[/SUBDIRS]/nfcapd.YYYYMMDDhhmm, the slot
 *     start in local time (nfcapd uses localtime()), with seconds
 *     (YYYYMMDDhhmmss) when the interval is shorter than a minute.
 *   - Every slot gets a file, also when it holds no flow (its stat record
 *     then spans the slot), like nfcapd; at shutdown the current slot's
 *     file is closed early.
 *   - When the final name exists already (restart within a slot) the old
 *     file's flows are copied into the new one before the rename, as
 *     nfcapd's RenameAppend() does: nothing is overwritten.  If the old
 *     file cannot be read, the new one gets a ".1", ".2"... suffix instead.
 *   - SIGHUP does nothing: files rotate on their own.
 *
 * Blocks of up to 1 MiB are written with one writev() when full and at
 * flush; nothing is allocated per record.  A write error loses that block's
 * records (counted in "lost" and in errors); the file stays well formed.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sluice/plugin.h>

#include "nffile.h"

/* nfcapd -S layouts, by their nfcapd number. */
static const char *const subdir_formats[] = {
	"", "%Y/%m/%d", "%Y/%m/%d/%H", "%Y/%W/%u", "%Y/%W/%u/%H", "%Y/%j", "%Y/%j/%H", "%F", "%F/%H",
};
#define N_SUBDIRS (sizeof(subdir_formats) / sizeof(subdir_formats[0]))

enum { COMP_LZ4, COMP_NONE };
static const char *const compression_choices[] = {"lz4", "none", NULL};

struct ff_cfg {
	const char *dir;
	uint64_t rotate_interval;	/* ms */
	int64_t subdirs;
	int compression;
	const char *ident;
};

struct ff_state {
	const struct sl_host *host;
	struct sl_instance *inst;
	const struct ff_cfg *cfg;

	struct nf_writer *w;
	struct sl_timer *timer;
	char tmp_path[PATH_MAX];
	int64_t interval_s;
	int64_t slot;			/* start of the open file's slot, s */
	bool started;
	int64_t last_err_log;		/* rate limit for repeated errors, s */
	int64_t last_open_try;		/* a failed open is retried once a second */

	uint64_t lost_reported;
	int c_files, c_incomplete, c_lost;
};

static const struct sl_option ff_options[] = {
	SL_OPT_ROW("dir", SL_OPT_STRING, struct ff_cfg, dir, NULL,
		   "directory of the flow files (must exist)", 0, 0, NULL, SL_OPT_REQUIRED),
	SL_OPT_DURATION("rotate_interval", struct ff_cfg, rotate_interval, "5m", 1000, 86400000,
			"one file per slot of this length, aligned on the epoch (whole seconds)"),
	SL_OPT_INT("subdirs", struct ff_cfg, subdirs, "0", 0, (int64_t)N_SUBDIRS - 1,
		   "nfcapd -S layout: 0 none, 1 %Y/%m/%d, 2 %Y/%m/%d/%H, 3 %Y/%W/%u, 4 %Y/%W/%u/%H, "
		   "5 %Y/%j, 6 %Y/%j/%H, 7 %F, 8 %F/%H"),
	SL_OPT_ENUM("compression", struct ff_cfg, compression, "lz4", compression_choices,
		    "block compression: lz4 or none"),
	SL_OPT_STR("ident", struct ff_cfg, ident, "none", "ident string in each file (nfdump -I)"),
	SL_OPT_END
};

static const struct sl_field_decl ff_needs[] = {
	{ "orig_src", SL_T_ADDR },
	{ "orig_dst", SL_T_ADDR },
	{ "flow_start", SL_T_TIME },
	{ "flow_end", SL_T_TIME },
	SL_FIELD_END
};

/* ---- time and names ---- */

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int64_t slot_of(const struct ff_state *st, int64_t sec)
{
	int64_t r = sec % st->interval_s;

	return sec - (r < 0 ? r + st->interval_s : r);
}

/* mkdir -p of dir/sub (dir exists).  0, or -1 with errno. */
static int make_subdirs(const char *dir, const char *sub)
{
	char path[PATH_MAX];
	size_t base = strlen(dir);

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, sub) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = path + base + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (mkdir(path, 0750) < 0 && errno != EEXIST)
				return -1;
			*p = c;
			if (!c)
				return 0;
		}
	}
}

/*
 * The final path of the slot's file: DIR[/SUB]/nfcapd.STAMP.  Creates the
 * subdirectories.  0, or -1 (logged).
 */
static int final_path(struct ff_state *st, int64_t slot, char *out, size_t outlen)
{
	time_t t = (time_t)slot;
	struct tm tm;
	char stamp[32], sub[128] = "";
	int n;

	localtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), st->interval_s < 60 ? "%Y%m%d%H%M%S" : "%Y%m%d%H%M", &tm);
	if (st->cfg->subdirs) {
		if (strftime(sub, sizeof(sub), subdir_formats[st->cfg->subdirs], &tm) == 0 ||
		    make_subdirs(st->cfg->dir, sub) < 0) {
			st->host->log(st->inst, SL_LOG_ERR, "cannot create %s/%s: %s; file goes to %s",
				      st->cfg->dir, sub, strerror(errno), st->cfg->dir);
			sub[0] = '\0';
		}
	}
	n = snprintf(out, outlen, "%s/%s%snfcapd.%s", st->cfg->dir, sub, sub[0] ? "/" : "", stamp);
	if (n < 0 || (size_t)n >= outlen) {
		st->host->log(st->inst, SL_LOG_ERR, "file name too long in %s", st->cfg->dir);
		return -1;
	}
	return 0;
}

/* ---- files ---- */

static bool exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

static void report_lost(struct ff_state *st)
{
	uint64_t lost = nf_writer_lost(st->w);

	if (lost > st->lost_reported) {
		st->host->counter_add(st->inst, st->c_lost, lost - st->lost_reported);
		st->host->dropped_add(st->inst, lost - st->lost_reported);
		st->lost_reported = lost;
	}
}

/* An error that may repeat every batch: log it at most every 10 s. */
static void log_limited(struct ff_state *st, const char *what, int err)
{
	int64_t now = now_ms() / 1000;

	if (now - st->last_err_log < 10)
		return;
	st->last_err_log = now;
	st->host->log(st->inst, SL_LOG_ERR, "%s: %s", what, strerror(err));
}

static int open_slot(struct ff_state *st, int64_t sec)
{
	st->slot = slot_of(st, sec);
	if (nf_writer_open(st->w, st->tmp_path) < 0) {
		log_limited(st, st->tmp_path, errno);
		return -1;
	}
	return 0;
}

/* Finish the open file and give it its slot's name. */
static void close_slot(struct ff_state *st)
{
	char final[PATH_MAX], alt[PATH_MAX + 16];
	const char *target = final, *why = "";
	uint64_t first = (uint64_t)st->slot * 1000, last = (uint64_t)(st->slot + st->interval_s) * 1000;

	if (!nf_writer_is_open(st->w))
		return;
	if (final_path(st, st->slot, final, sizeof(final)) < 0) {
		nf_writer_abandon(st->w);
		unlink(st->tmp_path);
		report_lost(st);
		return;
	}
	if (exists(final) && nf_writer_absorb(st->w, final, &why) < 0) {
		/* Never overwrite what we cannot merge: take the next free suffix. */
		st->host->log(st->inst, SL_LOG_WARNING, "%s exists and cannot be appended to (%s)", final,
			      why);
		for (unsigned i = 1;; i++) {
			snprintf(alt, sizeof(alt), "%s.%u", final, i);
			if (!exists(alt))
				break;
		}
		target = alt;
	}
	if (nf_writer_close(st->w, first, last) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: finishing the file failed: %s; its flows are lost",
			      st->tmp_path, strerror(errno));
		st->host->error_add(st->inst, 1);
		unlink(st->tmp_path);
		report_lost(st);
		return;
	}
	report_lost(st);
	if (rename(st->tmp_path, target) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "rename %s to %s: %s", st->tmp_path, target,
			      strerror(errno));
		st->host->error_add(st->inst, 1);
		return;
	}
	st->host->counter_add(st->inst, st->c_files, 1);
	st->host->log(st->inst, SL_LOG_DEBUG, "%s: %llu flows", target,
		      (unsigned long long)nf_writer_stat(st->w)->numflows);
}

/* Rotate if the slot is over (or the clock went back before it). */
static void check_slot(struct ff_state *st, int64_t ms)
{
	int64_t sec = ms / 1000;

	if (nf_writer_is_open(st->w)) {
		if (sec >= st->slot && sec < st->slot + st->interval_s)
			return;
		close_slot(st);
	} else if (sec == st->last_open_try) {
		return;
	}
	st->last_open_try = sec;
	open_slot(st, sec);
}

static void arm_timer(struct ff_state *st, int64_t ms)
{
	int64_t end = (slot_of(st, ms / 1000) + st->interval_s) * 1000, delay = end - ms;

	/* A file that could not be opened is retried every second. */
	if (!nf_writer_is_open(st->w) && delay > 1000)
		delay = 1000;
	st->host->timer_arm(st->timer, delay > 0 ? (uint64_t)delay : 1, 0);
}

static void on_timer(void *state)
{
	struct ff_state *st = state;
	int64_t ms = now_ms();

	check_slot(st, ms);
	arm_timer(st, ms);
}

/* ---- records ---- */

static uint64_t time_ms(const struct sl_record *r, sl_field f)
{
	const struct sl_time *t = &r->v[f].time;

	return t->sec < 0 ? 0 : (uint64_t)t->sec * 1000 + t->nsec / 1000000;
}

static uint64_t u64_or(const struct sl_record *r, sl_field f, uint64_t dflt)
{
	return sl_has(r, f) ? r->v[f].u64 : dflt;
}

static uint8_t end_reason(uint64_t v)
{
	switch (v) {
	case SL_FLOW_END_IDLE:
		return NF_END_IDLE;
	case SL_FLOW_END_ACTIVE:
		return NF_END_ACTIVE;
	case SL_FLOW_END_DESTROY:
		return NF_END_END;
	case SL_FLOW_END_EOF:
		return NF_END_FORCED;
	case SL_FLOW_END_EVICTED:
		return NF_END_RESOURCES;
	}
	return 0;
}

/* Record -> nf_flow (see docs/PLUGINS.md for the mapping). */
static void to_flow(const struct sl_record *r, struct nf_flow *f, uint64_t received)
{
	bool icmp;

	memcpy(f->src, r->v[SL_F_ORIG_SRC].addr, 16);
	memcpy(f->dst, r->v[SL_F_ORIG_DST].addr, 16);
	f->first_ms = time_ms(r, SL_F_FLOW_START);
	f->last_ms = time_ms(r, SL_F_FLOW_END);
	f->received_ms = received;
	f->in_packets = u64_or(r, SL_F_ORIG_PACKETS, 0);
	f->in_bytes = u64_or(r, SL_F_ORIG_BYTES, 0);
	f->out_packets = u64_or(r, SL_F_REPLY_PACKETS, 0);
	f->out_bytes = u64_or(r, SL_F_REPLY_BYTES, 0);
	f->proto = (uint8_t)u64_or(r, SL_F_IP_PROTO, 0);
	icmp = f->proto == 1 || f->proto == 58;
	/* ICMP: nfdump shows type.code from the destination port; no source port. */
	f->sport = icmp ? 0 : (uint16_t)u64_or(r, SL_F_ORIG_SPORT, 0);
	f->dport = (uint16_t)u64_or(r, SL_F_ORIG_DPORT, 0);
	f->tcp_flags = (uint8_t)u64_or(r, SL_F_FLOW_TCP_FLAGS, 0);
	f->tos = (uint8_t)u64_or(r, SL_F_IP_TOS, 0);
	f->misc = sl_has(r, SL_F_IFINDEX_IN) || sl_has(r, SL_F_IFINDEX_OUT) || sl_has(r, SL_F_FLOW_END_REASON);
	f->input = (uint32_t)u64_or(r, SL_F_IFINDEX_IN, 0);
	f->output = (uint32_t)u64_or(r, SL_F_IFINDEX_OUT, 0);
	f->end_reason = end_reason(u64_or(r, SL_F_FLOW_END_REASON, 0));

	/*
	 * NAT (conntrack): the reply tuple mirrors the original one unless an
	 * address or port was translated.  Post-NAT source = reply destination,
	 * post-NAT destination = reply source: nfdump's NSEL xlate fields.
	 */
	f->xlate = false;
	if (sl_has(r, SL_F_REPLY_SRC) && sl_has(r, SL_F_REPLY_DST)) {
		const uint8_t *rs = r->v[SL_F_REPLY_SRC].addr, *rd = r->v[SL_F_REPLY_DST].addr;
		uint16_t rsp = (uint16_t)u64_or(r, SL_F_REPLY_SPORT, f->dport);
		uint16_t rdp = (uint16_t)u64_or(r, SL_F_REPLY_DPORT, f->sport);

		if (memcmp(rs, f->dst, 16) || memcmp(rd, f->src, 16) ||
		    (!icmp && (rsp != f->dport || rdp != f->sport))) {
			f->xlate = true;
			memcpy(f->xsrc, rd, 16);
			memcpy(f->xdst, rs, 16);
			f->xsport = icmp ? 0 : rdp;
			f->xdport = icmp ? 0 : rsp;
		}
	}
}

static int ff_process(void *state, struct sl_batch *b)
{
	struct ff_state *st = state;
	int64_t ms = now_ms();
	uint64_t incomplete = 0;
	struct nf_flow f;

	check_slot(st, ms);
	if (!nf_writer_is_open(st->w)) {
		/* No file (directory gone, disk full): these flows are lost. */
		st->host->counter_add(st->inst, st->c_lost, b->count);
		st->host->dropped_add(st->inst, b->count);
		return 0;
	}
	for (unsigned i = 0; i < b->count; i++) {
		const struct sl_record *r = b->rec[i];

		if (!sl_has(r, SL_F_ORIG_SRC) || !sl_has(r, SL_F_ORIG_DST) || !sl_has(r, SL_F_FLOW_START) ||
		    !sl_has(r, SL_F_FLOW_END)) {
			incomplete++;
			continue;
		}
		to_flow(r, &f, (uint64_t)ms);
		if (nf_writer_add(st->w, &f) < 0)
			log_limited(st, st->tmp_path, errno);
	}
	if (incomplete)
		st->host->counter_add(st->inst, st->c_incomplete, incomplete);
	report_lost(st);
	return 0;
}

static int ff_flush(void *state)
{
	struct ff_state *st = state;
	int ret;

	if (!st->started)
		return 0;
	ret = nf_writer_flush(st->w);
	report_lost(st);
	return ret;
}

/* ---- lifecycle ---- */

static int ff_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			void **state)
{
	const struct ff_cfg *cfg = config;
	struct ff_state *st;

	if (!cfg->dir[0]) {
		host->config_error(inst, "dir", "must not be empty");
		return -1;
	}
	if (strlen(cfg->dir) > PATH_MAX - 128) {
		host->config_error(inst, "dir", "too long");
		return -1;
	}
	if (cfg->rotate_interval % 1000) {
		host->config_error(inst, "rotate_interval", "must be whole seconds (nfcapd slots are)");
		return -1;
	}
	if (strlen(cfg->ident) > NF_IDENT_MAX) {
		host->config_error(inst, "ident", "at most %d characters (nfdump's limit)", NF_IDENT_MAX);
		return -1;
	}
	for (const char *p = cfg->ident; *p; p++) {
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			host->config_error(inst, "ident", "no spaces or control characters (nfdump refuses them)");
			return -1;
		}
	}
#if defined(__has_include)
#if !__has_include(<lz4.h>)
	if (cfg->compression == COMP_LZ4) {
		host->config_error(inst, "compression", "built without liblz4: use none");
		return -1;
	}
#endif
#endif
	st = calloc(1, sizeof(*st));
	if (!st) {
		host->config_error(inst, NULL, "out of memory");
		return -1;
	}
	st->host = host;
	st->inst = inst;
	st->cfg = cfg;
	st->interval_s = (int64_t)(cfg->rotate_interval / 1000);
	st->last_err_log = INT64_MIN / 2;
	st->c_files = host->counter_new(inst, "files");
	st->c_incomplete = host->counter_new(inst, "incomplete");
	st->c_lost = host->counter_new(inst, "lost");
	*state = st;
	return 0;
}

static int ff_start(void *state)
{
	struct ff_state *st = state;
	const char *name = st->host->name(st->inst);
	struct stat sb;
	size_t n;
	int64_t ms;

	tzset();	/* names are local time: read TZ once, not per rotation */
	errno = 0;
	if (stat(st->cfg->dir, &sb) < 0 || !S_ISDIR(sb.st_mode) || access(st->cfg->dir, W_OK | X_OK) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: not a writable directory (%s)", st->cfg->dir,
			      errno ? strerror(errno) : "not a directory");
		return -1;
	}
	st->w = nf_writer_new(st->cfg->compression == COMP_LZ4 ? NF_COMP_LZ4 : NF_COMP_NONE, st->cfg->ident);
	if (!st->w) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot set up the writer: %s", strerror(errno));
		return -1;
	}
	/* nfcapd.current.PID, plus the instance: two instances may share a directory. */
	n = (size_t)snprintf(st->tmp_path, sizeof(st->tmp_path), "%s/nfcapd.current.%ld.", st->cfg->dir,
			     (long)getpid());
	for (const char *p = name; *p && n + 1 < sizeof(st->tmp_path); p++)
		st->tmp_path[n++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
					    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'
				    ? *p
				    : '_';
	st->tmp_path[n] = '\0';
	ms = now_ms();
	if (open_slot(st, ms / 1000) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot create %s: %s", st->tmp_path, strerror(errno));
		nf_writer_free(st->w);
		st->w = NULL;
		return -1;
	}
	st->timer = st->host->timer_new(st->inst, on_timer, st);
	if (!st->timer) {
		nf_writer_abandon(st->w);
		unlink(st->tmp_path);
		nf_writer_free(st->w);
		st->w = NULL;
		st->host->log(st->inst, SL_LOG_ERR, "cannot create a timer");
		return -1;
	}
	arm_timer(st, ms);
	st->started = true;
	return 0;
}

static void ff_stop(void *state)
{
	struct ff_state *st = state;

	if (!st->started)
		return;
	st->host->timer_disarm(st->timer);
	/* The slot ends early: its file is finished and named now (nfcapd does too). */
	close_slot(st);
	st->started = false;
}

static void ff_destroy(void *state)
{
	struct ff_state *st = state;

	nf_writer_free(st->w);
	free(st);
}

static const struct sl_plugin flowfile_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "flowfile",
	.description = "write flow records to nfdump files (nfcapd layout, rotation and names)",
	.config_size = sizeof(struct ff_cfg),
	.options = ff_options,
	.needs = ff_needs,
	.configure = ff_configure,
	.start = ff_start,
	.process = ff_process,
	.flush = ff_flush,
	.stop = ff_stop,
	.destroy = ff_destroy,
};

SLUICE_PLUGIN(flowfile_plugin)
