/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/syslog_fmt.c: RFC 5424 6.5's examples 1 and 2 (the
 * first with the one difference the formatter documents: a numeric +00:00
 * offset and microseconds), PRI = facility * 8 + severity at the edges,
 * NILVALUE for every empty field, structured data read back by an RFC
 * 5424 reader (syslog_parse.h) with '"', '\' and ']' each escaped (an
 * nftables rule's hostile comment among the rule_* params), the
 * header fields' limits and PRINTUSASCII rule, the RFC 3164 header, the
 * text's escaping and cut, times outside the calendar, and the framing.
 * The formatter sources are compiled in (the unit-test rule links only
 * the core library).  Times are in TZ=UTC0 or UTC+7 (set here).
 */
#include "../../plugins/common/fmt.c"
#include "../../plugins/common/text_escape.c"
#include "../../plugins/common/syslog_fmt.c"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "syslog_parse.h"

static union {
	struct sl_record r;
	uint8_t mem[sizeof(struct sl_record) + (SL_F_WELL_KNOWN_COUNT + 8) * sizeof(union sl_value)];
} recmem;

static char out[70000];

static void set_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

static struct sl_record *rec_text(const char *text)
{
	memset(recmem.mem, 0, sizeof(recmem.mem));
	sl_set_bytes(&recmem.r, SL_F_TEXT, text, (uint32_t)strlen(text));
	return &recmem.r;
}

static void init(struct sl_syslog_fmt *f, enum sl_syslog_format format, int fac, int sev,
		 const char *host, const char *app, const char *procid, const char *msgid,
		 const char *sd_id)
{
	struct sl_syslog_fmt_conf c = { format, false, fac, sev, host, app, procid, msgid, sd_id };

	CHECK(sl_syslog_fmt_init(f, &c) == 0);
}

/* The message for r at ts with room cap, NUL-terminated in out. */
static size_t msg(struct sl_syslog_fmt *f, const struct sl_record *r, struct sl_time ts, size_t cap,
		  bool *escaped)
{
	bool e;
	size_t n = sl_syslog_fmt_message(f, out, cap, r, ts, escaped ? escaped : &e);

	CHECK(n <= cap);
	out[n] = 0;
	return n;
}

#define EXPECT_MSG(f, r, ts, want)                                                        \
	do {                                                                              \
		size_t n_ = msg((f), (r), (ts), sizeof(out) - 1, NULL);                   \
		CHECK(n_ == strlen(want) && !memcmp(out, want, n_), "got '%s' want '%s'", \
		      out, want);                                                         \
	} while (0)

static const struct sl_time t_ex1 = { 1065910455, 3000000 };	/* 2003-10-11T22:14:15.003Z */
static const struct sl_time t_ex2 = { 1061727255, 3000 };	/* 2003-08-24T12:14:15.000003Z */

static void test_rfc5424_examples(void)
{
	struct sl_syslog_fmt f;

	/* 6.5 example 1: auth (4) crit (2), no PROCID, MSGID ID47, BOM then the text */
	set_tz("UTC0");
	init(&f, SL_SYSLOG_RFC5424, 4, 2, "mymachine.example.com", "su", NULL, "ID47", NULL);
	EXPECT_MSG(&f, rec_text("\xEF\xBB\xBF'su root' failed for lonvick on /dev/pts/8"), t_ex1,
		   "<34>1 2003-10-11T22:14:15.003000+00:00 mymachine.example.com su - ID47 - "
		   "\xEF\xBB\xBF'su root' failed for lonvick on /dev/pts/8");

	/* example 2, byte for byte: local4 (20) notice (5), 7 hours west of UTC */
	set_tz("UTC+7");
	init(&f, SL_SYSLOG_RFC5424, 20, 5, "192.0.2.1", "myproc", "8710", "-", NULL);
	EXPECT_MSG(&f, rec_text("%% It's time to make the do-nuts."), t_ex2,
		   "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - "
		   "%% It's time to make the do-nuts.");
	set_tz("UTC0");
}

