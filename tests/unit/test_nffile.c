/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/nffile.c and nffile_recover.c: V3 encoding against the
 * annotated bytes of the format description (docs/NFCAPD-FORMAT.md), a
 * whole file byte for byte against the minimal sample (one IPv4 flow,
 * uncompressed), multi-block LZ4 files read back,
 * appending an existing file (both compressions), and a write error in the
 * middle of a file and no room for the appendix (the file stays well
 * formed, the loss is counted);
 * recovery of files a writer left unfinished (torn last block, blocks
 * absorbed just before the crash, finished but not renamed, empty), and
 * open never follows a symbolic link nor takes an existing file.
 * nfdump itself reads the files in tests/e2e/test_flowfile_replay.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nffile.h"
#include "nffile_recover.h"
#include "check.h"

/* minimal.nf: created 0x65a50220, TCP 10.1.1.1:40000 -> 192.0.2.10:443,
 * 20 packets, 15000 bytes, flags 0x1b (docs/NFCAPD-FORMAT.md §11). */
static const uint8_t minimal_nf[297] = {
	0x0c, 0xa5, 0x02, 0x00, 0x00, 0x01, 0x07, 0x01, 0x20, 0x02, 0xa5, 0x65,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x4c, 0x00, 0x00, 0x00,
	0x03, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x4c, 0x00, 0x02, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x34, 0x00, 0x7b, 0x4d, 0x90, 0x0c,
	0x8d, 0x01, 0x00, 0x00, 0x50, 0x62, 0x90, 0x0c, 0x8d, 0x01, 0x00, 0x00,
	0x70, 0x64, 0x90, 0x0c, 0x8d, 0x01, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x98, 0x3a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x40, 0x9c, 0xbb, 0x01, 0x06, 0x1b, 0x00, 0x00, 0x02, 0x00, 0x0c, 0x00,
	0x01, 0x01, 0x01, 0x0a, 0x0a, 0x02, 0x00, 0xc0, 0x02, 0x00, 0x00, 0x00,
	0x9d, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x80, 0x09, 0x00,
	0x6e, 0x6f, 0x6e, 0x65, 0x00, 0x02, 0x80, 0x94, 0x00, 0x01, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x98, 0x3a, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x98, 0x3a, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7b, 0x4d, 0x90,
	0x0c, 0x8d, 0x01, 0x00, 0x00, 0x50, 0x62, 0x90, 0x0c, 0x8d, 0x01, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

static char dir[] = "/tmp/sluice-test-nffile.XXXXXX";

static void set4(uint8_t a[16], uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3)
{
	memset(a, 0, 16);
	a[10] = a[11] = 0xff;
	a[12] = b0;
	a[13] = b1;
	a[14] = b2;
	a[15] = b3;
}

static struct sl_nf_flow minimal_flow(void)
{
	struct sl_nf_flow f = {0};

	set4(f.src, 10, 1, 1, 1);
	set4(f.dst, 192, 0, 2, 10);
	f.first_ms = 1705312800123ULL;
	f.last_ms = 1705312805456ULL;
	f.received_ms = 1705312806000ULL;
	f.in_packets = 20;
	f.in_bytes = 15000;
	f.sport = 40000;
	f.dport = 443;
	f.proto = 6;
	f.tcp_flags = 0x1b;
	return f;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat sb;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &sb) < 0)
		return NULL;
	buf = malloc((size_t)sb.st_size + 1);
	if (buf && read(fd, buf, (size_t)sb.st_size) != sb.st_size) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	*len = (size_t)sb.st_size;
	return buf;
}

