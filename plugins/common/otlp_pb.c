/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * OTLP logs request bodies, protobuf and JSON: see otlp_pb.h.
 *
 * Protobuf messages are length-prefixed, so each one is sized before it
 * is written (the *_size functions mirror the writers); the nesting is
 * only three deep and every size is a sum of its fields.
 */
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "grow.h"
#include "otlp_pb.h"
#include "utf8.h"

/* Field numbers and wire types (tag = field << 3 | wire type). */
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };
#define TAG(field, wt) ((uint8_t)((field) << 3 | (wt)))

/* ExportLogsServiceRequest / ExportLogsServiceResponse */
#define REQ_RESOURCE_LOGS TAG(1, WT_LEN)
#define RESP_PARTIAL_SUCCESS 1
#define PARTIAL_REJECTED 1
/* ResourceLogs */
#define RL_RESOURCE TAG(1, WT_LEN)
#define RL_SCOPE_LOGS TAG(2, WT_LEN)
/* Resource */
#define RES_ATTRIBUTES TAG(1, WT_LEN)
/* ScopeLogs */
#define SL_SCOPE TAG(1, WT_LEN)
#define SL_LOG_RECORDS TAG(2, WT_LEN)
/* InstrumentationScope */
#define SCOPE_NAME TAG(1, WT_LEN)
#define SCOPE_VERSION TAG(2, WT_LEN)
/* LogRecord */
#define LR_TIME TAG(1, WT_I64)
#define LR_SEVERITY_NUMBER TAG(2, WT_VARINT)
#define LR_SEVERITY_TEXT TAG(3, WT_LEN)
#define LR_BODY TAG(5, WT_LEN)
#define LR_ATTRIBUTES TAG(6, WT_LEN)
#define LR_OBSERVED_TIME TAG(11, WT_I64)
/* KeyValue */
#define KV_KEY TAG(1, WT_LEN)
#define KV_VALUE TAG(2, WT_LEN)
/* AnyValue */
#define AV_STRING TAG(1, WT_LEN)
#define AV_INT TAG(3, WT_VARINT)
#define AV_BYTES TAG(7, WT_LEN)

bool sl_otlp_buf_reserve(struct sl_otlp_buf *b, size_t need)
{
	if (need <= b->cap - b->len)
		return true;
	if (need > SIZE_MAX / 4 - b->len)
		return false;
	return sl_grow_from(&b->p, &b->cap, b->len + need, 4096);
}

void sl_otlp_buf_free(struct sl_otlp_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ---- protobuf ---- */

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Writers: the caller reserved the room (the sizes below). */
static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static uint8_t *put_fixed64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

/*
 * Bytes of s[0..n) once every invalid byte is U+00XX (2 bytes of UTF-8):
 * n when there is none (then the string is copied as it is).  Runs of
 * ASCII go 8 bytes at a time: bodies are mostly json's ASCII text.
 */
static size_t utf8_size(const uint8_t *s, size_t n)
{
	size_t out = 0, i = 0;

	while (i < n) {
		uint64_t w;
		size_t l;

		if (n - i >= 8) {
			memcpy(&w, s + i, 8);
			if (!(w & 0x8080808080808080ull)) {
				i += 8;
				out += 8;
				continue;
			}
		}
		l = s[i] < 0x80 ? 1 : s[i] >= 0xc2 && s[i] <= 0xf4 ? sl_utf8_len(s + i, n - i) : 0;
		out += l ? l : 2;
		i += l ? l : 1;
	}
	return out;
}

static uint8_t *put_utf8(uint8_t *p, const uint8_t *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t l = s[i] < 0x80 ? 1 : s[i] >= 0xc2 && s[i] <= 0xf4 ? sl_utf8_len(s + i, n - i) : 0;

		if (l) {
			memcpy(p, s + i, l);
			p += l;
			i += l;
		} else {	/* a stray byte: the character of the same number */
			*p++ = (uint8_t)(0xc0 | s[i] >> 6);
			*p++ = (uint8_t)(0x80 | (s[i] & 0x3f));
			i++;
		}
	}
	return p;
}

