/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Running a compiled expression against a record: the program of
 * comparisons in a loop, following each one's jump on true or false (the
 * compiled form is in expr_int.h, the contract in expr.h).  No allocation,
 * no recursion; set lookups are binary searches over sorted ranges.
 */
#include <regex.h>
#include <stdint.h>
#include <string.h>

#include "expr.h"
#include "expr_int.h"

/*
 * Whether x is in the sorted, merged ranges v[0..n), n >= 1: the last
 * range starting at or below x holds it or none does.  One body for the
 * u64 and the u128 (address) ranges.
 */
#define DEFINE_RANGE_SEARCH(name, type, vtype)					\
	static bool name(const type *v, unsigned n, vtype x)			\
	{									\
		unsigned lo = 0, hi = n;					\
										\
		while (hi - lo > 1) {						\
			unsigned mid = (lo + hi) / 2;				\
										\
			if (v[mid].lo <= x)					\
				lo = mid;					\
			else							\
				hi = mid;					\
		}								\
		return x >= v[lo].lo && x <= v[lo].hi;				\
	}
DEFINE_RANGE_SEARCH(u_search, struct urange, uint64_t)
DEFINE_RANGE_SEARCH(a_in, struct arange, u128)

static bool u_in(const struct urange *v, unsigned n, uint64_t x)
{
	if (n <= SMALL_SET) {
		for (unsigned i = 0; i < n; i++)
			if (x >= v[i].lo && x <= v[i].hi)
				return true;
		return false;
	}
	return u_search(v, n, x);
}

static bool s_in(const struct sl_expr *e, const struct sref *v, unsigned n, const struct sl_bytes *b)
{
	unsigned lo = 0, hi = n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		int d = v[mid].len != b->len ? (v[mid].len < b->len ? -1 : 1) :
			b->len ? memcmp(e->bytes + v[mid].off, b->ptr, b->len) : 0;

		if (d == 0)
			return true;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static uint64_t load_mac(const uint8_t *a)
{
	return (uint64_t)a[0] << 40 | (uint64_t)a[1] << 32 | (uint64_t)a[2] << 24 |
	       (uint64_t)a[3] << 16 | (uint64_t)a[4] << 8 | a[5];
}

/*
 * The record's string is not NUL-terminated: REG_STARTEND gives glibc its
 * length (and lets it hold NUL bytes).  It is still copied to a terminated
 * buffer first when short, as every record string but `text` is: a
 * sanitizer's regexec() interceptor runs strlen() on it regardless.
 */
static bool regex_match(const regex_t *re, const struct sl_bytes *b)
{
	regmatch_t m = {.rm_so = 0, .rm_eo = (regoff_t)b->len};
	char buf[1024];
	const char *s = b->ptr ? (const char *)b->ptr : "";

	if (b->len < sizeof(buf)) {
		if (b->len)
			memcpy(buf, b->ptr, b->len);
		buf[b->len] = 0;
		s = buf;
	}
	return regexec(re, s, 1, &m, REG_STARTEND) == 0;
}

/* A comparison on a present field, before `neg`. */
static bool leaf(const struct sl_expr *e, const struct xnode *n, const union sl_value *v)
{
	uint64_t x = (n->flags & XF_MAC) ? load_mac(v->addr) : v->u64;

	switch (n->kind) {
	case X_HAS: return true;
	case X_U_EQ: return x == n->u.a;
	case X_U_LT: return x < n->u.a;
	case X_U_LE: return x <= n->u.a;
	case X_U_GT: return x > n->u.a;
	case X_U_GE: return x >= n->u.a;
	case X_U_BIT: return (x & n->u.a) != 0;
	case X_U_RANGE: return x >= n->u.a && x <= n->u.b;
	case X_U_SET: return u_in(e->us + n->l, n->r, x);
	case X_A_RANGE: {
		u128 a = load128(v->addr);

		return a >= n->w.lo && a <= n->w.hi;
	}
	case X_A_SET: return a_in(e->as + n->l, n->r, load128(v->addr));
	case X_S_EQ:
		return v->bytes.len == n->r && (!n->r || memcmp(v->bytes.ptr, e->bytes + n->l, n->r) == 0);
	case X_S_PFX:
		return v->bytes.len >= n->r && (!n->r || memcmp(v->bytes.ptr, e->bytes + n->l, n->r) == 0);
	case X_S_RE: return regex_match(&e->re[n->l], &v->bytes);
	case X_S_SET: return s_in(e, e->ss + n->l, n->r, &v->bytes);
	}
	return false;
}

bool sl_expr_match(const struct sl_expr *e, const struct sl_record *r)
{
	unsigned pc = e->entry;

	while (pc < PC_FALSE) {
		const struct xnode *n = &e->prog[pc];

		/* an absent field makes the comparison false, `!=` included */
		if (sl_has(r, n->field) && leaf(e, n, &r->v[n->field]) != (n->flags & XF_NEG))
			pc = n->jt;
		else
			pc = n->jf;
	}
	return pc == PC_TRUE;
}