static void test_pri(void)
{
	static const struct {
		int fac, sev;
		const char *want;
	} edge[] = {
		{ 0, 0, "<0>" }, { 0, 7, "<7>" }, { 1, 0, "<8>" }, { 4, 2, "<34>" },
		{ 20, 5, "<165>" }, { 23, 0, "<184>" }, { 23, 7, "<191>" },
	};
	static const int bad[][2] = { { -1, 0 }, { 24, 0 }, { 0, -1 }, { 0, 8 }, { 99, 99 } };
	struct sl_syslog_fmt f;
	char want[8];

	for (unsigned i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		init(&f, SL_SYSLOG_RFC5424, edge[i].fac, edge[i].sev, "h", "a", "1", "-", NULL);
		msg(&f, rec_text("x"), t_ex1, sizeof(out) - 1, NULL);
		CHECK(!strncmp(out, edge[i].want, strlen(edge[i].want)) &&
		      !strncmp(out + strlen(edge[i].want), "1 ", 2), "%d.%d: '%s'", edge[i].fac,
		      edge[i].sev, out);
	}
	/* every pair: the RFC's definition; RFC 3164 puts the date right after it */
	for (int fac = 0; fac < 24; fac++)
		for (int sev = 0; sev < 8; sev++) {
			int w = snprintf(want, sizeof(want), "<%d>", fac * 8 + sev);

			init(&f, SL_SYSLOG_RFC3164, fac, sev, "h", "a", "1", "-", NULL);
			msg(&f, rec_text("x"), t_ex1, sizeof(out) - 1, NULL);
			CHECK(!strncmp(out, want, (size_t)w) && !strncmp(out + w, "Oct 11 ", 7),
			      "%d.%d: '%s'", fac, sev, out);
		}
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sl_syslog_fmt_conf c = { SL_SYSLOG_RFC5424, false, bad[i][0], bad[i][1],
						"h", "a", "1", "-", NULL };

		errno = 0;
		CHECK(sl_syslog_fmt_init(&f, &c) == -1 && errno == EINVAL, "%d.%d accepted", bad[i][0],
		      bad[i][1]);
	}
}

static void test_nilvalue(void)
{
	struct sl_syslog_fmt f;
	struct sl_record *r;
	static const uint8_t a4[4] = { 192, 0, 2, 1 };

	init(&f, SL_SYSLOG_RFC5424, 1, 6, NULL, NULL, NULL, NULL, NULL);
	EXPECT_MSG(&f, rec_text("t"), t_ex1, "<14>1 2003-10-11T22:14:15.003000+00:00 - - - - - t");
	init(&f, SL_SYSLOG_RFC5424, 1, 6, "", "", "", "", NULL);
	EXPECT_MSG(&f, rec_text("t"), t_ex1, "<14>1 2003-10-11T22:14:15.003000+00:00 - - - - - t");
	/* an SD-ID but none of its fields: "-" */
	init(&f, SL_SYSLOG_RFC5424, 1, 6, "h", "a", "1", "m", "x@1");
	EXPECT_MSG(&f, rec_text("t"), t_ex1, "<14>1 2003-10-11T22:14:15.003000+00:00 h a 1 m - t");
	/* fields but no SD-ID: "-" */
	init(&f, SL_SYSLOG_RFC5424, 1, 6, "h", "a", "1", "m", NULL);
	r = rec_text("t");
	sl_set_ip4(r, SL_F_SRC_ADDR, a4);
	EXPECT_MSG(&f, r, t_ex1, "<14>1 2003-10-11T22:14:15.003000+00:00 h a 1 m - t");
	/* and an empty text is an empty MSG after the SD's space */
	init(&f, SL_SYSLOG_RFC5424, 1, 6, "h", "a", "1", "m", NULL);
	EXPECT_MSG(&f, rec_text(""), t_ex1, "<14>1 2003-10-11T22:14:15.003000+00:00 h a 1 m - ");
}

/* The SD field after the fifth space of an RFC 5424 message in out. */
static const char *sd_start(void)
{
	const char *p = out;

	for (int i = 0; i < 6 && p; i++)
		p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
	return p ? p : "";
}

