/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The disk spool of network outputs; the format and the rules are in spool.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "crc32c.h"
#include "safefile.h"
#include "spool.h"

#define WBUF_SIZE (256u << 10)		/* appends are batched into one write */
#define SEG_MIN (16u << 10)
#define SEG_MAX (4u << 20)
#define RWIN (1u << 20)			/* a segment is read in pieces this long */
#define LOCK_RETRY_MS 20
#define FIRST_SEQ ((uint64_t)1 << 32)	/* leaves room for front segments */
/* Numbers past this (a planted seg-ffffffffffffffff.spl) would wrap. */
#define SEQ_MAX (UINT64_MAX - FIRST_SEQ)

struct seg {
	uint64_t seq;
	uint64_t size;			/* bytes of the file */
};

struct sl_spool {
	char dir[PATH_MAX - 32];
	uint64_t max_size, seg_size;
	sl_spool_log_fn log;
	void *ctx;
	struct sl_spool_stats st;

	int lockfd;
	bool ready;			/* locked and scanned */
	uint64_t lock_tried_ms;

	struct seg *segs;		/* sealed segments, oldest first */
	size_t nsegs, capsegs;
	uint64_t next_seq;

	int wfd;			/* the segment being appended to, or -1 */
	uint64_t wseq, wsize;		/* its number, bytes in the file */
	bool front;			/* it goes before segs[0] */
	uint8_t *wbuf;
	size_t wlen;
	uint64_t wrecs;			/* records in wbuf */
	bool full_logged;
	uint64_t create_failed;		/* segments not created since the last one was */

