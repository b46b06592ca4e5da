/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CEF and LEEF lines from records (contract in cef_fmt.h).  One table of
 * keys serves both formats; the escaping is one walk with a copied run
 * for the bytes that need nothing.
 */
#include "cef_fmt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "time_clamp.h"
#include "utf8.h"

/* U+FFFD REPLACEMENT CHARACTER, for what must not reach the line. */
static const char fffd[3] = { (char)0xef, (char)0xbf, (char)0xbd };

/* Byte c (< 0x80) escaped as `how`: the escape's second byte, 1 for U+FFFD, 0 for none. */
static int esc_ascii(uint8_t c, enum sl_cef_esc how, char delim)
{
	if (c == '\\')
		return '\\';
	if (how == SL_CEF_ESC_HEADER) {
		if (c == '|')
			return '|';
	} else {
		if (c == '\n')
			return 'n';
		if (c == '\r')
			return 'r';
		if (how == SL_CEF_ESC_VALUE && c == '=')
			return '=';
		if (how == SL_CEF_ESC_LEEF && c == (uint8_t)delim && c >= 0x20 && c < 0x7f)
			return c;
	}
	return c < 0x20 || c == 0x7f ? 1 : 0;
}

void sl_cef_escape(struct sl_fmt_buf *b, const void *s, size_t n, enum sl_cef_esc how, char delim)
{
	const uint8_t *p = s;
	size_t i = 0, run = 0;

	while (i < n) {
		uint8_t c = p[i];
		size_t len = 1;
		int e;

		if (c < 0x80) {
			e = esc_ascii(c, how, delim);
		} else {
			len = c >= 0xc2 && c <= 0xf4 ? sl_utf8_len(p + i, n - i) : 0;
			/* invalid: this byte alone; a C1 control: its two bytes */
			e = !len || (len == 2 && sl_utf8_is_c1(p + i));
			if (!len)
				len = 1;
		}
		if (!e) {
			i += len;
			continue;
		}
		sl_fmt_mem(b, p + run, i - run);
		if (e == 1) {
			sl_fmt_mem(b, fffd, sizeof(fffd));
		} else {
			char two[2] = { '\\', (char)e };

			sl_fmt_mem(b, two, 2);
		}
		i += len;
		run = i;
	}
	sl_fmt_mem(b, p + run, n - run);
}

/* ---- the configuration ---- */

static char *escaped_copy(const char *s, size_t n, enum sl_cef_esc how, char delim, size_t *len)
{
	size_t cap = 3 * n + 1;
	char *out = malloc(cap);
	struct sl_fmt_buf fb;

	if (!out)
		return NULL;
	sl_fmt_init(&fb, out, cap);
	sl_cef_escape(&fb, s, n, how, delim);
	*len = fb.len;
	return out;
}

#define PREFIX_MARK "{prefix}"

static int tmpl_init(struct sl_cef_tmpl *t, const char *s)
{
	size_t n = strlen(s), cap = 3 * n + 1, marks = 0;
	struct sl_fmt_buf fb;
	const char *at;

	for (at = s; (at = strstr(at, PREFIX_MARK)); at += sizeof(PREFIX_MARK) - 1)
		marks++;
	t->text = malloc(cap);
	t->len = calloc(marks + 1, sizeof(*t->len));
	if (!t->text || !t->len)
		return -1;
	t->pieces = (unsigned)marks + 1;
	sl_fmt_init(&fb, t->text, cap);
	for (unsigned i = 0; i < t->pieces; i++) {
		const char *end = strstr(s, PREFIX_MARK);
		size_t before = fb.len, m = end ? (size_t)(end - s) : strlen(s);

		sl_cef_escape(&fb, s, m, SL_CEF_ESC_HEADER, 0);
		t->len[i] = fb.len - before;
		s += m + (end ? sizeof(PREFIX_MARK) - 1 : 0);
	}
	return 0;
}

static void tmpl_free(struct sl_cef_tmpl *t)
{
	free(t->text);
	free(t->len);
}