static void test_encode(void)
{
	struct sl_nf_flow f = minimal_flow();
	uint8_t rec[SL_NF_V3_MAX];
	size_t n = sl_nf_encode_v3(rec, &f);

	/* The V3 record is bytes 0x34..0x7f of the minimal file. */
	CHECK(n == 76, "IPv4 record is %zu bytes, want 76", n);
	CHECK(memcmp(rec, minimal_nf + 0x34, 76) == 0, "IPv4 record bytes differ");

	/* IPv6 (§5.2): 2001:db8::1 is 00 00 00 00 b8 0d 01 20 | 01 00 .. 00 */
	static const uint8_t v6src[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	static const uint8_t want_src[16] = {0, 0, 0, 0, 0xb8, 0x0d, 0x01, 0x20, 1, 0, 0, 0, 0, 0, 0, 0};
	memcpy(f.src, v6src, 16);
	f.misc = true;
	f.input = 7;
	f.output = 8;
	f.end_reason = SL_NF_END_IDLE;
	f.out_packets = 3;
	f.out_bytes = 300;
	n = sl_nf_encode_v3(rec, &f);
	CHECK(n == 12 + 52 + 36 + 20 + 28, "IPv6 record with misc and cnt is %zu bytes", n);
	CHECK(rec[0] == 11 && rec[2] == n && rec[4] == 4, "V3 header: type %u size %u elements %u",
	      rec[0], rec[2], rec[4]);
	/* elements: generic @12, ipv6 @64, misc @100, cnt @120 */
	CHECK(rec[64] == 3 && rec[66] == 36, "EXipv6Flow header");
	CHECK(memcmp(rec + 68, want_src, 16) == 0, "IPv6 source encoding");
	/* the IPv4-mapped destination is written as ::ffff:192.0.2.10 */
	CHECK(rec[100] == 4 && rec[102] == 20 && rec[104] == 7 && rec[108] == 8 && rec[117] == SL_NF_END_IDLE,
	      "EXflowMisc");
	CHECK(rec[120] == 5 && rec[122] == 28 && rec[124] == 1 && rec[132] == 3 && rec[140] == 44 &&
		      rec[141] == 1,
	      "EXcntFlow");

	/* NAT: post-NAT source 198.51.100.1:1024 */
	f = minimal_flow();
	f.xlate = true;
	set4(f.xsrc, 198, 51, 100, 1);
	memcpy(f.xdst, f.dst, 16);
	f.xsport = 1024;
	f.xdport = 443;
	n = sl_nf_encode_v3(rec, &f);
	CHECK(n == 76 + 12 + 8, "NAT record is %zu bytes", n);
	CHECK(rec[76] == 20 && rec[78] == 12 && rec[80] == 1 && rec[83] == 198, "EXnselXlateIPv4");
	CHECK(rec[88] == 22 && rec[90] == 8 && rec[92] == 0x00 && rec[93] == 0x04, "EXnselXlatePort");
}

static void test_minimal_file(void)
{
	char path[256];
	struct sl_nf_writer *w = sl_nf_writer_new(SL_NF_COMP_NONE, NULL);
	struct sl_nf_flow f = minimal_flow();
	uint8_t *buf;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/minimal.nf", dir);
	CHECK(w != NULL, "nf_writer_new");
	if (!w)
		return;
	sl_nf_writer_set_created(w, 0x65a50220);
	CHECK(sl_nf_writer_open(w, path) == 0, "open %s: %s", path, strerror(errno));
	CHECK(sl_nf_writer_add(w, &f) == 0, "add");
	CHECK(sl_nf_writer_close(w, 0, 0) == 0, "close: %s", strerror(errno));
	buf = slurp(path, &len);
	CHECK(buf && len == sizeof(minimal_nf), "minimal file is %zu bytes, want 297", len);
	if (buf && len == sizeof(minimal_nf)) {
		for (size_t i = 0; i < len; i++) {
			if (buf[i] != minimal_nf[i]) {
				CHECK(0, "minimal file differs at byte %zu: %02x, want %02x", i, buf[i],
				      minimal_nf[i]);
				break;
			}
		}
	}
	free(buf);
	sl_nf_writer_free(w);
}

/* Read a file back: flows, blocks, and the records' packet sum. */
struct readback {
	uint64_t flows, packets, blocks;
	uint32_t max_payload;
	struct sl_nf_file_info info;
	int ok;
};

static struct readback read_back(const char *path)
{
	struct readback rb = {0};
	uint8_t *scratch = malloc(SL_NF_BLOCK_READ_MAX), *out = malloc(SL_NF_BLOCK_READ_MAX);
	const char *why = "";
	uint64_t off = SL_NF_HEADER_SIZE;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || !scratch || !out || sl_nf_read_info(fd, &rb.info, &why) < 0) {
		CHECK(0, "%s: %s", path, why);
		goto out;
	}
	for (uint32_t b = 0; b < rb.info.num_blocks; b++) {
		uint32_t nrec;
		uint16_t type;
		long n = sl_nf_read_block(fd, &rb.info, &off, scratch, out, &nrec, &type, &why);
		const uint8_t *p = out;

		if (n < 0) {
			CHECK(0, "%s block %u: %s", path, b, why);
			goto out;
		}
		if ((uint32_t)n > rb.max_payload)
			rb.max_payload = (uint32_t)n;
		rb.blocks++;
		for (uint32_t r = 0; r < nrec; r++) {
			uint16_t size = (uint16_t)(p[2] | p[3] << 8);
			uint64_t pk;

			if (size < 12 || p + size > out + n) {
				CHECK(0, "%s: record %u of block %u overruns the block", path, r, b);
				goto out;
			}
			memcpy(&pk, p + 12 + 4 + 24, 8);	/* generic element: inPackets */
			rb.packets += pk;
			rb.flows++;
			p += size;
		}
		CHECK(p == out + n, "%s: block %u has bytes after its records", path, b);
	}
	/* Data blocks end where the appendix starts. */
	CHECK(off == rb.info.off_appendix, "%s: blocks end at %" PRIu64 ", appendix at %" PRIu64, path, off,
	      rb.info.off_appendix);
	rb.ok = 1;
out:
	if (fd >= 0)
		close(fd);
	free(scratch);
	free(out);
	return rb;
}

