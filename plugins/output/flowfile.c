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
 *   - The file being written is DIR/nfcapd.current.SLOT.INTERVAL.RANDOM,
 *     created O_EXCL (or O_TMPFILE) and flock()ed until it is renamed (see
 *     create_temp(); docs/SECURITY.md); at the end
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
 *   - At start, orphans (temporary files whose lock is free: their writer
 *     died) are finished into their slot's file, or removed when they hold
 *     no whole block (recover_orphans()).
 *
 * Blocks of up to 1 MiB are written with one writev() when full, every
 * flush_interval and at flush; nothing is allocated per record.  A write error loses that block's
 * records (counted in "lost" and in errors); the file stays well formed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "flow_fields.h"
#include "nffile.h"
#include "nffile_recover.h"
#include "plugin_state.h"
#include "safefile.h"
#include "time_clamp.h"

#define TMP_PREFIX "nfcapd.current."

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
	uint64_t flush_interval;	/* ms, 0: blocks only when full */
	int64_t subdirs;
	int compression;
	const char *ident;
};

struct ff_state {
	SL_STATE_HEAD(struct ff_cfg);

	struct sl_nf_writer *w;
	struct sl_timer *timer;
	char tmp_path[PATH_MAX];
	int lock_fd;			/* holds the temporary file's flock until it is renamed */
	int64_t interval_s;
	int64_t slot;			/* start of the open file's slot, s */
	bool started;
	int64_t last_err_log;		/* rate limit for repeated errors, s */
	int64_t last_open_try;		/* a failed open is retried once a second */

	uint64_t lost_reported;
	int c_files, c_incomplete, c_lost, c_recovered;
};

static const struct sl_option ff_options[] = {
	SL_OPT_STR("dir", struct ff_cfg, dir, SL_PATH_REQUIRED(SL_OPT_OUT_DIR),
		   "directory of the flow files (must exist)"),
	SL_OPT_DURATION("rotate_interval", struct ff_cfg, rotate_interval, "5m", 1000, 86400000,
			"one file per slot of this length, aligned on the epoch (whole seconds)"),
	SL_OPT_DURATION("flush_interval", struct ff_cfg, flush_interval, "10s", 0, 3600000,
			"write the block being filled at least this often: what a crash can lose (0: only full blocks)"),
	SL_OPT_INT("subdirs", struct ff_cfg, subdirs, "0", 0, (int64_t)N_SUBDIRS - 1,
		   "nfcapd -S layout: 0 none, 1 %Y/%m/%d, 2 %Y/%m/%d/%H, 3 %Y/%W/%u, 4 %Y/%W/%u/%H, "
		   "5 %Y/%j, 6 %Y/%j/%H, 7 %F, 8 %F/%H"),
	SL_OPT_ENUM("compression", struct ff_cfg, compression, "lz4", compression_choices,
		    "block compression: lz4 or none"),
	SL_OPT_STR("ident", struct ff_cfg, ident, "none", "ident string in each file (nfdump -I)"),
	SL_OPT_END
};

static const struct sl_field_decl ff_needs[] = {
	SL_FIELD_DECL(SL_F_ORIG_SRC),
	SL_FIELD_DECL(SL_F_ORIG_DST),
	SL_FIELD_DECL(SL_F_FLOW_START),
	SL_FIELD_DECL(SL_F_FLOW_END),
	SL_FIELD_END
};

/* Read when present (a queue in front of it copies needs + these). */
static const struct sl_field_decl ff_reads[] = {
	SL_FLOW_OPTIONAL_FIELDS,
	SL_FIELD_DECL(SL_F_IP_TOS),
	SL_FIELD_END
};

/* ---- time and names ---- */

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

			struct stat sb;

			*p = '\0';
			if (mkdir(path, 0750) < 0 && errno != EEXIST)
				return -1;
			/* Never a symbolic link planted where a subdirectory goes. */
			if (lstat(path, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
				errno = ENOTDIR;
				return -1;
			}
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
static int final_path(struct ff_state *st, int64_t slot, int64_t interval, char *out, size_t outlen)
{
	time_t t = (time_t)slot;
	struct tm tm;
	char stamp[32], sub[128] = "";
	int n;

	localtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), interval < 60 ? "%Y%m%d%H%M%S" : "%Y%m%d%H%M", &tm);
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

/* A name is taken by anything, a dangling symbolic link too. */
static bool exists(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0;
}