/* A length-delimited field: tag, length, then len bytes of content. */
static size_t field_size(size_t len)
{
	return 1 + varint_size(len) + len;
}

static uint8_t *put_head(uint8_t *p, uint8_t tag, size_t len)
{
	*p++ = tag;
	return put_varint(p, len);
}

/* A string field whose utf8_size() is size. */
static uint8_t *put_sized(uint8_t *p, uint8_t tag, const void *s, size_t n, size_t size)
{
	p = put_head(p, tag, size);
	if (size != n)
		return put_utf8(p, s, n);
	memcpy(p, s, n);
	return p + n;
}

static uint8_t *put_string(uint8_t *p, uint8_t tag, const void *s, size_t n)
{
	return put_sized(p, tag, s, n, utf8_size(s, n));
}

static uint8_t *put_raw(uint8_t *p, uint8_t tag, const void *s, size_t n)
{
	p = put_head(p, tag, n);
	memcpy(p, s, n);
	return p + n;
}

/* The sizes of an attribute's parts, computed once for its size and its writing. */
struct kvsz {
	size_t key, val, av, kv;	/* key and string value (utf8_size), AnyValue, KeyValue */
};

static void kv_sizes(const struct sl_otlp_kv *kv, struct kvsz *z)
{
	z->key = utf8_size((const uint8_t *)kv->key, kv->keylen);
	z->val = kv->kind == OTLP_STR ? utf8_size(kv->s, kv->n) : kv->n;
	z->av = kv->kind == OTLP_INT ? 1 + varint_size((uint64_t)kv->i) : field_size(z->val);
	z->kv = field_size(z->key) + field_size(z->av);
}

static uint8_t *put_kv_sized(uint8_t *p, uint8_t tag, const struct sl_otlp_kv *kv,
			     const struct kvsz *z)
{
	p = put_head(p, tag, z->kv);
	p = put_sized(p, KV_KEY, kv->key, kv->keylen, z->key);
	p = put_head(p, KV_VALUE, z->av);
	switch (kv->kind) {
	case OTLP_INT:
		*p++ = AV_INT;
		return put_varint(p, (uint64_t)kv->i);
	case OTLP_BYTES:
		return put_raw(p, AV_BYTES, kv->s, kv->n);
	default:
		return put_sized(p, AV_STRING, kv->s, kv->n, z->val);
	}
}

static size_t kv_size(const struct sl_otlp_kv *kv)
{
	struct kvsz z;

	kv_sizes(kv, &z);
	return z.kv;
}

static uint8_t *put_kv(uint8_t *p, uint8_t tag, const struct sl_otlp_kv *kv)
{
	struct kvsz z;

	kv_sizes(kv, &z);
	return put_kv_sized(p, tag, kv, &z);
}

static size_t kvs_size(const struct sl_otlp_kv *kv, unsigned n)
{
	size_t s = 0;

	for (unsigned i = 0; i < n; i++)
		s += field_size(kv_size(&kv[i]));
	return s;
}

/* Attributes of one record whose sizes are kept while it is written (more: sized twice). */
#define KV_CACHE 128

/*
 * The LogRecord's size; *body its body's string size (utf8_size) and
 * z[i] the sizes of attribute i (i < KV_CACHE): every string scanned once.
 */
static size_t log_size(const struct sl_otlp_log *l, size_t *body, struct kvsz *z)
{
	size_t s = 9 + 9 + 1 + varint_size((uint64_t)(int64_t)l->severity_number);

	if (!l->time_ns)
		s -= 9;
	if (l->severity_text)
		s += field_size(utf8_size((const uint8_t *)l->severity_text,
					  strlen(l->severity_text)));
	*body = l->body ? utf8_size(l->body, l->body_len) : 0;
	if (l->body)
		s += field_size(field_size(*body));
	for (unsigned i = 0; i < l->nattrs; i++) {
		struct kvsz t;

		kv_sizes(&l->attrs[i], i < KV_CACHE ? &z[i] : &t);
		s += field_size(i < KV_CACHE ? z[i].kv : t.kv);
	}
	return s;
}

