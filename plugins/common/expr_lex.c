/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The expression lexer: tokens of the text, and the literal values the
 * parser (expr.c) asks for (numbers and names, MACs, addresses and CIDR
 * prefixes, quoted strings with their escapes).  See expr_lex.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr_lex.h"
#include "names.h"

/* ---- compile context ---- */

/* Room for one more element of `size` bytes; its index, or -1. */
int sl_expr_push(struct cc *c, struct vec *v, size_t size)
{
	if (v->n == v->cap) {
		unsigned cap = v->cap ? v->cap * 2 : 16;
		void *p = realloc(v->p, (size_t)cap * size);

		if (!p) {
			c->failed = true;
			return -1;
		}
		v->p = p;
		v->cap = cap;
	}
	return (int)v->n++;
}

void sl_expr_fail(struct cc *c, unsigned at, const char *fmt, ...)
{
	va_list ap;

	if (c->failed)
		return;
	c->failed = true;
	c->err->column = at + 1;
	va_start(ap, fmt);
	vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
	va_end(ap);
}

/* What the current token is, for "found ..." (quoted, cut at 40 bytes). */
const char *sl_expr_found(struct cc *c, char *buf, size_t size)
{
	if (c->t.k == T_END)
		return "the end of the expression";
	snprintf(buf, size, "'%.*s'", (int)(c->t.len > 40 ? 40 : c->t.len), c->s + c->t.at);
	return buf;
}

/* ---- lexer ---- */

static bool word_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '.' || ch == ':' || ch == '/';
}

/*
 * A '-' belongs to a word (a protocol name: ipv6-icmp) only after letters
 * and digits, not all digits, and before a letter; otherwise it is the
 * range operator: 1024-65535, 10.0.0.1-10.0.0.9, ::1-::9.
 */