/* n flows, flow i: 10.0.x.y -> 192.0.2.1, i+1 packets, proto alternating. */
static void write_flows(struct sl_nf_writer *w, unsigned n, unsigned base)
{
	for (unsigned i = 0; i < n; i++) {
		struct sl_nf_flow f = minimal_flow();
		unsigned k = base + i;

		set4(f.src, 10, 0, (uint8_t)(k >> 8), (uint8_t)k);
		f.in_packets = k + 1;
		f.in_bytes = 100 * (k + 1);
		f.proto = (uint8_t)(k % 3 == 0 ? 6 : k % 3 == 1 ? 17 : 1);
		f.first_ms = 1705312800000ULL + k;
		f.last_ms = f.first_ms + 10;
		CHECK(sl_nf_writer_add(w, &f) == 0, "add flow %u", k);
	}
}

static uint64_t sum_packets(unsigned n, unsigned base)
{
	uint64_t s = 0;

	for (unsigned i = 0; i < n; i++)
		s += base + i + 1;
	return s;
}

static void test_lz4_blocks(void)
{
	char path[256];
	struct sl_nf_writer *w = sl_nf_writer_new(SL_NF_COMP_LZ4, "lz4-test");
	struct readback rb;
	const unsigned n = 30000;	/* 30000 * 76 bytes: two full blocks and a bit */

	CHECK(w != NULL, "nf_writer_new(LZ4): %s", strerror(errno));
	if (!w)
		return;
	snprintf(path, sizeof(path), "%s/lz4.nf", dir);
	CHECK(sl_nf_writer_open(w, path) == 0, "open");
	write_flows(w, n, 0);
	CHECK(sl_nf_writer_close(w, 0, 0) == 0, "close");
	rb = read_back(path);
	CHECK(rb.ok, "read back");
	CHECK(rb.info.compression == SL_NF_COMP_LZ4, "compression %u", rb.info.compression);
	CHECK(rb.flows == n, "%" PRIu64 " flows read, want %u", rb.flows, n);
	CHECK(rb.blocks == 3, "%" PRIu64 " blocks, want 3", rb.blocks);
	CHECK(rb.max_payload <= SL_NF_BLOCK_PAYLOAD, "a block holds %u bytes", rb.max_payload);
	CHECK(rb.packets == sum_packets(n, 0), "packets %" PRIu64, rb.packets);
	CHECK(rb.info.has_stat && rb.info.stat.numflows == n && rb.info.stat.numpackets == sum_packets(n, 0),
	      "stat record");
	CHECK(rb.info.stat.flows_tcp == 10000 && rb.info.stat.flows_udp == 10000 &&
		      rb.info.stat.flows_icmp == 10000,
	      "per-protocol flows");
	CHECK(rb.info.stat.first_ms == 1705312800000ULL && rb.info.stat.last_ms == 1705312800000ULL + n - 1 + 10,
	      "first/last %" PRIu64 "/%" PRIu64, rb.info.stat.first_ms, rb.info.stat.last_ms);
	CHECK(strcmp(rb.info.ident, "lz4-test") == 0, "ident '%s'", rb.info.ident);
	sl_nf_writer_free(w);
}

