/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Expressions over record fields: the recursive-descent parser, type
 * checks and the packed compiled form (expr_int.h).  The tokens and
 * literal values come from expr_lex.c, the evaluator is expr_eval.c.  See
 * expr.h for the contract.
 *
 * The parser builds a tree of nodes, set elements and string bytes in
 * growing arrays of a compile context; pack() then writes one block: the
 * tree's leaves (the comparisons) as a program where each leaf says where
 * to go on true and on false (`and`, `or` and `not` become those jumps, as
 * in a BPF program), then the arrays.  The evaluator runs the program in a
 * loop: no recursion, no node for the boolean structure.  Set elements are
 * sorted and merged ranges: a CIDR prefix is the range of its addresses, a
 * MAC the 48-bit number of its bytes.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "expr_int.h"
#include "expr_lex.h"
#include "names.h"

/* ---- aliases: the JSON keys of docs/JSON.md that differ from field names ---- */

static const char *const aliases[][2] = {
	{"group", "nflog_group"},	{"in", "ifname_in"},
	{"out", "ifname_out"},		{"physin", "physname_in"},
	{"physout", "physname_out"},	{"vlan", "vlan_id"},
	{"src_ip", "src_addr"},		{"dest_ip", "dst_addr"},
	{"dst_ip", "dst_addr"},		{"proto", "ip_proto"},
	{"len", "ip_len"},		{"tos", "ip_tos"},
	{"ttl", "ip_ttl"},		{"flowlabel", "ip6_flowlabel"},
	{"src_port", "sport"},		{"dest_port", "dport"},
	{"dst_port", "dport"},		{"spi", "ipsec_spi"},
	{"pktlen", "orig_len"},		{"orig_src_ip", "orig_src"},
	{"orig_dest_ip", "orig_dst"},	{"orig_src_port", "orig_sport"},
	{"orig_dest_port", "orig_dport"}, {"reply_src_ip", "reply_src"},
	{"reply_dest_ip", "reply_dst"},	{"reply_src_port", "reply_sport"},
	{"reply_dest_port", "reply_dport"},
};

const char *sl_expr_alias(const char *name)
{
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(name, aliases[i][0]) == 0)
			return aliases[i][1];
	return NULL;
}

/* ---- nodes ---- */

static int new_node(struct cc *c, enum xkind kind, sl_field field)
{
	struct xnode *n;
	int i;

	/* jumps are 16 bits, and emit() recurses along `and` / `or` chains */
	if (c->nodes.n >= SL_EXPR_MAX_NODES) {
		sl_expr_fail(c, c->t.at, "expression has more than %d terms", SL_EXPR_MAX_NODES / 2);
		return -1;
	}
	if ((i = sl_expr_push(c, &c->nodes, sizeof(struct xnode))) < 0)
		return -1;
	n = (struct xnode *)c->nodes.p + i;
	memset(n, 0, sizeof(*n));
	n->kind = (uint8_t)kind;
	n->field = field;
	return i;
}

static struct xnode *node(struct cc *c, int i)
{
	return (struct xnode *)c->nodes.p + i;
}

/* ---- fields ---- */

static const char *type_name(enum sl_type t)
{
	switch (t) {
	case SL_T_U64: return "an integer";
	case SL_T_BYTES: return "a byte string";
	case SL_T_STRING: return "a string";
	case SL_T_ADDR: return "an IP address";
	case SL_T_MAC: return "a MAC address";
	case SL_T_TIME: return "a time";
	}
	return "of unknown type";
}

static void note_field(struct cc *c, sl_field f, unsigned at)
{
	for (unsigned i = 0; i < c->nfields; i++)
		if (c->fields[i] == f)
			return;
	if (c->nfields < SL_MAX_FIELDS) {
		c->fields[c->nfields] = f;
		c->fcol[c->nfields++] = at + 1;
	}
}

/* Edit distance of a and b, up to 3 (3 means "3 or more"). */
static unsigned distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64], best;

	if (la >= 63 || lb >= 63 || (la > lb ? la - lb : lb - la) >= 3)
		return 3;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = (unsigned)i;
		best = row[0];
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j], v = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			diag = up;
			row[j] = v;
			if (v < best)
				best = v;
		}
		if (best >= 3)
			return 3;
	}
	return row[lb] < 3 ? row[lb] : 3;
}

