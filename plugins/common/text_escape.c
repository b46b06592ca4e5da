/* SPDX-License-Identifier: GPL-2.0-or-later */
/* \xNN escaping of control bytes and invalid UTF-8: see text_escape.h. */
#include "text_escape.h"
#include "utf8.h"

#include <string.h>

#define ONES 0x0101010101010101ULL
#define HIGH 0x8080808080808080ULL

static const char esc_hex[16] = "0123456789abcdef";

static inline uint64_t load8(const uint8_t *p)
{
	uint64_t x;

	memcpy(&x, p, 8);
	return x;
}

/*
 * Non-zero when one of the 8 bytes of x may need escaping: a byte below
 * 0x20, DEL or above (x + 1 sets the top bit of 0x7f; carries only come
 * out of 0xff bytes, which are caught anyway), or equal to a byte of bs
 * (the backslash, or 0: NUL is caught as a control byte anyway).  The
 * borrows and carries between bytes can only add false positives next to
 * a true one, so the test is exact as a yes/no.
 */
static inline uint64_t word_needs(uint64_t x, uint64_t bs)
{
	uint64_t y = x ^ bs;

	return (((x - ONES * 0x20) & ~x) | x | (x + ONES) | ((y - ONES) & ~y)) & HIGH;
}

static inline uint32_t load4(const uint8_t *p)
{
	uint32_t x;

	memcpy(&x, p, 4);
	return x;
}

/*
 * Under 16 bytes (prefixes, interface names): one word test of
 * overlapping loads covers them all; 1..3 bytes are padded with 'a'.
 */
static inline bool small_clean(const uint8_t *s, size_t n, uint64_t bs)
{
	uint64_t x;

	if (n >= 8)
		return !word_needs(load8(s), bs) && !word_needs(load8(s + n - 8), bs);
	if (n >= 4)
		x = load4(s) | (uint64_t)load4(s + n - 4) << 32;
	else if (n)
		x = (ONES * 'a' & ~0xffffffULL) | s[0] | (uint64_t)s[n / 2] << 8 | (uint64_t)s[n - 1] << 16;
	else
		return true;
	return !word_needs(x, bs);
}

/*
 * The same for 16 bytes at once (SSE2 on x86-64, NEON on arm64, plain
 * code elsewhere, through the compiler's vector extension): as signed
 * bytes, "below 0x20" also catches 0x80..0xff.
 */
typedef int8_t esc_v16 __attribute__((vector_size(16)));

static inline esc_v16 block_needs(const uint8_t *p, int8_t bs)
{
	esc_v16 x;

	memcpy(&x, p, 16);
	return (esc_v16)((x < (int8_t)0x20) | (x == (int8_t)0x7f) | (x == bs));
}

static inline bool any(esc_v16 m)
{
	uint64_t h[2];

	memcpy(h, &m, 16);
	return (h[0] | h[1]) != 0;
}

/* 64 bytes with one test: most lines are a few of these and need nothing. */
static inline bool block64_needs(const uint8_t *p, int8_t bs)
{
	return any(block_needs(p, bs) | block_needs(p + 16, bs) | block_needs(p + 32, bs) |
		   block_needs(p + 48, bs));
}

enum { C_PLAIN, C_ESC, C_LEAD };

static inline int byte_class(uint8_t c, unsigned flags)
{
	if (c < 0x20)
		return c == '\t' && (flags & SL_ESC_KEEP_TAB) ? C_PLAIN : C_ESC;
	if (c == '\\')
		return flags & SL_ESC_BACKSLASH ? C_ESC : C_PLAIN;
	if (c < 0x7f)
		return C_PLAIN;
	if (c >= 0xc2 && c <= 0xf4)
		return C_LEAD;
	return C_ESC;	/* DEL, continuation bytes, 0xc0 0xc1, 0xf5..0xff */
}

/* Length of the valid UTF-8 sequence at s (lead 0xc2..0xf4), 0 if invalid or C1. */
static inline size_t utf8_len(const uint8_t *s, size_t n)
{
	size_t len = sl_utf8_len(s, n);

	return len == 2 && sl_utf8_is_c1(s) ? 0 : len;
}

