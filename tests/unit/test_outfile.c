/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/outfile.c when writes come up short: records are
 * all-or-nothing.  RLIMIT_FSIZE (SIGXFSZ ignored) makes a regular file
 * take only part of a write and then fail with EFBIG, as a full disk does
 * with ENOSPC; a non-blocking pipe as stdout takes part and then says
 * EAGAIN.  Checked, with a host that only counts:
 *   - a short write leaves the file ending on a whole record, and the
 *     retry writes the rest once, in order;
 *   - a reopen after a short write (logrotate) leaves the old file on a
 *     record boundary and starts the new one with its header and whole
 *     records; together they hold every record exactly once;
 *   - a header that does not fit is not left half written;
 *   - a pipe, which cannot be cut, gets the rest of the torn record next
 *     (the stream stays exact), also across a buffer compaction;
 *   - what cannot be written at stop, or does not fit while the file
 *     fails, is counted: written + dropped_records == accepted, and the
 *     core's dropped (dropped_add) equals dropped_records;
 *   - many tiny records (more than the boundary slots) are all written.
 * The live disk-full test is tests/e2e/test_netns_disk_full.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "check.h"

/* ---- a host that counts ---- */

enum { C_DROP_REC, C_DROP_BYTES, C_BYTES, C_ROTATED, C_MAX };
static uint64_t counters[C_MAX], errors, dropped;
static int timer_dummy;