/* Appending an existing file, same and other compression. */
static void test_absorb(enum sl_nf_compression old_c, enum sl_nf_compression new_c)
{
	char old[256], cur[256];
	struct sl_nf_writer *a = sl_nf_writer_new(old_c, NULL), *b = sl_nf_writer_new(new_c, NULL);
	struct readback rb;
	const char *why = "";

	snprintf(old, sizeof(old), "%s/old-%d-%d.nf", dir, old_c, new_c);
	snprintf(cur, sizeof(cur), "%s/cur-%d-%d.nf", dir, old_c, new_c);
	if (!a || !b) {
		CHECK(0, "writers");
		return;
	}
	CHECK(sl_nf_writer_open(a, old) == 0, "open old");
	write_flows(a, 20000, 0);
	CHECK(sl_nf_writer_close(a, 0, 0) == 0, "close old");
	CHECK(sl_nf_writer_open(b, cur) == 0, "open current");
	write_flows(b, 500, 20000);
	CHECK(sl_nf_writer_absorb(b, old, &why) == 0, "absorb: %s", why);
	write_flows(b, 10, 20500);
	CHECK(sl_nf_writer_close(b, 0, 0) == 0, "close current");
	rb = read_back(cur);
	CHECK(rb.flows == 20510, "absorb %d->%d: %" PRIu64 " flows, want 20510", old_c, new_c, rb.flows);
	CHECK(rb.packets == sum_packets(20510, 0), "absorb: packets");
	CHECK(rb.info.stat.numflows == 20510 && rb.info.stat.numpackets == sum_packets(20510, 0),
	      "absorb: stat %" PRIu64 " flows", rb.info.stat.numflows);
	CHECK(rb.info.stat.first_ms == 1705312800000ULL, "absorb: first");

	/* Not a flow file: refused, and the current file is unchanged. */
	CHECK(sl_nf_writer_open(b, cur) < 0 && errno == EEXIST, "open must never take an existing file");
	unlink(cur);
	CHECK(sl_nf_writer_open(b, cur) == 0, "reopen");
	write_flows(b, 5, 0);
	CHECK(sl_nf_writer_absorb(b, "/etc/hostname", &why) < 0, "absorbing a text file must fail");
	CHECK(sl_nf_writer_close(b, 0, 0) == 0, "close");
	rb = read_back(cur);
	CHECK(rb.flows == 5 && rb.info.stat.numflows == 5, "after a refused absorb: %" PRIu64 " flows",
	      rb.flows);
	sl_nf_writer_free(a);
	sl_nf_writer_free(b);
}

/* An empty file: no data block, the stat's time window is the slot. */
static void test_empty(void)
{
	char path[256];
	struct sl_nf_writer *w = sl_nf_writer_new(SL_NF_COMP_LZ4, NULL);
	struct readback rb;

	snprintf(path, sizeof(path), "%s/empty.nf", dir);
	CHECK(w && sl_nf_writer_open(w, path) == 0, "open");
	if (!w)
		return;
	CHECK(sl_nf_writer_close(w, 1705312800000ULL, 1705313100000ULL) == 0, "close");
	rb = read_back(path);
	CHECK(rb.ok && rb.blocks == 0 && rb.info.off_appendix == SL_NF_HEADER_SIZE, "empty file layout");
	CHECK(rb.info.stat.first_ms == 1705312800000ULL && rb.info.stat.last_ms == 1705313100000ULL,
	      "empty file: stat window is the slot");
	CHECK(strcmp(rb.info.ident, "none") == 0, "default ident '%s'", rb.info.ident);
	sl_nf_writer_free(w);
}

