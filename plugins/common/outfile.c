/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Buffered rotating output file: see outfile.h for the behaviour. */
#include "clock.h"
#include "outfile.h"
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_EVERY_MS 10000	/* rate limit of repeated error reports */
#define RETRY_MS 1000		/* retry a failing file at most this often */
#define MAX_CLASH 1000		/* name.1 ... name.999 */
#define BYTES_PER_SLOT 32	/* one record boundary slot per this much buffer */

struct sl_outfile {
	const struct sl_host *host;
	struct sl_instance *inst;
	struct sl_outfile_opts o;
	bool is_stdout, is_pattern;

	uint8_t *hdr;
	size_t hdr_len, hdr_cap;

	uint8_t *buf;		/* pending bytes are buf[head..tail) */
	size_t cap, head, tail;
	/*
	 * Record boundaries, read only when a write fails: ends[i] is the
	 * offset just past record i in buf, record 0 starts at 0.  head is
	 * on a boundary except while a record is torn on a descriptor that
	 * cannot be cut back (see cut_torn).
	 */
	uint32_t *ends;
	size_t nrec, max_rec;

	int fd;
	bool cur_is_reg;
	char cur_name[PATH_MAX];
	time_t cur_start;	/* wall clock, names the file when rotated */
	uint64_t cur_size;	/* bytes already in the current file */

	struct sl_timer *flush_timer, *rotate_timer;
	time_t rotate_due;	/* wall clock of the next interval boundary */
	bool rotate_pending;	/* an interval rotation is still to be done */

	int c_drop_rec, c_drop_bytes;
	int c_bytes, c_rotated;		/* bytes written, files closed by rotation */
	bool failing;
	uint64_t retry_at;	/* monotonic ms */
	uint64_t err_logged_at, errs_unlogged;
	uint64_t drop_logged_at, drops_unlogged, drop_bytes_unlogged;
};

static size_t pending(const struct sl_outfile *of)
{
	return of->tail - of->head;
}

/*
 * Count a failure (write, open, or an output the file rules refuse), mark
 * the file failing until the retry time, and say whether to log it: the
 * first one, then one per 10 s (the others are counted in errs_unlogged).
 */
static bool error_counted(struct sl_outfile *of, uint64_t now)
{
	of->host->error_add(of->inst, 1);
	of->failing = true;
	of->retry_at = now + RETRY_MS;
	if (of->err_logged_at && now - of->err_logged_at < LOG_EVERY_MS) {
		of->errs_unlogged++;
		return false;
	}
	return true;
}

/* A write/open error: count it, log the first and then one per 10 s. */
static void file_error(struct sl_outfile *of, const char *what, const char *name, int err)
{
	uint64_t now = sl_mono_ms();

	if (!error_counted(of, now))
		return;
	if (of->errs_unlogged)
		of->host->log(of->inst, SL_LOG_ERR, "%s %s: %s (and %llu more errors); %zu bytes kept for retry",
			      what, name, strerror(err), (unsigned long long)of->errs_unlogged, pending(of));
	else
		of->host->log(of->inst, SL_LOG_ERR, "%s %s: %s; %zu bytes kept for retry", what, name,
			      strerror(err), pending(of));
	of->err_logged_at = now;
	of->errs_unlogged = 0;
}

/*
 * An output the file rules refuse (docs/SECURITY.md): counted and logged
 * like a write error, so a reopen into an unsafe directory is visible.
 */
static void refuse(struct sl_outfile *of, const char *name, const char *why)
{
	uint64_t now = sl_mono_ms();

	if (!error_counted(of, now))
		return;
	of->host->log(of->inst, SL_LOG_ERR, "refusing to write %s: %s", name, why);
	of->err_logged_at = now;
	of->errs_unlogged = 0;
}

/* Open name under the file rules; -1 when refused or failed (reported). */
static int open_checked(struct sl_outfile *of, const char *name, int flags)
{
	char why[PATH_MAX + 160];
	int kind = sl_dir_kind_of(name, why, sizeof(why)), fd;
	struct stat st;

	if (kind == SL_DIR_UNSAFE) {
		refuse(of, name, why);
		errno = EPERM;
		return -1;
	}
	fd = sl_open_out(name, flags, 0640);
	if (fd < 0) {
		if (errno == ELOOP)
			refuse(of, name, "it is a symbolic link (outputs never follow links)");
		else if (errno != EEXIST)
			file_error(of, "cannot open", name, errno);
		return -1;
	}
	if (kind == SL_DIR_PUBLIC && fstat(fd, &st) == 0 && !sl_owner_ok(&st)) {
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
			 " and the file belongs to uid %u, not to us", (unsigned)st.st_uid);
		close(fd);
		refuse(of, name, why);
		errno = EPERM;
		return -1;
	}
	return fd;
}

