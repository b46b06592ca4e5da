/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/cef_fmt.c: whole CEF and LEEF lines for a packet, an IPv6
 * packet and a connection; hostile bytes (pipes, backslashes, equals
 * signs, CR, LF, TAB, controls, DEL, C1, invalid UTF-8) in every place they
 * can reach (prefix in the header's templates and in cs1, interface
 * names, vendor, action, an nftables rule's comment in cs2), each read
 * back by a strict reader written from
 * the standard (cef_parse.h) to the bytes expected by the documented
 * replacement rule; a cut buffer; and random bytes through every escaping.
 * The formatter sources are compiled in (the unit-test rule links only the
 * core library).
 */
#include "../../plugins/common/fmt.c"
#include "../../plugins/common/names.c"
#include "../../plugins/common/cef_fmt.c"

#include <stdio.h>
#include <stdlib.h>

#include "cef_parse.h"
#include "check.h"

static union {
	struct sl_record r;
	uint8_t mem[sizeof(struct sl_record) + (SL_F_WELL_KNOWN_COUNT + 8) * sizeof(union sl_value)];
} recmem;

/* A registered field, as nftrace's `verdict` would be. */
#define VERDICT ((sl_field)SL_F_WELL_KNOWN_COUNT)

static char line[65536], dec[65536];

static struct sl_record *rec_new(void)
{
	memset(recmem.mem, 0, sizeof(recmem.mem));
	return &recmem.r;
}

static void set_v4(struct sl_record *r, sl_field f, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	uint8_t ip[4] = { a, b, c, d };

	sl_set_ip4(r, f, ip);
}

static void set_str(struct sl_record *r, sl_field f, const char *s, size_t n)
{
	sl_set_bytes(r, f, s, (uint32_t)n);
}

static struct sl_cef cef_make(enum sl_cef_format format, const char *sig, const char *name,
			      const char *action, char delim)
{
	struct sl_cef_conf c = { format, "sluice", "sluice", "0.1.0", sig, name, 5, action, delim };
	struct sl_cef f;

	CHECK(sl_cef_init(&f, &c) == 0);
	return f;
}

/* The line for r, NUL-terminated in line[]. */
static size_t fmt(const struct sl_cef *f, const struct sl_record *r)
{
	struct sl_fmt_buf b;

	sl_fmt_init(&b, line, sizeof(line) - 1);
	sl_cef_format(f, &b, r);
	CHECK(!b.overflow);
	line[b.len] = '\0';
	return b.len;
}

static void parse(struct cefp_line *l, size_t n)
{
	struct cefp_out o = { dec, 0, sizeof(dec) };

	CHECK(cefp_parse(line, n, &o, l));
}

static bool str_is(const struct cefp_str *s, const char *want, size_t n)
{
	return s && s->n == n && !memcmp(s->p, want, n);
}
#define STR_IS(s, lit) str_is((s), lit, sizeof(lit) - 1)

/* Every byte of line[0..n) printable or valid UTF-8: no control byte but LEEF's TAB. */
static void check_one_line(size_t n, bool tab)
{
	for (size_t i = 0; i < n;) {
		uint8_t c = (uint8_t)line[i];

		if (c < 0x80) {
			CHECK((c >= 0x20 && c != 0x7f) || (tab && c == '\t'));
			i++;
		} else {
			size_t len = c >= 0xc2 && c <= 0xf4 ? sl_utf8_len((const uint8_t *)line + i, n - i) : 0;

			CHECK(len > 0);
			CHECK(!(len == 2 && sl_utf8_is_c1((const uint8_t *)line + i)));
			i += len;
		}
	}
}

static void test_packet(void)
{
	struct sl_record *r = rec_new();
	struct sl_cef f = cef_make(SL_CEF_CEF, "{prefix}", "{prefix}", NULL, 0);
	uint8_t smac[6] = { 0x02, 0, 0, 0, 0, 0x01 }, dmac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	struct cefp_line l;
	size_t n;

	sl_set_time(r, SL_F_TIMESTAMP, 1700000000, 123456789);
	set_str(r, SL_F_PREFIX, "ssh-in ", 7);
	sl_set_u64(r, SL_F_NFLOG_GROUP, 7);
	set_str(r, SL_F_IFNAME_IN, "veth0", 5);
	sl_set_mac(r, SL_F_MAC_SRC, smac);
	sl_set_mac(r, SL_F_MAC_DST, dmac);
	sl_set_u64(r, SL_F_IP_VERSION, 4);
	set_v4(r, SL_F_SRC_ADDR, 192, 0, 2, 1);
	set_v4(r, SL_F_DST_ADDR, 198, 51, 100, 7);
	sl_set_u64(r, SL_F_IP_PROTO, 6);
	sl_set_u64(r, SL_F_IP_LEN, 60);
	sl_set_u64(r, SL_F_SPORT, 40000);
	sl_set_u64(r, SL_F_DPORT, 22);
	sl_set_u64(r, SL_F_MARK, 0x10);
	n = fmt(&f, r);
	CHECK_STREQ(line, "CEF:0|sluice|sluice|0.1.0|ssh-in |ssh-in |5|rt=1700000000123 src=192.0.2.1 "
			"dst=198.51.100.7 spt=40000 dpt=22 proto=TCP smac=02:00:00:00:00:01 "
			"dmac=02:00:00:00:00:02 deviceInboundInterface=veth0 in=60 "
			"cn2Label=nflogGroup cn2=7 cn3Label=mark cn3=16 cs1Label=prefix cs1=ssh-in ");
	parse(&l, n);
	CHECK(STR_IS(&l.head[3], "ssh-in "));
	CHECK(STR_IS(&l.head[5], "5"));
	CHECK(STR_IS(cefp_get(&l, "cs1"), "ssh-in "));
	CHECK(STR_IS(cefp_get(&l, "dpt"), "22"));
	sl_cef_free(&f);

	/* LEEF: tab-separated, its own key names, sev among the attributes */
	f = cef_make(SL_CEF_LEEF, "{prefix}", "{prefix}", "drop", 0);
	n = fmt(&f, r);
	CHECK_STREQ(line, "LEEF:2.0|sluice|sluice|0.1.0|ssh-in |x09|devTime=1700000000123\tsev=5\t"
			"src=192.0.2.1\tdst=198.51.100.7\tsrcPort=40000\tdstPort=22\tproto=TCP\t"
			"srcMAC=02:00:00:00:00:01\tdstMAC=02:00:00:00:00:02\t"
			"deviceInboundInterface=veth0\tsrcBytes=60\taction=drop\tnflogGroup=7\tmark=16\t"
			"prefix=ssh-in ");
	parse(&l, n);
	CHECK(l.leef && l.delim == '\t');
	CHECK(STR_IS(cefp_get(&l, "prefix"), "ssh-in "));
	CHECK(STR_IS(cefp_get(&l, "action"), "drop"));
	/* a record with a verdict of its own (nftrace) says it instead of the option */
	f.verdict_field = VERDICT;
	n = fmt(&f, r);
	CHECK(strstr(line, "\taction=drop\t") != NULL);
	set_str(r, VERDICT, "acc=ept\t", 8);
	n = fmt(&f, r);
	CHECK(strstr(line, "\taction=acc=ept\xef\xbf\xbd\t") != NULL);
	sl_cef_free(&f);
	f = cef_make(SL_CEF_CEF, "{prefix}", "{prefix}", "drop", 0);
	f.verdict_field = VERDICT;
	n = fmt(&f, r);
	CHECK(strstr(line, " act=acc\\=ept\xef\xbf\xbd ") != NULL);
	parse(&l, n);
	CHECK(STR_IS(cefp_get(&l, "act"), "acc=ept\xef\xbf\xbd"));
	sl_cef_free(&f);
}

static void test_ipv6_and_connection(void)
{
	struct sl_record *r = rec_new();
	struct sl_cef f = cef_make(SL_CEF_CEF, "fw", "conn {prefix}", "accept", 0);
	uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, b6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	size_t n;

	sl_set_u64(r, SL_F_IP_VERSION, 6);
	sl_set_ip6(r, SL_F_SRC_ADDR, a6);
	sl_set_ip6(r, SL_F_DST_ADDR, b6);
	sl_set_u64(r, SL_F_IP_PROTO, 58);
	fmt(&f, r);
	CHECK_STREQ(line, "CEF:0|sluice|sluice|0.1.0|fw|conn |5|c6a2Label=Source IPv6 Address "
			"c6a2=2001:db8::1 c6a3Label=Destination IPv6 Address c6a3=2001:db8::2 "
			"proto=ICMPV6 act=accept");

	/* a conntrack event: the original direction; ports only for protocols with ports */
	r = rec_new();
	sl_set_u64(r, SL_F_FAMILY, 2);
	sl_set_u64(r, SL_F_CT_EVENT, SL_CT_EVENT_DESTROY);
	sl_set_u64(r, SL_F_CT_ID, 4242);
	set_v4(r, SL_F_ORIG_SRC, 10, 0, 0, 1);
	set_v4(r, SL_F_ORIG_DST, 10, 0, 0, 2);
	sl_set_u64(r, SL_F_IP_PROTO, 17);
	sl_set_u64(r, SL_F_ORIG_SPORT, 5353);
	sl_set_u64(r, SL_F_ORIG_DPORT, 53);
	sl_set_u64(r, SL_F_ORIG_BYTES, 100);
	sl_set_u64(r, SL_F_REPLY_BYTES, 300);
	set_v4(r, SL_F_REPLY_SRC, 10, 0, 0, 2);
	fmt(&f, r);
	CHECK_STREQ(line, "CEF:0|sluice|sluice|0.1.0|fw|conn |5|src=10.0.0.1 dst=10.0.0.2 spt=5353 "
			"dpt=53 proto=UDP in=100 out=300 act=accept cn1Label=conntrackId cn1=4242 "
			"cs3Label=conntrackEvent cs3=DESTROY");
	sl_set_u64(r, SL_F_IP_PROTO, 1);	/* ICMP: orig_sport is an id, not a port */
	n = fmt(&f, r);
	CHECK(!strstr(line, "spt=") && !strstr(line, "dpt="));
	CHECK(strstr(line, " proto=ICMP ") != NULL);
	(void)n;
	sl_cef_free(&f);
}

/* The prefix below in each place: header templates, cs1, an interface name. */
static const uint8_t hostile[] = "a|b\\c=d\ne\rf\tg\x01h\x7fi\xffj\xc2\x9bk\xc3\xa9l\xe2\x82m\xed\xa0\x80n\xf0\x9f\x92\xa9 ";

static void test_hostile(void)
{
	struct sl_record *r = rec_new();
	struct sl_cef f = cef_make(SL_CEF_CEF, "{prefix}", "x={prefix}|{prefix}", "a=b\\c|d", 0);
	size_t hn = sizeof(hostile) - 1, n, en;
	char want[512], want2[1100];
	struct cefp_line l;

	set_str(r, SL_F_PREFIX, (const char *)hostile, hn);
	set_str(r, SL_F_IFNAME_IN, (const char *)hostile, hn);
	n = fmt(&f, r);
	check_one_line(n, false);
	/* the header, escaped by hand for the pipe and backslash, controls replaced */
	CHECK(strstr(line, "|a\\|b\\\\c=d\xef\xbf\xbd" "e\xef\xbf\xbd" "f\xef\xbf\xbd" "g") != NULL);
	/* the value: '=' escaped, LF and CR as \n \r, the pipe kept */
	CHECK(strstr(line, "cs1=a|b\\\\c\\=d\\ne\\rf\xef\xbf\xbd" "g") != NULL);
	parse(&l, n);
	en = cefp_expect(want, hostile, hn, true, false);
	CHECK(str_is(&l.head[3], want, en));
	/* name: "x=" then the prefix, "|", the prefix */
	memcpy(want2, "x=", 2);
	memcpy(want2 + 2, want, en);
	want2[2 + en] = '|';
	memcpy(want2 + 3 + en, want, en);
	CHECK(str_is(&l.head[4], want2, 3 + 2 * en));
	en = cefp_expect(want, hostile, hn, false, true);
	CHECK(str_is(cefp_get(&l, "cs1"), want, en));
	CHECK(str_is(cefp_get(&l, "deviceInboundInterface"), want, en));
	CHECK(STR_IS(cefp_get(&l, "act"), "a=b\\c|d"));
	CHECK(l.npairs == 4);
	sl_cef_free(&f);

	/* LEEF with '^': the delimiter escaped in values, TAB replaced */
	f = cef_make(SL_CEF_LEEF, "{prefix}", "", NULL, '^');
	set_str(r, SL_F_PREFIX, "a^b\tc=d\\", 8);
	n = fmt(&f, r);
	check_one_line(n, false);
	CHECK(strstr(line, "|^|") != NULL);
	CHECK(strstr(line, "^prefix=a\\^b\xef\xbf\xbd" "c=d\\\\") != NULL);
	parse(&l, n);
	CHECK(l.delim == '^');
	CHECK(STR_IS(cefp_get(&l, "prefix"), "a^b\xef\xbf\xbd" "c=d\\"));
	sl_cef_free(&f);
}

/* nflog's rule_* fields, as the host registers them after VERDICT. */
static const struct sl_rule_fields rule_ids = {
	VERDICT + 1, VERDICT + 2, VERDICT + 3, VERDICT + 4, VERDICT + 5, VERDICT + 6,
};

static void set_rule(struct sl_record *r, const char *comment, size_t n)
{
	set_str(r, (sl_field)rule_ids.family, "inet", 4);
	set_str(r, (sl_field)rule_ids.table, "filter", 6);
	set_str(r, (sl_field)rule_ids.chain, "input", 5);
	sl_set_u64(r, (sl_field)rule_ids.handle, 12);
	if (comment)
		set_str(r, (sl_field)rule_ids.comment, comment, n);
	set_str(r, (sl_field)rule_ids.verdict, "drop", 4);
}

/*
 * The rule (nflog's rules: true): act= its verdict, cs2 TABLE/CHAIN#HANDLE
 * "COMMENT" with a hostile comment escaped inside the quotes and then as a
 * value; nftrace's verdict first; nothing of it on an unattributed record.
 */
static void test_rule(void)
{
	struct sl_record *r = rec_new();
	struct sl_cef f = cef_make(SL_CEF_CEF, "{prefix}", "{prefix}", "accept", 0);
	char quoted[256], want[1024], comment[sizeof(hostile) + 1];
	size_t n, qn = 0, en;
	struct cefp_line l;

	set_str(r, SL_F_PREFIX, "in ", 3);
	n = fmt(&f, r);
	CHECK(!strstr(line, "cs2") && strstr(line, "|5|act=accept ") != NULL, "%s", line);
	f.rule = rule_ids;
	n = fmt(&f, r);
	CHECK(!strstr(line, "cs2"), "no table and chain, no rule: %s", line);
	set_rule(r, "ssh in", 6);
	n = fmt(&f, r);
	CHECK_STREQ(line, "CEF:0|sluice|sluice|0.1.0|in |in |5|act=drop cs2Label=rule "
			"cs2=filter/input#12 \"ssh in\" cs1Label=prefix cs1=in ");
	/* a hostile comment: quote and backslash escaped in the quotes, then CEF's rules */
	quoted[qn++] = '"';
	for (size_t i = 0; i < sizeof(hostile) - 1; i++) {
		if (hostile[i] == '"' || hostile[i] == '\\')
			quoted[qn++] = '\\';
		quoted[qn++] = (char)hostile[i];
	}
	quoted[qn++] = '\\';
	quoted[qn++] = '"';
	quoted[qn++] = '"';
	memcpy(comment, hostile, sizeof(hostile) - 1);
	comment[sizeof(hostile) - 1] = '"';	/* the hostile bytes and a quote */
	set_rule(r, comment, sizeof(hostile));
	n = fmt(&f, r);
	check_one_line(n, false);
	parse(&l, n);
	memcpy(want, "filter/input#12 ", 16);
	en = 16 + cefp_expect(want + 16, (const uint8_t *)quoted, qn, false, true);
	CHECK(str_is(cefp_get(&l, "cs2"), want, en), "cs2 read back: %s", line);
	CHECK(STR_IS(cefp_get(&l, "cs2Label"), "rule"));
	CHECK(STR_IS(cefp_get(&l, "act"), "drop"));
	/* nftrace's verdict comes first */
	f.verdict_field = VERDICT;
	set_str(r, VERDICT, "accept", 6);
	n = fmt(&f, r);
	CHECK(strstr(line, "|5|act=accept ") != NULL);
	sl_unset(r, VERDICT);
	/* without handle and comment: TABLE/CHAIN alone */
	sl_unset(r, (sl_field)rule_ids.handle);
	sl_unset(r, (sl_field)rule_ids.comment);
	n = fmt(&f, r);
	CHECK(strstr(line, " cs2Label=rule cs2=filter/input cs1Label") != NULL, "%s", line);
	sl_cef_free(&f);

	/* LEEF: action= and rule= */
	f = cef_make(SL_CEF_LEEF, "{prefix}", "{prefix}", NULL, 0);
	f.rule = rule_ids;
	set_rule(r, "a\tb", 3);
	n = fmt(&f, r);
	CHECK(strstr(line, "\taction=drop\trule=filter/input#12 \"a\xef\xbf\xbd" "b\"\tprefix=in ") != NULL,
	      "%s", line);
	parse(&l, n);
	CHECK(STR_IS(cefp_get(&l, "rule"), "filter/input#12 \"a\xef\xbf\xbd" "b\""));
	sl_cef_free(&f);
}

static void test_templates(void)
{
	struct sl_record *r = rec_new();
	struct sl_cef f = cef_make(SL_CEF_CEF, "{prefix}", "{prefix}{prefix}", NULL, 0);

	/* no prefix: "-" for empty fields, no cs1 */
	fmt(&f, r);
	CHECK_STREQ(line, "CEF:0|sluice|sluice|0.1.0|-|-|5|");
	set_str(r, SL_F_PREFIX, "", 0);
	fmt(&f, r);
	CHECK_STREQ(line, "CEF:0|sluice|sluice|0.1.0|-|-|5|");
	set_str(r, SL_F_PREFIX, "p", 1);
	fmt(&f, r);
	CHECK_STREQ(line, "CEF:0|sluice|sluice|0.1.0|p|pp|5|cs1Label=prefix cs1=p");
	sl_cef_free(&f);
	f = cef_make(SL_CEF_CEF, "100", "{prefi}x {prefix", NULL, 0);
	fmt(&f, r);
	CHECK_STREQ(line, "CEF:0|sluice|sluice|0.1.0|100|{prefi}x {prefix|5|cs1Label=prefix cs1=p");
	sl_cef_free(&f);
	{
		struct sl_cef_conf c = { SL_CEF_CEF, "a|b", "c\\d", "e\nf", "s", "n", 11, NULL, 0 };

		CHECK(sl_cef_init(&f, &c) == 0);
		fmt(&f, r);
		CHECK_STREQ(line, "CEF:0|a\\|b|c\\\\d|e\xef\xbf\xbd" "f|s|n|10|cs1Label=prefix cs1=p");
		sl_cef_free(&f);
	}
}

/* A line that does not fit: overflow, at every size below the whole. */
static void test_overflow(void)
{
	struct sl_record *r = rec_new();
	struct sl_cef f = cef_make(SL_CEF_CEF, "{prefix}", "{prefix}", NULL, 0);
	size_t whole;

	set_str(r, SL_F_PREFIX, (const char *)hostile, sizeof(hostile) - 1);
	set_v4(r, SL_F_SRC_ADDR, 192, 0, 2, 1);
	whole = fmt(&f, r);
	for (size_t cap = 0; cap < whole; cap++) {
		struct sl_fmt_buf b;

		sl_fmt_init(&b, line, cap);
		sl_cef_format(&f, &b, r);
		CHECK(b.overflow);
		CHECK(b.len <= cap);
	}
	sl_cef_free(&f);
}

/* Random bytes through every escaping: one line, read back to the rule's bytes. */
static void test_random(void)
{
	static const enum sl_cef_format formats[] = { SL_CEF_CEF, SL_CEF_LEEF, SL_CEF_LEEF };
	static const char delims[] = { 0, '\t', '^' };
	uint8_t raw[64];
	char want[256];
	unsigned seed = 12345;

	for (unsigned t = 0; t < 3; t++) {
		struct sl_cef f = cef_make(formats[t], "{prefix}", "{prefix}", NULL, delims[t]);

		for (unsigned i = 0; i < 20000; i++) {
			struct sl_record *r = rec_new();
			size_t len = (seed = seed * 1103515245 + 12345) >> 16 & 63, n, en;
			struct cefp_line l;
			const struct cefp_str *v;

			for (size_t j = 0; j < len; j++) {
				seed = seed * 1103515245 + 12345;
				/* bias towards the bytes that matter */
				raw[j] = seed >> 16 & 1 ? (uint8_t)"|\\=\n\r\t^ \x01\x7f\xc2\x80\xe2\xf0\xed\xff"[seed >> 20 & 15]
							: (uint8_t)(seed >> 8);
			}
			set_str(r, SL_F_PREFIX, (const char *)raw, len);
			n = fmt(&f, r);
			check_one_line(n, delims[t] == '\t');
			parse(&l, n);
			en = cefp_expect(want, raw, len, true, false);
			CHECK(len ? str_is(&l.head[3], want, en) : STR_IS(&l.head[3], "-"));
			/* a printable delimiter in a LEEF value is escaped, TAB replaced */
			en = cefp_expect(want, raw, len, false, true);
			v = cefp_get(&l, formats[t] == SL_CEF_LEEF ? "prefix" : "cs1");
			CHECK(len ? str_is(v, want, en) : v == NULL);
		}
		sl_cef_free(&f);
	}
}

int main(void)
{
	test_packet();
	test_ipv6_and_connection();
	test_hostile();
	test_rule();
	test_templates();
	test_overflow();
	test_random();
	return check_summary("test_cef_fmt");
}