static void report_lost(struct ff_state *st)
{
	uint64_t lost = sl_nf_writer_lost(st->w);

	if (lost > st->lost_reported) {
		st->host->counter_add(st->inst, st->c_lost, lost - st->lost_reported);
		st->host->dropped_add(st->inst, lost - st->lost_reported);
		st->lost_reported = lost;
	}
}

/* An error that may repeat every batch: log it at most every 10 s. */
static void log_limited(struct ff_state *st, const char *what, int err)
{
	int64_t now = sl_clock_ms(CLOCK_REALTIME) / 1000;

	if (now - st->last_err_log < 10)
		return;
	st->last_err_log = now;
	st->host->log(st->inst, SL_LOG_ERR, "%s: %s", what, strerror(err));
}

/*
 * Create the temporary file of a slot: DIR/nfcapd.current.SLOT.INTERVAL.RANDOM
 * (nfdump's tools skip nfcapd.current.*; the slot names the file if an
 * orphan of it is ever recovered; the random part makes the name
 * unpredictable).  It is created with O_EXCL (or unnamed with O_TMPFILE
 * and linked once locked), and flock()ed for the writer's lifetime: an
 * orphan is a file whose lock can be taken.  The fd, or -1 with errno.
 */
/* A block that could not be written (its flows are in lost): counted, logged. */
static void write_error(struct ff_state *st)
{
	int err = errno;

	st->host->error_add(st->inst, 1);
	log_limited(st, st->tmp_path, err);
}

static int create_temp(struct ff_state *st, int64_t slot)
{
	for (int tries = 0; tries < 8; tries++) {
		char rnd[17], proc[64];
		struct stat sb;
		int fd;

		if (sl_random_hex(rnd) < 0)
			return -1;
		snprintf(st->tmp_path, sizeof(st->tmp_path), "%s/" TMP_PREFIX "%" PRId64 ".%" PRId64 ".%s",
			 st->cfg->dir, slot, st->interval_s, rnd);
		fd = open(st->cfg->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0640);
		if (fd >= 0) {
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
			int err;

			if (flock(fd, LOCK_EX) == 0 &&
			    linkat(AT_FDCWD, proc, AT_FDCWD, st->tmp_path, AT_SYMLINK_FOLLOW) == 0)
				return fd;
			err = errno;
			close(fd);
			if (err == EEXIST)
				continue;
			/* no /proc: fall back to a named file */
		}
		fd = sl_open_out(st->tmp_path, O_RDWR | O_CREAT | O_EXCL, 0640);
		if (fd < 0) {
			if (errno == EEXIST)
				continue;
			return -1;
		}
		/* Between open and flock a recovering process may take it: then it is gone. */
		if (flock(fd, LOCK_EX) == 0 && fstat(fd, &sb) == 0 && sb.st_nlink > 0)
			return fd;
		close(fd);
	}
	errno = EEXIST;
	return -1;
}

/* Refuse a directory others can replace files in; counted after start. */
static int check_dir(struct ff_state *st)
{
	char why[PATH_MAX + 160];
	int kind = sl_dir_kind(st->cfg->dir, why, sizeof(why));

	if (kind == SL_DIR_UNSAFE) {
		int64_t now = sl_clock_ms(CLOCK_REALTIME) / 1000;

		if (st->started)
			st->host->error_add(st->inst, 1);
		/* At start always; later at most every 10 s, like the other errors. */
		if (!st->started || now - st->last_err_log >= 10) {
			st->last_err_log = now;
			st->host->log(st->inst, SL_LOG_ERR, "refusing to write flow files: %s", why);
		}
		return -1;
	}
	return 0;
}

static int open_slot(struct ff_state *st, int64_t sec)
{
	int fd, err;

	st->slot = slot_of(st, sec);
	if (check_dir(st) < 0)
		return -1;
	fd = create_temp(st, st->slot);
	if (fd < 0) {
		err = errno;
		goto fail;
	}
	st->lock_fd = dup(fd);
	if (st->lock_fd < 0) {
		err = errno;
		close(fd);
		unlink(st->tmp_path);
		goto fail;
	}
	if (sl_nf_writer_attach(st->w, fd) < 0) {	/* closes fd */
		err = errno;
		close(st->lock_fd);
		st->lock_fd = -1;
		unlink(st->tmp_path);
		goto fail;
	}
	return 0;
fail:
	if (st->started)
		st->host->error_add(st->inst, 1);
	log_limited(st, st->tmp_path, err);
	errno = err;
	return -1;
}

/* rename() that replaces nothing (a name taken meanwhile fails with EEXIST). */
static int rename_new(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	return exists(to) ? (errno = EEXIST, -1) : rename(from, to);
}