static void test_sd(void)
{
	static const uint8_t src[4] = { 192, 0, 2, 1 };
	static const uint8_t dst6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	struct sl_syslog_fmt f;
	struct sl_record *r;
	struct sdp_element el[2];
	unsigned nel;
	size_t used;

	init(&f, SL_SYSLOG_RFC5424, 16, 4, "fw", "sluice", "42", "-", "sluice@32473");
	r = rec_text("IN=eth0");
	sl_set_ip4(r, SL_F_SRC_ADDR, src);
	sl_set_ip4(r, SL_F_DST_ADDR, src);
	sl_set_u64(r, SL_F_IP_PROTO, 6);
	sl_set_u64(r, SL_F_SPORT, 0);
	sl_set_u64(r, SL_F_DPORT, 65535);
	sl_set_bytes(r, SL_F_IFNAME_IN, "eth0", 4);
	sl_set_bytes(r, SL_F_IFNAME_OUT, "wg0", 3);
	EXPECT_MSG(&f, r, t_ex1,
		   "<132>1 2003-10-11T22:14:15.003000+00:00 fw sluice 42 - [sluice@32473 src=\"192.0.2.1\" "
		   "dst=\"192.0.2.1\" proto=\"6\" spt=\"0\" dpt=\"65535\" in=\"eth0\" out=\"wg0\"] IN=eth0");
	used = sdp_parse(sd_start(), strlen(sd_start()), el, 2, &nel);
	CHECK(used && nel == 1 && el[0].nparams == 7 && !strcmp(el[0].id, "sluice@32473"));
	CHECK(used && sd_start()[used] == ' ' && !strcmp(sd_start() + used + 1, "IN=eth0"));

	/* IPv6 packets keep their form; only the fields present, in order */
	memset(recmem.mem, 0, sizeof(recmem.mem));
	sl_set_bytes(r, SL_F_TEXT, "t", 1);
	sl_set_u64(r, SL_F_IP_VERSION, 6);
	sl_set_ip6(r, SL_F_DST_ADDR, dst6);
	sl_set_bytes(r, SL_F_IFNAME_OUT, "o", 1);
	EXPECT_MSG(&f, r, t_ex1,
		   "<132>1 2003-10-11T22:14:15.003000+00:00 fw sluice 42 - [sluice@32473 "
		   "dst=\"2001:db8::1\" out=\"o\"] t");
}

/*
 * The rule an nflog record was attributed to: its params after the
 * packet's, a hostile comment escaped and read back; none unattributed.
 */
static void test_sd_rule(void)
{
	const sl_field base = SL_F_WELL_KNOWN_COUNT;
	static const char comment[] = "a\"b]c\\d\ne";
	struct sl_syslog_fmt f;
	struct sl_record *r;
	struct sdp_element el[2];
	unsigned nel;
	size_t used;

	init(&f, SL_SYSLOG_RFC5424, 16, 4, "fw", "sluice", "42", "-", "sluice@32473");
	f.rule = (struct sl_rule_fields){ base, base + 1, base + 2, base + 3, base + 4, base + 5 };
	r = rec_text("t");
	sl_set_u64(r, SL_F_DPORT, 22);
	EXPECT_MSG(&f, r, t_ex1, "<132>1 2003-10-11T22:14:15.003000+00:00 fw sluice 42 - "
		   "[sluice@32473 dpt=\"22\"] t");
	sl_set_bytes(r, base, "inet", 4);
	sl_set_bytes(r, base + 1, "filter", 6);
	sl_set_bytes(r, base + 2, "input", 5);
	sl_set_u64(r, base + 3, 12);
	sl_set_bytes(r, base + 4, comment, sizeof(comment) - 1);
	sl_set_bytes(r, base + 5, "jump x", 6);
	EXPECT_MSG(&f, r, t_ex1, "<132>1 2003-10-11T22:14:15.003000+00:00 fw sluice 42 - "
		   "[sluice@32473 dpt=\"22\" rule_family=\"inet\" rule_table=\"filter\" "
		   "rule_chain=\"input\" rule_handle=\"12\" rule_comment=\"a\\\"b\\]c\\\\d\\\\x0ae\" "
		   "rule_verdict=\"jump x\"] t");
	used = sdp_parse(sd_start(), strlen(sd_start()), el, 2, &nel);
	CHECK(used && nel == 1 && el[0].nparams == 7);
	CHECK(used && !strcmp(el[0].p[5].name, "rule_comment") && el[0].p[5].len == 12 &&
	      !memcmp(el[0].p[5].value, "a\"b]c\\d\\x0ae", 12), "comment read back: %s", sd_start());
	/* the rule alone makes the element; without an SD-ID nothing */
	sl_unset(r, SL_F_DPORT);
	sl_unset(r, base + 4);
	EXPECT_MSG(&f, r, t_ex1, "<132>1 2003-10-11T22:14:15.003000+00:00 fw sluice 42 - "
		   "[sluice@32473 rule_family=\"inet\" rule_table=\"filter\" rule_chain=\"input\" "
		   "rule_handle=\"12\" rule_verdict=\"jump x\"] t");
	init(&f, SL_SYSLOG_RFC5424, 16, 4, "fw", "sluice", "42", "-", NULL);
	f.rule = (struct sl_rule_fields){ base, base + 1, base + 2, base + 3, base + 4, base + 5 };
	EXPECT_MSG(&f, r, t_ex1, "<132>1 2003-10-11T22:14:15.003000+00:00 fw sluice 42 - - t");
}