/* The disk fills in the middle: a block is lost, the file is still sound. */
static void test_write_error(void)
{
	char path[256];
	struct sl_nf_writer *w = sl_nf_writer_new(SL_NF_COMP_NONE, NULL);
	struct rlimit old, lim;
	struct readback rb;
	int ret;

	snprintf(path, sizeof(path), "%s/full.nf", dir);
	if (!w || getrlimit(RLIMIT_FSIZE, &old) < 0) {
		CHECK(0, "setup");
		return;
	}
	signal(SIGXFSZ, SIG_IGN);	/* writes past the limit fail with EFBIG */
	CHECK(sl_nf_writer_open(w, path) == 0, "open");
	write_flows(w, 1000, 0);
	CHECK(sl_nf_writer_flush(w) == 0, "first block");
	lim = old;
	lim.rlim_cur = 200 * 1024;	/* room for the first block, not for a 1 MiB one */
	setrlimit(RLIMIT_FSIZE, &lim);
	for (unsigned i = 0; i < 13000; i++) {	/* one block: 988000 bytes */
		struct sl_nf_flow f = minimal_flow();

		f.in_packets = 1000000;
		sl_nf_writer_add(w, &f);
	}
	ret = sl_nf_writer_flush(w);
	CHECK(ret < 0 && errno == EFBIG, "flushing past the file size limit must fail (%d, %s)", ret,
	      strerror(errno));
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(sl_nf_writer_lost(w) == 13000, "lost %" PRIu64 ", want 13000", sl_nf_writer_lost(w));
	write_flows(w, 10, 1000);
	CHECK(sl_nf_writer_close(w, 0, 0) == 0, "close after the error: %s", strerror(errno));
	rb = read_back(path);
	CHECK(rb.ok && rb.flows == 1010 && rb.packets == sum_packets(1010, 0),
	      "after a failed block: %" PRIu64 " flows", rb.flows);
	CHECK(rb.info.stat.numflows == 1010 && rb.info.stat.numpackets == sum_packets(1010, 0),
	      "the stat record counts only what the file holds");

	/* No room left for the appendix: the newest block gives it its room. */
	unlink(path);
	CHECK(sl_nf_writer_open(w, path) == 0, "open");
	write_flows(w, 1000, 0);
	CHECK(sl_nf_writer_flush(w) == 0, "block 1");
	write_flows(w, 20, 1000);
	CHECK(sl_nf_writer_flush(w) == 0, "block 2");
	{
		struct stat sb;
		uint64_t lost0 = sl_nf_writer_lost(w);

		stat(path, &sb);
		lim = old;
		lim.rlim_cur = (rlim_t)sb.st_size;	/* the file may not grow any more */
		setrlimit(RLIMIT_FSIZE, &lim);
		ret = sl_nf_writer_close(w, 0, 0);
		setrlimit(RLIMIT_FSIZE, &old);
		CHECK(ret == 0, "close on a full disk must still finish the file: %s", strerror(errno));
		CHECK(sl_nf_writer_lost(w) - lost0 == 20, "lost %" PRIu64 ", want the 20 of block 2",
		      sl_nf_writer_lost(w) - lost0);
	}
	rb = read_back(path);
	CHECK(rb.ok && rb.flows == 1000 && rb.blocks == 1 && rb.info.stat.numflows == 1000 &&
		      rb.info.stat.numpackets == sum_packets(1000, 0),
	      "appendix in the room of the dropped block: %" PRIu64 " flows in %" PRIu64 " blocks", rb.flows,
	      rb.blocks);
	sl_nf_writer_free(w);
}

/* Append raw bytes at the end of a file (a torn block after a crash). */
static void append_bytes(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	CHECK(fd >= 0 && write(fd, p, n) == (ssize_t)n, "append to %s", path);
	if (fd >= 0)
		close(fd);
}

static void test_adopt_torn(enum sl_nf_compression c)
{
	char path[256];
	struct sl_nf_writer *w = sl_nf_writer_new(c, NULL), *r = sl_nf_writer_new(SL_NF_COMP_NONE, NULL);
	uint8_t torn[100] = {0x10, 0, 0, 0, 0x00, 0x00, 0x01, 0x00, 3, 0, 0, 0, 0x0b, 0};
	struct sl_nf_orphan o;
	struct readback rb;
	const char *why = "";
	struct stat sb;
	int fd;

	snprintf(path, sizeof(path), "%s/orphan-%d.nf", dir, c);
	CHECK(w && r && sl_nf_writer_open(w, path) == 0, "open");
	write_flows(w, 15000, 0);	/* one full block written, one in memory */
	CHECK(sl_nf_writer_flush(w) == 0, "second block");
	write_flows(w, 7, 15000);	/* never written: lost in the crash */
	sl_nf_writer_abandon(w);		/* kill -9 */
	/* A block header promising 64 KiB, and 88 bytes of it. */
	append_bytes(path, torn, sizeof(torn));
	stat(path, &sb);
	fd = open(path, O_RDWR);
	CHECK(sl_nf_writer_adopt(r, fd, &o, &why) == 1, "adopt: %s", why);
	CHECK(!o.complete && o.blocks == 2 && o.flows == 15000, "orphan: %u blocks, %" PRIu64 " flows",
	      o.blocks, o.flows);
	CHECK(o.cut_bytes == sizeof(torn), "cut %" PRIu64 " bytes, want %zu", o.cut_bytes, sizeof(torn));
	CHECK(sl_nf_writer_close(r, 0, 0) == 0, "finish the orphan");
	rb = read_back(path);
	CHECK(rb.ok && rb.flows == 15000 && rb.blocks == 2, "recovered file: %" PRIu64 " flows", rb.flows);
	CHECK(rb.info.compression == c, "recovered file keeps compression %d (%u)", c, rb.info.compression);
	CHECK(rb.info.stat.numflows == 15000 && rb.info.stat.numpackets == sum_packets(15000, 0) &&
		      rb.info.stat.flows_tcp == 5000 && rb.info.stat.first_ms == 1705312800000ULL &&
		      rb.info.stat.last_ms == 1705312800000ULL + 14999 + 10,
	      "recovered stat: %" PRIu64 " flows %" PRIu64 " packets", rb.info.stat.numflows,
	      rb.info.stat.numpackets);

	/* Finished but not renamed: complete as it is, not touched. */
	fd = open(path, O_RDWR);
	CHECK(sl_nf_writer_adopt(r, fd, &o, &why) == 1 && o.complete, "a finished file is complete");
	close(fd);
	sl_nf_writer_free(w);
	sl_nf_writer_free(r);
}

