/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * UTF-8 validation shared by the text escaper (text_escape.c) and the JSON
 * string writer (fmt.c), so both agree on what is valid: no overlong
 * forms, no surrogates, nothing above U+10FFFF (RFC 3629).  C1 controls
 * (U+0080..U+009F) are valid UTF-8; each caller decides what to do with
 * them.
 */
#ifndef SLUICE_UTF8_H
#define SLUICE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid sequence at s (s[0] a lead byte 0xc2..0xf4, n >= 1), or 0. */
static inline size_t sl_utf8_len(const uint8_t *s, size_t n)
{
	uint8_t c = s[0], lo = 0x80, hi = 0xbf;
	size_t len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4, i;

	if (n < len)
		return 0;
	if (c == 0xe0)
		lo = 0xa0;	/* overlong */
	else if (c == 0xed)
		hi = 0x9f;	/* surrogates */
	else if (c == 0xf0)
		lo = 0x90;	/* overlong */
	else if (c == 0xf4)
		hi = 0x8f;	/* above U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* A C1 control (U+0080..U+009F) starts at s (a valid sequence of sl_utf8_len 2)? */
static inline int sl_utf8_is_c1(const uint8_t *s)
{
	return s[0] == 0xc2 && s[1] < 0xa0;
}

#endif /* SLUICE_UTF8_H */
