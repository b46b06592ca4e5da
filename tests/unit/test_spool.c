/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The disk spool (plugins/common/spool.c): order across segments and
 * restarts, acknowledged progress kept over a close, torn tails cut,
 * damaged records skipped to the next sound one and counted, junk and
 * sparse segments set aside without reading them, memory bounded by the
 * read piece not the segment, max_size drops counted exactly, front
 * segments, the lock between two instances, the directory and ownership
 * rules and segment numbers that would wrap.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "spool.h"

static char base[64];

static void quiet(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	(void)msg;
}

static void fresh(char *dir, size_t len, const char *name)
{
	char cmd[256];

	snprintf(dir, len, "%s/%s", base, name);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

static unsigned segments(const char *dir, char *last, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned n = 0;

	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "seg-", 4)) {
			n++;
			if (last && strcmp(de->d_name, last) > 0)
				snprintf(last, len, "%s", de->d_name);
		}
	if (d)
		closedir(d);
	return n;
}

static struct sl_spool *open_ok(const char *dir, uint64_t max)
{
	char err[256] = "";
	struct sl_spool *sp = sl_spool_open(dir, max, quiet, NULL, err, sizeof(err));

	CHECK(sp != NULL, "%s", err);
	if (!sp)
		exit(1);
	return sp;
}

static void append_num(struct sl_spool *sp, unsigned i, size_t pad)
{
	char rec[2048];
	int n = snprintf(rec, sizeof(rec), "record %08u ", i);

	memset(rec + n, 'x', pad);
	CHECK_EQ_I(sl_spool_append(sp, rec, (size_t)n + pad), 0);
}

/* The number of a record "record %08u ..." (not NUL-terminated). */
static int recnum(const struct iovec *iov, unsigned *num)
{
	char text[32];
	size_t n = iov->iov_len < sizeof(text) - 1 ? iov->iov_len : sizeof(text) - 1;

	memcpy(text, iov->iov_base, n);
	text[n] = 0;
	return sscanf(text, "record %08u", num) == 1 ? 0 : -1;
}

/* Peek and ack everything, checking the numbers run from first on. */
static unsigned drain_expect(struct sl_spool *sp, unsigned first, unsigned per_ack)
{
	struct iovec iov[16];
	unsigned n, i, next = first;

	while ((n = sl_spool_peekv(sp, iov, per_ack))) {
		for (i = 0; i < n; i++) {
			unsigned got = 0;

			CHECK(recnum(&iov[i], &got) == 0);
			CHECK_EQ_U(got, next);
			next++;
		}
		sl_spool_ack(sp, n);
	}
	return next - first;
}

/* Peek and ack everything; the record numbers into got (at most max). */
static unsigned drain_list(struct sl_spool *sp, unsigned *got, unsigned max)
{
	struct iovec iov[16];
	unsigned n, i, k = 0;

	while ((n = sl_spool_peekv(sp, iov, 16))) {
		for (i = 0; i < n && k < max; i++)
			CHECK(recnum(&iov[i], &got[k++]) == 0);
		sl_spool_ack(sp, n);
	}
	return k;
}

static bool exists(const char *dir, const char *name)
{
	char path[512];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &sb) == 0;
}

/* A record as sl_spool_append frames it, into out; its length. */
static size_t frame(uint8_t *out, unsigned num, size_t pad)
{
	int n = sprintf((char *)out + 8, "record %08u ", num);
	uint32_t len = (uint32_t)n + (uint32_t)pad, crc;

	memset(out + 8 + n, 'y', pad);
	for (int i = 0; i < 4; i++)
		out[i] = (uint8_t)(len >> (8 * i));
	crc = sl_crc32c(sl_crc32c(0, out, 4), out + 8, len);
	for (int i = 0; i < 4; i++)
		out[4 + i] = (uint8_t)(crc >> (8 * i));
	return 8 + len;
}

static int seg_create(const char *dir, const char *name)
{
	char path[512];
	uint8_t hdr[SL_SPOOL_HDR] = { 0 };
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0, "%s", path);
	memcpy(hdr, SL_SPOOL_MAGIC, 8);
	hdr[8] = SL_SPOOL_HDR;
	CHECK(write(fd, hdr, sizeof(hdr)) == (ssize_t)sizeof(hdr));
	return fd;
}

static long maxrss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/*
 * A 64 MiB segment (written by hand: append makes 4 MiB ones) is sent
 * whole while the process grows by much less than the segment: it is read
 * in pieces, not into memory whole.
 */