/* A crash after absorbing the slot's old file: its blocks are not ours. */
static void test_adopt_absorbed(void)
{
	char old[256], cur[256];
	struct sl_nf_writer *a = sl_nf_writer_new(SL_NF_COMP_LZ4, NULL), *b = sl_nf_writer_new(SL_NF_COMP_LZ4, NULL);
	struct sl_nf_writer *r = sl_nf_writer_new(SL_NF_COMP_NONE, NULL);
	struct sl_nf_orphan o;
	const char *why = "";
	int fd;

	snprintf(old, sizeof(old), "%s/abs-old.nf", dir);
	snprintf(cur, sizeof(cur), "%s/abs-cur.nf", dir);
	CHECK(a && b && r && sl_nf_writer_open(a, old) == 0 && sl_nf_writer_open(b, cur) == 0, "open");
	write_flows(a, 300, 0);
	CHECK(sl_nf_writer_close(a, 0, 0) == 0, "close old");
	write_flows(b, 40, 300);
	CHECK(sl_nf_writer_absorb(b, old, &why) == 0, "absorb: %s", why);
	sl_nf_writer_abandon(b);
	fd = open(cur, O_RDWR);
	CHECK(sl_nf_writer_adopt(r, fd, &o, &why) == 1 && o.flows == 40 && o.blocks == 1,
	      "after absorb + crash: %" PRIu64 " flows in %u blocks, want 40 in 1", o.flows, o.blocks);
	sl_nf_writer_abandon(r);

	/* Nothing written yet: nothing to recover. */
	unlink(cur);
	CHECK(sl_nf_writer_open(b, cur) == 0, "open empty");
	sl_nf_writer_abandon(b);
	fd = open(cur, O_RDWR);
	CHECK(sl_nf_writer_adopt(r, fd, &o, &why) == 0, "an empty orphan has nothing to recover");
	close(fd);

	/* A whole first block that is no V3 data: an error, not "nothing to recover". */
	unlink(cur);
	CHECK(sl_nf_writer_open(b, cur) == 0, "open junk");
	sl_nf_writer_abandon(b);
	{
		uint8_t junk[12 + 64] = {1, 0, 0, 0, 64, 0, 0, 0, 3, 0, 0, 0, 0x55};

		append_bytes(cur, junk, sizeof(junk));
	}
	fd = open(cur, O_RDWR);
	CHECK(sl_nf_writer_adopt(r, fd, &o, &why) < 0, "an unreadable whole block must not be deleted");
	close(fd);

	/* Never through a symbolic link. */
	unlink(cur);
	CHECK(symlink(old, cur) == 0, "symlink");
	CHECK(sl_nf_writer_open(b, cur) < 0, "open through a symbolic link must fail");
	sl_nf_writer_free(a);
	sl_nf_writer_free(b);
	sl_nf_writer_free(r);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_encode();
	test_minimal_file();
	test_lz4_blocks();
	test_absorb(SL_NF_COMP_LZ4, SL_NF_COMP_LZ4);
	test_absorb(SL_NF_COMP_NONE, SL_NF_COMP_LZ4);
	test_absorb(SL_NF_COMP_LZ4, SL_NF_COMP_NONE);
	test_absorb(SL_NF_COMP_NONE, SL_NF_COMP_NONE);
	test_empty();
	test_write_error();
	test_adopt_torn(SL_NF_COMP_NONE);
	test_adopt_torn(SL_NF_COMP_LZ4);
	test_adopt_absorbed();
	/* NFFILE_KEEP=1 keeps the files, e.g. to look at them with nfdump. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (getenv("NFFILE_KEEP"))
		printf("files kept in %s\n", dir);
	else if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("nffile: all tests passed\n");
	return 0;
}
