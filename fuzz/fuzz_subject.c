/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as a NATS subject template and a record's
 * values for it (plugins/common/subject_tmpl.h).  The input is a template
 * up to the first NUL, then the prefix's bytes; an integer field, the
 * source address and the hardware header are taken from the same bytes.
 * abort() when what comes out breaks a rule the header states:
 *
 * - a template that parses renders, for any record, either nothing (too
 *   long) or a valid subject to publish to: printable ASCII, no space,
 *   '*' or '>', no empty token, NUL-terminated at the length returned;
 * - "fw.{prefix}" renders the prefix as exactly one token that
 *   percent-decodes back to its bytes ("-" when empty).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "subject_tmpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Alignas(16) uint8_t
	store[sizeof(struct sl_record) + SL_F_WELL_KNOWN_COUNT * sizeof(union sl_value)];
static char out[SL_SUBJECT_MAX_LEN], tmpl[SL_SUBJECT_MAX_LEN + 1];
static uint8_t back[SL_SUBJECT_MAX_LEN];

static const enum sl_type types[] = {
#define X_TYPE(id, name, type, doc) [SL_F_##id] = type,
	SL_WELL_KNOWN_FIELDS(X_TYPE)
#undef X_TYPE
};

static void check(int ok)
{
	if (!ok)
		abort();
}

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

static void check_subject(const char *s, size_t n)
{
	check(n == strlen(s) && n < SL_SUBJECT_MAX_LEN);
	check(s[0] != '.' && s[n - 1] != '.');
	for (size_t i = 0; i < n; i++) {
		check(s[i] > ' ' && s[i] < 0x7f && s[i] != '*' && s[i] != '>');
		check(!(s[i] == '.' && s[i + 1] == '.'));
	}
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_record *r = (struct sl_record *)store;
	const uint8_t *nul = memchr(data, 0, size);
	size_t tlen = nul ? (size_t)(nul - data) : size, vlen = nul ? size - tlen - 1 : 0;
	const uint8_t *val = nul ? nul + 1 : data + size;
	struct sl_subject_tmpl t;
	char err[160];
	uint64_t u = 0;
	uint8_t a[16] = { 0 };
	size_t n, k = 0;

	memset(store, 0, sizeof(store));
	sl_set_bytes(r, SL_F_PREFIX, val, (uint32_t)vlen);
	memcpy(&u, val, vlen < 8 ? vlen : 8);
	sl_set_u64(r, SL_F_NFLOG_GROUP, u);
	memcpy(a, val, vlen < 16 ? vlen : 16);
	sl_set_ip6(r, SL_F_SRC_ADDR, a);
	sl_set_u64(r, SL_F_IP_VERSION, (u & 1) ? 6 : 4);
	sl_set_bytes(r, SL_F_HWHDR, val, (uint32_t)(vlen < 64 ? vlen : 64));
	sl_set_time(r, SL_F_TIMESTAMP, (int64_t)u, 0);

	if (tlen <= SL_SUBJECT_MAX_LEN) {
		memcpy(tmpl, data, tlen);
		tmpl[tlen] = 0;
		if (sl_subject_parse(&t, tmpl, resolve, NULL, err, sizeof(err)) == 0) {
			n = sl_subject_render(&t, r, out, sizeof(out));
			if (n)
				check_subject(out, n);
		} else {
			check(err[0] || strchr(tmpl, '{'));
		}
	}

	check(sl_subject_parse(&t, "fw.{prefix}", resolve, NULL, err, sizeof(err)) == 0);
	n = sl_subject_render(&t, r, out, sizeof(out));
	if (!n) {
		check(vlen > (SL_SUBJECT_MAX_LEN - 4) / 3);	/* only a long value does not fit */
		return 0;
	}
	check_subject(out, n);
	check(!memcmp(out, "fw.", 3) && !strchr(out + 3, '.'));
	if (!vlen) {
		check(!strcmp(out + 3, "-"));
		return 0;
	}
	for (const char *p = out + 3; *p; k++) {
		if (*p == '%') {
			int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);

			check(hi >= 0 && lo >= 0);
			back[k] = (uint8_t)(hi << 4 | lo);
			p += 3;
		} else {
			check(sl_subject_keeps((uint8_t)*p));
			back[k] = (uint8_t)*p++;
		}
	}
	check(k == vlen && !memcmp(back, val, vlen));
	return 0;
}
