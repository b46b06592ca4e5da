/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/pcapng.c: the blocks byte by byte (SHB, IDB with its
 * escaped name, EPB with and without a comment), read back by libpcap
 * (sections, interfaces, nanosecond times, the bytes); the comment's parts
 * and escapes; the interface table (find, add, "other" when full, undo);
 * and whole_end at every cut of a file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "check.h"
#include "pcapng.h"
#include "text_escape.h"

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static struct sl_pcapng w;

static void shb(void)
{
	size_t len;
	const uint8_t *p;

	sl_pcapng_init(&w, 1500);
	p = sl_pcapng_section(&w, &len);
	CHECK_EQ_U(len, SL_PCAPNG_SHB_LEN);
	CHECK_EQ_U(rd32(p), 0x0a0d0d0a);
	CHECK_EQ_U(rd32(p + 4), SL_PCAPNG_SHB_LEN);
	CHECK_EQ_U(rd32(p + 8), 0x1a2b3c4d);
	CHECK_EQ_U(rd16(p + 12), 1);
	CHECK_EQ_U(rd16(p + 14), 0);
	CHECK(memcmp(p + 16, "\xff\xff\xff\xff\xff\xff\xff\xff", 8) == 0, "section length unknown");
	CHECK_EQ_U(rd16(p + 24), 4);	/* shb_userappl */
	CHECK_EQ_U(rd16(p + 26), 6);
	CHECK(memcmp(p + 28, "sluice\0\0", 8) == 0);
	CHECK_EQ_U(rd32(p + 36), 0);	/* end of options */
	CHECK_EQ_U(rd32(p + 40), SL_PCAPNG_SHB_LEN);
	CHECK_EQ_U(sl_pcapng_whole_end(p, len), len);
}

static void interfaces(void)
{
	const uint8_t *idb;
	size_t before, len;
	bool added;
	char name[16];

	sl_pcapng_init(&w, 1500);
	CHECK_EQ_I(sl_pcapng_if_find(&w, 1, "eth0", 4), -1);
	CHECK_EQ_I(sl_pcapng_if_add(&w, 1, "eth0", 4, &added), 0);
	CHECK(added);
	CHECK_EQ_I(sl_pcapng_if_find(&w, 1, "eth0", 4), 0);
	CHECK_EQ_I(sl_pcapng_if_find(&w, 101, "eth0", 4), -1);	/* another link type */
	before = w.section_len;
	/* a name with a control byte and a quote: escaped in if_name */
	CHECK_EQ_I(sl_pcapng_if_add(&w, 101, "a\x1b\"b", 4, &added), 1);
	idb = w.section + before;
	CHECK_EQ_U(rd32(idb), 1);
	len = rd32(idb + 4);
	CHECK_EQ_U(len, w.section_len - before);
	CHECK_EQ_U(rd32(idb + len - 4), len);
	CHECK_EQ_U(rd16(idb + 8), 101);
	CHECK_EQ_U(rd32(idb + 12), 1500);
	CHECK_EQ_U(rd16(idb + 16), 2);	/* if_name */
	CHECK_EQ_U(rd16(idb + 18), 7);
	CHECK(memcmp(idb + 20, "a\\x1b\"b\0", 8) == 0, "if_name %.7s", idb + 20);
	CHECK_EQ_U(rd16(idb + 28), 9);	/* if_tsresol */
	CHECK_EQ_U(rd16(idb + 30), 1);
	CHECK_EQ_U(idb[32], 9);
	CHECK_EQ_U(rd32(idb + 36), 0);
	/* undo takes the last one back */
	sl_pcapng_if_undo(&w);
	CHECK_EQ_U(w.section_len, before);
	CHECK_EQ_I(sl_pcapng_if_find(&w, 101, "a\x1b\"b", 4), -1);
	/* a long name is cut to SL_PCAPNG_NAME_MAX, and found cut */
	{
		char longname[100];

		memset(longname, 'x', sizeof(longname));
		CHECK_EQ_I(sl_pcapng_if_add(&w, 1, longname, sizeof(longname), &added), 1);
		CHECK_EQ_I(sl_pcapng_if_find(&w, 1, longname, 60), 1);
	}
	/* full: the last index is "other", added once */
	for (int i = 2; i < SL_PCAPNG_MAX_IF - 1; i++) {
		snprintf(name, sizeof(name), "if%d", i);
		CHECK_EQ_I(sl_pcapng_if_add(&w, 1, name, strlen(name), &added), i);
	}
	CHECK_EQ_I(sl_pcapng_if_add(&w, 1, "new1", 4, &added), SL_PCAPNG_MAX_IF - 1);
	CHECK(added);
	CHECK(memcmp(w.ifs[SL_PCAPNG_MAX_IF - 1].name, "other", 5) == 0);
	before = w.section_len;
	CHECK_EQ_I(sl_pcapng_if_add(&w, 1, "new2", 4, &added), SL_PCAPNG_MAX_IF - 1);
	CHECK(!added);
	CHECK_EQ_U(w.section_len, before);
	CHECK(w.section_len <= SL_PCAPNG_SECTION_MAX);
	CHECK_EQ_U(sl_pcapng_whole_end(w.section + SL_PCAPNG_SHB_LEN, w.section_len - SL_PCAPNG_SHB_LEN),
		   w.section_len - SL_PCAPNG_SHB_LEN);
}