static void h_log(struct sl_instance *inst, enum sl_log_level level, const char *fmt, ...)
{
	va_list ap;

	(void)inst;
	fprintf(stderr, "  log %d: ", level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void h_config_error(struct sl_instance *inst, const char *opt, const char *fmt, ...)
{
	(void)inst;
	(void)opt;
	(void)fmt;
	CHECK(0, "config_error called");
}

static int h_counter_new(struct sl_instance *inst, const char *name)
{
	(void)inst;
	if (strcmp(name, "dropped_records") == 0)
		return C_DROP_REC;
	if (strcmp(name, "dropped_bytes") == 0)
		return C_DROP_BYTES;
	if (strcmp(name, "bytes_written") == 0)
		return C_BYTES;
	if (strcmp(name, "files_rotated") == 0)
		return C_ROTATED;
	CHECK(0, "unexpected counter %s", name);
	return 0;
}

static void h_counter_add(struct sl_instance *inst, int c, uint64_t n)
{
	(void)inst;
	counters[c] += n;
}

static void h_error_add(struct sl_instance *inst, uint64_t n)
{
	(void)inst;
	errors += n;
}

static void h_dropped_add(struct sl_instance *inst, uint64_t n)
{
	(void)inst;
	dropped += n;
}

static struct sl_timer *h_timer_new(struct sl_instance *inst, sl_timer_cb cb, void *ctx)
{
	(void)inst;
	(void)cb;
	(void)ctx;
	return (struct sl_timer *)&timer_dummy;
}

static void h_timer_arm(struct sl_timer *t, uint64_t d, uint64_t p)
{
	(void)t;
	(void)d;
	(void)p;
}

static void h_timer_disarm(struct sl_timer *t)
{
	(void)t;
}

static const struct sl_host host = {
	.size = sizeof(struct sl_host),
	.log = h_log,
	.config_error = h_config_error,
	.timer_new = h_timer_new,
	.timer_arm = h_timer_arm,
	.timer_disarm = h_timer_disarm,
	.counter_new = h_counter_new,
	.counter_add = h_counter_add,
	.error_add = h_error_add,
	.dropped_add = h_dropped_add,
};

static void reset_counts(void)
{
	memset(counters, 0, sizeof(counters));
	errors = dropped = 0;
}

/* ---- records: "rec NNNNNN <pad>\n", the pad's length a function of N ---- */

#define HDR "HEADER-0123456789abcdef\n"	/* 24 bytes, like a pcap header */

static size_t make_rec(char *out, unsigned n)
{
	size_t pad = (n * 37) % 61;
	int len = sprintf(out, "rec %06u ", n);

	memset(out + len, 'a' + n % 26, pad);
	out[len + pad] = '\n';
	return (size_t)len + pad + 1;
}

static void put(struct sl_outfile *of, unsigned n, int *ok)
{
	char r[128];
	size_t len = make_rec(r, n);

	*ok = sl_outfile_write(of, r, len) == 0;
}

static char *slurp(const char *path, size_t *len)
{
	struct stat sb;
	char *buf;
	int fd = open(path, O_RDONLY);

	*len = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) < 0) {
		close(fd);
		return NULL;
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (buf && read(fd, buf, (size_t)sb.st_size) != sb.st_size) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	if (buf) {
		buf[sb.st_size] = 0;
		*len = (size_t)sb.st_size;
	}
	return buf;
}

/*
 * Parse data (with the header first if hdr): whole records only.  Puts
 * the record numbers into nums (up to max); returns their count, or -1
 * when something is not a whole record.  *torn_tail: bytes after the
 * last whole record (a pipe's stream may end inside one).
 */
static long parse(const char *data, size_t len, bool hdr, unsigned *nums, size_t max, size_t *torn_tail)
{
	size_t off = 0;
	long count = 0;

	if (torn_tail)
		*torn_tail = 0;
	if (hdr) {
		if (len < strlen(HDR) || memcmp(data, HDR, strlen(HDR)) != 0)
			return -1;
		off = strlen(HDR);
	}
	while (off < len) {
		const char *nl = memchr(data + off, '\n', len - off);
		char want[128];
		unsigned n;
		size_t wl;

		if (!nl || sscanf(data + off, "rec %6u ", &n) != 1) {
			if (torn_tail) {
				*torn_tail = len - off;
				return count;
			}
			return -1;
		}
		wl = make_rec(want, n);
		if ((size_t)(nl + 1 - (data + off)) != wl || memcmp(want, data + off, wl) != 0)
			return -1;
		if ((size_t)count < max)
			nums[count] = n;
		count++;
		off += wl;
	}
	return count;
}

static void set_fsize(rlim_t cur)
{
	struct rlimit lim;

	getrlimit(RLIMIT_FSIZE, &lim);
	lim.rlim_cur = cur;
	if (setrlimit(RLIMIT_FSIZE, &lim) < 0)
		CHECK(0, "setrlimit: %s", strerror(errno));
}

static char dir[] = "/tmp/sluice-test-outfile.XXXXXX";
static rlim_t fsize_max;

static struct sl_outfile *open_of(const char *path, uint64_t buffer, bool hdr)
{
	struct sl_outfile_opts o = { .path = path, .buffer_size = buffer };
	struct sl_outfile *of = sl_outfile_new(&host, NULL, &o);

	if (of && hdr)
		sl_outfile_set_header(of, HDR, strlen(HDR));
	if (of && sl_outfile_start(of) < 0) {
		sl_outfile_free(of);
		of = NULL;
	}
	CHECK(of, "cannot start %s", path);
	return of;
}

/* Short write, file cut to the last whole record, retry writes the rest once. */
static void test_retry(void)
{
	char path[256], *d;
	unsigned nums[1000];
	struct sl_outfile *of;
	size_t len;
	long got;
	unsigned i;
	int ok;

	reset_counts();
	snprintf(path, sizeof(path), "%s/retry.log", dir);
	of = open_of(path, 64 * 1024, false);
	if (!of)
		return;
	for (i = 0; i < 300; i++) {
		put(of, i, &ok);
		CHECK(ok, "record %u not accepted", i);
	}
	set_fsize(1000);
	CHECK(sl_outfile_flush(of) < 0, "flush into a 1000-byte limit succeeded");
	set_fsize(fsize_max);
	CHECK(errors >= 1, "the failed write is not counted");
	d = slurp(path, &len);
	CHECK(d && len <= 1000 && len > 900, "after the short write: %zu bytes", len);
	got = d ? parse(d, len, false, nums, 1000, NULL) : -1;
	CHECK(got > 0, "the file does not end on a whole record (%zu bytes)", len);
	for (i = 0; got > 0 && i < (unsigned)got; i++)
		CHECK(nums[i] == i, "record %u is %u", i, nums[i]);
	free(d);

	CHECK(sl_outfile_flush(of) == 0, "the retry failed");
	d = slurp(path, &len);
	got = d ? parse(d, len, false, nums, 1000, NULL) : -1;
	CHECK(got == 300, "after the retry: %ld whole records of 300", got);
	for (i = 0; got == 300 && i < 300; i++)
		CHECK(nums[i] == i, "record %u is %u: a record written twice or lost", i, nums[i]);
	/* The torn record cut back was accepted by write() once: counted, not taken off. */
	CHECK(counters[C_BYTES] >= len && counters[C_BYTES] < len + 1000,
	      "bytes_written %llu for a file of %zu bytes", (unsigned long long)counters[C_BYTES], len);
	free(d);
	sl_outfile_stop(of);
	sl_outfile_free(of);
	CHECK(counters[C_DROP_REC] == 0 && dropped == 0, "dropped %llu/%llu, nothing was lost",
	      (unsigned long long)counters[C_DROP_REC], (unsigned long long)dropped);
}

/* Short write, then logrotate (mv + reopen) while the limit still holds, then space. */
static void test_reopen(void)
{
	char path[256], old[300], *d1, *d2;
	unsigned nums[1000], all[1000];
	struct sl_outfile *of;
	size_t l1, l2;
	long g1, g2;
	unsigned i;
	int ok;

	reset_counts();
	snprintf(path, sizeof(path), "%s/rot.log", dir);
	snprintf(old, sizeof(old), "%s/rot.log.1", dir);
	of = open_of(path, 64 * 1024, true);
	if (!of)
		return;
	for (i = 0; i < 200; i++)
		put(of, i, &ok);
	set_fsize(2000);
	CHECK(sl_outfile_flush(of) < 0, "flush into a 2000-byte limit succeeded");
	CHECK(rename(path, old) == 0, "mv: %s", strerror(errno));
	CHECK(sl_outfile_reopen(of) == 0, "reopen failed");	/* the new file takes 2000 bytes too */
	set_fsize(fsize_max);
	for (i = 200; i < 300; i++)
		put(of, i, &ok);
	CHECK(sl_outfile_flush(of) == 0, "flush after space came back failed");
	sl_outfile_stop(of);
	sl_outfile_free(of);

	d1 = slurp(old, &l1);
	d2 = slurp(path, &l2);
	g1 = d1 ? parse(d1, l1, true, nums, 1000, NULL) : -1;
	CHECK(g1 > 0 && l1 <= 2000, "rotated file: %ld records, %zu bytes (must be header + whole records)",
	      g1, l1);
	memcpy(all, nums, sizeof(unsigned) * (g1 > 0 ? (size_t)g1 : 0));
	g2 = d2 ? parse(d2, l2, true, nums, 1000, NULL) : -1;
	CHECK(g2 > 0, "new file: not header + whole records (%zu bytes)", l2);
	CHECK(g1 + g2 == 300, "%ld + %ld records, 300 written", g1, g2);
	if (g1 > 0 && g2 > 0 && g1 + g2 == 300) {
		memcpy(all + g1, nums, sizeof(unsigned) * (size_t)g2);
		for (i = 0; i < 300; i++)
			CHECK(all[i] == i, "record %u is %u", i, all[i]);
	}
	free(d1);
	free(d2);
	CHECK(dropped == 0 && counters[C_DROP_REC] == 0, "records dropped");
}

/* The header does not fit: the file is cut back to empty, written whole later. */
static void test_header(void)
{
	char path[256], *d;
	unsigned nums[10];
	struct sl_outfile *of;
	struct stat sb;
	size_t len;
	long got;
	int ok;

	reset_counts();
	snprintf(path, sizeof(path), "%s/hdr.log", dir);
	set_fsize(10);
	of = open_of(path, 64 * 1024, true);	/* not fatal: only space is missing */
	set_fsize(fsize_max);
	if (!of)
		return;
	CHECK(stat(path, &sb) == 0 && sb.st_size == 0, "half a header left: %lld bytes",
	      (long long)sb.st_size);
	CHECK(errors == 1, "%llu errors, expected 1", (unsigned long long)errors);
	put(of, 1, &ok);
	put(of, 2, &ok);
	CHECK(sl_outfile_reopen(of) == 0, "reopen with space failed");
	sl_outfile_stop(of);
	sl_outfile_free(of);
	d = slurp(path, &len);
	got = d ? parse(d, len, true, nums, 10, NULL) : -1;
	CHECK(got == 2 && nums[0] == 1 && nums[1] == 2, "header + 2 records expected, got %ld", got);
	free(d);
}

/*
 * A file of sections (header_key, pcapng): an existing file is ours when
 * it starts with the key, its torn tail is cut from there, and every
 * opening (start, reopen) writes the current header again, which may have
 * grown; a header that does not fit an appended file is cut back to the
 * file's size before, never to empty.
 */
static void test_sections(void)
{
	char path[256], r[128], want[1024], *d;
	struct sl_outfile_opts o = { .buffer_size = 64 * 1024, .header_key = 4 };
	struct sl_outfile *of;
	struct stat sb;
	size_t len, wlen = 0;
	off_t before;
	int ok, fd;

	reset_counts();
	snprintf(path, sizeof(path), "%s/sections.log", dir);
	o.path = path;
	of = sl_outfile_new(&host, NULL, &o);
	sl_outfile_set_header(of, "SEC:a\n", 6);
	CHECK(sl_outfile_start(of) == 0);
	put(of, 1, &ok);
	sl_outfile_stop(of);
	sl_outfile_free(of);
	wlen += (size_t)sprintf(want + wlen, "SEC:a\n");
	wlen += make_rec(want + wlen, 1);
	/* a crash left half a record */
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, "rec 0000", 8) == 8);
	close(fd);

	/* a restart with a grown section: ours (same key), tail cut, header again */
	of = sl_outfile_new(&host, NULL, &o);
	sl_outfile_set_header(of, "SEC:ab\n", 7);
	CHECK(sl_outfile_start(of) == 0);
	put(of, 2, &ok);
	wlen += (size_t)sprintf(want + wlen, "SEC:ab\n");
	wlen += make_rec(want + wlen, 2);
	/* a reopen of the same file: the newest header, appended */
	sl_outfile_set_header(of, "SEC:abc\n", 8);
	CHECK(sl_outfile_reopen(of) == 0);
	put(of, 3, &ok);
	wlen += (size_t)sprintf(want + wlen, "SEC:abc\n");
	wlen += make_rec(want + wlen, 3);
	CHECK(sl_outfile_flush(of) == 0);
	/* no room for the whole header at the next opening: cut back, data kept */
	CHECK(stat(path, &sb) == 0);
	before = sb.st_size;
	set_fsize((rlim_t)before + 3);
	CHECK(sl_outfile_reopen(of) < 0, "a header that cannot fit was written");
	set_fsize(fsize_max);
	CHECK(stat(path, &sb) == 0 && sb.st_size == before, "size %lld after a failed header, was %lld",
	      (long long)sb.st_size, (long long)before);
	CHECK(sl_outfile_reopen(of) == 0, "reopen with space failed");
	put(of, 4, &ok);
	wlen += (size_t)sprintf(want + wlen, "SEC:abc\n");
	wlen += make_rec(want + wlen, 4);
	sl_outfile_stop(of);
	sl_outfile_free(of);
	d = slurp(path, &len);
	CHECK(d && len == wlen && memcmp(d, want, len) == 0, "file is\n%.*s\nwant\n%.*s", (int)len,
	      d ? d : "", (int)wlen, want);
	free(d);
	snprintf(r, sizeof(r), "%s/sections.log.", dir);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "ls %s* >/dev/null 2>&1", r);
		CHECK(system(cmd) != 0, "a file was moved aside");
	}
}

