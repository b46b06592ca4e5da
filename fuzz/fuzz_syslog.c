/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as one syslog message's makings for the
 * formatter (plugins/common/syslog_fmt.h): a 56-byte head (format, local,
 * facility, severity, room, which structured-data fields are present, the
 * time, addresses, ports: the layout is in make-syslog-seeds.py), then
 * NUL-separated hostname, app-name, procid, msgid, SD-ID, in and out
 * interface names, and the text (the rest).  Flag 64: the record has a
 * rule (nflog's rules: true): family the procid's piece, table in's,
 * chain out's, comment msgid's, verdict hostname's, handle byte 50.
 * abort() when what comes out breaks a rule the header states:
 *
 * - the message fits its room; 0 only when the header alone does not fit,
 *   and a cut message is a prefix of the whole one;
 * - PRI is facility * 8 + severity; each header field is one token of
 *   1..max PRINTUSASCII bytes, "-" when it was empty;
 * - the SD reads back with an RFC 5424 reader (tests/unit/syslog_parse.h)
 *   to exactly the params present, in order, the interface names' and the
 *   rule's values equal to their \xNN-escaped bytes: no value ends its
 *   param or element early;
 * - the text holds no control byte but TAB, no DEL, no invalid UTF-8
 *   (unless vouched for); it is the text itself when that was clean;
 * - the octet-counting prefix reads back as the message's length.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "syslog_fmt.h"
#include "text_escape.h"
#include "../tests/unit/syslog_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEAD 56
#define BIG (1u << 18)

static _Alignas(16) uint8_t
	store[sizeof(struct sl_record) + (SL_F_WELL_KNOWN_COUNT + 8) * sizeof(union sl_value)];
static char whole[BIG], cut[BIG];
static struct sdp_element el[2];

static const sl_field sd_fields[] = {
	SL_F_SRC_ADDR, SL_F_DST_ADDR, SL_F_IP_PROTO, SL_F_SPORT,
	SL_F_DPORT,    SL_F_IFNAME_IN, SL_F_IFNAME_OUT,
};
static const char *const sd_names[] = { "src", "dst", "proto", "spt", "dpt", "in", "out" };
/* The rule's params after those, and the piece each string comes from (-1: the handle). */
static const char *const rule_names[] = {
	"rule_family", "rule_table", "rule_chain", "rule_handle", "rule_comment", "rule_verdict",
};
static const int rule_piece[] = { 2, 5, 6, -1, 3, 0 };

static void check(int ok)
{
	if (!ok)
		abort();
}

/* The next NUL-terminated piece of p[*at..n), or the rest. */
static const char *piece(const uint8_t *p, size_t n, size_t *at, size_t *len)
{
	const char *s = (const char *)p + *at;
	const uint8_t *nul = memchr(p + *at, 0, n - *at);

	*len = nul ? (size_t)(nul - (p + *at)) : n - *at;
	*at += *len + (nul != NULL);
	return s;
}

/* A header token at s: 1..max PRINTUSASCII bytes ending at a space. */
static const char *token(const char *s, const char *end, size_t max, char stop)
{
	const char *p = s;

	while (p < end && *p != stop) {
		check((unsigned char)*p >= 33 && (unsigned char)*p <= 126);
		p++;
	}
	check(p > s && (size_t)(p - s) <= max && p < end);
	return p + 1;
}

/* The rule's fields, ids after the well-known ones as the host registers them. */
static void set_rule(struct sl_syslog_fmt *f, struct sl_record *r, char str[][300], const size_t *slen,
		     uint8_t handle)
{
	const sl_field base = SL_F_WELL_KNOWN_COUNT;

	f->rule = (struct sl_rule_fields){ base, base + 1, base + 2, base + 3, base + 4, base + 5 };
	for (unsigned j = 0; j < 6; j++)
		if (rule_piece[j] < 0)
			sl_set_u64(r, base + j, handle);
		else
			sl_set_bytes(r, base + j, str[rule_piece[j]], (uint32_t)slen[rule_piece[j]]);
}

/* The rule's six params from el's k-th on: names in order, values escaped. */
static void check_rule(const struct sdp_element *e, unsigned k, char str[][300], const size_t *slen,
		       uint8_t handle)
{
	for (unsigned j = 0; j < 6; j++, k++) {
		char esc[SL_SYSLOG_SD_VALUE_MAX], num[4];
		size_t n;

		check(strcmp(e->p[k].name, rule_names[j]) == 0);
		if (rule_piece[j] < 0) {
			n = (size_t)snprintf(num, sizeof(num), "%u", handle);
			check(e->p[k].len == n && !memcmp(e->p[k].value, num, n));
			continue;
		}
		n = sl_esc_write(esc, sizeof(esc), str[rule_piece[j]], slen[rule_piece[j]], 0, NULL);
		check(e->p[k].len == n && !memcmp(e->p[k].value, esc, n));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_record *r = (struct sl_record *)store;
	struct sl_syslog_fmt f;
	struct sl_syslog_fmt_conf c;
	char str[8][300];
	size_t slen[8], at = HEAD, n, nc, nw, cap, text_len;
	const char *p, *end, *text;
	struct sl_time ts;
	bool escaped, escaped_cut, lf, safe, rule;
	unsigned present = 0, nel, i;
	char pre[SL_SYSLOG_FRAME_MAX];
	uint16_t cap16;
	uint64_t pri = 0;

	if (size < HEAD)
		return 0;
	memset(store, 0, sizeof(store));
	for (i = 0; i < 7; i++) {
		const char *s = piece(data, size, &at, &slen[i]);

		if (slen[i] > sizeof(str[i]) - 1)
			slen[i] = sizeof(str[i]) - 1;
		memcpy(str[i], s, slen[i]);
		str[i][slen[i]] = 0;
	}
	text = (const char *)data + (at < size ? at : size);
	text_len = at < size ? size - at : 0;

	c.format = data[0] & 1 ? SL_SYSLOG_RFC5424 : SL_SYSLOG_RFC3164;
	c.local = data[0] & 2;
	c.facility = data[2] % 24;
	c.severity = data[3] % 8;
	c.hostname = data[0] & 4 ? str[0] : NULL;
	c.app_name = str[1];
	c.procid = str[2];
	c.msgid = str[3];
	c.sd_id = data[0] & 8 ? str[4] : NULL;
	check(sl_syslog_fmt_init(&f, &c) == 0);
	rule = data[0] & 64;
	if (rule)
		set_rule(&f, r, str, slen, data[50]);
	memcpy(&cap16, data + 4, 2);
	cap = cap16;
	memcpy(&ts.sec, data + 6, 8);
	memcpy(&ts.nsec, data + 14, 4);

	sl_set_bytes(r, SL_F_TEXT, text, (uint32_t)text_len);
	safe = data[0] & 16 && sl_esc_scan(text, text_len, SL_ESC_KEEP_TAB) == text_len;
	if (safe)
		sl_set_text_safe(r);
	if (data[0] & 32)
		sl_set_u64(r, SL_F_IP_VERSION, 6);
	for (i = 0; i < 7; i++) {
		sl_field fld = sd_fields[i];

		if (!(data[1] >> i & 1))
			continue;
		present |= 1u << i;
		if (fld == SL_F_SRC_ADDR || fld == SL_F_DST_ADDR)
			sl_set_ip6(r, fld, data + 18 + 16 * (fld == SL_F_DST_ADDR));
		else if (fld == SL_F_IFNAME_IN || fld == SL_F_IFNAME_OUT)
			sl_set_bytes(r, fld, str[5 + (fld == SL_F_IFNAME_OUT)],
				     (uint32_t)slen[5 + (fld == SL_F_IFNAME_OUT)]);
		else
			sl_set_u64(r, fld, data[46 + 2 * i] | (uint64_t)data[47 + 2 * i] << 8);
	}

	/* the whole message, then one in the fuzzer's room: a prefix of it */
	nw = sl_syslog_fmt_message(&f, whole, sizeof(whole), r, ts, &escaped);
	check(nw > 0 && nw <= sizeof(whole));
	check(escaped == (!safe && sl_esc_scan(text, text_len, SL_ESC_KEEP_TAB) != text_len));
	nc = sl_syslog_fmt_message(&f, cut, cap, r, ts, &escaped_cut);
	check(nc <= cap && nc <= nw && !memcmp(cut, whole, nc));
	check(nc ? escaped_cut == escaped : !escaped_cut);

	/* the fields are tokens; the SD-ID an SD-NAME */
	check(sl_syslog_fmt_name_ok(f.hostname, SL_SYSLOG_HOSTNAME_MAX, "") &&
	      sl_syslog_fmt_name_ok(f.app_name, SL_SYSLOG_APP_NAME_MAX, "") &&
	      sl_syslog_fmt_name_ok(f.procid, SL_SYSLOG_PROCID_MAX, "") &&
	      sl_syslog_fmt_name_ok(f.msgid, SL_SYSLOG_MSGID_MAX, "") &&
	      sl_syslog_fmt_name_ok(f.sd_id, SL_SYSLOG_SD_NAME_MAX, SL_SYSLOG_SD_NAME_FORBIDDEN));
	/* an empty field is NILVALUE */
	check((c.hostname && *c.hostname) || !strcmp(f.hostname, "-"));
	check((*c.app_name || !strcmp(f.app_name, "-")) && (*c.procid || !strcmp(f.procid, "-")) &&
	      (*c.msgid || !strcmp(f.msgid, "-")));

	/* PRI */
	p = whole;
	end = whole + nw;
	check(*p++ == '<');
	while (p < end && *p >= '0' && *p <= '9')
		pri = pri * 10 + (uint64_t)(*p++ - '0');
	check(p < end && *p++ == '>' && pri == (uint64_t)(c.facility * 8 + c.severity));
	if (c.format == SL_SYSLOG_RFC5424) {
		check(end - p > 2 && p[0] == '1' && p[1] == ' ');
		p = token(p + 2, end, 32, ' ');	/* 2024-05-01T12:34:56.123456+hh:mm */
		p = token(p, end, SL_SYSLOG_HOSTNAME_MAX, ' ');
		p = token(p, end, SL_SYSLOG_APP_NAME_MAX, ' ');
		p = token(p, end, SL_SYSLOG_PROCID_MAX, ' ');
		p = token(p, end, SL_SYSLOG_MSGID_MAX, ' ');
		n = sdp_parse(p, (size_t)(end - p), el, 2, &nel);
		check(n > 0 && p + n < end && p[n] == ' ');
		check(nel == (c.sd_id && (present || rule) ? 1u : 0u));
		if (nel) {
			unsigned k = 0;

			check(strcmp(el[0].id, f.sd_id) == 0 &&
			      el[0].nparams == (unsigned)__builtin_popcount(present) + (rule ? 6u : 0u));
			for (i = 0; i < 7; i++) {
				char esc[SL_SYSLOG_SD_VALUE_MAX];
				size_t e;

				if (!(present >> i & 1))
					continue;
				check(strcmp(el[0].p[k].name, sd_names[i]) == 0);
				if (i >= 5) {
					e = sl_esc_write(esc, sizeof(esc), str[i], slen[i], 0, NULL);
					check(el[0].p[k].len == e && !memcmp(el[0].p[k].value, esc, e));
				}
				k++;
			}
			if (rule)
				check_rule(&el[0], k, str, slen, data[50]);
		}
		p += n + 1;
	} else {
		check(end - p > SL_FMT_DATE3164_LEN && p[SL_FMT_DATE3164_LEN] == ' ');
		p += SL_FMT_DATE3164_LEN + 1;
		if (!c.local)
			p = token(p, end, SL_SYSLOG_HOSTNAME_MAX, ' ');
		/* APP-NAME[PROCID]: (either may hold '[' or ']': compared whole) */
		n = strlen(f.app_name);
		check(end - p > (ptrdiff_t)n && !memcmp(p, f.app_name, n) && p[n] == '[');
		p += n + 1;
		n = strlen(f.procid);
		check(end - p >= (ptrdiff_t)n + 3 && !memcmp(p, f.procid, n) && !memcmp(p + n, "]: ", 3));
		p += n + 3;
	}
	/* MSG; a cut message is empty only when its header does not fit */
	check((nc == 0) == ((size_t)(p - whole) > cap));
	if (!safe) {
		check(sl_esc_scan(p, (size_t)(end - p), SL_ESC_KEEP_TAB) == (size_t)(end - p));
		if (!escaped)
			check((size_t)(end - p) == text_len && !memcmp(p, text, text_len));
	} else {
		check((size_t)(end - p) == text_len && !memcmp(p, text, text_len));
	}

	/* framing */
	n = sl_syslog_fmt_frame(SL_SYSLOG_FRAME_OCTET, nw, pre, &lf);
	check(n >= 2 && n <= 21 && pre[n - 1] == ' ' && !lf);
	pre[n - 1] = 0;
	check(strtoull(pre, NULL, 10) == nw);
	return 0;
}