int sl_cef_init(struct sl_cef *f, const struct sl_cef_conf *c)
{
	const char *parts[3] = { c->vendor, c->product, c->version };
	size_t cap = 16, len;
	struct sl_fmt_buf fb;

	memset(f, 0, sizeof(*f));
	f->format = c->format;
	f->verdict_field = -1;
	f->rule = (struct sl_rule_fields)SL_RULE_FIELDS_NONE;
	f->delimiter = c->delimiter ? c->delimiter : '\t';
	for (unsigned i = 0; i < 3; i++)
		cap += 3 * strlen(parts[i]) + 1;
	f->head = malloc(cap);
	if (!f->head)
		goto fail;
	sl_fmt_init(&fb, f->head, cap);
	if (c->format == SL_CEF_LEEF)
		sl_fmt_lit(&fb, "LEEF:2.0|");
	else
		sl_fmt_lit(&fb, "CEF:0|");
	for (unsigned i = 0; i < 3; i++) {
		sl_cef_escape(&fb, parts[i], strlen(parts[i]), SL_CEF_ESC_HEADER, 0);
		sl_fmt_chr(&fb, '|');
	}
	f->head_len = fb.len;
	if (tmpl_init(&f->signature, c->signature) < 0 || tmpl_init(&f->name, c->name) < 0)
		goto fail;
	sl_fmt_init(&fb, f->severity, sizeof(f->severity) - 1);
	f->sev = c->severity > 10 ? 10 : c->severity;
	sl_fmt_u64(&fb, f->sev);
	f->severity[fb.len] = '\0';
	if (c->action) {
		enum sl_cef_esc how = c->format == SL_CEF_LEEF ? SL_CEF_ESC_LEEF : SL_CEF_ESC_VALUE;

		f->action = escaped_copy(c->action, strlen(c->action), how, f->delimiter, &len);
		if (!f->action)
			goto fail;
		f->action_len = len;
	}
	return 0;
fail:
	sl_cef_free(f);
	errno = ENOMEM;
	return -1;
}

void sl_cef_free(struct sl_cef *f)
{
	free(f->head);
	tmpl_free(&f->signature);
	tmpl_free(&f->name);
	free(f->action);
	memset(f, 0, sizeof(*f));
}

/* ---- one record ---- */

/* A key in each format. */
struct key {
	const char *cef, *leef;
};

enum {
	K_RT, K_START, K_END, K_SRC, K_DST, K_SRC6, K_DST6, K_SPT, K_DPT, K_PROTO, K_SMAC, K_DMAC,
	K_IN_IF, K_OUT_IF, K_BYTES_IN, K_BYTES_OUT, K_ACT, K_SUID, K_CT_ID, K_GROUP, K_MARK,
	K_CT_EVENT, K_RULE, K_PREFIX, K_SEV,
};

/* Keep docs/PLUGINS.md ("cef") in step with this table. */
static const struct key keys[] = {
	[K_RT] = { "rt", "devTime" },
	[K_START] = { "start", "start" },
	[K_END] = { "end", "end" },
	[K_SRC] = { "src", "src" },
	[K_DST] = { "dst", "dst" },
	[K_SRC6] = { "c6a2", "src" },
	[K_DST6] = { "c6a3", "dst" },
	[K_SPT] = { "spt", "srcPort" },
	[K_DPT] = { "dpt", "dstPort" },
	[K_PROTO] = { "proto", "proto" },
	[K_SMAC] = { "smac", "srcMAC" },
	[K_DMAC] = { "dmac", "dstMAC" },
	[K_IN_IF] = { "deviceInboundInterface", "deviceInboundInterface" },
	[K_OUT_IF] = { "deviceOutboundInterface", "deviceOutboundInterface" },
	[K_BYTES_IN] = { "in", "srcBytes" },
	[K_BYTES_OUT] = { "out", "dstBytes" },
	[K_ACT] = { "act", "action" },
	[K_SUID] = { "suid", "suid" },
	[K_CT_ID] = { "cn1", "conntrackId" },
	[K_GROUP] = { "cn2", "nflogGroup" },
	[K_MARK] = { "cn3", "mark" },
	[K_CT_EVENT] = { "cs3", "conntrackEvent" },
	[K_RULE] = { "cs2", "rule" },
	[K_PREFIX] = { "cs1", "prefix" },
	[K_SEV] = { NULL, "sev" },
};