static void test_bounded_memory(void)
{
	static uint8_t chunk[64 << 10];
	char dir[128];
	struct sl_spool *sp;
	unsigned i = 0, n;
	size_t len = 0;
	long before;
	int fd;

	fresh(dir, sizeof(dir), "big");
	CHECK(mkdir(dir, 0700) == 0);
	fd = seg_create(dir, "seg-0000000100000000.spl");
	while (i < 16384) {	/* 4 KiB records: 64 MiB */
		len += frame(chunk + len, i++, 4000);
		if (len + 4100 > sizeof(chunk)) {
			CHECK(write(fd, chunk, len) == (ssize_t)len);
			len = 0;
		}
	}
	CHECK(write(fd, chunk, len) == (ssize_t)len);
	close(fd);
	before = maxrss_kib();
	sp = open_ok(dir, 1ull << 30);
	n = drain_expect(sp, 0, 16);
	CHECK_EQ_U(n, 16384);
	CHECK(maxrss_kib() - before < 16 << 10, "grew by %ld KiB reading a 64 MiB segment",
	      maxrss_kib() - before);
	CHECK_EQ_U(sl_spool_stats(sp)->corrupt, 0);
	sl_spool_close(sp);
	CHECK_EQ_U(segments(dir, NULL, 0), 0);
}

/*
 * 200 GiB sparse files: one with no header is set aside unread and the
 * records after it are sent; one with a header, a record, a 200 GiB hole
 * and three records at its end has the hole skipped (one loss counted).
 */
static void test_sparse(void)
{
	char dir[128], err[256] = "";
	uint8_t rec[256];
	unsigned got[8], n;
	struct sl_spool *sp;
	const off_t huge = (off_t)200 << 30;
	size_t len;
	int fd;

	fresh(dir, sizeof(dir), "sparse");
	sp = open_ok(dir, 1 << 20);
	sl_spool_close(sp);
	fd = seg_create(dir, "seg-0000000000000001.spl");	/* before the real ones */
	if (ftruncate(fd, huge) < 0) {
		printf("SKIP part: no 200 GiB sparse file in %s: %s\n", dir, strerror(errno));
		close(fd);
		return;
	}
	CHECK(pwrite(fd, "\0\0\0\0\0\0\0\0", 8, 0) == 8);	/* no header */
	close(fd);
	sp = sl_spool_open(dir, 1 << 20, quiet, NULL, err, sizeof(err));
	CHECK(sp != NULL, "%s", err);
	if (!sp)
		return;
	append_num(sp, 0, 4);
	append_num(sp, 1, 4);
	sl_spool_flush(sp);
	CHECK_EQ_U(drain_expect(sp, 0, 16), 2);
	CHECK_EQ_U(sl_spool_stats(sp)->corrupt, 1);
	CHECK(!sl_spool_pending(sp));
	sl_spool_close(sp);
	CHECK(exists(dir, "seg-0000000000000001.bad"));
	CHECK(!exists(dir, "seg-0000000000000001.spl"));

	fd = seg_create(dir, "seg-0000000000000002.spl");
	len = frame(rec, 0, 4);
	CHECK(write(fd, rec, len) == (ssize_t)len);
	for (n = 1; n < 4; n++) {
		len = frame(rec, n, 4);
		CHECK(pwrite(fd, rec, len, huge + (off_t)(n * len)) == (ssize_t)len);
	}
	close(fd);
	sp = open_ok(dir, 1 << 20);
	n = drain_list(sp, got, 8);
	CHECK_EQ_U(n, 4);
	CHECK(n == 4 && got[0] == 0 && got[1] == 1 && got[2] == 2 && got[3] == 3);
	CHECK_EQ_U(sl_spool_stats(sp)->corrupt, 1);
	CHECK(!sl_spool_pending(sp));
	sl_spool_close(sp);
	CHECK(!exists(dir, "seg-0000000000000002.spl"));
}