/* An EPB of pkt, comment text c, into buf at *off. */
static void epb(uint8_t *buf, size_t *off, uint32_t if_id, struct sl_time ts, const void *pkt,
		uint32_t caplen, uint32_t len, const char *c)
{
	size_t clen = c ? strlen(c) : 0, n = sl_pcapng_epb_len(caplen, clen);
	uint8_t *dst = buf + *off;

	sl_pcapng_epb_begin(dst, if_id, &ts, caplen, len, clen);
	memcpy(dst + SL_PCAPNG_EPB_HDR, pkt, caplen);
	sl_pcapng_epb_end(dst, caplen, c, clen);
	CHECK_EQ_U(rd32(dst), 6);
	CHECK_EQ_U(rd32(dst + 4), n);
	CHECK_EQ_U(rd32(dst + n - 4), n);
	CHECK_EQ_U(n % 4, 0);
	*off += n;
}

/* Blocks written, read back by libpcap: times in ns, lengths, bytes. */
static void libpcap_reads(void)
{
	static uint8_t buf[65536];
	uint8_t pkt[64];
	size_t off = 0, len;
	bool added;
	char path[] = "/tmp/test_pcapng.XXXXXX", err[PCAP_ERRBUF_SIZE];
	int fd, n = 0;
	FILE *f;
	pcap_t *p;
	struct pcap_pkthdr *h;
	const u_char *data;
	static const struct { int64_t sec; uint32_t nsec; uint32_t caplen, len; const char *c; } want[] = {
		{ 1795990688, 943642001, 20, 20, "prefix \"x\"" },
		{ 1795990689, 5, 21, 60, NULL },
		{ 1, 999999999, 23, 23, "a" },
		{ 4000000000LL, 123, 20, 20, "" },
	};

	for (unsigned i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)(0x45 + i);
	sl_pcapng_init(&w, 262144);
	sl_pcapng_section(&w, &len);
	memcpy(buf, w.section, len);
	off = len;
	/* interface 0 in a section of its own, then a packet */
	CHECK_EQ_I(sl_pcapng_if_add(&w, 101, "eth0", 4, &added), 0);
	memcpy(buf + off, w.section, w.section_len);
	off += w.section_len;
	for (unsigned i = 0; i < 4; i++) {
		struct sl_time t = { want[i].sec, want[i].nsec };

		epb(buf, &off, 0, t, pkt, want[i].caplen, want[i].len, want[i].c);
	}
	CHECK_EQ_U(sl_pcapng_whole_end(buf + SL_PCAPNG_SHB_LEN, off - SL_PCAPNG_SHB_LEN),
		   off - SL_PCAPNG_SHB_LEN);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, buf, off) == (ssize_t)off);
	close(fd);
	f = fopen(path, "rb");
	p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, err);
	CHECK(p != NULL, "%s", err);
	if (p) {
		CHECK_EQ_I(pcap_datalink(p), DLT_RAW);	/* LINKTYPE_RAW 101 */
		CHECK_EQ_I(pcap_snapshot(p), 262144);
		while (pcap_next_ex(p, &h, &data) == 1 && n < 4) {
			CHECK_EQ_I(h->ts.tv_sec, want[n].sec);
			CHECK_EQ_I(h->ts.tv_usec, want[n].nsec);
			CHECK_EQ_U(h->caplen, want[n].caplen);
			CHECK_EQ_U(h->len, want[n].len);
			CHECK(memcmp(data, pkt, h->caplen) == 0, "packet %d bytes", n);
			n++;
		}
		CHECK_EQ_I(n, 4);
		pcap_close(p);
	}
	unlink(path);

	/* every cut of the file: whole_end keeps whole blocks only */
	for (size_t cut = 0; cut <= off - SL_PCAPNG_SHB_LEN; cut++) {
		size_t whole = sl_pcapng_whole_end(buf + SL_PCAPNG_SHB_LEN, cut);

		CHECK(whole <= cut);
		CHECK(cut - whole < sl_pcapng_epb_len(23, 10) + w.section_len,
		      "cut %zu kept %zu", cut, whole);
		if (whole)
			CHECK_EQ_U(rd32(buf + SL_PCAPNG_SHB_LEN + whole - 4),
				   rd32(buf + SL_PCAPNG_SHB_LEN + whole - rd32(buf + SL_PCAPNG_SHB_LEN + whole - 4) + 4));
	}
	/* a block whose trailing length differs is not whole */
	buf[off - 4] ^= 4;
	CHECK(sl_pcapng_whole_end(buf + SL_PCAPNG_SHB_LEN, off - SL_PCAPNG_SHB_LEN) <
	      off - SL_PCAPNG_SHB_LEN);
}