	/* offsets below are in the file segs[0]; rbuf holds a piece of it */
	int rfd;			/* segs[0] when loaded, or -1 */
	uint8_t *rbuf;			/* RWIN bytes */
	uint64_t rbase, rlen;		/* the piece in rbuf: offset, length */
	uint64_t roff;			/* first unacknowledged record */
	uint64_t rvalid;		/* records from rbase up to here passed the CRC */
};

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void logf_(struct sl_spool *sp, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void logf_(struct sl_spool *sp, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!sp->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sp->log(sp->ctx, level, msg);
}

static void seg_path(const struct sl_spool *sp, uint64_t seq, char *out, size_t len)
{
	snprintf(out, len, "%s/seg-%016llx.spl", sp->dir, (unsigned long long)seq);
}

static int segs_insert(struct sl_spool *sp, size_t at, uint64_t seq, uint64_t size)
{
	if (sp->nsegs == sp->capsegs) {
		size_t cap = sp->capsegs ? sp->capsegs * 2 : 16;
		struct seg *n = realloc(sp->segs, cap * sizeof(*n));

		if (!n)
			return -1;
		sp->segs = n;
		sp->capsegs = cap;
	}
	memmove(sp->segs + at + 1, sp->segs + at, (sp->nsegs - at) * sizeof(*sp->segs));
	sp->segs[at].seq = seq;
	sp->segs[at].size = size;
	sp->nsegs++;
	return 0;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Move a segment that is not one out of the way (it is not deleted: it may
 * be worth a look) and count it.  seg-<n>.bad does not match a segment's
 * name, so it is never read again.
 */
static void set_aside(struct sl_spool *sp, uint64_t seq, const char *why)
{
	char from[PATH_MAX], to[PATH_MAX];

	seg_path(sp, seq, from, sizeof(from));
	snprintf(to, sizeof(to), "%s/seg-%016llx.bad", sp->dir, (unsigned long long)seq);
	sp->st.corrupt++;
	if (rename(from, to) < 0)
		logf_(sp, SL_LOG_ERR, "spool %s: seg-%016llx.spl %s; cannot set it aside: %s "
		      "(counted in spool_corrupt)", sp->dir, (unsigned long long)seq, why,
		      strerror(errno));
	else
		logf_(sp, SL_LOG_ERR, "spool %s: seg-%016llx.spl %s: set aside as seg-%016llx.bad "
		      "(counted in spool_corrupt)", sp->dir, (unsigned long long)seq, why,
		      (unsigned long long)seq);
}

enum { SEG_OK, SEG_FOREIGN, SEG_BAD };

/*
 * Is the open file fd a segment we may read?  Its kind, its owner and its
 * header are checked before anything else is read: a junk or sparse file
 * is found without reading it.  On SEG_FOREIGN/SEG_BAD why says why.
 */
static int seg_check(int fd, struct stat *sb, char *why, size_t len)
{
	uint8_t hdr[SL_SPOOL_HDR];
	ssize_t n;

	if (fstat(fd, sb) < 0) {
		snprintf(why, len, "cannot be looked at: %s", strerror(errno));
		return SEG_BAD;
	}
	if (!sl_owner_ok(sb)) {
		snprintf(why, len, "belongs to uid %u, not to the daemon's user or root: ignored",
			 (unsigned)sb->st_uid);
		return SEG_FOREIGN;
	}
	if (!S_ISREG(sb->st_mode)) {
		snprintf(why, len, "is not a regular file");
		return SEG_BAD;
	}
	do
		n = pread(fd, hdr, sizeof(hdr), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(hdr) || memcmp(hdr, SL_SPOOL_MAGIC, 8)) {
		snprintf(why, len, "is not a spool segment (no %s header)", SL_SPOOL_MAGIC);
		return SEG_BAD;
	}
	return SEG_OK;
}

/* One directory entry: a segment to send, or set aside, or not ours. */
static int scan_one(struct sl_spool *sp, int dfd, const char *name)
{
	unsigned long long seq;
	char canon[32], why[160];
	struct stat sb;
	int fd, kind;

	/* only the names seg_path() makes: "seg-0X1.spl" or upper case is not one */
	if (strlen(name) != 24 || sscanf(name, "seg-%16llx.spl", &seq) != 1)
		return 0;
	snprintf(canon, sizeof(canon), "seg-%016llx.spl", seq);
	if (strcmp(canon, name))
		return 0;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP) {
		set_aside(sp, seq, "is a symbolic link");
		return 0;
	}
	if (fd < 0) {
		logf_(sp, SL_LOG_WARNING, "spool %s: cannot open %s: %s: ignored", sp->dir, name,
		      strerror(errno));
		return 0;
	}
	kind = seg_check(fd, &sb, why, sizeof(why));
	close(fd);
	if (kind == SEG_FOREIGN) {
		logf_(sp, SL_LOG_WARNING, "spool %s: %s %s", sp->dir, name, why);
		return 0;
	}
	if (kind == SEG_OK && seq > SEQ_MAX) {
		kind = SEG_BAD;
		snprintf(why, sizeof(why), "is numbered past %016llx (the numbers would wrap)",
			 (unsigned long long)SEQ_MAX);
	}
	if (kind == SEG_BAD) {
		set_aside(sp, seq, why);
		return 0;
	}
	if (segs_insert(sp, sp->nsegs, seq, (uint64_t)sb.st_size) < 0)
		return -1;
	sp->st.bytes += (uint64_t)sb.st_size;
	if (seq >= sp->next_seq)
		sp->next_seq = seq + 1;
	return 0;
}

/* The segments a previous run left, oldest first. */
static int scan(struct sl_spool *sp)
{
	DIR *d = opendir(sp->dir);
	struct dirent *de;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (scan_one(sp, dirfd(d), de->d_name) < 0) {
			closedir(d);
			return -1;
		}
	closedir(d);
	if (sp->nsegs)
		qsort(sp->segs, sp->nsegs, sizeof(*sp->segs), seg_cmp);
	if (sp->nsegs)
		logf_(sp, SL_LOG_NOTICE, "spool %s: %zu segments (%llu bytes) from an earlier run or instance to send",
		      sp->dir, sp->nsegs, (unsigned long long)sp->st.bytes);
	return 0;
}

/* Take the lock (and then read the directory); false while another has it. */
static bool ready(struct sl_spool *sp)
{
	uint64_t now;

	if (sp->ready)
		return true;
	now = sl_mono_ms();
	if (sp->lock_tried_ms && now - sp->lock_tried_ms < LOCK_RETRY_MS)
		return false;
	sp->lock_tried_ms = now;
	if (flock(sp->lockfd, LOCK_EX | LOCK_NB) < 0)
		return false;
	if (scan(sp) < 0) {
		logf_(sp, SL_LOG_ERR, "spool %s: cannot read the directory: %s", sp->dir, strerror(errno));
		flock(sp->lockfd, LOCK_UN);
		return false;
	}
	sp->ready = true;
	return true;
}

struct sl_spool *sl_spool_open(const char *dir, uint64_t max_size, sl_spool_log_fn log, void *ctx,
			       char *err, size_t errlen)
{
	struct sl_spool *sp;
	char why[512], path[PATH_MAX];
	struct stat sb;
	int kind, dfd;

	if (strlen(dir) >= sizeof(sp->dir)) {
		snprintf(err, errlen, "directory name too long");
		return NULL;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return NULL;
	}
	kind = sl_dir_kind(dir, why, sizeof(why));
	if (kind < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return NULL;
	}
	if (kind == SL_DIR_UNSAFE) {
		snprintf(err, errlen, "%s", why);
		return NULL;
	}
	/* whoever owns the directory can put segments in it that we would send */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &sb) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return NULL;
	}
	close(dfd);
	if (!sl_owner_ok(&sb)) {
		snprintf(err, errlen, "%s belongs to uid %u, not to the daemon's user (uid %u) or root: "
			 "refused", dir, (unsigned)sb.st_uid, (unsigned)geteuid());
		return NULL;
	}
	sp = calloc(1, sizeof(*sp));
	if (!sp || !(sp->wbuf = malloc(WBUF_SIZE)) || !(sp->rbuf = malloc(RWIN))) {
		if (sp)
			free(sp->wbuf);
		free(sp);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(sp->dir, sizeof(sp->dir), "%s", dir);
	sp->max_size = max_size;
	sp->seg_size = max_size / 4 < SEG_MIN ? SEG_MIN : max_size / 4 > SEG_MAX ? SEG_MAX
										 : max_size / 4;
	sp->log = log;
	sp->ctx = ctx;
	sp->next_seq = FIRST_SEQ;
	sp->wfd = sp->rfd = -1;
	snprintf(path, sizeof(path), "%s/lock", dir);
	sp->lockfd = sl_open_out(path, O_RDWR | O_CREAT, 0600);
	if (sp->lockfd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		free(sp->wbuf);
		free(sp->rbuf);
		free(sp);
		return NULL;
	}
	if (!ready(sp))
		logf_(sp, SL_LOG_NOTICE, "spool %s is in use (an instance being replaced?); waiting for it",
		      dir);
	return sp;
}