/*
 * Stop with records that cannot be written, after a buffer that filled up
 * while the file failed: every record is either in the file or counted.
 */
static void test_counts(void)
{
	char path[256], *d;
	unsigned nums[5000];
	struct sl_outfile *of;
	unsigned i, accepted = 0;
	size_t len;
	long got;
	int ok;

	reset_counts();
	snprintf(path, sizeof(path), "%s/count.log", dir);
	of = open_of(path, 4096, true);
	if (!of)
		return;
	set_fsize(3000);
	for (i = 0; i < 2000; i++) {
		put(of, i, &ok);
		accepted++;
	}
	sl_outfile_stop(of);
	set_fsize(fsize_max);
	sl_outfile_free(of);
	d = slurp(path, &len);
	got = d ? parse(d, len, true, nums, 5000, NULL) : -1;
	CHECK(got > 0, "the file is not header + whole records (%zu bytes)", len);
	CHECK(got + counters[C_DROP_REC] == accepted, "%ld written + %llu dropped != %u accepted", got,
	      (unsigned long long)counters[C_DROP_REC], accepted);
	CHECK(dropped == counters[C_DROP_REC], "core dropped %llu != dropped_records %llu",
	      (unsigned long long)dropped, (unsigned long long)counters[C_DROP_REC]);
	for (i = 1; got > 0 && i < (unsigned)got && i < 5000; i++)
		CHECK(nums[i] > nums[i - 1], "records out of order at %u", i);
	free(d);
}