/* Would sl_nf_writer_absorb() take this file?  (A finished orphan holds it if so.) */
static bool readable_flowfile(const char *path)
{
	struct sl_nf_file_info info;
	const char *why;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	bool ok;

	if (fd < 0)
		return false;
	ok = sl_nf_read_info(fd, &info, &why) == 0 &&
	     (info.compression == SL_NF_COMP_NONE || info.compression == SL_NF_COMP_LZ4);
	close(fd);
	return ok;
}

/*
 * Finish the file open in w (temporary name tmp, of slot/interval) and
 * give it its slot's name, merging an existing file of that slot; w NULL:
 * tmp is finished already (an orphan that died before its rename), only
 * the name is to be given.  The name goes to named (PATH_MAX + 16) if not
 * NULL.  0, or -1 (logged, counted; the file is removed and its own flows
 * are in w's lost, or it is left under its temporary name).
 */
static int finish(struct ff_state *st, struct sl_nf_writer *w, const char *tmp, int64_t slot,
		  int64_t interval, char *named)
{
	char final[PATH_MAX], alt[PATH_MAX + 16];
	const char *target = final, *why = "not a readable flow file";
	uint64_t first = (uint64_t)slot * 1000, last = (uint64_t)(slot + interval) * 1000, lost;
	bool merged = false;

	if (final_path(st, slot, interval, final, sizeof(final)) < 0) {
		if (w) {
			sl_nf_writer_abandon(w);
			unlink(tmp);
		}
		return -1;
	}
	if (exists(final)) {
		if (w ? sl_nf_writer_absorb(w, final, &why) == 0 : readable_flowfile(final)) {
			merged = true;
		} else {
			/* Never overwrite what we cannot merge: take the next free suffix. */
			st->host->log(st->inst, SL_LOG_WARNING, "%s exists and cannot be appended to (%s)",
				      final, why);
			for (unsigned i = 1;; i++) {
				snprintf(alt, sizeof(alt), "%s.%u", final, i);
				if (!exists(alt))
					break;
			}
			target = alt;
		}
	}
	lost = w ? sl_nf_writer_lost(w) : 0;
	if (w && sl_nf_writer_close(w, first, last) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: finishing the file failed: %s; its flows are lost",
			      tmp, strerror(errno));
		st->host->error_add(st->inst, 1);
		unlink(tmp);
		return -1;
	}
	if (w && sl_nf_writer_lost(w) > lost) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: %s: %llu flows of its last blocks dropped to finish it",
			      tmp, strerror(errno), (unsigned long long)(sl_nf_writer_lost(w) - lost));
		st->host->error_add(st->inst, 1);
	}
	/* Merged: the file replaces the one it holds.  rename() replaces a link, never writes through it. */
	if ((merged ? rename(tmp, target) : rename_new(tmp, target)) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "rename %s to %s: %s", tmp, target, strerror(errno));
		st->host->error_add(st->inst, 1);
		return -1;
	}
	st->host->counter_add(st->inst, st->c_files, 1);
	if (w)
		st->host->log(st->inst, SL_LOG_DEBUG, "%s: %llu flows", target,
			      (unsigned long long)sl_nf_writer_stat(w)->numflows);
	if (named)
		snprintf(named, PATH_MAX + 16, "%s", target);
	return 0;
}

/* Finish the open file and give it its slot's name. */
static void close_slot(struct ff_state *st)
{
	if (!sl_nf_writer_is_open(st->w))
		return;
	finish(st, st->w, st->tmp_path, st->slot, st->interval_s, NULL);
	report_lost(st);
	/* Renamed (or removed): the lock can go. */
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	st->lock_fd = -1;
}