/* Write the buffered records; on a failed or short write cut the file back. */
static void write_out(struct sl_spool *sp)
{
	ssize_t n;

	if (!sp->wlen)
		return;
	do
		n = write(sp->wfd, sp->wbuf, sp->wlen);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sp->wlen) {
		sp->wsize += sp->wlen;
	} else {
		int e = n < 0 ? errno : ENOSPC;

		if (ftruncate(sp->wfd, (off_t)sp->wsize) == 0)
			lseek(sp->wfd, (off_t)sp->wsize, SEEK_SET);
		sp->st.dropped += sp->wrecs;
		logf_(sp, SL_LOG_ERR, "spool %s: cannot write segment %016llx: %s; %llu records dropped",
		      sp->dir, (unsigned long long)sp->wseq, strerror(e), (unsigned long long)sp->wrecs);
		sp->st.bytes -= sp->wlen;
	}
	sp->wlen = 0;
	sp->wrecs = 0;
}

/* Close the segment being written and queue it for reading. */
static void seal(struct sl_spool *sp)
{
	if (sp->wfd < 0)
		return;
	write_out(sp);
	close(sp->wfd);
	sp->wfd = -1;
	if (sp->front) {
		if (sp->rfd >= 0) {	/* it goes before the loaded one */
			close(sp->rfd);
			sp->rfd = -1;
		}
		segs_insert(sp, 0, sp->wseq, sp->wsize);
	} else {
		segs_insert(sp, sp->nsegs, sp->wseq, sp->wsize);
	}
	sp->front = false;
}