static void log_drops(struct sl_outfile *of, bool force)
{
	uint64_t now = sl_mono_ms();

	if (!of->drops_unlogged)
		return;
	if (!force && of->drop_logged_at && now - of->drop_logged_at < LOG_EVERY_MS)
		return;
	of->host->log(of->inst, SL_LOG_WARNING, "buffer full (%s): dropped %llu records (%llu bytes)",
		      of->cur_name, (unsigned long long)of->drops_unlogged,
		      (unsigned long long)of->drop_bytes_unlogged);
	of->drop_logged_at = now;
	of->drops_unlogged = 0;
	of->drop_bytes_unlogged = 0;
}

/* Records lost after they were accepted: the plugin's and the core's counters. */
static void count_lost(struct sl_outfile *of, uint64_t recs, uint64_t bytes)
{
	of->host->counter_add(of->inst, of->c_drop_rec, recs);
	of->host->dropped_add(of->inst, recs);
	of->host->counter_add(of->inst, of->c_drop_bytes, bytes);
}

static void count_drop(struct sl_outfile *of, size_t n)
{
	count_lost(of, 1, n);
	of->drops_unlogged++;
	of->drop_bytes_unlogged += n;
	log_drops(of, false);
}

/* How many buffered records end at or before offset off (ends[] ascends). */
static size_t recs_before(const struct sl_outfile *of, size_t off)
{
	size_t lo = 0, hi = of->nrec;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (of->ends[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Start of the record head is in: head itself unless that record is torn. */
static size_t rec_start(const struct sl_outfile *of)
{
	size_t i = recs_before(of, of->head);

	return i ? of->ends[i - 1] : 0;
}

/*
 * A write failed after part of a record went out.  Cut the file back to
 * the end of the last whole record, so no reader ever sees the torn one,
 * and keep that record whole for the retry (in this file or, after a
 * reopen, the next).  A pipe or device cannot be cut, nor a file whose
 * ftruncate fails: there the rest of the record may only follow on the
 * same descriptor, so head stays inside it (drop_torn ends that).
 */
static void cut_torn(struct sl_outfile *of)
{
	size_t b = rec_start(of), torn = of->head - b;
	struct stat st;

	if (!torn || !of->cur_is_reg)
		return;
	/* O_APPEND: the torn bytes are the file's last, whatever its size. */
	if (fstat(of->fd, &st) == 0) {
		if ((uint64_t)st.st_size < torn) {
			errno = ERANGE;	/* someone else cut the file meanwhile */
		} else if (ftruncate(of->fd, st.st_size - (off_t)torn) == 0) {
			of->head = b;
			of->cur_size = of->cur_size > torn ? of->cur_size - torn : 0;
			return;
		}
	}
	file_error(of, "cannot cut a partial record from", of->cur_name, errno);
}

/* The descriptor closes inside a record: its rest can go nowhere. */
static void drop_torn(struct sl_outfile *of)
{
	size_t i = recs_before(of, of->head), b = i ? of->ends[i - 1] : 0;

	if (of->head == b)
		return;
	of->host->log(of->inst, SL_LOG_ERR, "%s closed with a record of %zu bytes half written: dropped",
		      of->cur_name, (size_t)of->ends[i] - b);
	count_lost(of, 1, of->ends[i] - b);
	of->head = of->ends[i];
}

/* Move the records not yet written whole to the front of the buffer. */
static void compact(struct sl_outfile *of)
{
	size_t b = rec_start(of), i = recs_before(of, b), j;

	if (!b)
		return;
	memmove(of->buf, of->buf + b, of->tail - b);
	for (j = i; j < of->nrec; j++)
		of->ends[j - i] = of->ends[j] - (uint32_t)b;
	of->nrec -= i;
	of->head -= b;
	of->tail -= b;
}

/* Room for one more record of n bytes, without writing anything? */
static bool room(const struct sl_outfile *of, size_t n)
{
	return of->cap - of->tail >= n && of->nrec < of->max_rec;
}

/* "20261129T221500", local time. */
static void stamp(char *out, size_t len, time_t t)
{
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(out, len, "%Y%m%dT%H%M%S", &tm);
}

/* Rename without replacing anything: to, to.1, to.2 ... */
static int rename_aside(const char *from, const char *to)
{
	char name[PATH_MAX + 8];
	int i;

	for (i = 0; i < MAX_CLASH; i++) {
		if (i == 0)
			snprintf(name, sizeof(name), "%s", to);
		else
			snprintf(name, sizeof(name), "%s.%d", to, i);
		if (renameat2(AT_FDCWD, from, AT_FDCWD, name, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno == EEXIST)
			continue;
		if (errno != EINVAL && errno != ENOSYS)
			return -1;
		/* File system without RENAME_NOREPLACE: check, then rename. */
		if (access(name, F_OK) == 0)
			continue;
		return rename(from, name);
	}
	errno = EEXIST;
	return -1;
}

static time_t birth_time(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &stx) == 0 && (stx.stx_mask & STATX_BTIME))
		return (time_t)stx.stx_btime.tv_sec;
	return sl_clock_time(CLOCK_REALTIME).sec;
}

/* The bytes every file of ours starts with (outfile.h, header_key). */
static size_t hdr_key(const struct sl_outfile *of)
{
	return of->o.header_key && of->o.header_key < of->hdr_len ? of->o.header_key : of->hdr_len;
}

/* Does the non-empty file start with our header?  (fd is write-only.) */
static bool header_matches(struct sl_outfile *of, int fd, const char *name)
{
	uint8_t tmp[256];
	size_t n = hdr_key(of) < sizeof(tmp) ? hdr_key(of) : sizeof(tmp);
	char path[64];
	bool same;
	int rfd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rfd = open(of->is_stdout ? path : name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
	if (rfd < 0)
		return false;
	same = pread(rfd, tmp, n, 0) == (ssize_t)n && memcmp(tmp, of->hdr, n) == 0;
	close(rfd);
	return same;
}

/* "cap-0800.pcap" -> "cap-0800.1.pcap": the extension stays last. */
static void clash_name(char *out, size_t len, const char *base, int i)
{
	const char *slash = strrchr(base, '/');
	const char *dot = strrchr(slash ? slash + 1 : base, '.');

	if (!dot || dot == (slash ? slash + 1 : base))
		dot = base + strlen(base);
	snprintf(out, len, "%.*s.%d%s", (int)(dot - base), base, i, dot);
}

/*
 * The header, whole or not at all: a file that cannot take all of it is
 * cut back to its size before (`base`: empty, or what a file of sections
 * held) and retried later.  One that cannot be cut either is abandoned
 * with an error (the next open moves it aside, as a file with another
 * header, or cuts the torn section off).
 */
static int write_header(struct sl_outfile *of, int fd, const char *name, off_t base)
{
	size_t done = 0;

	while (done < of->hdr_len) {
		ssize_t w = write(fd, of->hdr + done, of->hdr_len - done);
		int err;

		if (w > 0) {
			done += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		err = w < 0 ? errno : EIO;
		if (done && of->cur_is_reg && ftruncate(fd, base) < 0)
			of->host->log(of->inst, SL_LOG_ERR,
				      "cannot remove a partial header from %s: %s; file abandoned", name,
				      strerror(errno));
		file_error(of, "cannot write header to", name, err);
		return -1;
	}
	of->host->counter_add(of->inst, of->c_bytes, of->hdr_len);
	return 0;
}

/*
 * Open (or for stdout, adopt) the current file: append to it, write the
 * header into a new one, move aside an existing file with another header.
 * `fresh`: a rotation in strftime mode, which must not reuse a name.
 * -1: cannot open; -2: opened but the header could not be written.
 */
/* Text: whole up to and with the last newline. */
static size_t lines_end(const uint8_t *p, size_t len)
{
	const uint8_t *nl = len ? memrchr(p, '\n', len) : NULL;

	return nl ? (size_t)(nl - p) + 1 : 0;
}

/*
 * A file we append to may end inside a record (a crash stopped a write()
 * part-way): cut it back to its last whole record, so the next record
 * does not glue onto the torn one and make the rest of the file
 * unreadable.  Only runs when an existing non-empty file is opened.
 */
static void cut_torn_tail(struct sl_outfile *of, int fd, const char *name, struct stat *st)
{
	size_t size = (size_t)st->st_size, key = hdr_key(of), body, whole;
	uint8_t *map;

	if (size <= key)
		return;
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		/* O_WRONLY descriptor: map through a read-only one */
		int rfd = open(name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);

		map = rfd < 0 ? MAP_FAILED : mmap(NULL, size, PROT_READ, MAP_PRIVATE, rfd, 0);
		if (rfd >= 0)
			close(rfd);
		if (map == MAP_FAILED) {
			file_error(of, "cannot read the end of", name, errno);
			return;
		}
	}
	body = size - key;
	whole = (of->o.whole_end ? of->o.whole_end : lines_end)(map + key, body);
	munmap(map, size);
	if (whole >= body)
		return;
	if (ftruncate(fd, (off_t)(key + whole)) < 0) {
		file_error(of, "cannot cut a partial record from", name, errno);
		return;
	}
	of->host->log(of->inst, SL_LOG_WARNING,
		      "%s ended inside a record (an earlier run stopped mid-write): cut %zu bytes",
		      name, body - whole);
	st->st_size = (off_t)(key + whole);
}

static int open_current(struct sl_outfile *of, bool fresh)
{
	int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY;
	char name[PATH_MAX];
	time_t now = sl_clock_time(CLOCK_REALTIME).sec;
	struct stat st;
	int fd = -1, i, tries;

	for (tries = 0; tries < 2; tries++) {
		if (of->is_stdout) {
			fd = STDOUT_FILENO;
			snprintf(name, sizeof(name), "%s", "<stdout>");
		} else if (of->is_pattern) {
			struct tm tm;
			char base[PATH_MAX];

			localtime_r(&now, &tm);
			if (strftime(base, sizeof(base), of->o.path, &tm) == 0) {
				file_error(of, "cannot name", of->o.path, ENAMETOOLONG);
				return -1;
			}
			snprintf(name, sizeof(name), "%s", base);
			for (i = 1; fresh && i < MAX_CLASH; i++) {
				fd = open_checked(of, name, flags | O_EXCL);
				if (fd >= 0 || errno != EEXIST)
					break;
				clash_name(name, sizeof(name), base, i);
			}
			if (fresh && fd < 0 && errno == EEXIST)
				file_error(of, "cannot open", name, EEXIST);
			if (!fresh)
				fd = open_checked(of, name, flags);
		} else {
			snprintf(name, sizeof(name), "%s", of->o.path);
			fd = open_checked(of, name, flags);
		}
		if (fd < 0)
			return -1;	/* reported */
		if (fstat(fd, &st) < 0) {
			st.st_mode = 0;
			st.st_size = 0;
		}
		if (!of->hdr_len || !S_ISREG(st.st_mode) || st.st_size == 0 || header_matches(of, fd, name)) {
			if (S_ISREG(st.st_mode) && st.st_size > 0 && !of->is_stdout)
				cut_torn_tail(of, fd, name, &st);
			break;
		}
		/* Someone else's file (or another link type/snaplen): keep it. */
		if (of->is_stdout)
			break;
		{
			char aside[PATH_MAX + 32], ts[32];

			stamp(ts, sizeof(ts), st.st_mtime);
			snprintf(aside, sizeof(aside), "%s.%s", name, ts);
			close(fd);
			fd = -1;
			if (rename_aside(name, aside) < 0) {
				file_error(of, "cannot move aside", name, errno);
				return -1;
			}
			of->host->log(of->inst, SL_LOG_NOTICE,
				      "%s has another header: moved to %s.%s(.N)", name, name, ts);
		}
	}
	if (fd < 0)
		return -1;

	of->cur_is_reg = S_ISREG(st.st_mode);
	of->cur_size = of->cur_is_reg ? (uint64_t)st.st_size : 0;
	of->cur_start = of->cur_size ? birth_time(fd) : now;
	if (of->hdr_len && (!of->cur_is_reg || st.st_size == 0 || of->o.header_key)) {
		/*
		 * Directly, before any pending record: a file is header first,
		 * and in a file of sections every opening starts a new one.
		 */
		if (write_header(of, fd, name, of->cur_is_reg ? st.st_size : 0) < 0) {
			if (fd != STDOUT_FILENO)
				close(fd);
			return -2;	/* the file is there: only space is missing */
		}
		of->cur_size += of->hdr_len;
	}
	of->fd = fd;
	memcpy(of->cur_name, name, sizeof(name));
	return 0;
}

/*
 * Write the pending bytes.  0 when all went out.  A short write is only
 * a step; a failing one leaves the file ending on a whole record.
 */
static int write_out(struct sl_outfile *of)
{
	bool wrote = false;

	if (of->fd < 0) {
		if (of->failing && sl_mono_ms() < of->retry_at)
			return -1;
		if (open_current(of, false) < 0)
			return -1;
	}
	while (pending(of)) {
		ssize_t n = write(of->fd, of->buf + of->head, pending(of));

		if (n <= 0) {
			int err = n < 0 ? errno : EIO;

			if (err == EINTR)
				continue;
			cut_torn(of);
			if (err == EAGAIN)	/* a non-blocking stdout pipe */
				return -1;
			file_error(of, "cannot write to", of->cur_name, err);
			return -1;
		}
		of->head += (size_t)n;
		of->cur_size += (uint64_t)n;
		of->host->counter_add(of->inst, of->c_bytes, (uint64_t)n);
		wrote = true;
	}
	of->head = of->tail = 0;
	of->nrec = 0;
	if (wrote && of->o.sync && of->cur_is_reg && fdatasync(of->fd) < 0) {
		file_error(of, "cannot sync", of->cur_name, errno);
		return -1;
	}
	if (of->failing) {
		of->failing = false;
		of->host->log(of->inst, SL_LOG_NOTICE, "writing to %s again", of->cur_name);
	}
	return 0;
}

static bool has_data(const struct sl_outfile *of)
{
	return of->cur_size + pending(of) > of->hdr_len;
}

/* Close the current file and start the next one. */
static int rotate(struct sl_outfile *of)
{
	struct stat st_fd, st_name;

	if (of->is_stdout || of->fd < 0 || !of->cur_is_reg)
		return 0;
	if (write_out(of) < 0)
		return -1;	/* retried later; never split data between files */
	if (!of->is_pattern) {
		/* Only if the name is still ours (logrotate may have moved it). */
		if (fstat(of->fd, &st_fd) == 0 && stat(of->cur_name, &st_name) == 0 &&
		    st_fd.st_dev == st_name.st_dev && st_fd.st_ino == st_name.st_ino) {
			char to[PATH_MAX + 32], ts[32];

			stamp(ts, sizeof(ts), of->cur_start);
			snprintf(to, sizeof(to), "%s.%s", of->cur_name, ts);
			if (rename_aside(of->cur_name, to) < 0) {
				file_error(of, "cannot rotate", of->cur_name, errno);
				return -1;
			}
		}
	}
	close(of->fd);
	of->fd = -1;
	of->rotate_pending = false;
	of->host->counter_add(of->inst, of->c_rotated, 1);
	return open_current(of, true);
}

void *sl_outfile_reserve(struct sl_outfile *of, size_t n)
{
	if (!of->buf || n > of->cap) {
		if (of->buf && !of->drops_unlogged)
			of->host->log(of->inst, SL_LOG_WARNING,
				      "record of %zu bytes is larger than the buffer (%zu)", n, of->cap);
		count_drop(of, n);
		return NULL;
	}
	if ((of->o.rotate_size && of->cur_size + pending(of) + n > of->o.rotate_size && has_data(of)) ||
	    of->rotate_pending) {
		if (!of->failing || sl_mono_ms() >= of->retry_at)
			rotate(of);
	}
	if (!room(of, n)) {
		/* Full: write it out, unless the file failed a moment ago. */
		if (!of->failing || sl_mono_ms() >= of->retry_at)
			write_out(of);
		if (!room(of, n))
			compact(of);
		if (!room(of, n)) {
			count_drop(of, n);
			return NULL;
		}
	}
	return of->buf + of->tail;
}

void sl_outfile_commit(struct sl_outfile *of, size_t n)
{
	of->tail += n;
	of->ends[of->nrec++] = (uint32_t)of->tail;
}

int sl_outfile_write(struct sl_outfile *of, const void *p, size_t n)
{
	void *dst = sl_outfile_reserve(of, n);

	if (!dst)
		return -1;
	memcpy(dst, p, n);
	sl_outfile_commit(of, n);
	return 0;
}

int sl_outfile_flush(struct sl_outfile *of)
{
	if (!of->buf)
		return 0;
	if (of->rotate_pending)
		rotate(of);
	if (!pending(of) && of->fd >= 0)
		return 0;
	return write_out(of);
}

int sl_outfile_reopen(struct sl_outfile *of)
{
	if (!of->buf || of->is_stdout)
		return 0;
	/*
	 * Best effort into the old file, which a failed write leaves ending
	 * on a whole record; the records left go whole to the new one.
	 */
	if (of->fd >= 0 && pending(of))
		write_out(of);
	if (of->fd >= 0) {
		drop_torn(of);
		close(of->fd);
		of->fd = -1;
	}
	of->failing = false;
	if (open_current(of, false) < 0)
		return -1;
	if (pending(of))
		write_out(of);
	return 0;
}

static void on_flush_timer(void *ctx)
{
	struct sl_outfile *of = ctx;

	if (of->failing && sl_mono_ms() < of->retry_at)
		;	/* a failing disk is retried once a second, not per tick */
	else if (of->rotate_pending || of->o.flush_interval || of->failing || of->fd < 0)
		sl_outfile_flush(of);
	log_drops(of, false);
}

/* Next multiple of the interval in local time, as wall-clock seconds. */
static time_t next_boundary(const struct sl_outfile *of, time_t now)
{
	uint64_t iv = (of->o.rotate_interval + 999) / 1000;
	struct tm tm;
	int64_t local;

	if (iv == 0)
		iv = 1;
	if (86400 % iv)
		return now + (time_t)iv;
	localtime_r(&now, &tm);
	local = (int64_t)now + tm.tm_gmtoff;
	return (time_t)((local / (int64_t)iv + 1) * (int64_t)iv - tm.tm_gmtoff);
}

/* The rotation timer for rotate_due, from the wall clock now_ms (at least 1 ms on). */
static void arm_rotate_at(struct sl_outfile *of, int64_t now_ms)
{
	int64_t ms = (int64_t)of->rotate_due * 1000 - now_ms;

	of->host->timer_arm(of->rotate_timer, ms > 0 ? (uint64_t)ms : 1, 0);
}

static void arm_rotate(struct sl_outfile *of)
{
	int64_t now = sl_clock_ms(CLOCK_REALTIME);

	of->rotate_due = next_boundary(of, (time_t)(now / 1000));
	arm_rotate_at(of, now);
}

static void on_rotate_timer(void *ctx)
{
	struct sl_outfile *of = ctx;
	int64_t now = sl_clock_ms(CLOCK_REALTIME);

	if (now / 1000 < of->rotate_due) {
		/* Monotonic and wall clock disagree: wait for the wall clock. */
		arm_rotate_at(of, now);
		return;
	}
	if (has_data(of)) {
		of->rotate_pending = true;
		if (rotate(of) < 0)
			of->host->log(of->inst, SL_LOG_WARNING, "rotation of %s postponed", of->cur_name);
	} else {
		of->cur_start = (time_t)(now / 1000);	/* nothing in it yet: it starts now */
	}
	arm_rotate(of);
}

int sl_outfile_check(const struct sl_host *host, struct sl_instance *inst,
		     const struct sl_outfile_opts *o)
{
	if (!o->path || !*o->path) {
		host->config_error(inst, "file", "must not be empty");
		return -1;
	}
	if (strlen(o->path) > PATH_MAX - 40) {
		host->config_error(inst, "file", "path too long");
		return -1;
	}
	if (strcmp(o->path, "-") == 0 && (o->rotate_size || o->rotate_interval)) {
		host->config_error(inst, o->rotate_size ? "rotate_size" : "rotate_interval",
				   "stdout (file: -) cannot be rotated");
		return -1;
	}
	if (strchr(o->path, '%')) {
		time_t now = sl_clock_time(CLOCK_REALTIME).sec;
		struct tm tm;
		char tmp[PATH_MAX];

		localtime_r(&now, &tm);
		if (strftime(tmp, sizeof(tmp), o->path, &tm) == 0) {
			host->config_error(inst, "file", "strftime pattern gives an empty or too long name");
			return -1;
		}
	}
	if (o->rotate_interval && o->rotate_interval < 1000) {
		host->config_error(inst, "rotate_interval", "must be at least 1s");
		return -1;
	}
	return 0;
}

struct sl_outfile *sl_outfile_new(const struct sl_host *host, struct sl_instance *inst,
				  const struct sl_outfile_opts *o)
{
	struct sl_outfile *of = calloc(1, sizeof(*of));

	if (!of)
		return NULL;
	of->host = host;
	of->inst = inst;
	of->o = *o;
	of->fd = -1;
	of->is_stdout = strcmp(o->path, "-") == 0;
	of->is_pattern = !of->is_stdout && strchr(o->path, '%');
	snprintf(of->cur_name, sizeof(of->cur_name), "%s", o->path);
	of->c_drop_rec = host->counter_new(inst, "dropped_records");
	of->c_drop_bytes = host->counter_new(inst, "dropped_bytes");
	of->c_bytes = host->counter_new(inst, "bytes_written");
	of->c_rotated = host->counter_new(inst, "files_rotated");
	return of;
}

int sl_outfile_set_header(struct sl_outfile *of, const void *hdr, size_t len)
{
	uint8_t *p = of->hdr;

	if (!p || len > of->hdr_cap) {
		p = malloc(len ? len : 1);
		if (!p)
			return -1;
		free(of->hdr);
		of->hdr_cap = len;
	}
	memmove(p, hdr, len);
	of->hdr = p;
	of->hdr_len = len;
	return 0;
}

int sl_outfile_start(struct sl_outfile *of)
{
	uint64_t period;

	if (of->o.buffer_size > UINT32_MAX) {
		of->host->log(of->inst, SL_LOG_ERR, "a buffer of more than 4 GiB is not supported");
		return -1;
	}
	of->cap = (size_t)of->o.buffer_size;
	of->max_rec = of->cap / BYTES_PER_SLOT > 16 ? of->cap / BYTES_PER_SLOT : 16;
	of->buf = malloc(of->cap);
	of->ends = malloc(of->max_rec * sizeof(*of->ends));
	if (!of->buf || !of->ends) {
		of->host->log(of->inst, SL_LOG_ERR, "cannot allocate a %zu byte buffer", of->cap);
		return -1;
	}
	of->head = of->tail = 0;
	of->nrec = 0;
	/* At start a file we cannot open is fatal (a wrong path or mode);
	 * one we cannot write the header to yet (disk full) is retried. */
	if (open_current(of, false) == -1)
		return -1;

	of->flush_timer = of->host->timer_new(of->inst, on_flush_timer, of);
	if (!of->flush_timer)
		return -1;
	period = of->o.flush_interval ? of->o.flush_interval : RETRY_MS;
	of->host->timer_arm(of->flush_timer, period, period);
	if (of->o.rotate_interval && !of->is_stdout) {
		of->rotate_timer = of->host->timer_new(of->inst, on_rotate_timer, of);
		if (!of->rotate_timer)
			return -1;
		arm_rotate(of);
	}
	return 0;
}

void sl_outfile_stop(struct sl_outfile *of)
{
	if (of->flush_timer)
		of->host->timer_disarm(of->flush_timer);
	if (of->rotate_timer)
		of->host->timer_disarm(of->rotate_timer);
	if (of->buf && pending(of)) {
		of->failing = false;	/* one last try */
		if (write_out(of) < 0 && pending(of)) {
			/* A torn record (on a pipe) is lost too: its rest never comes. */
			size_t b = rec_start(of), lost = of->nrec - recs_before(of, b);

			of->host->log(of->inst, SL_LOG_ERR, "lost %zu buffered records (%zu bytes) for %s",
				      lost, of->tail - b, of->cur_name);
			count_lost(of, lost, of->tail - b);
		}
	}
	log_drops(of, true);
	if (of->fd >= 0 && of->fd != STDOUT_FILENO)
		close(of->fd);
	of->fd = -1;
	free(of->buf);
	free(of->ends);
	of->buf = NULL;
	of->ends = NULL;
	of->head = of->tail = 0;
	of->nrec = 0;
}

void sl_outfile_free(struct sl_outfile *of)
{
	if (!of)
		return;
	if (of->fd >= 0 && of->fd != STDOUT_FILENO)
		close(of->fd);
	free(of->buf);
	free(of->ends);
	free(of->hdr);
	free(of);
}