/* Rotate if the slot is over (or the clock went back before it). */
static void check_slot(struct ff_state *st, int64_t ms)
{
	int64_t sec = ms / 1000;

	if (sl_nf_writer_is_open(st->w)) {
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
	if (!sl_nf_writer_is_open(st->w) && delay > 1000)
		delay = 1000;
	if (st->cfg->flush_interval && delay > (int64_t)st->cfg->flush_interval)
		delay = (int64_t)st->cfg->flush_interval;
	st->host->timer_arm(st->timer, delay > 0 ? (uint64_t)delay : 1, 0);
}

static void on_timer(void *state)
{
	struct ff_state *st = state;
	int64_t ms = sl_clock_ms(CLOCK_REALTIME);

	check_slot(st, ms);
	/* Bound what a crash loses: the block in memory goes to the file. */
	if (st->cfg->flush_interval && sl_nf_writer_is_open(st->w)) {
		if (sl_nf_writer_flush(st->w) < 0)
			write_error(st);
		report_lost(st);
	}
	arm_timer(st, ms);
}

/* ---- records ---- */

static uint64_t time_ms(const struct sl_record *r, sl_field f)
{
	/* nfdump's milliseconds are unsigned: clamped as time_clamp.h says */
	return sl_time_ms_clamped(r->v[f].time);
}

static uint64_t u64_or(const struct sl_record *r, sl_field f, uint64_t dflt)
{
	return sl_has(r, f) ? r->v[f].u64 : dflt;
}

static uint8_t end_reason(uint64_t v)
{
	switch (v) {
	case SL_FLOW_END_IDLE:
		return SL_NF_END_IDLE;
	case SL_FLOW_END_ACTIVE:
		return SL_NF_END_ACTIVE;
	case SL_FLOW_END_DESTROY:
		return SL_NF_END_END;
	case SL_FLOW_END_EOF:
		return SL_NF_END_FORCED;
	case SL_FLOW_END_EVICTED:
		return SL_NF_END_RESOURCES;
	}
	return 0;
}

/* Record -> nf_flow (see docs/PLUGINS.md for the mapping). */
static void to_flow(const struct sl_record *r, struct sl_nf_flow *f, uint64_t received)
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
	int64_t ms = sl_clock_ms(CLOCK_REALTIME);
	uint64_t incomplete = 0;
	struct sl_nf_flow f;

	check_slot(st, ms);
	if (!sl_nf_writer_is_open(st->w)) {
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
		if (sl_nf_writer_add(st->w, &f) < 0)
			write_error(st);
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
	ret = sl_nf_writer_flush(st->w);
	if (ret < 0)
		write_error(st);
	report_lost(st);
	return ret;
}

/* ---- orphans of writers that died (kill -9, crash, power loss) ---- */

/*
 * Ours: nfcapd.current.SLOT.INTERVAL.RANDOM (16 hex digits).  Anything
 * else (nfcapd's own nfcapd.current.PID, older sluice versions) is left
 * alone: its writer holds no lock, so it could be alive.
 */
static bool orphan_name(const char *name, int64_t *slot, int64_t *interval)
{
	const char *p = name + strlen(TMP_PREFIX);
	char rnd[17] = "";
	int n = -1;

	if (strncmp(name, TMP_PREFIX, strlen(TMP_PREFIX)) != 0 || *p < '0' || *p > '9')
		return false;
	if (sscanf(p, "%" SCNd64 ".%" SCNd64 ".%16[0-9a-f]%n", slot, interval, rnd, &n) != 3 || n < 0 ||
	    p[n] != '\0' || strlen(rnd) != 16)
		return false;
	return *interval >= 1 && *interval <= 86400;
}

/* Take the orphan's lock, check it is still the file of that name: its fd, or -1. */
static int lock_orphan(struct ff_state *st, const char *path)
{
	char why[PATH_MAX + 160];
	struct stat sb, at;
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -1;	/* gone, or a link: not an orphan of ours */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);	/* its writer is alive */
		return -1;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_nlink == 0 || lstat(path, &at) < 0 ||
	    at.st_ino != sb.st_ino || at.st_dev != sb.st_dev) {
		close(fd);	/* recovered by another process meanwhile */
		return -1;
	}
	/* Where everyone can write, a planted "orphan" must not reach our files. */
	if (sl_dir_kind(st->cfg->dir, why, sizeof(why)) == SL_DIR_PUBLIC && !sl_owner_ok(&sb)) {
		st->host->log(st->inst, SL_LOG_WARNING, "%s belongs to uid %u, not to us (%s): left alone",
			      path, (unsigned)sb.st_uid, why);
		close(fd);
		return -1;
	}
	return fd;
}

