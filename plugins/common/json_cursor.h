/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A JSON cursor: values read in place from a text in memory, nothing built
 * and nothing allocated (rule_index.c reads nft's JSON listing with it; the
 * core's libyaml reader is not linked into plugins).
 *
 *	struct sl_json_cursor j = {.p = text, .end = text + len};
 *	char key[SL_JC_STR_MAX];
 *
 *	SL_JC_FOR_MEMBERS(&j, key) {
 *		if (!strcmp(key, "handle"))
 *			sl_jc_num(&j, &handle);
 *		else
 *			sl_jc_skip(&j);
 *	}
 *	if (j.err)
 *		... j.err says why (a static string) ...
 *
 * Errors: the first one is kept in err (a static English string, e.g.
 * "malformed JSON") and the cursor jumps to end, so every later read fails
 * quietly and a caller checks err once, after reading.  The text need not be
 * NUL-terminated; the cursor never reads at or past end.
 *
 * What it accepts, and its limits:
 * - strings: decoded into a caller's buffer of SL_JC_STR_MAX bytes, NUL-
 *   terminated; one longer than SL_JC_STR_MAX - 1 (1023) bytes decoded is an
 *   error.  \uXXXX escapes give their code point in UTF-8 (up to 3 bytes;
 *   surrogate pairs are not combined); \u0000 is kept, so use the length.
 *   Raw bytes are copied as they are (no UTF-8 or control check).
 * - numbers: sl_jc_num() reads unsigned decimal integers only (no sign,
 *   fraction or exponent; past 2^64-1 they wrap).  sl_jc_skip() steps over
 *   any number and true/false/null without checking their spelling.
 * - nesting: depth counts the arrays and objects open; sl_jc_skip() fails
 *   with "JSON nested too deep" past SL_JC_MAX_DEPTH, and a caller that
 *   descends by itself counts depth the same way.
 */
#ifndef SLUICE_JSON_CURSOR_H
#define SLUICE_JSON_CURSOR_H

#include <stdbool.h>
#include <stdint.h>

/* Deepest nesting followed (nft's expressions nest a few levels). */
#define SL_JC_MAX_DEPTH 64
/* A string buffer's size: names (NFT_NAME_MAXLEN 256), comments, prefixes. */
#define SL_JC_STR_MAX 1024

struct sl_json_cursor {
	const char *p, *end;	/* the text left */
	int depth;		/* arrays and objects open */
	bool fresh;		/* just after an object's '{' */
	const char *err;	/* NULL while all is well */
};

/* Static inline: the reader's inner loop calls them for every token. */
static inline void sl_jc_ws(struct sl_json_cursor *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

/* Keep the first error (why: a static string) and stop reading. */
static inline void sl_jc_fail(struct sl_json_cursor *j, const char *why)
{
	if (!j->err)
		j->err = why;
	j->p = j->end;
}

/* The next character, after blanks; 0 at the end. */
static inline char sl_jc_peek(struct sl_json_cursor *j)
{
	sl_jc_ws(j);
	return j->p < j->end ? *j->p : 0;
}

/* Step over c if it comes next (after blanks). */
static inline bool sl_jc_eat(struct sl_json_cursor *j, char c)
{
	if (sl_jc_peek(j) != c)
		return false;
	j->p++;
	return true;
}

/* c must come next: else "malformed JSON". */
static inline void sl_jc_expect(struct sl_json_cursor *j, char c)
{
	if (!sl_jc_eat(j, c))
		sl_jc_fail(j, "malformed JSON");
}

/*
 * A string, decoded into buf (SL_JC_STR_MAX bytes, NUL-terminated; NULL:
 * only stepped over): its length, or -1 (malformed or too long).
 */
long sl_jc_str(struct sl_json_cursor *j, char *buf);

/* An unsigned integer into *v; false (and err set) if none comes next. */
bool sl_jc_num(struct sl_json_cursor *j, uint64_t *v);

/* Step over one value of any kind. */
void sl_jc_skip(struct sl_json_cursor *j);

/*
 * An object's next member: its name in key (SL_JC_STR_MAX bytes), the
 * cursor at its value; false at the object's end or on an error.  Reads
 * the ',' between members itself (fresh: none before the first).
 */
bool sl_jc_member(struct sl_json_cursor *j, char *key);

/* For each member of the object at the cursor: key is its name, the body reads its value. */
#define SL_JC_FOR_MEMBERS(j, key) \
	for (sl_jc_expect(j, '{'), (j)->fresh = true; sl_jc_member(j, key);)

#endif
