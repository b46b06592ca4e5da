/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/subject_tmpl.c: templates parsed (fields resolved,
 * literal text checked: no spaces, wildcards, stray braces or empty
 * tokens), subjects rendered for records with every field type, hostile
 * values escaped so that they never add a token or a wildcard and decode
 * back to the value, absent and empty values, and subjects that do not fit.
 * The sources are compiled in (the unit-test rule links only the core).
 */
#include "../../plugins/common/fmt.c"
#include "../../plugins/common/subject_tmpl.c"

#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static union {
	struct sl_record r;
	uint8_t mem[sizeof(struct sl_record) + SL_F_WELL_KNOWN_COUNT * sizeof(union sl_value)];
} recmem;

static char out[SL_SUBJECT_MAX_LEN];

static const enum sl_type types[] = {
#define X_TYPE(id, name, type, doc) [SL_F_##id] = type,
	SL_WELL_KNOWN_FIELDS(X_TYPE)
#undef X_TYPE
};

/* The well-known fields, by name, as the host's need_field() would. */
static int resolve(void *ctx, const char *name, enum sl_type *type)
{
	(void)ctx;
	for (int i = 0; i < SL_F_WELL_KNOWN_COUNT; i++)
		if (!strcmp(sl_well_known_names[i], name)) {
			*type = types[i];
			return i;
		}
	return -1;
}

static struct sl_record *rec(void)
{
	memset(recmem.mem, 0, sizeof(recmem.mem));
	return &recmem.r;
}

static int parse(struct sl_subject_tmpl *t, const char *s, char *err)
{
	return sl_subject_parse(t, s, resolve, NULL, err, 160);
}

static void expect_bad(const char *s, const char *word)
{
	struct sl_subject_tmpl t;
	char err[160];

	CHECK(parse(&t, s, err) == -1, "'%s' accepted", s);
	CHECK(strstr(err, word) != NULL, "'%s': error '%s' lacks '%s'", s, err, word);
}

static void test_parse(void)
{
	struct sl_subject_tmpl t;
	char err[160];

	CHECK(parse(&t, "fw.logs", err) == 0);
	CHECK(t.fixed && t.n == 1);
	CHECK(parse(&t, "fw.{nflog_group}.{ip_proto}", err) == 0, "%s", err);
	CHECK(!t.fixed && t.n == 4);
	CHECK(parse(&t, "{prefix}", err) == 0 && t.n == 1);
	CHECK(parse(&t, "g{nflog_group}x.{dport}", err) == 0 && t.n == 4);
	expect_bad("", "1 to");
	expect_bad("fw.*", "'*'");
	expect_bad("fw.>", "'>'");
	expect_bad("fw logs", "' '");
	expect_bad("fw.\tx", "'?'");
	expect_bad("fw..x", "empty token");
	expect_bad(".fw", "empty token");
	expect_bad("fw.", "empty token");
	expect_bad("fw.{prefix", "expected {field name}");
	expect_bad("fw.{}", "expected {field name}");
	expect_bad("fw.}", "'}'");
	expect_bad("fw.{a.b}", "not a field name");
	expect_bad("fw.{no_such_field}", "");	/* the resolver's error: err empty */
	CHECK(parse(&t, "fw.{no_such_field}", err) == -1 && err[0] == 0);
}

static const char *render(const char *tmpl, const struct sl_record *r)
{
	struct sl_subject_tmpl t;
	char err[160];
	size_t n;

	if (parse(&t, tmpl, err) < 0) {
		CHECK(0, "'%s': %s", tmpl, err);
		return "";
	}
	n = sl_subject_render(&t, r, out, sizeof(out));
	CHECK(n == strlen(out), "length %zu of '%s'", n, out);
	return out;
}

/* Percent-decode a token. */
static size_t unescape(const char *s, char *d)
{
	size_t n = 0;

	while (*s) {
		if (*s == '%') {
			unsigned v;

			sscanf(s + 1, "%2X", &v);
			d[n++] = (char)v;
			s += 3;
		} else {
			d[n++] = *s++;
		}
	}
	return n;
}