/* Finish one orphan into its slot's file, or remove it if nothing is left to save. */
static void recover_one(struct ff_state *st, const char *name, int64_t slot, int64_t interval)
{
	char path[PATH_MAX], named[PATH_MAX + 16];
	struct sl_nf_orphan o;
	struct sl_nf_writer *w;
	const char *why = "";
	int fd, lock, r;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", st->cfg->dir, name) >= sizeof(path))
		return;
	fd = lock_orphan(st, path);
	if (fd < 0)
		return;
	/* The lock must outlive the writer's fd: close() comes before the rename. */
	lock = dup(fd);
	w = sl_nf_writer_new(SL_NF_COMP_NONE, st->cfg->ident);
	if (lock < 0 || !w) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: cannot recover: %s", path, strerror(errno));
		goto out;
	}
	r = sl_nf_writer_adopt(w, fd, &o, &why);
	if (r == 0) {
		st->host->log(st->inst, SL_LOG_NOTICE, "%s: orphan of a writer that died, removed: %s", path, why);
		unlink(path);
	} else if (r < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: cannot recover (%s): left as it is", path, why);
		st->host->error_add(st->inst, 1);
	} else if (o.complete) {
		if (finish(st, NULL, path, slot, interval, named) == 0)
			st->host->log(st->inst, SL_LOG_NOTICE, "%s: finished orphan of a writer that died, now %s",
				      path, named);
	} else {
		char cut[96] = "";

		fd = -1;	/* the writer's now */
		if (o.cut_bytes)
			snprintf(cut, sizeof(cut), " (cut %llu bytes of an unfinished block or appendix)",
				 (unsigned long long)o.cut_bytes);
		if (finish(st, w, path, slot, interval, named) == 0) {
			st->host->counter_add(st->inst, st->c_recovered, o.flows);
			st->host->log(st->inst, SL_LOG_NOTICE,
				      "%s: recovered %llu flows in %u blocks of a writer that died into %s%s", path,
				      (unsigned long long)o.flows, o.blocks, named, cut);
		}
	}
out:
	if (fd >= 0)
		close(fd);
	if (lock >= 0)
		close(lock);
	sl_nf_writer_free(w);
}

/* Every orphan in the directory; at start, before this instance writes. */
static void recover_orphans(struct ff_state *st)
{
	DIR *d = opendir(st->cfg->dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		int64_t slot, interval;

		if (orphan_name(de->d_name, &slot, &interval))
			recover_one(st, de->d_name, slot, interval);
	}
	closedir(d);
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
	if (strlen(cfg->ident) > SL_NF_IDENT_MAX) {
		host->config_error(inst, "ident", "at most %d characters (nfdump's limit)", SL_NF_IDENT_MAX);
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
	st = sl_state_new(struct ff_state, host, inst, config);
	if (!st)
		return -1;
	st->interval_s = (int64_t)(cfg->rotate_interval / 1000);
	st->last_err_log = INT64_MIN / 2;
	st->c_files = host->counter_new(inst, "files");
	st->c_incomplete = host->counter_new(inst, "incomplete");
	st->c_lost = host->counter_new(inst, "lost");
	st->c_recovered = host->counter_new(inst, "recovered");
	st->lock_fd = -1;
	*state = st;
	return 0;
}

static int ff_start(void *state)
{
	struct ff_state *st = state;
	struct stat sb;
	int64_t ms;

	tzset();	/* names are local time: read TZ once, not per rotation */
	errno = 0;
	if (stat(st->cfg->dir, &sb) < 0 || !S_ISDIR(sb.st_mode) || access(st->cfg->dir, W_OK | X_OK) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: not a writable directory (%s)", st->cfg->dir,
			      errno ? strerror(errno) : "not a directory");
		return -1;
	}
	if (check_dir(st) < 0)
		return -1;
	st->w = sl_nf_writer_new(st->cfg->compression == COMP_LZ4 ? SL_NF_COMP_LZ4 : SL_NF_COMP_NONE, st->cfg->ident);
	if (!st->w) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot set up the writer: %s", strerror(errno));
		return -1;
	}
	recover_orphans(st);
	ms = sl_clock_ms(CLOCK_REALTIME);
	if (open_slot(st, ms / 1000) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot create a file in %s: %s", st->cfg->dir,
			      strerror(errno));
		sl_nf_writer_free(st->w);
		st->w = NULL;
		return -1;
	}
	st->timer = st->host->timer_new(st->inst, on_timer, st);
	if (!st->timer) {
		sl_nf_writer_abandon(st->w);
		unlink(st->tmp_path);
		close(st->lock_fd);
		st->lock_fd = -1;
		sl_nf_writer_free(st->w);
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

	sl_nf_writer_free(st->w);
	if (st->lock_fd >= 0)
		close(st->lock_fd);
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
	.reads = ff_reads,
	.configure = ff_configure,
	.start = ff_start,
	.process = ff_process,
	.flush = ff_flush,
	.stop = ff_stop,
	.destroy = ff_destroy,
};

SLUICE_PLUGIN(flowfile_plugin)
