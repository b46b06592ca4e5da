/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Expressions over record fields, for the `where` filter (and any plugin
 * that wants a condition in its options).
 *
 *     prefix ^= "DROP" and ip_proto == tcp and dport in {22, 3389}
 *         and src_addr in 10.0.0.0/8
 *
 * Contract:
 *  - sl_expr_compile() parses the text once (configure time) into one
 *    allocation: an array of nodes, the sorted set elements and the string
 *    bytes.  Field names are resolved through the caller's callback (the
 *    host's field_id/field_type), after the JSON key aliases (src_ip,
 *    dest_ip, proto, src_port, dest_port, in, out...) are mapped to the
 *    field names.  Every literal is checked against the field's type: a
 *    string compared with a CIDR prefix is an error, not a false result.
 *  - On error it returns NULL and fills *err: the 1-based column (byte
 *    offset) in the text and what was expected there.
 *  - sl_expr_match() evaluates a record: no allocation, no syscall, reads
 *    only the fields sl_expr_field() lists.  The one exception is `~`:
 *    glibc's regexec() allocates its match state (the pattern itself is
 *    compiled once).  Terms of an `and`/`or` are evaluated in order and
 *    stop as soon as the result is known.
 *  - Absent fields: a comparison (==, !=, <, in, ^=, ~, & ...) whose field
 *    the record lacks is false, whatever the operator, so `dport != 22`
 *    is false for an ICMP packet; `not` inverts that: `not dport == 22` is
 *    true for it.  `has FIELD` tests presence alone.  This is the rule of
 *    Wireshark's display filters (and nft's: no match on a missing header).
 *  - Nesting is limited to SL_EXPR_MAX_DEPTH, the nodes to
 *    SL_EXPR_MAX_NODES and the text to SL_EXPR_MAX_LEN bytes (the parser
 *    recurses; the evaluator does not: it follows jumps).
 */
#ifndef SLUICE_EXPR_H
#define SLUICE_EXPR_H

#include <stdbool.h>

#include <sluice/record.h>

#define SL_EXPR_MAX_DEPTH 32
#define SL_EXPR_MAX_LEN 65536
#define SL_EXPR_MAX_NODES 2048	/* nodes: about two per term */

struct sl_expr;

/*
 * Resolve a field name (never an alias: those are mapped first): its id,
 * with *type set, or -1 if no field has that name.
 */
typedef int (*sl_expr_lookup_fn)(void *ctx, const char *name, enum sl_type *type);

struct sl_expr_error {
	unsigned column;	/* 1-based byte in the text */
	char msg[224];		/* "expected ..., found ..." */
};

struct sl_expr *sl_expr_compile(const char *text, sl_expr_lookup_fn lookup, void *ctx,
				struct sl_expr_error *err);
void sl_expr_free(struct sl_expr *e);

bool sl_expr_match(const struct sl_expr *e, const struct sl_record *r);

/* The distinct fields the expression reads: ids 0..sl_expr_nfields()-1. */
unsigned sl_expr_nfields(const struct sl_expr *e);
sl_field sl_expr_field(const struct sl_expr *e, unsigned i);
/* Where field i is first named in the text (1-based column). */
unsigned sl_expr_field_column(const struct sl_expr *e, unsigned i);

/* The field name an alias stands for, or NULL: "dest_port" -> "dport". */
const char *sl_expr_alias(const char *name);

#endif /* SLUICE_EXPR_H */