static bool dash_in_word(const char *w, unsigned n, char next)
{
	bool letter = false;

	if (!((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z')))
		return false;
	for (unsigned i = 0; i < n; i++) {
		if (w[i] == '.' || w[i] == ':' || w[i] == '/')
			return false;
		if (!(w[i] >= '0' && w[i] <= '9'))
			letter = true;
	}
	return letter;
}

static void lex_word(struct cc *c)
{
	unsigned p = c->pos;

	while (p < c->len && (word_char(c->s[p]) ||
			      (c->s[p] == '-' && p + 1 < c->len &&
			       dash_in_word(c->s + c->pos, p - c->pos, c->s[p + 1]))))
		p++;
	c->t.k = T_WORD;
	c->t.len = p - c->pos;
}

static void lex_string(struct cc *c)
{
	char q = c->s[c->pos];
	unsigned p = c->pos + 1;

	while (p < c->len && c->s[p] != q)
		p += (c->s[p] == '\\' && p + 1 < c->len) ? 2 : 1;
	if (p >= c->len) {
		sl_expr_fail(c, c->pos, "unterminated string: expected %c", q);
		c->t.k = T_BAD;
		return;
	}
	c->t.k = T_STR;
	c->t.len = p + 1 - c->pos;
}

static const struct { char s[3]; enum tkind k; } puncts[] = {
	{"==", T_EQ}, {"!=", T_NE}, {"<=", T_LE}, {">=", T_GE}, {"^=", T_PFX},
	{"<", T_LT}, {">", T_GT}, {"~", T_RE}, {"&", T_BIT}, {"(", T_LP}, {")", T_RP},
	{"{", T_LB}, {"}", T_RB}, {",", T_COMMA}, {"-", T_DASH},
};

void sl_expr_next(struct cc *c)
{
	c->pos += c->t.len;
	while (c->pos < c->len && (c->s[c->pos] == ' ' || c->s[c->pos] == '\t' ||
				   c->s[c->pos] == '\n' || c->s[c->pos] == '\r'))
		c->pos++;
	c->t.at = c->pos;
	c->t.len = 0;
	c->t.k = T_END;
	if (c->pos >= c->len)
		return;
	for (size_t i = 0; i < sizeof(puncts) / sizeof(puncts[0]); i++) {
		size_t n = strlen(puncts[i].s);

		if (c->len - c->pos >= n && memcmp(c->s + c->pos, puncts[i].s, n) == 0) {
			c->t.k = puncts[i].k;
			c->t.len = (unsigned)n;
			return;
		}
	}
	if (c->s[c->pos] == '"' || c->s[c->pos] == '\'')
		lex_string(c);
	else if (word_char(c->s[c->pos]))
		lex_word(c);
	else {
		sl_expr_fail(c, c->pos, "unexpected character '%c'", c->s[c->pos]);
		c->t.k = T_BAD;
	}
}

bool sl_expr_is_word(const struct cc *c, const char *w)
{
	return c->t.k == T_WORD && c->t.len == strlen(w) && memcmp(c->s + c->t.at, w, c->t.len) == 0;
}

/* The current word as a C string (words longer than the buffer are cut). */
const char *sl_expr_word(const struct cc *c, char *buf, size_t size)
{
	unsigned n = c->t.len < size - 1 ? c->t.len : (unsigned)size - 1;

	memcpy(buf, c->s + c->t.at, n);
	buf[n] = 0;
	return buf;
}

/* ---- literals ---- */

static bool parse_number(const char *w, uint64_t *v)
{
	char *end;

	if (!(w[0] >= '0' && w[0] <= '9'))
		return false;
	errno = 0;
	*v = strtoull(w, &end, (w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) ? 16 : 10);
	return !*end && errno == 0;
}

/* A protocol by any name sluice prints or reads; -1 if none. */
static int proto_by_name(const char *w)
{
	if (strcasecmp(w, "ipv6-icmp") == 0)
		return 58;
	for (int i = 0; i < 256; i++)
		if (sl_proto_names[i].name && strcasecmp(w, sl_proto_names[i].name) == 0)
			return i;
	return -1;
}

static int family_by_name(const char *w)
{
	for (size_t i = 0; i < sizeof(sl_family_names) / sizeof(sl_family_names[0]); i++)
		if (sl_family_names[i] && strcasecmp(w, sl_family_names[i]) == 0)
			return (int)i;
	return -1;
}

/* One integer literal (a number, or a name the field knows); false after an error. */
bool sl_expr_lit_u64(struct cc *c, sl_field f, uint64_t *v)
{
	char w[64];
	int n = -1;

	if (c->t.k == T_WORD) {
		sl_expr_word(c, w, sizeof(w));
		if (parse_number(w, v))
			goto ok;
		if (f == SL_F_IP_PROTO && (n = proto_by_name(w)) >= 0)
			goto named;
		if (f == SL_F_FAMILY && (n = family_by_name(w)) >= 0)
			goto named;
	}
	sl_expr_fail(c, c->t.at, "expected %s, found %s",
	     f == SL_F_IP_PROTO ? "a protocol number or name (tcp, udp, icmp...)" :
	     f == SL_F_FAMILY ? "a family number or name (ipv4, ipv6...)" :
				"a number (decimal or 0x hex)", FOUND(c));
	return false;
named:
	*v = (uint64_t)n;
ok:
	sl_expr_next(c);
	return true;
}

bool sl_expr_lit_mac(struct cc *c, uint64_t *v)
{
	unsigned b[6];
	char w[64], end;

	if (c->t.k == T_WORD && c->t.len == 17 &&
	    sscanf(sl_expr_word(c, w, sizeof(w)), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &end) == 6) {
		*v = 0;
		for (int i = 0; i < 6; i++)
			*v = *v << 8 | b[i];
		sl_expr_next(c);
		return true;
	}
	sl_expr_fail(c, c->t.at, "expected a MAC address (aa:bb:cc:dd:ee:ff), found %s", FOUND(c));
	return false;
}

/* An address or CIDR prefix as the range of its addresses; *prefix if it had a '/'. */
bool sl_expr_lit_addr(struct cc *c, struct arange *r, bool *prefix)
{
	char w[64], *slash;
	uint8_t a[16] = {0};
	unsigned long plen = 128;
	bool v4;

	if (c->t.k != T_WORD || c->t.len >= sizeof(w))
		goto bad;
	sl_expr_word(c, w, sizeof(w));
	slash = strchr(w, '/');
	if (slash)
		*slash++ = 0;
	v4 = inet_pton(AF_INET, w, a + 12) == 1;
	if (v4)
		a[10] = a[11] = 0xff;
	else if (inet_pton(AF_INET6, w, a) != 1)
		goto bad;
	if (slash) {
		char *end;

		plen = strtoul(slash, &end, 10);
		if (!*slash || *end || !(*slash >= '0' && *slash <= '9') || plen > (v4 ? 32u : 128u)) {
			sl_expr_fail(c, c->t.at, "expected a prefix length 0-%u after '/', found '%s'",
			     v4 ? 32 : 128, slash);
			return false;
		}
		if (v4)
			plen += 96;
	}
	*prefix = slash != NULL;
	{
		u128 host = plen >= 128 ? 0 : (~(u128)0) >> plen;

		r->lo = load128(a) & ~host;
		r->hi = r->lo | host;
	}
	sl_expr_next(c);
	return true;
bad:
	sl_expr_fail(c, c->t.at, "expected an IPv4 or IPv6 address or CIDR prefix, found %s", FOUND(c));
	return false;
}

static bool hexval(char ch, unsigned *v)
{
	if (ch >= '0' && ch <= '9')
		*v = (unsigned)(ch - '0');
	else if (ch >= 'a' && ch <= 'f')
		*v = (unsigned)(ch - 'a' + 10);
	else if (ch >= 'A' && ch <= 'F')
		*v = (unsigned)(ch - 'A' + 10);
	else
		return false;
	return true;
}

/* Decode one escape at s[*i] (after the backslash) into *out. */
static bool unescape(struct cc *c, unsigned *i, uint8_t *out)
{
	unsigned h, l;
	char e = c->s[*i];

	switch (e) {
	case '\\': case '"': case '\'': *out = (uint8_t)e; break;
	case 'n': *out = '\n'; break;
	case 't': *out = '\t'; break;
	case 'r': *out = '\r'; break;
	case 'x':
		if (*i + 2 < c->len && hexval(c->s[*i + 1], &h) && hexval(c->s[*i + 2], &l)) {
			*out = (uint8_t)(h << 4 | l);
			*i += 2;
			break;
		}
		/* fall through */
	default:
		sl_expr_fail(c, *i - 1, "unknown escape '\\%c' in a string: expected \\\\ \\\" \\' \\n \\t \\r or \\xHH", e);
		return false;
	}
	return true;
}

/* A quoted string, decoded into the byte array (NUL-terminated there). */
bool sl_expr_lit_str(struct cc *c, struct sref *out)
{
	unsigned end, i;

	if (c->t.k != T_STR) {
		sl_expr_fail(c, c->t.at, "expected a string in quotes, found %s", FOUND(c));
		return false;
	}
	out->off = c->bytes.n;
	end = c->t.at + c->t.len - 1;
	for (i = c->t.at + 1; i < end; i++) {
		uint8_t b = (uint8_t)c->s[i];
		int at;

		if (b == '\\') {
			i++;
			if (!unescape(c, &i, &b))
				return false;
		}
		if ((at = sl_expr_push(c, &c->bytes, 1)) < 0)
			return false;
		((uint8_t *)c->bytes.p)[at] = b;
	}
	out->len = c->bytes.n - out->off;
	if (sl_expr_push(c, &c->bytes, 1) < 0)
		return false;
	((uint8_t *)c->bytes.p)[c->bytes.n - 1] = 0;
	sl_expr_next(c);
	return true;
}