static void times(void)
{
	uint8_t b[64];
	struct sl_time t;

	t = (struct sl_time){ -5, 7 };	/* before 1970: 0 */
	sl_pcapng_epb_begin(b, 0, &t, 0, 0, 0);
	CHECK_EQ_U(rd32(b + 12), 0);
	CHECK_EQ_U(rd32(b + 16), 0);
	t = (struct sl_time){ 253402300799LL, 999999999 };	/* beyond 2554: the last ns */
	sl_pcapng_epb_begin(b, 3, &t, 0, 0, 0);
	CHECK_EQ_U(rd32(b + 8), 3);
	CHECK_EQ_U(rd32(b + 12), 0xffffffffu);
	CHECK_EQ_U(rd32(b + 16), 0xffffffffu);
	t = (struct sl_time){ 18446744072LL, 999999999 };	/* the last second that fits */
	sl_pcapng_epb_begin(b, 0, &t, 0, 0, 0);
	CHECK_EQ_U((uint64_t)rd32(b + 12) << 32 | rd32(b + 16), 18446744072999999999ULL);
}

static const char *comment(const struct sl_pcapng_why *why, size_t cap)
{
	static char out[SL_PCAPNG_COMMENT_MAX + 1];
	struct sl_fmt_buf b;
	size_t n;

	sl_fmt_init(&b, out, cap);
	n = sl_pcapng_comment(&b, why);
	CHECK_EQ_U(n, b.len);
	out[b.len] = 0;
	/* valid UTF-8 without a control byte, whatever came in */
	CHECK_EQ_U(sl_esc_scan(out, b.len, 0), b.len);
	return out;
}

#define BYTES(s) (&(struct sl_bytes){ (const uint8_t *)(s), sizeof(s) - 1 })