static int open_writer(struct sl_spool *sp, uint64_t seq)
{
	char path[PATH_MAX];

	seg_path(sp, seq, path, sizeof(path));
	sp->wfd = sl_open_out(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	/* Tried again for every record: said once, and once when it works again. */
	if (sp->wfd < 0) {
		if (!sp->create_failed++)
			logf_(sp, SL_LOG_ERR, "spool: cannot create %s: %s (said once until a segment "
			      "can be created; the records are counted in spool_dropped)", path,
			      strerror(errno));
		return -1;
	}
	if (sp->create_failed)
		logf_(sp, SL_LOG_NOTICE, "spool %s: segments can be created again (%llu attempts failed)",
		      sp->dir, (unsigned long long)sp->create_failed);
	sp->create_failed = 0;
	sp->wseq = seq;
	sp->wsize = 0;
	memcpy(sp->wbuf, SL_SPOOL_MAGIC, 8);
	put64(sp->wbuf + 8, SL_SPOOL_HDR);
	sp->wlen = SL_SPOOL_HDR;
	sp->st.bytes += SL_SPOOL_HDR;
	return 0;
}

bool sl_spool_ready(struct sl_spool *sp)
{
	return ready(sp);
}

bool sl_spool_pending(const struct sl_spool *sp)
{
	return sp->ready && (sp->nsegs || sp->wfd >= 0);
}

static int refuse(struct sl_spool *sp, const char *why)
{
	sp->st.dropped++;
	if (!sp->full_logged)
		logf_(sp, SL_LOG_WARNING, "spool %s: %s: dropping records (counted in spool_dropped)",
		      sp->dir, why);
	sp->full_logged = true;
	return -1;
}

int sl_spool_append(struct sl_spool *sp, const void *rec, size_t len)
{
	size_t need = SL_SPOOL_REC_HDR + len;
	uint8_t *p;

	if (!ready(sp))
		return refuse(sp, "in use by another instance");
	if (len > SL_SPOOL_MAX_RECORD)
		return refuse(sp, "record too long");
	if (!sp->front && sp->wfd >= 0 && sp->wsize + sp->wlen + need > sp->seg_size)
		seal(sp);
	if (sp->st.bytes + need + (sp->wfd < 0 ? SL_SPOOL_HDR : 0) > sp->max_size)
		return refuse(sp, "full (max_size)");
	if (sp->wfd < 0 && sp->next_seq > SEQ_MAX)
		return refuse(sp, "segment numbers used up");
	if (sp->wfd < 0 && open_writer(sp, sp->next_seq++) < 0)
		return refuse(sp, "cannot create a segment");
	if (sp->wlen + need > WBUF_SIZE)
		write_out(sp);
	p = sp->wbuf + sp->wlen;
	put32(p, (uint32_t)len);
	memcpy(p + SL_SPOOL_REC_HDR, rec, len);
	put32(p + 4, sl_crc32c(sl_crc32c(0, p, 4), rec, len));
	sp->wlen += need;
	sp->wrecs++;
	sp->st.bytes += need;
	sp->st.spooled++;
	sp->full_logged = false;
	return 0;
}

void sl_spool_flush(struct sl_spool *sp)
{
	if (sp->wfd >= 0)
		write_out(sp);
}

static void drop_first_segment(struct sl_spool *sp)
{
	char path[PATH_MAX];

	seg_path(sp, sp->segs[0].seq, path, sizeof(path));
	if (sp->rfd >= 0)
		close(sp->rfd);
	sp->rfd = -1;
	if (unlink(path) < 0 && errno != ENOENT)
		logf_(sp, SL_LOG_ERR, "spool: cannot remove %s: %s", path, strerror(errno));
	sp->st.bytes -= sp->segs[0].size;
	sp->nsegs--;
	memmove(sp->segs, sp->segs + 1, sp->nsegs * sizeof(*sp->segs));
}

/* Forget segs[0] without removing it (it is not ours, or set aside). */
static void forget_first_segment(struct sl_spool *sp)
{
	if (sp->rfd >= 0)
		close(sp->rfd);
	sp->rfd = -1;
	sp->st.bytes -= sp->segs[0].size;
	sp->nsegs--;
	memmove(sp->segs, sp->segs + 1, sp->nsegs * sizeof(*sp->segs));
}

/* Read the piece of segs[0] that starts at off (the file's end may come first). */
static void fill(struct sl_spool *sp, uint64_t off)
{
	uint64_t size = sp->segs[0].size;
	size_t want = size - off < RWIN ? (size_t)(size - off) : RWIN, got = 0;

	while (got < want) {
		ssize_t n = pread(sp->rfd, sp->rbuf + got, want - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {	/* shorter than it was: the rest is damaged */
			if (n < 0)
				logf_(sp, SL_LOG_ERR, "spool %s: segment %016llx: cannot read at %llu: %s",
				      sp->dir, (unsigned long long)sp->segs[0].seq,
				      (unsigned long long)(off + got), strerror(errno));
			break;
		}
		got += (size_t)n;
	}
	sp->rbase = off;
	sp->rlen = got;
	sp->rvalid = off;
}

/*
 * Open segs[0] and read its first piece.  A segment that is not one is set
 * aside (or left alone when it is not ours) and -1 returned.
 */
static int load(struct sl_spool *sp)
{
	char path[PATH_MAX], why[160];
	struct stat sb;
	uint8_t hdr[8];
	uint64_t acked;
	int kind;

	seg_path(sp, sp->segs[0].seq, path, sizeof(path));
	sp->rfd = sl_open_out(path, O_RDWR, 0);
	if (sp->rfd < 0) {
		logf_(sp, SL_LOG_ERR, "spool: cannot use %s: %s", path, strerror(errno));
		forget_first_segment(sp);
		return -1;
	}
	kind = seg_check(sp->rfd, &sb, why, sizeof(why));
	if (kind != SEG_OK) {
		if (kind == SEG_BAD)
			set_aside(sp, sp->segs[0].seq, why);
		else
			logf_(sp, SL_LOG_ERR, "spool: %s %s", path, why);
		forget_first_segment(sp);
		return -1;
	}
	sp->st.bytes += (uint64_t)sb.st_size - sp->segs[0].size;	/* grown since the scan? */
	sp->segs[0].size = (uint64_t)sb.st_size;
	acked = pread(sp->rfd, hdr, 8, 8) == 8 ? get64(hdr) : 0;
	sp->roff = acked >= SL_SPOOL_HDR && acked <= sp->segs[0].size ? acked : SL_SPOOL_HDR;
	fill(sp, sp->roff);
	return 0;
}

/*
 * The length of the whole record with a good CRC at off, reading the piece
 * that starts at off when the record is not in rbuf and refill allows it;
 * -1: damaged (or cut short); -2: not in rbuf.
 */
static long record_at(struct sl_spool *sp, uint64_t off, bool refill)
{
	uint64_t size = sp->segs[0].size;
	const uint8_t *p;
	uint32_t len;

	if (off + SL_SPOOL_REC_HDR > size)
		return -1;
	if (off < sp->rbase || off + SL_SPOOL_REC_HDR > sp->rbase + sp->rlen) {
		if (!refill)
			return -2;
		fill(sp, off);
		if (SL_SPOOL_REC_HDR > sp->rlen)
			return -1;
	}
	p = sp->rbuf + (off - sp->rbase);
	len = get32(p);
	if (len > SL_SPOOL_MAX_RECORD || off + SL_SPOOL_REC_HDR + len > size)
		return -1;
	if (off + SL_SPOOL_REC_HDR + len > sp->rbase + sp->rlen) {
		if (!refill)
			return -2;
		fill(sp, off);	/* RWIN holds the longest record */
		if (SL_SPOOL_REC_HDR + len > sp->rlen)
			return -1;
		p = sp->rbuf;
	}
	if (off < sp->rvalid)
		return len;
	if (sl_crc32c(sl_crc32c(0, p, 4), p + SL_SPOOL_REC_HDR, len) != get32(p + 4))
		return -1;
	sp->rvalid = off + SL_SPOOL_REC_HDR + len;
	return len;
}

/*
 * The next record after the damaged one at off that has a sound length and
 * CRC, or the segment's end.  Holes (a sparse file) are skipped unread.
 */
static uint64_t resync(struct sl_spool *sp, uint64_t off)
{
	uint64_t size = sp->segs[0].size, p;

	for (p = off + 1; p + SL_SPOOL_REC_HDR <= size; p++) {
		if (p + SL_SPOOL_REC_HDR > sp->rbase + sp->rlen) {
			off_t d = lseek(sp->rfd, (off_t)p, SEEK_DATA);

			if (d < 0 && errno == ENXIO)
				break;	/* a hole up to the end */
			/* a header may start in the zeros just before the data */
			if (d > 0 && (uint64_t)d > p + SL_SPOOL_REC_HDR - 1)
				p = (uint64_t)d - (SL_SPOOL_REC_HDR - 1);
			fill(sp, p);
		}
		if (record_at(sp, p, true) >= 0)
			return p;
	}
	return size;
}

/* roff is at a damaged record: go on at the next sound one, count the loss. */
static void skip_damage(struct sl_spool *sp)
{
	uint64_t next = resync(sp, sp->roff);

	logf_(sp, SL_LOG_WARNING, "spool %s: segment %016llx: damaged record at offset %llu, %llu bytes "
	      "skipped %s (counted in spool_corrupt)", sp->dir, (unsigned long long)sp->segs[0].seq,
	      (unsigned long long)sp->roff, (unsigned long long)(next - sp->roff),
	      next < sp->segs[0].size ? "to the next sound record" : "to the end (a write torn by a crash?)");
	sp->st.torn_bytes += next - sp->roff;
	sp->st.corrupt++;
	sp->roff = next;
}

unsigned sl_spool_peekv(struct sl_spool *sp, struct iovec *iov, unsigned max)
{
	unsigned n = 0;
	uint64_t off;
	long len;

	if (!ready(sp) || !max)
		return 0;
	for (;;) {
		if (!sp->nsegs) {
			if (sp->wfd < 0 || sp->front)
				return 0;
			seal(sp);	/* read up to the newest record */
		}
		if (sp->rfd < 0 && load(sp) < 0)
			continue;
		if (sp->roff >= sp->segs[0].size) {
			drop_first_segment(sp);	/* nothing left in it */
			continue;
		}
		if (record_at(sp, sp->roff, true) >= 0)
			break;
		skip_damage(sp);
	}
	/* the records that follow in rbuf; damage is dealt with once it is first */
	off = sp->roff;
	while (n < max && off < sp->segs[0].size && (len = record_at(sp, off, false)) >= 0) {
		iov[n].iov_base = sp->rbuf + (off - sp->rbase) + SL_SPOOL_REC_HDR;
		iov[n].iov_len = (size_t)len;
		n++;
		off += SL_SPOOL_REC_HDR + (uint64_t)len;
	}
	return n;
}

void sl_spool_ack(struct sl_spool *sp, unsigned n)
{
	uint8_t hdr[8];

	if (sp->rfd < 0 || !n)
		return;
	while (n-- && sp->roff < sp->rvalid) {
		sp->roff += SL_SPOOL_REC_HDR + get32(sp->rbuf + (sp->roff - sp->rbase));
		sp->st.sent++;
	}
	if (sp->roff >= sp->segs[0].size) {
		drop_first_segment(sp);
		return;
	}
	put64(hdr, sp->roff);
	if (pwrite(sp->rfd, hdr, 8, 8) != 8)
		logf_(sp, SL_LOG_WARNING, "spool %s: cannot record progress: %s (records may be sent twice)",
		      sp->dir, strerror(errno));
}

bool sl_spool_tail_loaded(const struct sl_spool *sp)
{
	if (sp->wfd >= 0 || sp->nsegs > 1)
		return false;
	/* the last segment's last piece is in rbuf */
	return !sp->nsegs || sp->rfd < 0 || sp->rbase + sp->rlen >= sp->segs[0].size;
}

int sl_spool_front_begin(struct sl_spool *sp)
{
	uint64_t seq;

	if (!ready(sp))
		return -1;
	seal(sp);
	if (sp->nsegs && !sp->segs[0].seq)
		return -1;	/* no number before 0 */
	if (!sp->nsegs && sp->next_seq > SEQ_MAX)
		return -1;
	seq = sp->nsegs ? sp->segs[0].seq - 1 : sp->next_seq++;
	if (open_writer(sp, seq) < 0)
		return -1;
	sp->front = true;
	return 0;
}

void sl_spool_front_end(struct sl_spool *sp)
{
	if (sp->front)
		seal(sp);
}

const struct sl_spool_stats *sl_spool_stats(const struct sl_spool *sp)
{
	return &sp->st;
}

void sl_spool_close(struct sl_spool *sp)
{
	if (!sp)
		return;
	if (sp->wfd >= 0) {
		write_out(sp);
		close(sp->wfd);
	}
	if (sp->rfd >= 0)
		close(sp->rfd);
	close(sp->lockfd);	/* releases the flock */
	free(sp->segs);
	free(sp->wbuf);
	free(sp->rbuf);
	free(sp);
}
