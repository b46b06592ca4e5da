/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as the makings of an OTLP log record for the
 * encoder (plugins/common/otlp_pb.h), and as a response body.  The first
 * byte: attribute kinds (2 bits each, for up to 4 attributes: 0 none,
 * 1 string, 2 int, 3 bytes); the second: severity; then NUL-separated
 * body, then key and value of each attribute (an int's value is its
 * piece's first 8 bytes).
 * abort() when what comes out breaks a rule the header states:
 *
 * - the protobuf request reads back as ExportLogsServiceRequest: every
 *   length-delimited field fits its message exactly, every string field
 *   (keys, string values, body, scope) is valid UTF-8, and the LogRecord
 *   holds as many attributes as were given, ints equal to theirs;
 * - the JSON request is valid UTF-8 without a raw control byte, and its
 *   braces and brackets balance outside strings;
 * - sl_otlp_response_rejected() on the input, in both encodings, answers
 *   -1 or a count, never reading past the input (ASan).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "otlp_pb.h"
#include "utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort();
}

static const char *piece(const uint8_t *p, size_t n, size_t *at, size_t *len)
{
	const char *s = (const char *)p + *at;
	const uint8_t *nul = *at < n ? memchr(p + *at, 0, n - *at) : NULL;

	*len = nul ? (size_t)(nul - (p + *at)) : n - *at;
	*at += *len + (nul != NULL);
	return s;
}

static bool valid_utf8(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t l = s[i] < 0x80 ? 1 : s[i] >= 0xc2 && s[i] <= 0xf4 ? sl_utf8_len(s + i, n - i) : 0;

		if (!l)
			return false;
		i += l;
	}
	return true;
}

static uint64_t varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 70; shift += 7) {
		check(*p < end);
		v |= (uint64_t)(**p & 0x7f) << shift;
		if (!(*(*p)++ & 0x80))
			return v;
	}
	abort();
}

/* What each message's length-delimited fields are: 'm' message (its kind), 's' string, 'b' bytes. */
enum msg { M_REQ, M_RL, M_RES, M_SL, M_SCOPE, M_LR, M_KV, M_AV };
static const char *const layout[] = {
	[M_REQ] = "m1",			/* 1 ResourceLogs */
	[M_RL] = "m2m3",		/* 1 Resource, 2 ScopeLogs */
	[M_RES] = "m6",			/* 1 KeyValue */
	[M_SL] = "m4m5",		/* 1 scope, 2 LogRecord */
	[M_SCOPE] = "s-s-",		/* name, version */
	[M_LR] = "x-x-s-x-m7m6",	/* 3 severity_text, 5 body, 6 attributes */
	[M_KV] = "s-m7",		/* key, value */
	[M_AV] = "s-x-x-x-x-x-b-",	/* 1 string, 7 bytes */
};

static unsigned n_attrs, n_ints;
static int64_t ints[4];

/* Walk message [p, end) of kind k: abort on anything out of place. */
static void walk(const uint8_t *p, const uint8_t *end, enum msg k)
{
	while (p < end) {
		uint64_t key = varint(&p, end), f = key >> 3, len;
		const char *l = layout[k];

		check(f >= 1);
		switch (key & 7) {
		case 0:
			len = varint(&p, end);
			if (k == M_AV) {
				check(f == 3 && n_ints < 4 && (int64_t)len == ints[n_ints]);
				n_ints++;
			}
			break;
		case 1:
			check(k == M_LR && (f == 1 || f == 11) && end - p >= 8);
			p += 8;
			break;
		case 2:
			len = varint(&p, end);
			check(len <= (uint64_t)(end - p) && 2 * f <= strlen(l));
			if (l[2 * f - 2] == 'm') {
				if (k == M_LR && f == 6)
					n_attrs++;
				walk(p, p + len, (enum msg)(l[2 * f - 1] - '0'));
			} else {
				check(l[2 * f - 2] == 's' || l[2 * f - 2] == 'b');
				if (l[2 * f - 2] == 's')
					check(valid_utf8(p, len));
			}
			p += len;
			break;
		default:
			abort();
		}
	}
	check(p == end);
}

static void check_json(const uint8_t *p, size_t n)
{
	int depth = 0;
	bool in_str = false;

	check(valid_utf8(p, n));
	for (size_t i = 0; i < n; i++) {
		check(p[i] >= 0x20);
		if (in_str) {
			if (p[i] == '\\')
				i++;
			else if (p[i] == '"')
				in_str = false;
		} else if (p[i] == '"') {
			in_str = true;
		} else if (p[i] == '{' || p[i] == '[') {
			depth++;
		} else if (p[i] == '}' || p[i] == ']') {
			check(--depth >= 0);
		}
	}
	check(!in_str && depth == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct sl_otlp_kv rattr[] = { { "service.name", 12, OTLP_STR, 0, "sluice", 6 } };
	static const struct sl_otlp_resource res = { rattr, 1, "sluice", "0" };
	struct sl_otlp_kv kv[4];
	struct sl_otlp_log l = { .time_ns = 1, .observed_ns = 2, .severity_text = "INFO" };
	struct sl_otlp_buf u = { 0 }, req = { 0 };
	struct iovec v;
	size_t at = 2, len;
	unsigned nkv = 0;

	for (int e = OTLP_PROTOBUF; e <= OTLP_JSON; e++) {
		int64_t r = sl_otlp_response_rejected((enum sl_otlp_encoding)e, data, size);

		check(r >= -1);
	}
	if (size < 2)
		return 0;
	l.severity_number = data[1] % 25;
	l.body = piece(data, size, &at, &l.body_len);
	for (unsigned i = 0; i < 4; i++) {
		unsigned kind = (data[0] >> (2 * i)) & 3;
		const char *val;

		if (!kind)
			continue;
		kv[nkv].key = piece(data, size, &at, &kv[nkv].keylen);
		val = piece(data, size, &at, &len);
		kv[nkv].kind = kind == 1 ? OTLP_STR : kind == 2 ? OTLP_INT : OTLP_BYTES;
		kv[nkv].s = val;
		kv[nkv].n = len;
		kv[nkv].i = 0;
		if (kind == 2)
			memcpy(&kv[nkv].i, val, len < 8 ? len : 8);
		nkv++;
	}
	/* ints[] in attribute order, only for the ints */
	for (unsigned i = 0, j = 0; i < nkv; i++)
		if (kv[i].kind == OTLP_INT)
			ints[j++] = kv[i].i;
	l.attrs = kv;
	l.nattrs = nkv;

	check(sl_otlp_log_append(&u, OTLP_PROTOBUF, &l));
	v.iov_base = u.p;
	v.iov_len = u.len;
	check(sl_otlp_request(&req, OTLP_PROTOBUF, &res, &v, 1));
	n_attrs = n_ints = 0;
	walk(req.p, req.p + req.len, M_REQ);
	check(n_attrs == nkv);

	u.len = 0;
	check(sl_otlp_log_append(&u, OTLP_JSON, &l));
	v.iov_base = u.p;
	v.iov_len = u.len;
	check(sl_otlp_request(&req, OTLP_JSON, &res, &v, 1));
	check_json(req.p, req.len);
	sl_otlp_buf_free(&u);
	sl_otlp_buf_free(&req);
	return 0;
}
