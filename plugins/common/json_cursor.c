/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A JSON cursor over a text in memory (see json_cursor.h). */
#include "json_cursor.h"

#include <stddef.h>
#include <string.h>

static void put_utf8(char *buf, size_t *n, uint32_t c)
{
	if (c < 0x80) {
		buf[(*n)++] = (char)c;
	} else if (c < 0x800) {
		buf[(*n)++] = (char)(0xc0 | c >> 6);
		buf[(*n)++] = (char)(0x80 | (c & 0x3f));
	} else {
		buf[(*n)++] = (char)(0xe0 | c >> 12);
		buf[(*n)++] = (char)(0x80 | (c >> 6 & 0x3f));
		buf[(*n)++] = (char)(0x80 | (c & 0x3f));
	}
}

/* See json_cursor.h. */
long sl_jc_str(struct sl_json_cursor *j, char *buf)
{
	size_t n = 0;

	if (!sl_jc_eat(j, '"')) {
		sl_jc_fail(j, "malformed JSON: a string expected");
		return -1;
	}
	while (j->p < j->end && *j->p != '"') {
		unsigned char c;
		uint32_t u = 0;
		const char *run = j->p;

		/* a run without escapes: one copy */
		while (run < j->end && *run != '"' && *run != '\\')
			run++;
		if (run > j->p) {
			size_t k = (size_t)(run - j->p);

			if (n + k >= SL_JC_STR_MAX)
				goto bad;
			if (buf)
				memcpy(buf + n, j->p, k);
			n += k;
			j->p = run;
			continue;
		}
		c = (unsigned char)*j->p++;

		if (c == '\\') {
			if (j->p >= j->end)
				break;
			c = (unsigned char)*j->p++;
			switch (c) {
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u':
				if (j->end - j->p < 4)
					goto bad;
				for (int i = 0; i < 4; i++) {
					char h = *j->p++;

					u = u << 4 | (uint32_t)(h >= '0' && h <= '9' ? h - '0' :
								h >= 'a' && h <= 'f' ? h - 'a' + 10 :
								h >= 'A' && h <= 'F' ? h - 'A' + 10 : 99);
					if (u > 0xffff)
						goto bad;
				}
				if (n + 3 >= SL_JC_STR_MAX)
					goto bad;
				if (buf)
					put_utf8(buf, &n, u);
				continue;
			default:
				break;	/* \" \\ \/ */
			}
		}
		if (n + 1 >= SL_JC_STR_MAX)
			goto bad;
		if (buf)
			buf[n] = (char)c;
		n++;
	}
	if (!sl_jc_eat(j, '"'))
		goto bad;
	if (buf)
		buf[n] = '\0';
	return (long)n;
bad:
	sl_jc_fail(j, "malformed JSON string (or longer than 1023 bytes)");
	return -1;
}

/* An unsigned integer. */
bool sl_jc_num(struct sl_json_cursor *j, uint64_t *v)
{
	sl_jc_ws(j);
	if (j->p >= j->end || *j->p < '0' || *j->p > '9') {
		sl_jc_fail(j, "malformed JSON: a number expected");
		return false;
	}
	for (*v = 0; j->p < j->end && *j->p >= '0' && *j->p <= '9'; j->p++)
		*v = *v * 10 + (uint64_t)(*j->p - '0');
	return true;
}

/* Step over one value of any kind. */
void sl_jc_skip(struct sl_json_cursor *j)
{
	char c = sl_jc_peek(j);

	if (c == '"') {
		sl_jc_str(j, NULL);
	} else if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';

		if (++j->depth > SL_JC_MAX_DEPTH) {
			sl_jc_fail(j, "JSON nested too deep");
			return;
		}
		j->p++;
		if (!sl_jc_eat(j, close)) {
			do {
				if (c == '{') {
					sl_jc_str(j, NULL);
					sl_jc_expect(j, ':');
				}
				sl_jc_skip(j);
			} while (sl_jc_eat(j, ','));
			sl_jc_expect(j, close);
		}
		j->depth--;
	} else if (c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')) {
		/* numbers, true, false, null */
		while (j->p < j->end && (strchr("+-.eE", *j->p) || (*j->p >= '0' && *j->p <= '9') ||
					 (*j->p >= 'a' && *j->p <= 'z')))
			j->p++;
	} else {
		sl_jc_fail(j, "malformed JSON");
	}
}

/* An object's next member: its name in key, the cursor at its value; false at its end. */
bool sl_jc_member(struct sl_json_cursor *j, char *key)
{
	if (j->err || sl_jc_eat(j, '}')) {
		j->fresh = false;
		return false;
	}
	if (!j->fresh)
		sl_jc_expect(j, ',');
	j->fresh = false;
	if (sl_jc_str(j, key) < 0)
		return false;
	sl_jc_expect(j, ':');
	return !j->err;
}