static bool log_pb(struct sl_otlp_buf *b, const struct sl_otlp_log *l)
{
	struct kvsz z[KV_CACHE];
	size_t body, len = log_size(l, &body, z);
	uint8_t *p;

	if (!sl_otlp_buf_reserve(b, field_size(len)))
		return false;
	p = put_head(b->p + b->len, SL_LOG_RECORDS, len);
	if (l->time_ns) {
		*p++ = LR_TIME;
		p = put_fixed64(p, l->time_ns);
	}
	*p++ = LR_SEVERITY_NUMBER;
	p = put_varint(p, (uint64_t)(int64_t)l->severity_number);
	if (l->severity_text)
		p = put_string(p, LR_SEVERITY_TEXT, l->severity_text, strlen(l->severity_text));
	if (l->body) {
		p = put_head(p, LR_BODY, field_size(body));
		p = put_sized(p, AV_STRING, l->body, l->body_len, body);
	}
	for (unsigned i = 0; i < l->nattrs; i++)
		p = i < KV_CACHE ? put_kv_sized(p, LR_ATTRIBUTES, &l->attrs[i], &z[i])
				 : put_kv(p, LR_ATTRIBUTES, &l->attrs[i]);
	*p++ = LR_OBSERVED_TIME;
	p = put_fixed64(p, l->observed_ns);
	b->len = (size_t)(p - b->p);
	return true;
}

static size_t str_field_size(const char *s)
{
	return s ? field_size(utf8_size((const uint8_t *)s, strlen(s))) : 0;
}

static bool request_pb(struct sl_otlp_buf *out, const struct sl_otlp_resource *res,
		       const struct iovec *unit, unsigned n)
{
	size_t units = 0, resource = kvs_size(res->attrs, res->nattrs), scope, scope_logs, rl;
	uint8_t *p;

	for (unsigned i = 0; i < n; i++)
		units += unit[i].iov_len;
	scope = str_field_size(res->scope_name) + str_field_size(res->scope_version);
	scope_logs = field_size(scope) + units;
	rl = field_size(resource) + field_size(scope_logs);
	out->len = 0;
	if (!sl_otlp_buf_reserve(out, field_size(rl)))
		return false;
	p = put_head(out->p, REQ_RESOURCE_LOGS, rl);
	p = put_head(p, RL_RESOURCE, resource);
	for (unsigned i = 0; i < res->nattrs; i++)
		p = put_kv(p, RES_ATTRIBUTES, &res->attrs[i]);
	p = put_head(p, RL_SCOPE_LOGS, scope_logs);
	p = put_head(p, SL_SCOPE, scope);
	if (res->scope_name)
		p = put_string(p, SCOPE_NAME, res->scope_name, strlen(res->scope_name));
	if (res->scope_version)
		p = put_string(p, SCOPE_VERSION, res->scope_version, strlen(res->scope_version));
	for (unsigned i = 0; i < n; i++) {
		memcpy(p, unit[i].iov_base, unit[i].iov_len);
		p += unit[i].iov_len;
	}
	out->len = (size_t)(p - out->p);
	return true;
}

/* ---- JSON ---- */

static bool lit(struct sl_otlp_buf *b, const char *s)
{
	size_t n = strlen(s);

	if (!sl_otlp_buf_reserve(b, n))
		return false;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	return true;
}

/* A JSON string with its quotes: fmt.c's writer, whose rules are ours (otlp_pb.h). */
static bool jstr(struct sl_otlp_buf *b, const void *s, size_t n)
{
	struct sl_fmt_buf fb;

	if (n > (SIZE_MAX - 2) / 6 || !sl_otlp_buf_reserve(b, 6 * n + 2))
		return false;
	sl_fmt_init(&fb, b->p + b->len, 6 * n + 2);
	sl_fmt_json_str(&fb, s, n);
	b->len += fb.len;
	return !fb.overflow;
}

static bool jnum(struct sl_otlp_buf *b, uint64_t v, bool quoted)
{
	char *p;

	if (!sl_otlp_buf_reserve(b, SL_FMT_U64_MAX + 2))
		return false;
	p = (char *)b->p + b->len;
	if (quoted)
		*p++ = '"';
	p = sl_fmt_u64_raw(p, v);
	if (quoted)
		*p++ = '"';
	b->len = (size_t)((uint8_t *)p - b->p);
	return true;
}