/* in="raw" through the whole formatter: the SD text, and its value read back. */
static void sd_value_case(const char *raw, size_t rn, const char *want_sd, const char *want_value)
{
	struct sl_syslog_fmt f;
	struct sl_record *r;
	struct sdp_element el[1];
	unsigned nel;
	size_t used;
	char want[600];

	init(&f, SL_SYSLOG_RFC5424, 1, 1, "h", "a", "1", "-", "i@1");
	r = rec_text("T");
	sl_set_bytes(r, SL_F_IFNAME_IN, raw, (uint32_t)rn);
	msg(&f, r, t_ex1, sizeof(out) - 1, NULL);
	snprintf(want, sizeof(want), "[i@1 in=\"%s\"] T", want_sd);
	CHECK(!strcmp(sd_start(), want), "'%s': got '%s' want '%s'", raw, sd_start(), want);
	used = sdp_parse(sd_start(), strlen(sd_start()), el, 1, &nel);
	CHECK(used && nel == 1 && el[0].nparams == 1 && !strcmp(el[0].p[0].name, "in"),
	      "'%s' not read back: '%s'", raw, sd_start());
	CHECK(used && el[0].p[0].len == strlen(want_value) &&
	      !memcmp(el[0].p[0].value, want_value, el[0].p[0].len), "'%s' read back as '%.*s'", raw,
	      (int)el[0].p[0].len, el[0].p[0].value);
}

static void test_sd_escaping(void)
{
	char longv[300], want[300];
	struct sl_fmt_buf b;
	char tmp[64];

	/* RFC 5424 6.3.3: each of '"', '\' and ']' gets a backslash */
	sd_value_case("a\"b", 3, "a\\\"b", "a\"b");
	sd_value_case("a\\b", 3, "a\\\\b", "a\\b");
	sd_value_case("a]b", 3, "a\\]b", "a]b");
	sd_value_case("]\"\\", 3, "\\]\\\"\\\\", "]\"\\");
	sd_value_case("]", 1, "\\]", "]");
	/* control bytes first become \xNN, whose backslash is then escaped */
	sd_value_case("a\nb", 3, "a\\\\x0ab", "a\\x0ab");
	sd_value_case("\xff", 1, "\\\\xff", "\\xff");
	sd_value_case("caf\xc3\xa9", 5, "caf\xc3\xa9", "caf\xc3\xa9");
	/* a value longer than 256 bytes is cut there, before the SD escapes */
	memset(longv, 'x', sizeof(longv));
	memset(want, 'x', 256);
	want[256] = 0;
	sd_value_case(longv, sizeof(longv), want, want);
	/* the value writer alone */
	sl_fmt_init(&b, tmp, sizeof(tmp));
	sl_syslog_fmt_sd_value(&b, "x]\"\\y", 5);
	CHECK(b.len == 8 && !memcmp(tmp, "x\\]\\\"\\\\y", 8), "'%.*s'", (int)b.len, tmp);
}