/* A segment numbered ffffffffffffffff would make the next number 0. */
static void test_wrap(void)
{
	char dir[128], last[64] = "", from[512], to[512];
	struct sl_spool *sp;

	fresh(dir, sizeof(dir), "wrap");
	sp = open_ok(dir, 1 << 20);
	append_num(sp, 0, 4);
	sl_spool_close(sp);
	CHECK_EQ_U(segments(dir, last, sizeof(last)), 1);
	snprintf(from, sizeof(from), "%s/%s", dir, last);
	snprintf(to, sizeof(to), "%s/seg-ffffffffffffffff.spl", dir);
	CHECK(rename(from, to) == 0);
	sp = open_ok(dir, 1 << 20);
	CHECK_EQ_U(sl_spool_stats(sp)->corrupt, 1);
	append_num(sp, 1, 4);
	append_num(sp, 2, 4);
	sl_spool_close(sp);
	sp = open_ok(dir, 1 << 20);
	CHECK_EQ_U(drain_expect(sp, 1, 16), 2);
	sl_spool_close(sp);
	CHECK(exists(dir, "seg-ffffffffffffffff.bad"));
	CHECK(!exists(dir, "seg-0000000000000000.spl"));
}

/*
 * A directory or a segment owned by someone else (nobody) is refused: its
 * owner could have written what we would send.  Needs root to chown.
 */
static void test_owner(void)
{
	char dir[128], err[512] = "", path[512];
	struct sl_spool *sp;
	const uid_t nobody = 65534;
	uint8_t rec[64];
	size_t len;
	int fd;

	if (geteuid() != 0) {
		printf("SKIP part: ownership rules need root to chown\n");
		return;
	}
	fresh(dir, sizeof(dir), "foreign");
	CHECK(mkdir(dir, 0755) == 0 && chown(dir, nobody, nobody) == 0);
	sp = sl_spool_open(dir, 1 << 20, quiet, NULL, err, sizeof(err));
	CHECK(sp == NULL, "a directory of uid 65534 is used");
	CHECK(strstr(err, "belongs to uid 65534") != NULL, "%s", err);
	sl_spool_close(sp);

	fresh(dir, sizeof(dir), "planted");
	sp = open_ok(dir, 1 << 20);
	sl_spool_close(sp);
	fd = seg_create(dir, "seg-0000000000000001.spl");
	len = frame(rec, 7, 4);
	CHECK(write(fd, rec, len) == (ssize_t)len);
	CHECK(fchown(fd, nobody, nobody) == 0);
	close(fd);
	sp = open_ok(dir, 1 << 20);
	append_num(sp, 0, 4);
	sl_spool_flush(sp);
	CHECK_EQ_U(drain_expect(sp, 0, 16), 1);
	sl_spool_close(sp);
	snprintf(path, sizeof(path), "%s/seg-0000000000000001.spl", dir);
	CHECK(exists(dir, "seg-0000000000000001.spl"), "%s: another's file is left alone", path);
}

static void test_crc(void)
{
	CHECK_EQ_U(sl_crc32c(0, "123456789", 9), 0xe3069283);	/* RFC 3720 check value */
	CHECK_EQ_U(sl_crc32c(sl_crc32c(0, "1234", 4), "56789", 5), 0xe3069283);
	/* eight bytes at a time agrees with one at a time */
	{
		uint8_t buf[1000];
		uint32_t one = 0;

		for (unsigned i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)(i * 7 + 3);
		for (unsigned i = 0; i < sizeof(buf); i++)
			one = sl_crc32c(one, buf + i, 1);
		CHECK_EQ_U(one, 0xdd2edff7);	/* a bit-at-a-time reference (Python) */
		CHECK_EQ_U(sl_crc32c(0, buf, sizeof(buf)), one);
		CHECK_EQ_U(sl_crc32c(sl_crc32c(0, buf, 13), buf + 13, sizeof(buf) - 13), one);
	}
}

static void test_order_segments(void)
{
	char dir[128];
	struct sl_spool *sp;
	unsigned i;

	fresh(dir, sizeof(dir), "order");
	sp = open_ok(dir, 64 << 10);	/* 16 KiB segments */
	CHECK(!sl_spool_pending(sp));
	for (i = 0; i < 100; i++)
		append_num(sp, i, 300);
	sl_spool_flush(sp);
	CHECK(sl_spool_pending(sp));
	CHECK(segments(dir, NULL, 0) >= 2, "%u segments", segments(dir, NULL, 0));
	/* newer records arrive while the old ones are sent: still in order */
	CHECK_EQ_U(drain_expect(sp, 0, 7), 100);
	for (i = 100; i < 110; i++)
		append_num(sp, i, 10);
	CHECK_EQ_U(drain_expect(sp, 100, 16), 10);
	CHECK(!sl_spool_pending(sp));
	CHECK_EQ_U(segments(dir, NULL, 0), 0);
	CHECK_EQ_U(sl_spool_stats(sp)->spooled, 110);
	CHECK_EQ_U(sl_spool_stats(sp)->sent, 110);
	CHECK_EQ_U(sl_spool_stats(sp)->dropped, 0);
	CHECK_EQ_U(sl_spool_stats(sp)->bytes, 0);
	sl_spool_close(sp);
}