size_t sl_esc_scan(const void *src, size_t n, unsigned flags)
{
	const uint8_t *s = src;
	uint64_t bs = (flags & SL_ESC_BACKSLASH) ? ONES * '\\' : 0;
	int8_t bs1 = (flags & SL_ESC_BACKSLASH) ? '\\' : 0x7f;
	size_t i = 0;

	if (n < 16 && small_clean(s, n, bs))
		return n;
	while (i < n) {
		size_t end;

		while (n - i >= 64 && !block64_needs(s + i, bs1))
			i += 64;
		while (n - i >= 16 && !any(block_needs(s + i, bs1)))
			i += 16;
		/* the last 16 bytes, overlapping checked ones: all ASCII, done */
		if (n - i < 16 && n >= 16 && !any(block_needs(s + n - 16, bs1)))
			return n;
		while (n - i >= 8 && !word_needs(load8(s + i), bs))
			i += 8;
		/* something in this word (or the short tail): byte by byte */
		end = n - i >= 8 ? i + 8 : n;
		while (i < end) {
			size_t len;

			switch (byte_class(s[i], flags)) {
			case C_PLAIN:
				i++;
				continue;
			case C_LEAD:
				len = utf8_len(s + i, n - i);
				if (!len)
					return i;
				i += len;
				continue;
			default:
				return i;
			}
		}
	}
	return n;
}

size_t sl_esc_len(const void *src, size_t n, unsigned flags)
{
	const uint8_t *s = src;
	size_t i = 0, out = 0;

	for (;;) {
		size_t run = sl_esc_scan(s + i, n - i, flags);

		out += run;
		i += run;
		if (i == n)
			return out;
		out += SL_ESC_UNIT;
		i++;
	}
}

size_t sl_esc_write(char *dst, size_t cap, const void *src, size_t n, unsigned flags, size_t *used)
{
	const uint8_t *s = src;
	size_t i = 0, o = 0;

	while (i < n) {
		size_t run = sl_esc_scan(s + i, n - i, flags);

		if (run > cap - o) {
			/* cut the run, but not inside a UTF-8 sequence */
			run = cap - o;
			while (run && (s[i + run] & 0xc0) == 0x80)
				run--;
			memcpy(dst + o, s + i, run);
			o += run;
			i += run;
			break;
		}
		memcpy(dst + o, s + i, run);
		o += run;
		i += run;
		if (i == n)
			break;
		if (cap - o < SL_ESC_UNIT)
			break;
		dst[o] = '\\';
		dst[o + 1] = 'x';
		dst[o + 2] = esc_hex[s[i] >> 4];
		dst[o + 3] = esc_hex[s[i] & 15];
		o += SL_ESC_UNIT;
		i++;
	}
	if (used)
		*used = i;
	return o;
}

/* Copy n < 16 bytes with overlapping word moves (no call, no overread). */
static inline void small_copy(char *d, const uint8_t *s, size_t n)
{
	if (n >= 8) {
		uint64_t a = load8(s), z = load8(s + n - 8);

		memcpy(d, &a, 8);
		memcpy(d + n - 8, &z, 8);
	} else if (n >= 4) {
		uint32_t a = load4(s), z = load4(s + n - 4);

		memcpy(d, &a, 4);
		memcpy(d + n - 4, &z, 4);
	} else if (n) {
		d[0] = (char)s[0];
		d[n / 2] = (char)s[n / 2];
		d[n - 1] = (char)s[n - 1];
	}
}

void sl_fmt_escaped(struct sl_fmt_buf *b, const void *s, size_t n, unsigned flags)
{
	size_t used;

	if (b->overflow)
		return;
	/* interface names and most prefixes: short and clean */
	if (n < 16 && b->cap - b->len >= n &&
	    small_clean(s, n, (flags & SL_ESC_BACKSLASH) ? ONES * '\\' : 0)) {
		small_copy(sl_fmt_end(b), s, n);
		b->len += n;
		return;
	}
	b->len += sl_esc_write(sl_fmt_end(b), b->cap - b->len, s, n, flags, &used);
	if (used < n)
		b->overflow = true;
}

size_t sl_esc_cut(const char *p, size_t total, size_t len)
{
	size_t k;

	if (len >= total)
		return total;
	for (k = len > 3 ? len - 3 : 0; k < len; k++)
		if (p[k] == '\\')
			return k;	/* \xNN would be cut */
	while (len && ((uint8_t)p[len] & 0xc0) == 0x80)
		len--;		/* so would a UTF-8 sequence */
	return len;
}