/* More tiny records than boundary slots: written in several writes, none lost. */
static void test_tiny(void)
{
	char path[256], *d;
	struct sl_outfile *of;
	size_t len, k;
	unsigned i;

	reset_counts();
	snprintf(path, sizeof(path), "%s/tiny.log", dir);
	of = open_of(path, 4096, false);
	if (!of)
		return;
	for (i = 0; i < 5000; i++)
		CHECK(sl_outfile_write(of, i % 2 ? "x\n" : "\n", i % 2 ? 2 : 1) == 0, "tiny record %u dropped", i);
	sl_outfile_stop(of);
	sl_outfile_free(of);
	d = slurp(path, &len);
	CHECK(d && len == 7500, "%zu bytes of 7500", len);
	for (k = 0; d && k < len; k += 3)
		if (memcmp(d + k, "\nx\n", len - k < 3 ? len - k : 3) != 0) {
			CHECK(0, "tiny records damaged at %zu", k);
			break;
		}
	free(d);
	CHECK(dropped == 0, "tiny records dropped");
}

/* Read what is in the pipe now. */
static void drain(int rfd, char *buf, size_t *len, size_t cap)
{
	ssize_t n;

	while (*len < cap && (n = read(rfd, buf + *len, cap - *len)) > 0)
		*len += (size_t)n;
}

