/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * replay's capture framing (plugins/common/capture.h): the in-place reader
 * of classic pcap files agrees with libpcap packet for packet on every
 * capture in tests/data/ (headers, timestamps, bytes), every packet makes
 * a record with the fields of its link type, the errors libpcap reports
 * are reported alike, malformed packets are refused, and no cut of a file
 * makes the reader or sl_cap_fill read outside it (under the ASan build).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "capture.h"
#include "check.h"

#ifndef TEST_SOURCE_DIR
#define TEST_SOURCE_DIR "."
#endif

static union {
	struct sl_record r;
	uint8_t mem[sizeof(struct sl_record) + SL_MAX_FIELDS * sizeof(union sl_value)];
} rec_mem;

static struct sl_record *fresh(void)
{
	memset(&rec_mem, 0xa5, sizeof(rec_mem));
	memset(rec_mem.r.present, 0, sizeof(rec_mem.r.present));
	return &rec_mem.r;
}

static uint8_t *slurp(const char *name, size_t *len)
{
	char path[512];
	uint8_t *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/tests/data/%s", TEST_SOURCE_DIR, name);
	f = fopen(path, "rb");
	CHECK(f != NULL);
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n);
	CHECK(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* The in-place reader and libpcap read the same packets from a classic pcap. */
static void test_agrees_with_libpcap(const char *name, int want_dlt, unsigned want_packets)
{
	char err[PCAP_ERRBUF_SIZE], path[512];
	struct sl_cap_map m;
	struct pcap_pkthdr *h, *ph;
	const u_char *p = NULL, *pp = NULL;	/* for gcc -O3: set by the first _next() */
	unsigned n = 0;
	size_t len;
	uint8_t *file = slurp(name, &len);
	pcap_t *pc;

	if (!file)
		return;
	snprintf(path, sizeof(path), "%s/tests/data/%s", TEST_SOURCE_DIR, name);
	pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
	CHECK(pc != NULL);
	CHECK(sl_cap_map_ok(file) && sl_cap_map_open(&m, file, len) == 0);
	/* libpcap maps LINKTYPE_RAW (101) to its DLT_RAW */
	CHECK(m.dlt == want_dlt && pcap_datalink(pc) == (want_dlt == SL_LT_RAW ? DLT_RAW : want_dlt));
	for (;;) {
		int rc = sl_cap_map_next(&m, &h, &p), prc = pcap_next_ex(pc, &ph, &pp);
		struct sl_time ts = {h->ts.tv_sec, (uint32_t)h->ts.tv_usec};
		struct sl_record *r;

		CHECK(rc == prc);
		if (rc != 1 || prc != 1)
			break;
		n++;
		CHECK(h->caplen == ph->caplen && h->len == ph->len);
		CHECK(h->ts.tv_sec == ph->ts.tv_sec && h->ts.tv_usec == ph->ts.tv_usec);
		CHECK(memcmp(p, pp, h->caplen) == 0);
		CHECK(p >= file && p + h->caplen <= file + len);	/* in place, no copy */
		r = fresh();
		CHECK(sl_cap_fill(m.dlt, r, p, h->caplen, h->len, &ts) == 0);
		CHECK(sl_has(r, SL_F_PACKET) && sl_has(r, SL_F_FAMILY) && sl_has(r, SL_F_TIMESTAMP));
		if (want_dlt == DLT_NFLOG)
			continue;	/* the kernel's NFULA_TIMESTAMP, when it sent one */
		CHECK(r->v[SL_F_TIMESTAMP].time.sec == ph->ts.tv_sec &&
		      r->v[SL_F_TIMESTAMP].time.nsec == (uint32_t)ph->ts.tv_usec);
		/* the network header follows the link header, whatever its length */
		CHECK(r->v[SL_F_PACKET].bytes.ptr + r->v[SL_F_PACKET].bytes.len == p + h->caplen);
		CHECK(r->v[SL_F_HW_PROTOCOL].u64 == 0x0800 || r->v[SL_F_HW_PROTOCOL].u64 == 0x86dd);
		CHECK((r->v[SL_F_PACKET].bytes.ptr[0] >> 4) ==
		      (r->v[SL_F_HW_PROTOCOL].u64 == 0x0800 ? 4 : 6));
		if (want_dlt == DLT_EN10MB) {
			CHECK(r->v[SL_F_FAMILY].u64 == SL_CAP_FAM_NETDEV && r->v[SL_F_HWTYPE].u64 == 1);
			CHECK(r->v[SL_F_HWADDR].bytes.len == 6 && r->v[SL_F_HWADDR].bytes.ptr == p + 6);
			/* eth-vlan.pcap: every frame has one 802.1Q tag */
			CHECK(r->v[SL_F_HWHDR].bytes.len == (strstr(name, "vlan") ? 18u : 14u));
		}
		if (want_dlt == DLT_LINUX_SLL2)
			CHECK(sl_has(r, SL_F_IFINDEX_IN) || sl_has(r, SL_F_IFINDEX_OUT));
	}
	CHECK(n == want_packets);
	CHECK(sl_cap_map_next(&m, &h, &p) == PCAP_ERROR_BREAK);
	pcap_close(pc);
	free(file);
}

/* What the in-place reader refuses goes to libpcap. */
static void test_not_mapped(void)
{
	size_t len;
	uint8_t *f = slurp("eth-mixed.pcapng", &len);
	uint8_t hdr[SL_CAP_FILE_HDR];
	struct sl_cap_map m;

	CHECK(f && !sl_cap_map_ok(f) && sl_cap_map_open(&m, f, len) < 0);
	free(f);
	f = slurp("eth-mixed.pcap", &len);
	if (!f)
		return;
	CHECK(sl_cap_map_open(&m, f, SL_CAP_FILE_HDR - 1) < 0);
	/* the other byte order */
	memcpy(hdr, f, sizeof(hdr));
	for (int i = 0; i < 4; i++)
		hdr[i] = f[3 - i];
	CHECK(!sl_cap_map_ok(hdr));
	/* FCS bits in the link type field */
	memcpy(hdr, f, sizeof(hdr));
	hdr[23] = 0x10;
	CHECK(!sl_cap_map_ok(hdr));
	/* a link type we do not read, and DLT_RAW (whose number is not its LINKTYPE_) */
	memcpy(hdr, f, sizeof(hdr));
	hdr[20] = 105;	/* IEEE802_11 */
	CHECK(!sl_cap_map_ok(hdr));
	hdr[20] = DLT_RAW;
	CHECK(!sl_cap_map_ok(hdr));
	hdr[20] = SL_LT_RAW;
	CHECK(sl_cap_map_ok(hdr));
	free(f);
}

/* A hand-made classic pcap: file header then records. */
struct cap {
	uint8_t b[1024];
	size_t len;
};

static void cap_start(struct cap *c, uint32_t magic, uint32_t snaplen, uint32_t dlt)
{
	uint32_t fh[6] = {magic, 2 | 4u << 16, 0, 0, snaplen, dlt};

	memcpy(c->b, fh, sizeof(fh));
	c->len = sizeof(fh);
}

static void cap_put(struct cap *c, uint32_t sec, uint32_t frac, uint32_t caplen, uint32_t len,
		    const void *data, size_t have)
{
	uint32_t rh[4] = {sec, frac, caplen, len};

	memcpy(c->b + c->len, rh, sizeof(rh));
	memcpy(c->b + c->len + sizeof(rh), data, have);
	c->len += sizeof(rh) + have;
}

static const uint8_t ip4[20] = {0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2};

static void test_framing(void)
{
	struct pcap_pkthdr *h;
	const u_char *p;
	struct sl_cap_map m;
	struct cap c;

	/* microseconds become nanoseconds; nanosecond files are taken as they are */
	cap_start(&c, 0xa1b2c3d4, 65535, SL_LT_RAW);
	cap_put(&c, 7, 5, 20, 20, ip4, 20);
	CHECK(sl_cap_map_open(&m, c.b, c.len) == 0 && !m.nsec && m.snaplen == 65535);
	CHECK(sl_cap_map_next(&m, &h, &p) == 1 && h->ts.tv_sec == 7 && h->ts.tv_usec == 5000);
	CHECK(sl_cap_map_next(&m, &h, &p) == PCAP_ERROR_BREAK);
	cap_start(&c, 0xa1b23c4d, 65535, SL_LT_RAW);
	cap_put(&c, 7, 5, 20, 20, ip4, 20);
	CHECK(sl_cap_map_open(&m, c.b, c.len) == 0 && m.nsec);
	CHECK(sl_cap_map_next(&m, &h, &p) == 1 && h->ts.tv_usec == 5);

	/* a record cut in its header, and in its data: libpcap's messages */
	cap_start(&c, 0xa1b2c3d4, 65535, SL_LT_RAW);
	cap_put(&c, 1, 0, 20, 20, ip4, 20);
	cap_put(&c, 2, 0, 20, 20, ip4, 20);
	CHECK(sl_cap_map_open(&m, c.b, c.len - 25) == 0);
	CHECK(sl_cap_map_next(&m, &h, &p) == 1);
	CHECK(sl_cap_map_next(&m, &h, &p) == PCAP_ERROR &&
	      strcmp(m.err, "truncated dump file; tried to read 16 header bytes, only got 11") == 0);
	CHECK(sl_cap_map_next(&m, &h, &p) == PCAP_ERROR_BREAK);
	CHECK(sl_cap_map_open(&m, c.b, c.len - 5) == 0);
	CHECK(sl_cap_map_next(&m, &h, &p) == 1);
	CHECK(sl_cap_map_next(&m, &h, &p) == PCAP_ERROR &&
	      strcmp(m.err, "truncated dump file; tried to read 20 captured bytes, only got 15") == 0);

	/* a capture length no capture could hold */
	cap_start(&c, 0xa1b2c3d4, 65535, SL_LT_RAW);
	cap_put(&c, 1, 0, 300000, 300000, ip4, 20);
	CHECK(sl_cap_map_open(&m, c.b, c.len) == 0);
	CHECK(sl_cap_map_next(&m, &h, &p) == PCAP_ERROR &&
	      strcmp(m.err, "invalid packet capture length 300000, bigger than snaplen of 65535") == 0);
}

static void test_fill(void)
{
	const struct sl_time ts = {1, 2};
	uint8_t eth[14 + 9 * 4 + 20];
	struct sl_record *r;

	/* a packet cut by the snap length: caplen and orig_len of the network part */
	r = fresh();
	CHECK(sl_cap_fill(SL_LT_RAW, r, ip4, 20, 1500, &ts) == 0);
	CHECK(r->v[SL_F_FAMILY].u64 == SL_CAP_FAM_IPV4 && r->v[SL_F_HW_PROTOCOL].u64 == 0x0800);
	CHECK(r->v[SL_F_CAPLEN].u64 == 20 && r->v[SL_F_ORIG_LEN].u64 == 1500);
	r = fresh();
	CHECK(sl_cap_fill(SL_LT_RAW, r, ip4, 20, 20, &ts) == 0 && !sl_has(r, SL_F_CAPLEN));
	/* the version must match the link type */
	CHECK(sl_cap_fill(DLT_IPV6, fresh(), ip4, 20, 20, &ts) < 0);
	CHECK(sl_cap_fill(DLT_IPV4, fresh(), ip4, 20, 20, &ts) == 0);
	CHECK(sl_cap_fill(SL_LT_RAW, fresh(), ip4, 0, 20, &ts) < 0);
	CHECK(sl_cap_fill(105, fresh(), ip4, 20, 20, &ts) < 0);

	/* Ethernet: too short, two tags, and nine (more than replay follows) */
	memset(eth, 0, sizeof(eth));
	CHECK(sl_cap_fill(DLT_EN10MB, fresh(), eth, 13, 13, &ts) < 0);
	for (int i = 0; i < 9; i++) {
		eth[12 + 4 * i] = 0x81;
		eth[13 + 4 * i] = 0x00;
	}
	eth[12 + 4 * 9] = 0x08;
	CHECK(sl_cap_fill(DLT_EN10MB, fresh(), eth, sizeof(eth), sizeof(eth), &ts) < 0);
	eth[12 + 4 * 2] = 0x08;	/* two tags, then IPv4 */
	eth[13 + 4 * 2] = 0x00;
	r = fresh();
	CHECK(sl_cap_fill(DLT_EN10MB, r, eth, sizeof(eth), sizeof(eth), &ts) == 0);
	CHECK(r->v[SL_F_HWHDR].bytes.len == 22 && r->v[SL_F_HW_PROTOCOL].u64 == 0x0800);
	CHECK(r->v[SL_F_PACKET].bytes.ptr == eth + 22);
	/* a tag cut short */
	CHECK(sl_cap_fill(DLT_EN10MB, fresh(), eth, 16, 16, &ts) < 0);
	/* an 802.3 length is no protocol */
	eth[12] = 0x00;
	eth[13] = 0x40;
	r = fresh();
	CHECK(sl_cap_fill(DLT_EN10MB, r, eth, sizeof(eth), sizeof(eth), &ts) == 0 &&
	      !sl_has(r, SL_F_HW_PROTOCOL));
}

/* Every cut of every file, each in an exact-size buffer: no read outside it. */
static void test_cuts(const char *name)
{
	size_t len;
	uint8_t *file = slurp(name, &len);
	unsigned packets = 0;

	if (!file)
		return;
	for (size_t k = SL_CAP_FILE_HDR; k <= len; k += 7) {
		uint8_t *cut = malloc(k);
		struct pcap_pkthdr *h;
		struct sl_cap_map m;
		const u_char *p;
		int rc;

		memcpy(cut, file, k);
		CHECK(sl_cap_map_open(&m, cut, k) == 0);
		while ((rc = sl_cap_map_next(&m, &h, &p)) == 1) {
			struct sl_time ts = {0, 0};

			sl_cap_fill(m.dlt, fresh(), p, h->caplen, h->len, &ts);
			packets++;
		}
		CHECK(rc == PCAP_ERROR_BREAK || rc == PCAP_ERROR);
		free(cut);
	}
	CHECK(packets > 0);
	free(file);
}

int main(void)
{
	static const struct {
		const char *name;
		int dlt;
	} files[] = {
		{"eth-mixed.pcap", DLT_EN10MB},	 {"eth-vlan.pcap", DLT_EN10MB},
		{"nflog-mixed.pcap", DLT_NFLOG}, {"raw-mixed.pcap", SL_LT_RAW},
		{"sll-mixed.pcap", DLT_LINUX_SLL}, {"sll2-mixed.pcap", DLT_LINUX_SLL2},
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		test_agrees_with_libpcap(files[i].name, files[i].dlt, 40);	/* tests/data/counts.txt */
		test_cuts(files[i].name);
	}
	test_not_mapped();
	test_framing();
	test_fill();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("capture: all checks passed\n");
	return 0;
}