static void test_restart_and_progress(void)
{
	char dir[128];
	struct sl_spool *sp;
	struct iovec iov[4];
	unsigned i;

	fresh(dir, sizeof(dir), "restart");
	sp = open_ok(dir, 1 << 20);
	for (i = 0; i < 10; i++)
		append_num(sp, i, 5);
	sl_spool_close(sp);	/* flushes */

	sp = open_ok(dir, 1 << 20);
	CHECK(sl_spool_pending(sp));
	CHECK(sl_spool_stats(sp)->bytes > 0);
	CHECK_EQ_U(sl_spool_peekv(sp, iov, 4), 4);
	sl_spool_ack(sp, 4);	/* kept in the segment's header */
	sl_spool_close(sp);

	sp = open_ok(dir, 1 << 20);
	CHECK_EQ_U(drain_expect(sp, 4, 3), 6);
	sl_spool_close(sp);
	CHECK_EQ_U(segments(dir, NULL, 0), 0);
}

static void damage(const char *dir, long cut, long flip_at)
{
	char name[256] = "", path[512];
	struct stat sb;
	int fd;

	CHECK_EQ_U(segments(dir, name, sizeof(name)), 1);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0 && fstat(fd, &sb) == 0);
	if (cut)
		CHECK(ftruncate(fd, sb.st_size - cut) == 0);
	if (flip_at >= 0) {
		unsigned char c;

		CHECK(pread(fd, &c, 1, flip_at) == 1);
		c ^= 0x20;
		CHECK(pwrite(fd, &c, 1, flip_at) == 1);
	}
	close(fd);
}

static void test_torn(void)
{
	char dir[128];
	struct sl_spool *sp;
	unsigned i;
	/* each record: 8 header bytes + "record 0000000N " (16) + 4 pad */
	const long rec = 8 + 16 + 4;
	unsigned got[8], n;
	char last[64] = "";

	/* kill -9 in the middle of a write: the last record is cut */
	fresh(dir, sizeof(dir), "torn");
	sp = open_ok(dir, 1 << 20);
	for (i = 0; i < 5; i++)
		append_num(sp, i, 4);
	sl_spool_close(sp);
	damage(dir, 3, -1);
	sp = open_ok(dir, 1 << 20);
	CHECK_EQ_U(drain_expect(sp, 0, 16), 4);
	CHECK_EQ_U(sl_spool_stats(sp)->torn_bytes, rec - 3);
	sl_spool_close(sp);
	CHECK_EQ_U(segments(dir, NULL, 0), 0);

	/* a flipped bit in record 2's data: 0, 1, 3 and 4 sent, one lost counted */
	sp = open_ok(dir, 1 << 20);
	for (i = 0; i < 5; i++)
		append_num(sp, i, 4);
	sl_spool_close(sp);
	damage(dir, 0, SL_SPOOL_HDR + 2 * rec + 10);
	sp = open_ok(dir, 1 << 20);
	n = drain_list(sp, got, 8);
	CHECK_EQ_U(n, 4);
	CHECK(n == 4 && got[0] == 0 && got[1] == 1 && got[2] == 3 && got[3] == 4);
	CHECK_EQ_U(sl_spool_stats(sp)->torn_bytes, rec);
	CHECK_EQ_U(sl_spool_stats(sp)->corrupt, 1);
	sl_spool_close(sp);
	CHECK_EQ_U(segments(dir, NULL, 0), 0);

	/* a length that claims more than the file has: 0 and 2 sent */
	sp = open_ok(dir, 1 << 20);
	for (i = 0; i < 3; i++)
		append_num(sp, i, 4);
	sl_spool_close(sp);
	damage(dir, 0, SL_SPOOL_HDR + rec + 3);
	sp = open_ok(dir, 1 << 20);
	n = drain_list(sp, got, 8);
	CHECK(n == 2 && got[0] == 0 && got[1] == 2, "%u records", n);
	CHECK_EQ_U(sl_spool_stats(sp)->corrupt, 1);
	sl_spool_close(sp);

	/* not a segment at all: set aside, not read, not deleted */
	sp = open_ok(dir, 1 << 20);
	append_num(sp, 0, 4);
	sl_spool_close(sp);
	damage(dir, 0, 0);
	sp = open_ok(dir, 1 << 20);
	CHECK_EQ_U(drain_expect(sp, 0, 16), 0);
	CHECK(!sl_spool_pending(sp));
	CHECK_EQ_U(sl_spool_stats(sp)->corrupt, 1);
	sl_spool_close(sp);
	CHECK_EQ_U(segments(dir, last, sizeof(last)), 1);
	CHECK(strstr(last, ".bad") != NULL, "%s", last);
}