/*
 * A pipe cannot be cut: a record torn by EAGAIN is finished on the same
 * descriptor, and the stream stays exact, also when the buffer fills and
 * is compacted with the torn record in front.
 */
static void test_pipe(void)
{
	static char stream[256 * 1024];
	static unsigned nums[4000];
	bool kept[4000] = { false };
	int p[2], saved, ok;
	struct sl_outfile *of;
	size_t slen = 0, torn;
	unsigned i, nkept = 0, j;
	long got;

	reset_counts();
	saved = dup(STDOUT_FILENO);
	if (saved < 0 || pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0) {
		CHECK(0, "pipe: %s", strerror(errno));
		return;
	}
	fcntl(p[1], F_SETPIPE_SZ, 4096);
	fflush(stdout);
	dup2(p[1], STDOUT_FILENO);
	close(p[1]);
	of = open_of("-", 8192, true);
	if (!of)
		goto out;
	/* The pipe takes 4 KiB, the buffer 8 KiB: most writes tear a record. */
	for (i = 0; i < 4000; i++) {
		put(of, i, &ok);
		if (ok) {
			kept[i] = true;
			nkept++;
		}
		if (i % 97 == 0)
			sl_outfile_flush(of);
		if (i % 193 == 0)
			drain(p[0], stream, &slen, sizeof(stream));
	}
	for (i = 0; i < 50 && sl_outfile_flush(of) < 0; i++)
		drain(p[0], stream, &slen, sizeof(stream));
	drain(p[0], stream, &slen, sizeof(stream));
	CHECK(nkept < 4000 && nkept > 100, "%u of 4000 records accepted: the test did not fill the buffer",
	      nkept);
	CHECK(counters[C_DROP_REC] == 4000 - nkept && dropped == 4000 - nkept,
	      "dropped_records %llu, core %llu, refused %u", (unsigned long long)counters[C_DROP_REC],
	      (unsigned long long)dropped, 4000 - nkept);
	got = parse(stream, slen, true, nums, 4000, NULL);
	CHECK(got == (long)nkept, "stream: %ld whole records, %u accepted (%zu bytes)", got, nkept, slen);
	for (i = 0, j = 0; got == (long)nkept && i < 4000; i++)
		if (kept[i])
			CHECK(nums[j++] == i, "stream record %u is %u, expected %u", j - 1, nums[j - 1], i);

	/* Stop inside a torn record: it and the rest are counted, the stream is cut there. */
	reset_counts();
	slen = 0;
	for (i = 0; i < 100; i++)
		put(of, i, &ok);
	sl_outfile_flush(of);
	sl_outfile_stop(of);
	sl_outfile_free(of);
	drain(p[0], stream, &slen, sizeof(stream));
	got = parse(stream, slen, false, nums, 4000, &torn);
	CHECK(got > 0 && got + counters[C_DROP_REC] == 100 && dropped == counters[C_DROP_REC],
	      "stopped stream: %ld whole + %llu dropped (core %llu) of 100", got,
	      (unsigned long long)counters[C_DROP_REC], (unsigned long long)dropped);
out:
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(p[0]);
}

int main(void)
{
	struct rlimit lim;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	signal(SIGXFSZ, SIG_IGN);	/* writes past RLIMIT_FSIZE fail with EFBIG */
	getrlimit(RLIMIT_FSIZE, &lim);
	fsize_max = lim.rlim_max;
	if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < 1 << 20) {
		printf("SKIP: RLIMIT_FSIZE is %llu\n", (unsigned long long)lim.rlim_cur);
		return 77;
	}
	test_retry();
	test_reopen();
	test_header();
	test_sections();
	test_counts();
	test_tiny();
	test_pipe();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("ok: outfile short writes\n");
	return 0;
}