static void test_names(void)
{
	char s[300];
	struct sl_syslog_fmt f;

	/* sl_syslog_fmt_name_ok: 1..max PRINTUSASCII, what the output's options take */
	memset(s, 'a', sizeof(s));
	s[SL_SYSLOG_HOSTNAME_MAX] = 0;
	CHECK(sl_syslog_fmt_name_ok(s, SL_SYSLOG_HOSTNAME_MAX, ""));
	s[SL_SYSLOG_HOSTNAME_MAX] = 'a';
	s[SL_SYSLOG_HOSTNAME_MAX + 1] = 0;
	CHECK(!sl_syslog_fmt_name_ok(s, SL_SYSLOG_HOSTNAME_MAX, ""));
	s[48] = 0;
	CHECK(sl_syslog_fmt_name_ok(s, SL_SYSLOG_APP_NAME_MAX, ""));
	s[48] = 'a';
	s[49] = 0;
	CHECK(!sl_syslog_fmt_name_ok(s, SL_SYSLOG_APP_NAME_MAX, ""));
	CHECK(!sl_syslog_fmt_name_ok("", 48, ""));
	CHECK(sl_syslog_fmt_name_ok("!~", 48, ""));		/* 33 and 126 */
	CHECK(!sl_syslog_fmt_name_ok("a b", 48, ""));		/* 32 */
	CHECK(!sl_syslog_fmt_name_ok("a\x7f", 48, ""));		/* 127 */
	CHECK(!sl_syslog_fmt_name_ok("caf\xc3\xa9", 48, ""));	/* not ASCII */
	CHECK(!sl_syslog_fmt_name_ok("a\tb", 48, ""));
	CHECK(sl_syslog_fmt_name_ok("x@32473", 32, SL_SYSLOG_SD_NAME_FORBIDDEN));
	CHECK(!sl_syslog_fmt_name_ok("x=1", 32, SL_SYSLOG_SD_NAME_FORBIDDEN));
	CHECK(!sl_syslog_fmt_name_ok("x]", 32, SL_SYSLOG_SD_NAME_FORBIDDEN));
	CHECK(!sl_syslog_fmt_name_ok("x\"", 32, SL_SYSLOG_SD_NAME_FORBIDDEN));

	/*
	 * init keeps what it is given as one token (a machine's own name is
	 * not checked, only made safe): bytes outside 33..126 become '_',
	 * longer fields are cut to their RFC 5424 length.
	 */
	init(&f, SL_SYSLOG_RFC5424, 1, 6, "my host\x7f\xc3\xa9", "a\tpp", "1 2", "m\nid", NULL);
	EXPECT_MSG(&f, rec_text("t"), t_ex1,
		   "<14>1 2003-10-11T22:14:15.003000+00:00 my_host___ a_pp 1_2 m_id - t");
	memset(s, 'h', sizeof(s));
	s[299] = 0;
	init(&f, SL_SYSLOG_RFC5424, 1, 6, s, s, s, s, s);
	CHECK(strlen(f.hostname) == 255 && strlen(f.app_name) == 48 && strlen(f.procid) == 128 &&
	      strlen(f.msgid) == 32 && strlen(f.sd_id) == 32);
	CHECK(f.hostname[0] == 'h' && f.hostname[254] == 'h');
	init(&f, SL_SYSLOG_RFC5424, 1, 6, "h", "a", "1", "-", "a=b]c\"d e");
	CHECK(!strcmp(f.sd_id, "a_b_c_d_e"), "'%s'", f.sd_id);
}

static void test_rfc3164(void)
{
	struct sl_syslog_fmt f;
	struct sl_syslog_fmt_conf c = { SL_SYSLOG_RFC3164, true, 0, 6, "fw", "sluice", "7", "-", NULL };

	/* RFC 3164 4.1 / 5.4: "<34>Oct 11 22:14:15 mymachine su: ...", with [PROCID] */
	init(&f, SL_SYSLOG_RFC3164, 4, 2, "mymachine", "su", "123", "ID47", "i@1");
	EXPECT_MSG(&f, rec_text("'su root' failed for lonvick on /dev/pts/8"), t_ex1,
		   "<34>Oct 11 22:14:15 mymachine su[123]: 'su root' failed for lonvick on /dev/pts/8");
	/* the day is space-padded, the fraction dropped */
	EXPECT_MSG(&f, rec_text("x"), ((struct sl_time){ 1064977445, 999999999 }),
		   "<34>Oct  1 03:04:05 mymachine su[123]: x");
	/* local: the local syslogd writes its own HOSTNAME */
	CHECK(sl_syslog_fmt_init(&f, &c) == 0);
	EXPECT_MSG(&f, rec_text("x"), t_ex1, "<6>Oct 11 22:14:15 sluice[7]: x");
	/* in local time */
	set_tz("UTC+7");
	init(&f, SL_SYSLOG_RFC3164, 20, 5, "h", "a", "1", "-", NULL);
	EXPECT_MSG(&f, rec_text("x"), t_ex2, "<165>Aug 24 05:14:15 h a[1]: x");
	set_tz("UTC0");
}