/* CEF's custom keys name themselves in a label key beside them. */
static const char *const labels[] = {
	[K_SRC6] = "c6a2Label=Source IPv6 Address",
	[K_DST6] = "c6a3Label=Destination IPv6 Address",
	[K_CT_ID] = "cn1Label=conntrackId",
	[K_GROUP] = "cn2Label=nflogGroup",
	[K_MARK] = "cn3Label=mark",
	[K_CT_EVENT] = "cs3Label=conntrackEvent",
	[K_RULE] = "cs2Label=rule",
	[K_PREFIX] = "cs1Label=prefix",
};

struct line {
	const struct sl_cef *f;
	struct sl_fmt_buf *b;
	bool first;
};

static void put_key(struct line *l, unsigned k)
{
	const char *name = l->f->format == SL_CEF_LEEF ? keys[k].leef : keys[k].cef;

	if (!l->first)
		sl_fmt_chr(l->b, l->f->format == SL_CEF_LEEF ? l->f->delimiter : ' ');
	l->first = false;
	sl_fmt_str(l->b, name);
	sl_fmt_chr(l->b, '=');
}

/*
 * A CEF custom key's label, before its value (so that the prefix, which
 * often ends in a space, ends the line).
 */
static void put_label(struct line *l, unsigned k)
{
	if (l->f->format == SL_CEF_CEF && k < sizeof(labels) / sizeof(labels[0]) && labels[k]) {
		if (!l->first)
			sl_fmt_chr(l->b, ' ');
		l->first = false;
		sl_fmt_str(l->b, labels[k]);
	}
}

static void put_u64(struct line *l, unsigned k, uint64_t v)
{
	put_label(l, k);
	put_key(l, k);
	sl_fmt_u64(l->b, v);
}

static void put_str(struct line *l, unsigned k, const void *s, size_t n)
{
	put_label(l, k);
	put_key(l, k);
	sl_cef_escape(l->b, s, n, l->f->format == SL_CEF_LEEF ? SL_CEF_ESC_LEEF : SL_CEF_ESC_VALUE,
		      l->f->delimiter);
}

static void put_time(struct line *l, unsigned k, struct sl_time t)
{
	put_u64(l, k, sl_time_ms_clamped(t));
}

static void put_addr(struct line *l, unsigned k4, unsigned k6, const uint8_t a[16], bool v6)
{
	unsigned k = v6 ? k6 : k4;

	put_label(l, k);
	put_key(l, k);
	sl_fmt_addr_in(l->b, a, v6);
}

static void put_mac(struct line *l, unsigned k, const uint8_t m[6])
{
	put_key(l, k);
	sl_fmt_mac(l->b, m);
}

/* Protocol: the json filter's name in upper case (TCP, UDP, ICMP...), else the number. */
static void put_proto(struct line *l, uint64_t p)
{
	const char *name = sl_proto_name(p, SL_PROTO_JSON);

	put_key(l, K_PROTO);
	if (!name) {
		sl_fmt_u64(l->b, p);
		return;
	}
	for (; *name; name++)
		sl_fmt_chr(l->b, *name >= 'a' && *name <= 'z' ? (char)(*name - 'a' + 'A') : *name);
}

/* Protocols whose tuple holds ports (conntrack's orig_sport is an ICMP id otherwise). */
static bool has_ports(uint64_t p)
{
	return p == 6 || p == 17 || p == 33 || p == 132 || p == 136;
}

/* Signature or name: the template with the record's prefix; "-" when empty. */
static void put_tmpl(struct sl_fmt_buf *b, const struct sl_cef_tmpl *t, const struct sl_record *r)
{
	size_t start = b->len, at = 0;

	for (unsigned i = 0; i < t->pieces; i++) {
		sl_fmt_mem(b, t->text + at, t->len[i]);
		at += t->len[i];
		if (i + 1 < t->pieces && sl_has(r, SL_F_PREFIX))
			sl_cef_escape(b, r->v[SL_F_PREFIX].bytes.ptr, r->v[SL_F_PREFIX].bytes.len,
				      SL_CEF_ESC_HEADER, 0);
	}
	if (b->len == start)
		sl_fmt_chr(b, '-');
}

