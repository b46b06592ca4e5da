/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A strict reader of RFC 5424 STRUCTURED-DATA (6.3), written from the
 * RFC's ABNF and not from syslog_fmt.c, for test_syslog_fmt and
 * fuzz_syslog to read back what the formatter wrote:
 *
 *   STRUCTURED-DATA = NILVALUE / 1*SD-ELEMENT
 *   SD-ELEMENT      = "[" SD-ID *(SP SD-PARAM) "]"
 *   SD-PARAM        = PARAM-NAME "=" %d34 PARAM-VALUE %d34
 *   SD-NAME         = 1*32PRINTUSASCII ; except '=', SP, ']', %d34
 *
 * In a PARAM-VALUE '"', '\' and ']' MUST be escaped with '\' (6.3.3); a
 * '\' before any other character is an ordinary backslash.  This reader
 * refuses an unescaped ']' in a value (the grammar's receivers end the
 * element there), so a formatter that forgets one is caught.
 */
#ifndef SLUICE_TEST_SYSLOG_PARSE_H
#define SLUICE_TEST_SYSLOG_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define SDP_MAX_PARAMS 16
#define SDP_VALUE_MAX 1024

struct sdp_param {
	char name[33];
	char value[SDP_VALUE_MAX];	/* unescaped, not NUL-terminated */
	size_t len;
};

struct sdp_element {
	char id[33];
	unsigned nparams;
	struct sdp_param p[SDP_MAX_PARAMS];
};

static inline bool sdp_name_char(unsigned char c)
{
	return c >= 33 && c <= 126 && c != '=' && c != ']' && c != '"';
}

/* An SD-NAME at s[*at..n) into out (33 bytes); false if there is none. */
static inline bool sdp_name(const char *s, size_t n, size_t *at, char *out)
{
	size_t k = 0;

	while (*at < n && sdp_name_char((unsigned char)s[*at])) {
		if (k == 32)
			return false;
		out[k++] = s[(*at)++];
	}
	out[k] = 0;
	return k > 0;
}

/*
 * STRUCTURED-DATA at the start of s[0..n): the number of bytes it takes,
 * or 0 when it is malformed.  The NILVALUE "-" gives *nelem = 0; at most
 * max elements are kept in el (more is malformed here).
 */
static inline size_t sdp_parse(const char *s, size_t n, struct sdp_element *el, unsigned max,
			       unsigned *nelem)
{
	size_t at = 0;

	*nelem = 0;
	if (n >= 1 && s[0] == '-')
		return 1;
	while (at < n && s[at] == '[') {
		struct sdp_element *e;

		if (*nelem == max)
			return 0;
		e = &el[(*nelem)++];
		e->nparams = 0;
		at++;
		if (!sdp_name(s, n, &at, e->id))
			return 0;
		while (at < n && s[at] == ' ') {
			struct sdp_param *p;

			if (e->nparams == SDP_MAX_PARAMS)
				return 0;
			p = &e->p[e->nparams++];
			p->len = 0;
			at++;
			if (!sdp_name(s, n, &at, p->name) || at + 1 >= n || s[at] != '=' ||
			    s[at + 1] != '"')
				return 0;
			at += 2;
			for (;;) {
				char c;

				if (at >= n)
					return 0;
				c = s[at++];
				if (c == '"')
					break;
				if (c == ']')	/* must have been escaped */
					return 0;
				if (c == '\\' && at < n &&
				    (s[at] == '"' || s[at] == '\\' || s[at] == ']'))
					c = s[at++];
				if (p->len == SDP_VALUE_MAX)
					return 0;
				p->value[p->len++] = c;
			}
		}
		if (at >= n || s[at] != ']')
			return 0;
		at++;
	}
	return *nelem ? at : 0;
}

#endif /* SLUICE_TEST_SYSLOG_PARSE_H */