static void test_text(void)
{
	struct sl_syslog_fmt f;
	struct sl_record *r;
	bool escaped;
	size_t n, hdr;

	init(&f, SL_SYSLOG_RFC3164, 0, 0, "h", "a", "1", "-", NULL);
	hdr = strlen("<0>Oct 11 22:14:15 h a[1]: ");
	/* a newline cannot start a forged message; TAB stays */
	msg(&f, rec_text("a\nb\tc\x1b"), t_ex1, sizeof(out) - 1, &escaped);
	CHECK(!strcmp(out + hdr, "a\\x0ab\tc\\x1b") && escaped, "'%s'", out);
	msg(&f, rec_text("clean caf\xc3\xa9"), t_ex1, sizeof(out) - 1, &escaped);
	CHECK(!strcmp(out + hdr, "clean caf\xc3\xa9") && !escaped, "'%s'", out);
	/* vouched-for text is copied as it is (its maker promised) */
	r = rec_text("as\nis");
	sl_set_text_safe(r);
	msg(&f, r, t_ex1, sizeof(out) - 1, &escaped);
	CHECK(!strcmp(out + hdr, "as\nis") && !escaped, "'%s'", out);
	/* cut at the room left, never inside a UTF-8 sequence or an escape */
	n = msg(&f, rec_text("ab\xc3\xa9z"), t_ex1, hdr + 3, &escaped);
	CHECK(n == hdr + 2 && !strcmp(out + hdr, "ab") && !escaped, "%zu '%s'", n, out);
	n = msg(&f, rec_text("a\nb"), t_ex1, hdr + 4, &escaped);
	CHECK(n == hdr + 1 && !strcmp(out + hdr, "a"), "%zu '%s'", n, out);
	n = msg(&f, rec_text("abc"), t_ex1, hdr, &escaped);
	CHECK(n == hdr, "%zu", n);
	/* a header longer than the room: 0 */
	CHECK(msg(&f, rec_text("abc"), t_ex1, hdr - 1, &escaped) == 0);
	CHECK(msg(&f, rec_text(""), t_ex1, 3, &escaped) == 0);
}

static void test_time_clamp(void)
{
	struct sl_syslog_fmt f;

	init(&f, SL_SYSLOG_RFC5424, 0, 0, "h", "a", "1", "-", NULL);
	EXPECT_MSG(&f, rec_text("x"), ((struct sl_time){ INT64_MAX, 5 }),
		   "<0>1 9999-12-31T23:59:59.000000+00:00 h a 1 - - x");
	EXPECT_MSG(&f, rec_text("x"), ((struct sl_time){ INT64_MIN, 5 }),
		   "<0>1 0001-01-01T00:00:00.000000+00:00 h a 1 - - x");
	init(&f, SL_SYSLOG_RFC3164, 0, 0, "h", "a", "1", "-", NULL);
	EXPECT_MSG(&f, rec_text("x"), ((struct sl_time){ INT64_MAX, 5 }), "<0>Dec 31 23:59:59 h a[1]: x");
}

static void test_frame(void)
{
	char pre[SL_SYSLOG_FRAME_MAX];
	bool lf;
	size_t n;

	n = sl_syslog_fmt_frame(SL_SYSLOG_FRAME_OCTET, 0, pre, &lf);
	CHECK(n == 2 && !memcmp(pre, "0 ", 2) && !lf);
	n = sl_syslog_fmt_frame(SL_SYSLOG_FRAME_OCTET, 8192, pre, &lf);
	CHECK(n == 5 && !memcmp(pre, "8192 ", 5) && !lf);
	n = sl_syslog_fmt_frame(SL_SYSLOG_FRAME_OCTET, SIZE_MAX, pre, &lf);
	CHECK(n == 21 && !memcmp(pre, "18446744073709551615 ", 21));
	n = sl_syslog_fmt_frame(SL_SYSLOG_FRAME_LF, 100, pre, &lf);
	CHECK(n == 0 && lf);
	n = sl_syslog_fmt_frame(SL_SYSLOG_FRAME_NONE, 100, pre, &lf);
	CHECK(n == 0 && !lf);
}

int main(void)
{
	set_tz("UTC0");
	test_rfc5424_examples();
	test_pri();
	test_nilvalue();
	test_sd();
	test_sd_escaping();
	test_sd_rule();
	test_names();
	test_rfc3164();
	test_text();
	test_time_clamp();
	test_frame();
	return check_summary("test_syslog_fmt");
}