static void put_ct_event(struct line *l, uint64_t v)
{
	static const char *const names[] = { "NEW", "UPDATE", "DESTROY" };
	bool first = true;

	put_label(l, K_CT_EVENT);
	put_key(l, K_CT_EVENT);
	for (unsigned i = 0; i < 3; i++) {
		if (!(v & (1u << i)))
			continue;
		if (!first)
			sl_fmt_chr(l->b, ',');
		sl_fmt_str(l->b, names[i]);
		first = false;
	}
}

/* The rule as TABLE/CHAIN#HANDLE "COMMENT" (cef_fmt.h), escaped as a value. */
static void put_rule(struct line *l, const struct sl_rule_fields *rf, const struct sl_record *r)
{
	const struct sl_bytes *table = sl_rule_str(r, rf->table), *chain = sl_rule_str(r, rf->chain);
	const struct sl_bytes *comment = sl_rule_str(r, rf->comment);
	/* names of 256 bytes at most, a comment of 1023 bytes each quoted */
	char text[3072];
	struct sl_fmt_buf t;

	sl_fmt_init(&t, text, sizeof(text));
	sl_fmt_mem(&t, table->ptr, table->len);
	sl_fmt_chr(&t, '/');
	sl_fmt_mem(&t, chain->ptr, chain->len);
	if (rf->handle >= 0 && sl_has(r, (sl_field)rf->handle)) {
		sl_fmt_chr(&t, '#');
		sl_fmt_u64(&t, r->v[rf->handle].u64);
	}
	if (comment) {
		sl_fmt_lit(&t, " \"");
		for (size_t i = 0; i < comment->len; i++) {
			if (comment->ptr[i] == '"' || comment->ptr[i] == '\\')
				sl_fmt_chr(&t, '\\');
			sl_fmt_chr(&t, (char)comment->ptr[i]);
		}
		sl_fmt_chr(&t, '"');
	}
	put_str(l, K_RULE, text, t.len);
}

/* act=: the record's verdict (nftrace's), else its rule's (nflog's), else the configured one. */
static void put_act(struct line *l, const struct sl_record *r)
{
	const struct sl_cef *f = l->f;
	const struct sl_bytes *v = sl_rule_str(r, f->verdict_field);

	if (!v)
		v = sl_rule_str(r, f->rule.verdict);
	if (v) {
		put_str(l, K_ACT, v->ptr, v->len);
	} else if (f->action) {
		put_key(l, K_ACT);
		sl_fmt_mem(l->b, f->action, f->action_len);
	}
}

/* The header up to the extension. */
static void put_header(const struct sl_cef *f, struct sl_fmt_buf *b, const struct sl_record *r)
{
	sl_fmt_mem(b, f->head, f->head_len);
	put_tmpl(b, &f->signature, r);
	sl_fmt_chr(b, '|');
	if (f->format == SL_CEF_LEEF) {
		/* the delimiter field: a printable one as itself, else as hex */
		if (f->delimiter > 0x20 && f->delimiter < 0x7f) {
			sl_fmt_chr(b, f->delimiter);
		} else {
			sl_fmt_lit(b, "x");
			sl_fmt_hex(b, (uint8_t)f->delimiter, 2, false);
		}
		sl_fmt_chr(b, '|');
		return;
	}
	put_tmpl(b, &f->name, r);
	sl_fmt_chr(b, '|');
	sl_fmt_str(b, f->severity);
	sl_fmt_chr(b, '|');
}