static void test_render_types(void)
{
	struct sl_record *r = rec();
	const uint8_t a4[4] = { 10, 0, 0, 1 };
	const uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 0xab };
	const uint8_t bytes[3] = { 0xde, 0xad, 0x01 };

	sl_set_u64(r, SL_F_NFLOG_GROUP, 7);
	sl_set_u64(r, SL_F_IP_PROTO, 17);
	CHECK_STREQ(render("fw.{nflog_group}.{ip_proto}", r), "fw.7.17");
	sl_set_ip4(r, SL_F_SRC_ADDR, a4);
	CHECK_STREQ(render("src.{src_addr}", r), "src.10%2E0%2E0%2E1");
	sl_set_ip6(r, SL_F_DST_ADDR, a6);
	sl_set_u64(r, SL_F_IP_VERSION, 6);
	CHECK_STREQ(render("dst.{dst_addr}", r), "dst.2001:db8::1");
	sl_set_mac(r, SL_F_MAC_SRC, mac);
	CHECK_STREQ(render("m.{mac_src}", r), "m.02:00:00:00:00:ab");
	sl_set_bytes(r, SL_F_HWHDR, bytes, 3);
	CHECK_STREQ(render("h.{hwhdr}", r), "h.dead01");
	sl_set_time(r, SL_F_TIMESTAMP, 1700000000, 5);
	CHECK_STREQ(render("t.{timestamp}", r), "t.1700000000");
	sl_set_time(r, SL_F_TIMESTAMP, -5, 0);
	CHECK_STREQ(render("t.{timestamp}", r), "t.-5");
}

static void test_escaping(void)
{
	static const char *const hostile[] = {
		"a b", "a.b", "*", ">", "fw.>", "x\ny", "\x01\x7f\xff", "%2E", "{prefix}", "tab\there",
		"\xc3\xa9t\xc3\xa9", "a\0b",
	};
	struct sl_record *r = rec();
	char back[256];

	for (size_t i = 0; i < sizeof(hostile) / sizeof(*hostile); i++) {
		size_t len = i == 11 ? 3 : strlen(hostile[i]), n;
		const char *s;

		sl_set_bytes(r, SL_F_PREFIX, hostile[i], (uint32_t)len);
		s = render("fw.{prefix}", r);
		CHECK(!strncmp(s, "fw.", 3), "'%s'", s);
		CHECK(strchr(s + 3, '.') == NULL && !strpbrk(s, " *>\t\r\n"), "'%s' adds a token", s);
		for (const char *p = s; *p; p++)
			CHECK(*p > ' ' && *p < 0x7f, "byte %#x in '%s'", (unsigned char)*p, s);
		n = unescape(s + 3, back);
		CHECK(n == len && !memcmp(back, hostile[i], len), "'%s' does not decode back", s);
	}
	/* absent, empty, and "-" itself: never ambiguous, never an empty token */
	r = rec();
	CHECK_STREQ(render("fw.{prefix}.x", r), "fw.-.x");
	sl_set_bytes(r, SL_F_PREFIX, "", 0);
	CHECK_STREQ(render("fw.{prefix}.x", r), "fw.-.x");
	sl_set_bytes(r, SL_F_PREFIX, "-", 1);
	CHECK_STREQ(render("fw.{prefix}.x", r), "fw.%2D.x");
	sl_set_bytes(r, SL_F_PREFIX, "a-b_c:d", 7);
	CHECK_STREQ(render("fw.{prefix}", r), "fw.a-b_c:d");
}

static void test_too_long(void)
{
	struct sl_subject_tmpl t;
	struct sl_record *r = rec();
	static char big[SL_SUBJECT_MAX_LEN + 1];
	char err[160], small[8];

	memset(big, '.', 400);	/* each '.' becomes 3 bytes */
	sl_set_bytes(r, SL_F_PREFIX, big, 400);
	CHECK(parse(&t, "fw.{prefix}", err) == 0);
	CHECK(sl_subject_render(&t, r, out, sizeof(out)) == 0);
	sl_set_bytes(r, SL_F_PREFIX, "abcd", 4);
	CHECK(sl_subject_render(&t, r, small, sizeof(small)) == 7 && !strcmp(small, "fw.abcd"));
	CHECK(sl_subject_render(&t, r, small, 7) == 0);
	memset(big, 'a', SL_SUBJECT_MAX_LEN - 1);
	CHECK(parse(&t, big, err) == 0, "%s", err);
	big[SL_SUBJECT_MAX_LEN - 1] = 'a';
	CHECK(parse(&t, big, err) == -1, "a template of %d bytes accepted", SL_SUBJECT_MAX_LEN);
}

int main(void)
{
	test_parse();
	test_render_types();
	test_escaping();
	test_too_long();
	return check_summary("test_subject_tmpl");
}
