/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The compiled form of an expression, shared by its compiler (expr.c) and
 * its evaluator (expr_eval.c); nobody else sees it (expr.h is the
 * contract).
 *
 * sl_expr_compile() writes one block: struct sl_expr, then the program
 * (the comparisons, each saying which one comes next when it is true and
 * when false; `and`, `or` and `not` are only those jumps), the sorted and
 * merged u64 ranges, address ranges and string references of the sets,
 * the compiled regexes and last the string bytes.  The evaluator starts at
 * entry and follows jumps until PC_TRUE or PC_FALSE.
 */
#ifndef SLUICE_EXPR_INT_H
#define SLUICE_EXPR_INT_H

#include <endian.h>
#include <regex.h>
#include <stdint.h>
#include <string.h>

#include "expr.h"

typedef unsigned __int128 u128;

enum xkind {
	X_AND = 1, X_OR, X_NOT, X_HAS,
	X_U_EQ, X_U_LT, X_U_LE, X_U_GT, X_U_GE, X_U_BIT, X_U_RANGE, X_U_SET,
	X_A_RANGE, X_A_SET,
	X_S_EQ, X_S_PFX, X_S_RE, X_S_SET,
};

/* xnode.flags */
#define XF_NEG 1	/* leaf: result inverted when the field is present */
#define XF_MAC 2	/* U64 kinds: the field is a MAC, read as a 48-bit number */

/* Jump targets past the program: the result. */
#define PC_TRUE 0xffff
#define PC_FALSE 0xfffe

struct xnode {
	uint8_t kind;
	uint8_t flags;
	sl_field field;
	uint16_t jt, jf;	/* program: next leaf when true, when false */
	uint32_t l, r;		/* AND/OR/NOT: children; SET: first, count; S_EQ/PFX: off, len */
	union {
		struct { uint64_t a, b; } u;	/* value or lo, hi; BIT: mask */
		struct { u128 lo, hi; } w;	/* A_RANGE */
	};
};

struct urange { uint64_t lo, hi; };
struct arange { u128 lo, hi; };
struct sref { uint32_t off, len; };

#define SMALL_SET 8	/* up to this many elements: linear scan */

struct sl_expr {
	unsigned entry, nfields, nregex;
	const struct xnode *prog;
	const struct urange *us;
	const struct arange *as;
	const struct sref *ss;
	const uint8_t *bytes;
	regex_t *re;
	sl_field fields[SL_MAX_FIELDS];
	unsigned fcol[SL_MAX_FIELDS];
};

/* 16 address bytes (network order) as one number, for prefix ranges. */
static inline u128 load128(const uint8_t a[16])
{
	uint64_t hi, lo;

	memcpy(&hi, a, 8);
	memcpy(&lo, a + 8, 8);
	return (u128)be64toh(hi) << 64 | be64toh(lo);
}

#endif /* SLUICE_EXPR_INT_H */