/* A signed int64 as a quoted decimal (proto3 JSON: 64-bit integers are strings). */
static bool jint64(struct sl_otlp_buf *b, int64_t v)
{
	if (v >= 0)
		return jnum(b, (uint64_t)v, true);
	return lit(b, "\"-") && jnum(b, -(uint64_t)v, false) && lit(b, "\"");
}

static bool jbase64(struct sl_otlp_buf *b, const uint8_t *s, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint8_t *p;

	if (n > SIZE_MAX / 2 || !sl_otlp_buf_reserve(b, (n + 2) / 3 * 4 + 2))
		return false;
	p = b->p + b->len;
	*p++ = '"';
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
			     (i + 2 < n ? s[i + 2] : 0);

		*p++ = (uint8_t)tab[v >> 18];
		*p++ = (uint8_t)tab[(v >> 12) & 63];
		*p++ = i + 1 < n ? (uint8_t)tab[(v >> 6) & 63] : '=';
		*p++ = i + 2 < n ? (uint8_t)tab[v & 63] : '=';
	}
	*p++ = '"';
	b->len = (size_t)(p - b->p);
	return true;
}

static bool jkv(struct sl_otlp_buf *b, const struct sl_otlp_kv *kv)
{
	bool ok = lit(b, "{\"key\":") && jstr(b, kv->key, kv->keylen);

	switch (kv->kind) {
	case OTLP_INT:
		ok = ok && lit(b, ",\"value\":{\"intValue\":") && jint64(b, kv->i);
		break;
	case OTLP_BYTES:
		ok = ok && lit(b, ",\"value\":{\"bytesValue\":") && jbase64(b, kv->s, kv->n);
		break;
	default:
		ok = ok && lit(b, ",\"value\":{\"stringValue\":") && jstr(b, kv->s, kv->n);
	}
	return ok && lit(b, "}}");
}

static bool jkvs(struct sl_otlp_buf *b, const struct sl_otlp_kv *kv, unsigned n)
{
	bool ok = lit(b, "[");

	for (unsigned i = 0; ok && i < n; i++)
		ok = (!i || lit(b, ",")) && jkv(b, &kv[i]);
	return ok && lit(b, "]");
}

static bool log_json(struct sl_otlp_buf *b, const struct sl_otlp_log *l)
{
	bool ok = lit(b, "{");

	if (l->time_ns)
		ok = ok && lit(b, "\"timeUnixNano\":") && jnum(b, l->time_ns, true) && lit(b, ",");
	/* severityNumber is an enum: a number, not a string */
	ok = ok && lit(b, "\"observedTimeUnixNano\":") && jnum(b, l->observed_ns, true) &&
	     lit(b, ",\"severityNumber\":") &&
	     jnum(b, l->severity_number > 0 ? (uint64_t)l->severity_number : 0, false);
	if (l->severity_text)
		ok = ok && lit(b, ",\"severityText\":") &&
		     jstr(b, l->severity_text, strlen(l->severity_text));
	if (l->body)
		ok = ok && lit(b, ",\"body\":{\"stringValue\":") && jstr(b, l->body, l->body_len) &&
		     lit(b, "}");
	if (l->nattrs)
		ok = ok && lit(b, ",\"attributes\":") && jkvs(b, l->attrs, l->nattrs);
	return ok && lit(b, "}");
}

static bool jopt(struct sl_otlp_buf *b, const char *key, const char *s, bool comma)
{
	return !s || ((!comma || lit(b, ",")) && lit(b, key) && jstr(b, s, strlen(s)));
}

