/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as one record and a configuration for the
 * CEF/LEEF formatter (plugins/common/cef_fmt.h): a 40-byte head (flags,
 * delimiter, severity, which fields are present, room, time, addresses,
 * numbers: the layout is in make-cef-seeds.py), then NUL-separated
 * vendor, signature template, name template, action, interface in,
 * interface out, and the prefix (the rest).  With flag 8 the record has a
 * rule (nflog's rules: true): table the interface in's piece, chain the
 * interface out's, comment the action's, verdict the signature's, handle
 * the last head byte.
 * abort() when what comes out breaks a rule the header states:
 *
 * - the line fits its room, or overflow is set and it is no longer than it;
 * - one line of valid UTF-8: no control byte (but LEEF's TAB delimiter), no
 *   DEL, no C1 control;
 * - a strict reader written from the standard (tests/unit/cef_parse.h)
 *   splits the header into its fields and the extension into pairs;
 * - vendor, signature, name, prefix, interface names, action and the rule
 *   (act/action its verdict, cs2/rule TABLE/CHAIN#HANDLE "COMMENT") read
 *   back to the bytes the documented replacement rule gives (cefp_expect);
 * - every key written once, ports and numbers back as their values.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cef_fmt.h"
#include "utf8.h"
#include "../tests/unit/cef_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEAD 40
#define BIG (1u << 16)

static _Alignas(16) uint8_t
	store[sizeof(struct sl_record) + (SL_F_WELL_KNOWN_COUNT + 8) * sizeof(union sl_value)];
static char out[BIG], dec[4 * BIG], want[BIG], piece_buf[BIG], rule_text[BIG];

static void check(int ok)
{
	if (!ok)
		abort();
}

/* The next NUL-terminated piece of p[*at..n), or the rest. */
static const char *piece(const uint8_t *p, size_t n, size_t *at, size_t *len)
{
	const char *s = (const char *)p + *at;
	const uint8_t *nul = *at < n ? memchr(p + *at, 0, n - *at) : NULL;

	if (*at >= n) {
		*len = 0;
		return "";
	}
	*len = nul ? (size_t)(nul - (p + *at)) : n - *at;
	*at += *len + (nul != NULL);
	return s;
}

static bool same(const struct cefp_str *v, const char *w, size_t n)
{
	return v && v->n == n && !memcmp(v->p, w, n);
}

/* What a template comes out as: each piece and each prefix mapped on its own. */
static size_t expect_tmpl(char *o, const char *t, const uint8_t *pre, size_t pn, bool has_prefix)
{
	size_t len = 0;

	for (;;) {
		const char *m = strstr(t, "{prefix}");
		size_t k = m ? (size_t)(m - t) : strlen(t);

		len += cefp_expect(o + len, (const uint8_t *)t, k, true, false);
		if (!m)
			break;
		if (has_prefix)
			len += cefp_expect(o + len, pre, pn, true, false);
		t = m + 8;
	}
	if (!len)
		o[len++] = '-';
	return len;
}

/* The reader's value for key k equals the decimal v. */
static void check_num(const struct cefp_line *l, const char *k, uint64_t v)
{
	const struct cefp_str *s = cefp_get(l, k);
	char buf[24];
	size_t n = 0;

	check(s != NULL);
	do
		buf[sizeof(buf) - ++n] = (char)('0' + v % 10);
	while ((v /= 10));
	check(same(s, buf + sizeof(buf) - n, n));
}

/* The rule's fields, ids after the well-known ones as the host registers them. */
static void set_rule(struct sl_cef *f, struct sl_record *r, char str[][256], const size_t *slen,
		     uint8_t handle)
{
	const sl_field base = SL_F_WELL_KNOWN_COUNT;

	f->rule = (struct sl_rule_fields){ base, base + 1, base + 2, base + 3, base + 4, base + 5 };
	sl_set_bytes(r, base + 1, str[4], (uint32_t)slen[4]);
	sl_set_bytes(r, base + 2, str[5], (uint32_t)slen[5]);
	sl_set_u64(r, base + 3, handle);
	sl_set_bytes(r, base + 4, str[3], (uint32_t)slen[3]);
	sl_set_bytes(r, base + 5, str[1], (uint32_t)slen[1]);
}

/* What cs2 reads back as: TABLE/CHAIN#HANDLE "COMMENT" (quote and backslash escaped), mapped. */
static size_t rule_expect(char *o, char str[][256], const size_t *slen, uint8_t handle)
{
	size_t n = 0;

	memcpy(rule_text, str[4], slen[4]);
	n = slen[4];
	rule_text[n++] = '/';
	memcpy(rule_text + n, str[5], slen[5]);
	n += slen[5];
	n += (size_t)snprintf(rule_text + n, 8, "#%u", handle);
	rule_text[n++] = ' ';
	rule_text[n++] = '"';
	for (size_t i = 0; i < slen[3]; i++) {
		if (str[3][i] == '"' || str[3][i] == '\\')
			rule_text[n++] = '\\';
		rule_text[n++] = str[3][i];
	}
	rule_text[n++] = '"';
	return cefp_expect(o, (const uint8_t *)rule_text, n, false, true);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_record *r = (struct sl_record *)store;
	char str[6][256];
	size_t slen[6], at = HEAD, pn, n, wn;
	const uint8_t *pre;
	struct sl_cef_conf c;
	struct sl_cef f;
	struct sl_fmt_buf b;
	struct cefp_line l;
	struct cefp_out o = { dec, 0, sizeof(dec) };
	bool leef, v6, has_prefix, rule;
	uint8_t d, fl, pres;
	uint16_t room;
	const char *vk = NULL;

	if (size < HEAD)
		return 0;
	memset(store, 0, sizeof(store));
	for (unsigned i = 0; i < 6; i++) {
		const char *s = piece(data, size, &at, &slen[i]);

		if (slen[i] > sizeof(str[i]) - 1)
			slen[i] = sizeof(str[i]) - 1;
		memcpy(str[i], s, slen[i]);
		str[i][slen[i]] = 0;
	}
	pre = data + (at < size ? at : size);
	pn = at < size ? size - at : 0;
	if (pn > 4096)
		pn = 4096;

	fl = data[0];
	pres = data[3];
	leef = fl & 1;
	v6 = fl & 2;
	/* the plugin's rule for LEEF delimiters: TAB or a printable that cannot be mistaken */
	d = data[1];
	if (d <= ' ' || d >= 0x7f || strchr("\\=|:.,-_", d) || (d >= 'a' && d <= 'z') ||
	    (d >= 'A' && d <= 'Z') || (d >= '0' && d <= '9'))
		d = '\t';
	c.format = leef ? SL_CEF_LEEF : SL_CEF_CEF;
	c.vendor = str[0];
	c.product = "p";
	c.version = "1";
	c.signature = str[1];
	c.name = str[2];
	c.severity = data[2] % 11;
	c.action = fl & 4 ? str[3] : NULL;
	c.delimiter = (char)d;
	check(sl_cef_init(&f, &c) == 0);
	rule = fl & 8;
	if (rule)
		set_rule(&f, r, str, slen, data[HEAD - 1]);

	has_prefix = pres & 1;
	if (has_prefix)
		sl_set_bytes(r, SL_F_PREFIX, pre, (uint32_t)pn);
	if (pres & 2)
		sl_set_bytes(r, SL_F_IFNAME_IN, str[4], (uint32_t)slen[4]);
	if (pres & 4)
		sl_set_bytes(r, SL_F_IFNAME_OUT, str[5], (uint32_t)slen[5]);
	if (pres & 8) {
		struct sl_time t;

		memcpy(&t.sec, data + 6, 8);
		memcpy(&t.nsec, data + 14, 4);
		sl_set_time(r, SL_F_TIMESTAMP, t.sec, t.nsec);
	}
	if (v6)
		sl_set_u64(r, SL_F_IP_VERSION, 6);
	if (pres & 16) {
		/* a packet */
		sl_set_ip6(r, SL_F_SRC_ADDR, data + 18);
		sl_set_u64(r, SL_F_SPORT, data[34] | (uint64_t)data[35] << 8);
		sl_set_u64(r, SL_F_DPORT, data[36] | (uint64_t)data[37] << 8);
	} else if (pres & 32) {
		/* a connection's original direction */
		sl_set_ip6(r, SL_F_ORIG_SRC, data + 18);
		sl_set_u64(r, SL_F_CT_EVENT, data[38] & 7);
	}
	if (pres & 64)
		sl_set_u64(r, SL_F_IP_PROTO, data[39]);
	if (pres & 128)
		sl_set_u64(r, SL_F_CT_ID, (uint64_t)data[4] << 24 | data[5]);

	/* a room too small for the whole line: overflow, nothing past the room */
	memcpy(&room, data + 4, 2);
	sl_fmt_init(&b, out, room);
	sl_cef_format(&f, &b, r);
	check(b.len <= room);

	sl_fmt_init(&b, out, sizeof(out));
	sl_cef_format(&f, &b, r);
	check(!b.overflow);
	n = b.len;

	/* one line of valid UTF-8 */
	for (size_t i = 0; i < n;) {
		uint8_t ch = (uint8_t)out[i];

		if (ch < 0x80) {
			check((ch >= 0x20 && ch != 0x7f) || (leef && d == '\t' && ch == '\t'));
			i++;
		} else {
			size_t len = ch >= 0xc2 && ch <= 0xf4 ? sl_utf8_len((const uint8_t *)out + i, n - i) : 0;

			check(len && !(len == 2 && sl_utf8_is_c1((const uint8_t *)out + i)));
			i += len;
		}
	}

	/* read back */
	check(cefp_parse(out, n, &o, &l));
	check(l.leef == leef);
	wn = cefp_expect(want, (const uint8_t *)str[0], slen[0], true, false);
	check(same(&l.head[0], want, wn));
	wn = expect_tmpl(want, str[1], pre, pn, has_prefix);
	check(same(&l.head[3], want, wn));
	if (leef) {
		check(l.delim == (char)d);
		check_num(&l, "sev", c.severity);
	} else {
		wn = expect_tmpl(piece_buf, str[2], pre, pn, has_prefix);
		check(same(&l.head[4], piece_buf, wn));
		check(l.head[5].n >= 1 && l.head[5].n <= 2);
	}
	if (has_prefix && pn) {
		wn = cefp_expect(want, pre, pn, false, true);
		check(same(cefp_get(&l, leef ? "prefix" : "cs1"), want, wn));
	}
	if (pres & 2) {
		wn = cefp_expect(want, (const uint8_t *)str[4], slen[4], false, true);
		check(same(cefp_get(&l, "deviceInboundInterface"), want, wn));
	}
	if (pres & 4) {
		wn = cefp_expect(want, (const uint8_t *)str[5], slen[5], false, true);
		check(same(cefp_get(&l, "deviceOutboundInterface"), want, wn));
	}
	if (rule) {	/* its verdict first, its text in cs2 */
		wn = cefp_expect(want, (const uint8_t *)str[1], slen[1], false, true);
		check(same(cefp_get(&l, leef ? "action" : "act"), want, wn));
		wn = rule_expect(want, str, slen, data[HEAD - 1]);
		check(same(cefp_get(&l, leef ? "rule" : "cs2"), want, wn));
	} else if (c.action) {
		wn = cefp_expect(want, (const uint8_t *)str[3], slen[3], false, true);
		check(same(cefp_get(&l, leef ? "action" : "act"), want, wn));
	}
	if (pres & 16) {
		check_num(&l, leef ? "srcPort" : "spt", data[34] | (uint64_t)data[35] << 8);
		check_num(&l, leef ? "dstPort" : "dpt", data[36] | (uint64_t)data[37] << 8);
		vk = leef ? "src" : v6 ? "c6a2" : "src";
	}
	if (vk)
		check(cefp_get(&l, vk) != NULL);
	if (pres & 128)
		check_num(&l, leef ? "conntrackId" : "cn1", (uint64_t)data[4] << 24 | data[5]);
	/* every key once */
	for (unsigned i = 0; i < l.npairs; i++)
		for (unsigned j = i + 1; j < l.npairs; j++)
			check(l.key[i].n != l.key[j].n || memcmp(l.key[i].p, l.key[j].p, l.key[i].n));
	sl_cef_free(&f);
	return 0;
}