static void test_full(void)
{
	char dir[128];
	struct sl_spool *sp;
	unsigned i, ok = 0;
	char rec[100];

	fresh(dir, sizeof(dir), "full");
	sp = open_ok(dir, 20000);
	memset(rec, 'r', sizeof(rec));
	for (i = 0; i < 500; i++)
		ok += sl_spool_append(sp, rec, sizeof(rec)) == 0;
	sl_spool_flush(sp);
	/* header + records of 108 bytes in 16 KiB segments, under 20000 bytes */
	CHECK(ok > 150 && ok < 185, "%u appended", ok);
	CHECK_EQ_U(sl_spool_stats(sp)->spooled, ok);
	CHECK_EQ_U(sl_spool_stats(sp)->dropped, 500 - ok);
	CHECK(sl_spool_stats(sp)->bytes <= 20000);
	sl_spool_close(sp);
}

static void test_front(void)
{
	char dir[128];
	struct sl_spool *sp;

	fresh(dir, sizeof(dir), "front");
	sp = open_ok(dir, 1 << 20);
	append_num(sp, 3, 1);
	append_num(sp, 4, 1);
	CHECK_EQ_I(sl_spool_front_begin(sp), 0);
	append_num(sp, 0, 1);
	append_num(sp, 1, 1);
	append_num(sp, 2, 1);
	sl_spool_front_end(sp);
	sl_spool_close(sp);
	sp = open_ok(dir, 1 << 20);
	CHECK_EQ_U(drain_expect(sp, 0, 2), 5);
	sl_spool_close(sp);
}

static void test_lock(void)
{
	char dir[128];
	struct sl_spool *a, *b;
	struct iovec iov[1];

	fresh(dir, sizeof(dir), "lock");
	a = open_ok(dir, 1 << 20);
	append_num(a, 0, 1);
	sl_spool_flush(a);
	b = open_ok(dir, 1 << 20);
	CHECK(!sl_spool_pending(b));
	CHECK_EQ_I(sl_spool_append(b, "x", 1), -1);
	CHECK_EQ_U(sl_spool_stats(b)->dropped, 1);
	CHECK_EQ_U(sl_spool_peekv(b, iov, 1), 0);
	sl_spool_close(a);
	usleep(250 * 1000);
	CHECK_EQ_U(drain_expect(b, 0, 1), 1);
	sl_spool_close(b);
}

static void test_dir_rules(void)
{
	char dir[128], err[512] = "";
	struct sl_spool *sp;

	fresh(dir, sizeof(dir), "unsafe");
	CHECK(mkdir(dir, 0777) == 0 && chmod(dir, 0777) == 0);
	sp = sl_spool_open(dir, 1 << 20, quiet, NULL, err, sizeof(err));
	CHECK(sp == NULL);
	CHECK(strstr(err, "sticky") != NULL, "%s", err);
	sl_spool_close(sp);
	CHECK(chmod(dir, 01777) == 0);
	sp = open_ok(dir, 1 << 20);
	sl_spool_close(sp);
	fresh(dir, sizeof(dir), "created/deeper");
	sp = sl_spool_open(dir, 1 << 20, quiet, NULL, err, sizeof(err));
	CHECK(sp == NULL, "a missing parent is not created");
}

int main(void)
{
	char cmd[128];

	snprintf(base, sizeof(base), "/tmp/test_spool.XXXXXX");
	if (!mkdtemp(base))
		return 1;
	test_crc();
	test_bounded_memory();
	test_sparse();
	test_wrap();
	test_owner();
	test_order_segments();
	test_restart_and_progress();
	test_torn();
	test_full();
	test_front();
	test_lock();
	test_dir_rules();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		return 1;
	return check_summary("test_spool");
}