static bool request_json(struct sl_otlp_buf *out, const struct sl_otlp_resource *res,
			 const struct iovec *unit, unsigned n)
{
	bool ok;

	out->len = 0;
	ok = lit(out, "{\"resourceLogs\":[{\"resource\":{\"attributes\":") &&
	     jkvs(out, res->attrs, res->nattrs) && lit(out, "},\"scopeLogs\":[{\"scope\":{") &&
	     jopt(out, "\"name\":", res->scope_name, false) &&
	     jopt(out, "\"version\":", res->scope_version, res->scope_name != NULL) &&
	     lit(out, "},\"logRecords\":[");
	for (unsigned i = 0; ok && i < n; i++) {
		ok = (!i || lit(out, ",")) && sl_otlp_buf_reserve(out, unit[i].iov_len);
		if (ok) {
			memcpy(out->p + out->len, unit[i].iov_base, unit[i].iov_len);
			out->len += unit[i].iov_len;
		}
	}
	return ok && lit(out, "]}]}]}");
}

/* ---- the interface ---- */

bool sl_otlp_log_append(struct sl_otlp_buf *b, enum sl_otlp_encoding enc, const struct sl_otlp_log *l)
{
	size_t len = b->len;

	if (enc == OTLP_PROTOBUF)
		return log_pb(b, l);
	if (log_json(b, l))
		return true;
	b->len = len;
	return false;
}

bool sl_otlp_request(struct sl_otlp_buf *out, enum sl_otlp_encoding enc, const struct sl_otlp_resource *res,
		  const struct iovec *unit, unsigned n)
{
	return enc == OTLP_PROTOBUF ? request_pb(out, res, unit, n) : request_json(out, res, unit, n);
}

/* ---- the response ---- */

/* A varint at *p (before end): false when truncated or longer than 10 bytes. */
static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 70 && *p < end; shift += 7) {
		uint8_t c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/*
 * The varint of field `want` (wire type varint or length) in message
 * [p, end): the value, or the content through sub and sublen.  0: absent,
 * 1: found, -1: malformed.  The last occurrence wins, as in protobuf.
 */
static int find_field(const uint8_t *p, const uint8_t *end, unsigned want, uint64_t *v,
		      const uint8_t **sub, size_t *sublen)
{
	int found = 0;

	while (p < end) {
		uint64_t key, x;

		if (!get_varint(&p, end, &key))
			return -1;
		switch (key & 7) {
		case WT_VARINT:
			if (!get_varint(&p, end, &x))
				return -1;
			if (key >> 3 == want && v) {
				*v = x;
				found = 1;
			}
			break;
		case WT_I64:
		case WT_I32:
			x = (key & 7) == WT_I64 ? 8 : 4;
			if ((uint64_t)(end - p) < x)
				return -1;
			p += x;
			break;
		case WT_LEN:
			if (!get_varint(&p, end, &x) || x > (uint64_t)(end - p))
				return -1;
			if (key >> 3 == want && sub) {
				*sub = p;
				*sublen = (size_t)x;
				found = 1;
			}
			p += x;
			break;
		default:	/* groups: not in these messages */
			return -1;
		}
	}
	return found;
}

static int64_t rejected_pb(const uint8_t *p, size_t len)
{
	const uint8_t *ps;
	size_t pslen;
	uint64_t v = 0;
	int r = find_field(p, p + len, RESP_PARTIAL_SUCCESS, NULL, &ps, &pslen);

	if (r <= 0)
		return r;
	r = find_field(ps, ps + pslen, PARTIAL_REJECTED, &v, NULL, NULL);
	if (r < 0 || v > INT64_MAX)
		return -1;
	return (int64_t)v;
}

static int64_t rejected_json(const char *s, size_t len)
{
	static const char key[] = "\"rejectedLogRecords\"";
	const char *end = s + len, *p = NULL;
	uint64_t v = 0;
	bool digits = false;

	for (const char *q = s; q + sizeof(key) - 1 <= end; q++)
		if (!memcmp(q, key, sizeof(key) - 1)) {
			p = q + sizeof(key) - 1;
			break;
		}
	if (!p)
		return 0;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	if (p == end || *p++ != ':')
		return -1;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '"'))
		p++;
	for (; p < end && *p >= '0' && *p <= '9'; p++, digits = true) {
		if (v > (INT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	return digits ? (int64_t)v : -1;
}

int64_t sl_otlp_response_rejected(enum sl_otlp_encoding enc, const void *body, size_t len)
{
	if (!len)
		return 0;
	return enc == OTLP_PROTOBUF ? rejected_pb(body, len) : rejected_json(body, len);
}