/* A well-known field or alias one or two edits from `name`, or NULL. */
static const char *suggest(const char *name)
{
	const char *best = NULL;
	unsigned d = strlen(name) > 3 ? 3 : 2;

	for (int i = 0; i < SL_F_WELL_KNOWN_COUNT; i++) {
		unsigned k = distance(name, sl_well_known_names[i]);

		if (k < d) {
			d = k;
			best = sl_well_known_names[i];
		}
	}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		unsigned k = distance(name, aliases[i][0]);

		if (k < d) {
			d = k;
			best = aliases[i][0];
		}
	}
	return best;
}

/* The field named by the current word; -1 after an error. */
static int field(struct cc *c, enum sl_type *type, char *name, size_t size)
{
	const char *alias;
	int id;

	if (c->t.k != T_WORD || !((c->s[c->t.at] >= 'a' && c->s[c->t.at] <= 'z') ||
				  (c->s[c->t.at] >= 'A' && c->s[c->t.at] <= 'Z') || c->s[c->t.at] == '_')) {
		sl_expr_fail(c, c->t.at, "expected a field name, 'has', 'not' or '(', found %s", FOUND(c));
		return -1;
	}
	sl_expr_word(c, name, size);
	alias = sl_expr_alias(name);
	id = c->lookup(c->lctx, alias ? alias : name, type);
	if (id < 0 || id >= SL_MAX_FIELDS) {
		const char *near = suggest(name);

		sl_expr_fail(c, c->t.at, "unknown field '%s'%s%s%s (sluice --describe lists the fields)", name,
		     near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		return -1;
	}
	note_field(c, (sl_field)id, c->t.at);
	sl_expr_next(c);
	return id;
}

/* ---- sets: elements sorted and merged ---- */

/* The order of string set elements: by length, then bytes (as s_in() searches). */
static int cmp_sref(const void *a, const void *b, void *bytes)
{
	const struct sref *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->len ? memcmp((uint8_t *)bytes + x->off, (uint8_t *)bytes + y->off, x->len) : 0;
}

/*
 * Sort ranges by lo and merge the overlapping or adjacent ones; the count
 * after.  One body for the u64 and the u128 (address) ranges.
 */
#define DEFINE_RANGE_MERGE(name, type)						\
	static int cmp_##name(const void *a, const void *b)			\
	{									\
		const type *x = a, *y = b;					\
										\
		return x->lo < y->lo ? -1 : x->lo > y->lo;			\
	}									\
	static unsigned name(type *v, unsigned n)				\
	{									\
		unsigned k = 0;							\
										\
		qsort(v, n, sizeof(*v), cmp_##name);				\
		for (unsigned i = 0; i < n; i++) {				\
			if (k && (v[i].lo <= v[k - 1].hi || v[i].lo - 1 == v[k - 1].hi)) { \
				if (v[i].hi > v[k - 1].hi)			\
					v[k - 1].hi = v[i].hi;			\
			} else							\
				v[k++] = v[i];					\
		}								\
		return k;							\
	}
DEFINE_RANGE_MERGE(merge_u, struct urange)
DEFINE_RANGE_MERGE(merge_a, struct arange)

static unsigned dedup_s(struct cc *c, struct sref *v, unsigned n)
{
	unsigned k = 0;

	qsort_r(v, n, sizeof(*v), cmp_sref, c->bytes.p);
	for (unsigned i = 0; i < n; i++)
		if (!k || cmp_sref(&v[k - 1], &v[i], c->bytes.p) != 0)
			v[k++] = v[i];
	return k;
}

/* ---- the right-hand side of ==, != and in ---- */

/* One element: a literal or lo-hi; appended to the field type's element array. */
static bool elem(struct cc *c, sl_field f, enum sl_type type)
{
	unsigned at = c->t.at;
	int i;

	if (type == SL_T_STRING || type == SL_T_BYTES) {
		struct sref s;

		if (!sl_expr_lit_str(c, &s) || (i = sl_expr_push(c, &c->ss, sizeof(s))) < 0)
			return false;
		((struct sref *)c->ss.p)[i] = s;
		if (c->t.k == T_DASH) {
			sl_expr_fail(c, c->t.at, "strings have no ranges: expected ',', '}' or 'and', found '-'");
			return false;
		}
		return true;
	}
	if (type == SL_T_ADDR) {
		struct arange r, hi;
		bool pfx, pfx2;

		if (!sl_expr_lit_addr(c, &r, &pfx))
			return false;
		if (c->t.k == T_DASH) {
			if (pfx) {
				sl_expr_fail(c, c->t.at, "a CIDR prefix cannot start a range: expected ',', '}' or 'and', found '-'");
				return false;
			}
			sl_expr_next(c);
			if (!sl_expr_lit_addr(c, &hi, &pfx2))
				return false;
			if (pfx2 || hi.hi < r.lo) {
				sl_expr_fail(c, at, "expected a range of addresses low-high, low <= high");
				return false;
			}
			r.hi = hi.hi;
		}
		if ((i = sl_expr_push(c, &c->as, sizeof(r))) < 0)
			return false;
		((struct arange *)c->as.p)[i] = r;
		return true;
	}
	{
		struct urange r;

		if (!(type == SL_T_MAC ? sl_expr_lit_mac(c, &r.lo) : sl_expr_lit_u64(c, f, &r.lo)))
			return false;
		r.hi = r.lo;
		if (c->t.k == T_DASH) {
			sl_expr_next(c);
			if (!(type == SL_T_MAC ? sl_expr_lit_mac(c, &r.hi) : sl_expr_lit_u64(c, f, &r.hi)))
				return false;
			if (r.hi < r.lo) {
				sl_expr_fail(c, at, "empty range: expected low-high with low <= high");
				return false;
			}
		}
		if ((i = sl_expr_push(c, &c->us, sizeof(r))) < 0)
			return false;
		((struct urange *)c->us.p)[i] = r;
		return true;
	}
}

/* '{' elem (',' elem)* [','] '}', or one elem. */
static bool elems(struct cc *c, sl_field f, enum sl_type type)
{
	if (c->t.k != T_LB)
		return elem(c, f, type);
	sl_expr_next(c);
	for (;;) {
		if (!elem(c, f, type))
			return false;
		if (c->t.k == T_COMMA)
			sl_expr_next(c);
		else if (c->t.k != T_RB) {
			sl_expr_fail(c, c->t.at, "expected ',' or '}', found %s", FOUND(c));
			return false;
		}
		if (c->t.k == T_RB) {	/* also after a trailing comma */
			sl_expr_next(c);
			return true;
		}
	}
}

/* Membership in the elements parsed since `first` (of the type's array). */
static int membership(struct cc *c, sl_field f, enum sl_type type, bool neg)
{
	struct vec *v = (type == SL_T_STRING || type == SL_T_BYTES) ? &c->ss :
			type == SL_T_ADDR ? &c->as : &c->us;
	unsigned first = v->n, n;
	struct xnode *x;
	int i;

	if (!elems(c, f, type))
		return -1;
	if (v == &c->ss) {
		struct sref *s = (struct sref *)v->p + first;

		n = dedup_s(c, s, v->n - first);
		if ((i = new_node(c, n == 1 ? X_S_EQ : X_S_SET, f)) < 0)
			return -1;
		x = node(c, i);
		x->l = n == 1 ? s->off : first;
		x->r = n == 1 ? s->len : n;
	} else if (v == &c->as) {
		struct arange *a = (struct arange *)v->p + first;

		n = merge_a(a, v->n - first);
		if ((i = new_node(c, n == 1 ? X_A_RANGE : X_A_SET, f)) < 0)
			return -1;
		x = node(c, i);
		x->w.lo = a->lo;
		x->w.hi = a->hi;
	} else {
		struct urange *u = (struct urange *)v->p + first;

		n = merge_u(u, v->n - first);
		if ((i = new_node(c, n > 1 ? X_U_SET : u->lo == u->hi ? X_U_EQ : X_U_RANGE, f)) < 0)
			return -1;
		x = node(c, i);
		x->u.a = u->lo;
		x->u.b = u->hi;
		x->flags = type == SL_T_MAC ? XF_MAC : 0;
	}
	v->n = first + n;
	x->flags |= neg ? XF_NEG : 0;
	if (x->kind == X_A_SET || x->kind == X_U_SET) {
		x->l = first;
		x->r = n;
	}
	return i;
}

/* ---- comparisons ---- */

static const char *op_name(enum tkind k)
{
	static const char *const names[] = {
		[T_EQ] = "==", [T_NE] = "!=", [T_LT] = "<", [T_LE] = "<=", [T_GT] = ">",
		[T_GE] = ">=", [T_PFX] = "^=", [T_RE] = "~", [T_BIT] = "&",
	};
	return k < sizeof(names) / sizeof(names[0]) && names[k] ? names[k] : "in";
}

/* Which operators each type takes (`in` is T_WORD here). */
static bool op_fits(enum tkind op, enum sl_type t)
{
	switch (op) {
	case T_EQ: case T_NE: case T_WORD:
		return true;
	case T_LT: case T_LE: case T_GT: case T_GE: case T_BIT:
		return t == SL_T_U64 || (t == SL_T_TIME && op != T_BIT);
	case T_PFX: case T_RE:
		return t == SL_T_STRING || t == SL_T_BYTES;
	default:
		return false;
	}
}

static bool quantifier(char ch)
{
	return ch == '*' || ch == '+' || ch == '?' || ch == '{';
}

/*
 * Refuse what makes glibc's regcomp() blow up (it copies the subtree of a
 * repetition once per count: a{99}{99}{99}, T++++...) or regexec() take
 * exponential time (back-references, a glibc extension): two repetitions
 * in a row (undefined in POSIX EREs), intervals whose counts multiply past
 * 1000.  NULL, or what is wrong.
 */
static const char *regex_refused(const char *p)
{
	unsigned long product = 1;
	bool after_q = false;

	for (; *p; p++) {
		if (*p == '\\') {
			if (p[1] >= '1' && p[1] <= '9')
				return "back-references (\\1...) are not POSIX extended regular expressions";
			if (p[1])
				p++;
			after_q = false;
			continue;
		}
		if (*p == '[') {	/* a bracket expression: ']' first is literal */
			p += p[1] == '^' ? 2 : 1;
			if (*p == ']')
				p++;
			while (*p && *p != ']')
				p++;
			if (!*p)
				return NULL;	/* regcomp() says what is wrong */
			after_q = false;
			continue;
		}
		if (quantifier(*p) && after_q)
			return "two repetitions in a row (undefined in POSIX extended regular expressions)";
		after_q = quantifier(*p);
		if (*p == '{') {
			char *end;
			unsigned long lo = strtoul(p + 1, &end, 10), hi = lo;

			if (*end == ',')
				hi = end[1] == '}' ? lo + 1 : strtoul(end + 1, &end, 10);
			product *= (hi > lo ? hi : lo) + 1;
			if (product > 1000)
				return "repetition counts multiply past 1000";
			while (*p && *p != '}')
				p++;
			if (!*p)
				return NULL;
		}
	}
	return NULL;
}

static int regex_node(struct cc *c, sl_field f)
{
	unsigned at = c->t.at;
	const char *why;
	struct sref s;
	regex_t re;
	int rc, i, k;

	if (!sl_expr_lit_str(c, &s))
		return -1;
	if (memchr((uint8_t *)c->bytes.p + s.off, 0, s.len)) {
		sl_expr_fail(c, at, "a regular expression cannot hold a NUL byte");
		return -1;
	}
	if ((why = regex_refused((char *)c->bytes.p + s.off))) {
		sl_expr_fail(c, at, "regular expression refused: %s", why);
		return -1;
	}
	rc = regcomp(&re, (char *)c->bytes.p + s.off, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char msg[128];

		regerror(rc, &re, msg, sizeof(msg));
		sl_expr_fail(c, at, "bad regular expression (POSIX extended): %s", msg);
		return -1;
	}
	regfree(&re);	/* compiled again, for good, by pack() */
	if ((k = sl_expr_push(c, &c->res, sizeof(unsigned))) < 0 || (i = new_node(c, X_S_RE, f)) < 0)
		return -1;
	((unsigned *)c->res.p)[k] = s.off;
	node(c, i)->l = (uint32_t)k;
	return i;
}

static int compare(struct cc *c, sl_field f, enum sl_type type, enum tkind op)
{
	static const uint8_t ukind[] = {[T_LT] = X_U_LT, [T_LE] = X_U_LE, [T_GT] = X_U_GT,
					[T_GE] = X_U_GE, [T_BIT] = X_U_BIT};
	uint64_t v;
	struct sref s;
	int i;

	switch (op) {
	case T_EQ: case T_NE: case T_WORD:
		return membership(c, f, type, op == T_NE);
	case T_PFX:
		if (!sl_expr_lit_str(c, &s) || (i = new_node(c, X_S_PFX, f)) < 0)
			return -1;
		node(c, i)->l = s.off;
		node(c, i)->r = s.len;
		return i;
	case T_RE:
		return regex_node(c, f);
	default:
		if (!sl_expr_lit_u64(c, f, &v) || (i = new_node(c, ukind[op], f)) < 0)
			return -1;
		node(c, i)->u.a = v;
		return i;
	}
}

/* FIELD op rhs */
static int comparison(struct cc *c)
{
	enum sl_type type = 0;
	char name[64];
	unsigned op_at;
	enum tkind op;
	int f = field(c, &type, name, sizeof(name));

	if (f < 0)
		return -1;
	op = c->t.k;
	op_at = c->t.at;
	if (op == T_WORD && !sl_expr_is_word(c, "in"))
		op = T_BAD;
	if (op < T_EQ || (op > T_BIT && op != T_WORD)) {
		sl_expr_fail(c, c->t.at, "expected an operator (== != < <= > >= in ^= ~ &) after '%s', found %s",
		     name, FOUND(c));
		return -1;
	}
	if (!op_fits(op, type)) {
		sl_expr_fail(c, op_at, "operator '%s' does not apply to '%s', which is %s", op_name(op), name,
		     type_name(type));
		return -1;
	}
	sl_expr_next(c);
	return compare(c, (sl_field)f, type, op);
}

/* ---- boolean structure ---- */

static int parse_or(struct cc *c);

static int primary(struct cc *c)
{
	enum sl_type type;
	char name[64];
	int i, f;

	if (c->t.k == T_LP) {
		unsigned at = c->t.at;

		sl_expr_next(c);
		i = parse_or(c);
		if (i >= 0 && c->t.k != T_RP) {
			sl_expr_fail(c, c->t.at, "expected ')' to close the '(' at column %u, found %s", at + 1,
			     FOUND(c));
			return -1;
		}
		sl_expr_next(c);
		return i;
	}
	if (sl_expr_is_word(c, "has")) {
		sl_expr_next(c);
		if ((f = field(c, &type, name, sizeof(name))) < 0 || (i = new_node(c, X_HAS, (sl_field)f)) < 0)
			return -1;
		return i;
	}
	return comparison(c);
}

static int unary(struct cc *c)
{
	int i, n;

	if (++c->depth > SL_EXPR_MAX_DEPTH) {
		sl_expr_fail(c, c->t.at, "expression nested too deeply (more than %d levels)", SL_EXPR_MAX_DEPTH);
		return -1;
	}
	if (sl_expr_is_word(c, "not")) {
		sl_expr_next(c);
		if ((i = unary(c)) < 0 || (n = new_node(c, X_NOT, 0)) < 0)
			return -1;
		node(c, n)->l = (uint32_t)i;
		i = n;
	} else
		i = primary(c);
	c->depth--;
	return i;
}

static int binary(struct cc *c, const char *kw, enum xkind kind, int (*sub)(struct cc *))
{
	int l = sub(c), r, n;

	while (l >= 0 && sl_expr_is_word(c, kw)) {
		sl_expr_next(c);
		if ((r = sub(c)) < 0 || (n = new_node(c, kind, 0)) < 0)
			return -1;
		node(c, n)->l = (uint32_t)l;
		node(c, n)->r = (uint32_t)r;
		l = n;
	}
	return l;
}

static int parse_and(struct cc *c)
{
	return binary(c, "and", X_AND, unary);
}

static int parse_or(struct cc *c)
{
	return binary(c, "or", X_OR, parse_and);
}

/* ---- packing into one block ---- */

/*
 * Write the leaves of tree node t into prog[] so that it goes to jt when t
 * is true and to jf when false; its entry.  The right operand is written
 * first, so the left one knows where to go next.
 */
static uint16_t emit(const struct xnode *tree, unsigned t, uint16_t jt, uint16_t jf,
		     struct xnode *prog, unsigned *n)
{
	const struct xnode *x = &tree[t];

	switch (x->kind) {
	case X_AND:
		return emit(tree, x->l, emit(tree, x->r, jt, jf, prog, n), jf, prog, n);
	case X_OR:
		return emit(tree, x->l, jt, emit(tree, x->r, jt, jf, prog, n), prog, n);
	case X_NOT:
		return emit(tree, x->l, jf, jt, prog, n);
	default:
		prog[*n] = *x;
		prog[*n].jt = jt;
		prog[*n].jf = jf;
		return (uint16_t)(*n)++;
	}
}

static size_t align16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

static struct sl_expr *pack(struct cc *c, int root)
{
	size_t off[6], sz[6] = {
		sizeof(struct sl_expr), (size_t)c->nodes.n * sizeof(struct xnode),
		(size_t)c->us.n * sizeof(struct urange), (size_t)c->as.n * sizeof(struct arange),
		(size_t)c->ss.n * sizeof(struct sref), (size_t)c->res.n * sizeof(regex_t),
	};
	size_t total = 0;
	struct sl_expr *e;
	uint8_t *base;

	for (int i = 0; i < 6; i++) {
		off[i] = total;
		total += align16(sz[i]);
	}
	if (!(base = aligned_alloc(16, align16(total + c->bytes.n + 1))))
		return NULL;
	e = (struct sl_expr *)base;
	memset(e, 0, sizeof(*e));
	e->entry = emit(c->nodes.p, (unsigned)root, PC_TRUE, PC_FALSE, (struct xnode *)(base + off[1]),
			&(unsigned){0});
	if (sz[2])
		memcpy(base + off[2], c->us.p, sz[2]);
	if (sz[3])
		memcpy(base + off[3], c->as.p, sz[3]);
	if (sz[4])
		memcpy(base + off[4], c->ss.p, sz[4]);
	if (c->bytes.n)
		memcpy(base + total, c->bytes.p, c->bytes.n);
	e->prog = (void *)(base + off[1]);
	e->us = (void *)(base + off[2]);
	e->as = (void *)(base + off[3]);
	e->ss = (void *)(base + off[4]);
	e->re = (void *)(base + off[5]);
	e->bytes = base + total;
	e->nfields = c->nfields;
	memcpy(e->fields, c->fields, sizeof(c->fields));
	memcpy(e->fcol, c->fcol, sizeof(c->fcol));
	for (; e->nregex < c->res.n; e->nregex++)
		if (regcomp(&e->re[e->nregex], (const char *)e->bytes + ((unsigned *)c->res.p)[e->nregex],
			    REG_EXTENDED | REG_NOSUB)) {
			sl_expr_free(e);
			return NULL;
		}
	return e;
}

struct sl_expr *sl_expr_compile(const char *text, sl_expr_lookup_fn lookup, void *ctx,
				struct sl_expr_error *err)
{
	struct cc c = {.s = text, .lookup = lookup, .lctx = ctx, .err = err};
	struct sl_expr *e = NULL;
	size_t len = strlen(text);
	int root;

	err->column = 0;
	err->msg[0] = 0;
	if (len > SL_EXPR_MAX_LEN) {
		sl_expr_fail(&c, SL_EXPR_MAX_LEN, "expression longer than %d bytes", SL_EXPR_MAX_LEN);
		return NULL;
	}
	c.len = (unsigned)len;
	sl_expr_next(&c);
	if (c.t.k == T_END)
		sl_expr_fail(&c, c.t.at, "expected an expression, found nothing");
	root = c.failed ? -1 : parse_or(&c);
	if (root >= 0 && c.t.k != T_END)
		sl_expr_fail(&c, c.t.at, "expected 'and', 'or' or the end of the expression, found %s", FOUND(&c));
	if (!c.failed && !(e = pack(&c, root)))
		sl_expr_fail(&c, 0, "out of memory");
	if (c.failed && !err->msg[0])
		sl_expr_fail(&c, 0, "out of memory");
	free(c.nodes.p);
	free(c.us.p);
	free(c.as.p);
	free(c.ss.p);
	free(c.bytes.p);
	free(c.res.p);
	return e;
}

void sl_expr_free(struct sl_expr *e)
{
	if (!e)
		return;
	for (unsigned i = 0; i < e->nregex; i++)
		regfree(&e->re[i]);
	free(e);
}

unsigned sl_expr_nfields(const struct sl_expr *e)
{
	return e->nfields;
}

sl_field sl_expr_field(const struct sl_expr *e, unsigned i)
{
	return e->fields[i];
}

unsigned sl_expr_field_column(const struct sl_expr *e, unsigned i)
{
	return e->fcol[i];
}
