/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the expression parser (expr.c) and its lexer (expr_lex.c) share:
 * the compile context and the token stream with its literal values.
 *
 * Contract: the context holds the text and the current token (c->t);
 * sl_expr_next() moves to the next one.  Every function that can fail
 * records the first error in c->err through sl_expr_fail() (the column is
 * the token's), sets c->failed and returns false or -1; later failures
 * keep the first message.  Literals are read from the current token and
 * the token is consumed only when they succeed.  Strings are decoded into
 * c->bytes, NUL-terminated there.
 */
#ifndef SLUICE_EXPR_LEX_H
#define SLUICE_EXPR_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "expr.h"
#include "expr_int.h"

/* Token kinds: punctuation and operators, then strings and words. */
enum tkind {
	T_END, T_LP, T_RP, T_LB, T_RB, T_COMMA, T_DASH,
	T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_PFX, T_RE, T_BIT,
	T_STR, T_WORD, T_BAD,
};

struct tok {
	enum tkind k;
	unsigned at, len;	/* byte offset and length in the text */
};

/* A growing array of the context (realloc, doubling). */
struct vec {
	void *p;
	unsigned n, cap;
};

/* The compile context: the text, the current token, what is being built. */
struct cc {
	const char *s;
	unsigned len, pos, depth;
	struct tok t;
	sl_expr_lookup_fn lookup;
	void *lctx;
	struct sl_expr_error *err;
	bool failed;
	struct vec nodes, us, as, ss, bytes, res;	/* res: byte offsets of regex patterns */
	unsigned nfields;
	sl_field fields[SL_MAX_FIELDS];
	unsigned fcol[SL_MAX_FIELDS];
};

/* Room for one more element of `size` bytes in v; its index, or -1. */
int sl_expr_push(struct cc *c, struct vec *v, size_t size);

/* Record the first error: at is a byte offset in the text. */
__attribute__((format(printf, 3, 4))) void sl_expr_fail(struct cc *c, unsigned at, const char *fmt, ...);

/* What the current token is, for "found ..." (quoted, cut at 40 bytes). */
const char *sl_expr_found(struct cc *c, char *buf, size_t size);
#define FOUND(c) sl_expr_found((c), (char[64]){0}, 64)

/* Move to the next token (T_END at the end, T_BAD after an error). */
void sl_expr_next(struct cc *c);
/* Is the current token the word w? */
bool sl_expr_is_word(const struct cc *c, const char *w);
/* The current word as a C string (words longer than the buffer are cut). */
const char *sl_expr_word(const struct cc *c, char *buf, size_t size);

/* One integer literal (a number, or a name the field knows: tcp, ipv6...). */
bool sl_expr_lit_u64(struct cc *c, sl_field f, uint64_t *v);
/* A MAC address as the 48-bit number of its bytes. */
bool sl_expr_lit_mac(struct cc *c, uint64_t *v);
/* An address or CIDR prefix as the range of its addresses; *prefix if it had a '/'. */
bool sl_expr_lit_addr(struct cc *c, struct arange *r, bool *prefix);
/* A quoted string, decoded into c->bytes (NUL-terminated there). */
bool sl_expr_lit_str(struct cc *c, struct sref *out);

#endif /* SLUICE_EXPR_LEX_H */