void sl_cef_format(const struct sl_cef *f, struct sl_fmt_buf *b, const struct sl_record *r)
{
	struct line l = { f, b, true };
	bool v6 = sl_fmt_rec_v6(r), packet = sl_has(r, SL_F_SRC_ADDR);
	sl_field src = packet ? SL_F_SRC_ADDR : SL_F_ORIG_SRC, dst = packet ? SL_F_DST_ADDR : SL_F_ORIG_DST;
	uint64_t proto = sl_has(r, SL_F_IP_PROTO) ? r->v[SL_F_IP_PROTO].u64 : 256;

	put_header(f, b, r);
	if (sl_has(r, SL_F_TIMESTAMP))
		put_time(&l, K_RT, r->v[SL_F_TIMESTAMP].time);
	if (f->format == SL_CEF_LEEF)
		put_u64(&l, K_SEV, f->sev);
	if (sl_has(r, SL_F_FLOW_START))
		put_time(&l, K_START, r->v[SL_F_FLOW_START].time);
	if (sl_has(r, SL_F_FLOW_END))
		put_time(&l, K_END, r->v[SL_F_FLOW_END].time);
	if (sl_has(r, src))
		put_addr(&l, K_SRC, K_SRC6, r->v[src].addr, v6);
	if (sl_has(r, dst))
		put_addr(&l, K_DST, K_DST6, r->v[dst].addr, v6);
	if (packet) {
		if (sl_has(r, SL_F_SPORT))
			put_u64(&l, K_SPT, r->v[SL_F_SPORT].u64);
		if (sl_has(r, SL_F_DPORT))
			put_u64(&l, K_DPT, r->v[SL_F_DPORT].u64);
	} else if (has_ports(proto)) {
		if (sl_has(r, SL_F_ORIG_SPORT))
			put_u64(&l, K_SPT, r->v[SL_F_ORIG_SPORT].u64);
		if (sl_has(r, SL_F_ORIG_DPORT))
			put_u64(&l, K_DPT, r->v[SL_F_ORIG_DPORT].u64);
	}
	if (proto < 256)
		put_proto(&l, proto);
	if (sl_has(r, SL_F_MAC_SRC))
		put_mac(&l, K_SMAC, r->v[SL_F_MAC_SRC].addr);
	if (sl_has(r, SL_F_MAC_DST))
		put_mac(&l, K_DMAC, r->v[SL_F_MAC_DST].addr);
	if (sl_has(r, SL_F_IFNAME_IN))
		put_str(&l, K_IN_IF, r->v[SL_F_IFNAME_IN].bytes.ptr, r->v[SL_F_IFNAME_IN].bytes.len);
	if (sl_has(r, SL_F_IFNAME_OUT))
		put_str(&l, K_OUT_IF, r->v[SL_F_IFNAME_OUT].bytes.ptr, r->v[SL_F_IFNAME_OUT].bytes.len);
	if (sl_has(r, SL_F_IP_LEN))
		put_u64(&l, K_BYTES_IN, r->v[SL_F_IP_LEN].u64);
	else if (sl_has(r, SL_F_ORIG_BYTES))
		put_u64(&l, K_BYTES_IN, r->v[SL_F_ORIG_BYTES].u64);
	if (!packet && sl_has(r, SL_F_REPLY_BYTES))
		put_u64(&l, K_BYTES_OUT, r->v[SL_F_REPLY_BYTES].u64);
	put_act(&l, r);
	if (sl_has(r, SL_F_UID))
		put_u64(&l, K_SUID, r->v[SL_F_UID].u64);
	if (sl_has(r, SL_F_CT_ID))
		put_u64(&l, K_CT_ID, r->v[SL_F_CT_ID].u64);
	if (sl_has(r, SL_F_NFLOG_GROUP))
		put_u64(&l, K_GROUP, r->v[SL_F_NFLOG_GROUP].u64);
	if (sl_has(r, SL_F_MARK))
		put_u64(&l, K_MARK, r->v[SL_F_MARK].u64);
	if (sl_has(r, SL_F_CT_EVENT))
		put_ct_event(&l, r->v[SL_F_CT_EVENT].u64);
	if (sl_rule_of(&f->rule, r))
		put_rule(&l, &f->rule, r);
	/* last: a prefix often ends in a space, which a reader may trim before the next key */
	if (sl_has(r, SL_F_PREFIX) && r->v[SL_F_PREFIX].bytes.len)
		put_str(&l, K_PREFIX, r->v[SL_F_PREFIX].bytes.ptr, r->v[SL_F_PREFIX].bytes.len);
}