static void comments(void)
{
	struct sl_pcapng_why why = { 0 };

	CHECK_STREQ(comment(&why, 100), "");
	why.prefix = BYTES("SSH IN: ");
	CHECK_STREQ(comment(&why, 100), "prefix \"SSH IN: \"");
	why.table = BYTES("filter");
	CHECK_STREQ(comment(&why, 100), "prefix \"SSH IN: \"");	/* no chain: no rule */
	why.chain = BYTES("input");
	why.has_handle = true;
	why.handle = 12;
	why.comment = BYTES("ssh-in");
	why.verdict = BYTES("accept");
	CHECK_STREQ(comment(&why, 200), "prefix \"SSH IN: \"; rule filter/input#12 \"ssh-in\" accept");
	why.has_ct_id = true;
	why.ct_id = 3735928559u;
	why.community_id = BYTES("1:LQU9qZlK+B5F3KDmev6m5PMibrg=");
	CHECK_STREQ(comment(&why, 200), "prefix \"SSH IN: \"; rule filter/input#12 \"ssh-in\" accept; "
					"ct_id 3735928559; community_id 1:LQU9qZlK+B5F3KDmev6m5PMibrg=");
	/* only the parts present; a verdict "jump X" kept whole */
	why = (struct sl_pcapng_why){ .table = BYTES("t"), .chain = BYTES("c"),
				      .verdict = BYTES("jump other") };
	CHECK_STREQ(comment(&why, 100), "rule t/c jump other");
	why = (struct sl_pcapng_why){ .has_ct_id = true, .ct_id = 0 };
	CHECK_STREQ(comment(&why, 100), "ct_id 0");
	/* a stored C terminator ends the text */
	why = (struct sl_pcapng_why){ .prefix = BYTES("abc\0def") };
	CHECK_STREQ(comment(&why, 100), "prefix \"abc\"");
	/* escapes: quote, separator, backslash, controls, C1, invalid UTF-8; UTF-8 kept */
	why = (struct sl_pcapng_why){ .prefix = BYTES("a\"b;c\\d\n\x1b[31m\xc2\x9b\xff\xc3\xa9") };
	CHECK_STREQ(comment(&why, 200),
		    "prefix \"a\\x22b\\x3bc\\x5cd\\x0a\\x1b[31m\\xc2\\x9b\\xff\xc3\xa9\"");
	why = (struct sl_pcapng_why){ .table = BYTES("t\"x"), .chain = BYTES("c;"),
				      .comment = BYTES("it's \"quoted\"") };
	CHECK_STREQ(comment(&why, 200), "rule t\\x22x/c\\x3b \"it's \\x22quoted\\x22\"");
	/* a full buffer cuts at whole units, never inside an escape */
	why = (struct sl_pcapng_why){ .prefix = BYTES("\x01\x02\x03\x04") };
	for (size_t cap = 0; cap < 30; cap++) {
		const char *c = comment(&why, cap);
		size_t n = strlen(c);

		CHECK(n <= cap);
		CHECK(n < 2 || c[n - 1] != '\\', "cap %zu: %s", cap, c);
	}
	/* the longest inputs fit SL_PCAPNG_COMMENT_MAX: a prefix of 127 bytes
	 * (the kernel's), table and chain names of 256 (NFT_NAME_MAXLEN), a
	 * comment of 128, every byte escaped */
	{
		static uint8_t big[256];
		struct sl_bytes pb = { big, 127 }, nb = { big, 256 }, cb = { big, 128 };

		memset(big, 1, sizeof(big));
		why = (struct sl_pcapng_why){ .prefix = &pb, .table = &nb, .chain = &nb, .comment = &cb,
					      .has_handle = true, .handle = UINT64_MAX, .has_ct_id = true,
					      .ct_id = UINT32_MAX };
		CHECK(strlen(comment(&why, SL_PCAPNG_COMMENT_MAX)) < SL_PCAPNG_COMMENT_MAX);
		CHECK(strstr(comment(&why, SL_PCAPNG_COMMENT_MAX), "ct_id 4294967295") != NULL);
	}
}

int main(void)
{
	shb();
	interfaces();
	libpcap_reads();
	times();
	comments();
	return check_summary("test_pcapng");
}
