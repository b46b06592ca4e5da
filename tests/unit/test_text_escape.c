/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/text_escape.c: a table of every single byte, UTF-8
 * sequences valid and not (2/3/4 bytes, C1 controls, overlong forms,
 * surrogates, above U+10FFFF, cut short, 0xff), then random inputs at
 * every alignment against a slow reference that decodes code points, cuts
 * at every capacity, and the safety pass over json's and escaped output
 * (which must leave them unchanged).
 */
#include "../../plugins/common/fmt.c"
#include "../../plugins/common/text_escape.c"

#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static const unsigned modes[] = { 0, SL_ESC_BACKSLASH, SL_ESC_KEEP_TAB, SL_ESC_BACKSLASH | SL_ESC_KEEP_TAB };

static size_t esc_all(char *out, size_t cap, const void *s, size_t n, unsigned flags)
{
	size_t used, w = sl_esc_write(out, cap, s, n, flags, &used);

	CHECK(used == n, "esc_all: used %zu of %zu", used, n);
	out[w] = 0;
	return w;
}

static void expect(const char *in, size_t n, unsigned flags, const char *want, const char *what)
{
	char out[1024];
	size_t w = esc_all(out, sizeof(out) - 1, in, n, flags);

	CHECK(w == strlen(want) && !memcmp(out, want, w), "%s (flags %u): got '%s' want '%s'", what, flags,
	      out, want);
	CHECK(sl_esc_len(in, n, flags) == w, "%s: sl_esc_len %zu != %zu", what, sl_esc_len(in, n, flags), w);
	CHECK((sl_esc_scan(in, n, flags) == n) == (w == n && !memcmp(out, in, n)),
	      "%s: scan says %zu of %zu clean", what, sl_esc_scan(in, n, flags), n);
}
#define EXPECT(lit, flags, want) expect(lit, sizeof(lit) - 1, flags, want, #lit)

/* Every byte on its own, with ASCII on both sides. */
static void single_bytes(void)
{
	for (unsigned m = 0; m < 4; m++) {
		for (unsigned c = 0; c < 256; c++) {
			char in[3] = { 'a', (char)c, 'z' }, want[16];
			bool esc = c < 0x20 || c >= 0x7f;

			if (c == '\t' && (modes[m] & SL_ESC_KEEP_TAB))
				esc = false;
			if (c == '\\' && (modes[m] & SL_ESC_BACKSLASH))
				esc = true;
			if (esc)
				snprintf(want, sizeof(want), "a\\x%02xz", c);
			else
				snprintf(want, sizeof(want), "a%cz", c);
			expect(in, 3, modes[m], want, "single byte");
		}
	}
}

static void sequences(void)
{
	/* the kernel's /dev/kmsg form for what printk escapes too */
	EXPECT("a\nFAKE LINE", 0, "a\\x0aFAKE LINE");
	EXPECT("\x1b[31mred\x1b[0m", 0, "\\x1b[31mred\\x1b[0m");
	EXPECT("a\\b\tc\r\x7f", SL_ESC_BACKSLASH, "a\\x5cb\\x09c\\x0d\\x7f");
	EXPECT("a\\b\tc", SL_ESC_KEEP_TAB, "a\\b\tc");
	EXPECT("", 0, "");
	/* valid UTF-8: 2, 3, 4 bytes, the ends of each range */
	EXPECT("\xc2\xa0 \xc3\xa9 \xdf\xbf", 0, "\xc2\xa0 \xc3\xa9 \xdf\xbf");
	EXPECT("\xe0\xa0\x80 \xe2\x82\xac \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf", 0,
	       "\xe0\xa0\x80 \xe2\x82\xac \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf");
	EXPECT("\xf0\x90\x80\x80 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf", 0,
	       "\xf0\x90\x80\x80 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf");
	/* C1 controls: valid UTF-8, but terminals obey them */
	EXPECT("\xc2\x80|\xc2\x9b""31m|\xc2\x9f", 0, "\\xc2\\x80|\\xc2\\x9b31m|\\xc2\\x9f");
	/* overlong forms */
	EXPECT("\xc0\xaf\xc1\xbf", 0, "\\xc0\\xaf\\xc1\\xbf");
	EXPECT("\xe0\x80\xaf\xe0\x9f\xbf", 0, "\\xe0\\x80\\xaf\\xe0\\x9f\\xbf");
	EXPECT("\xf0\x80\x80\xaf\xf0\x8f\xbf\xbf", 0, "\\xf0\\x80\\x80\\xaf\\xf0\\x8f\\xbf\\xbf");
	/* surrogates */
	EXPECT("\xed\xa0\x80\xed\xbf\xbf", 0, "\\xed\\xa0\\x80\\xed\\xbf\\xbf");
	/* above U+10FFFF, leads that never start a sequence */
	EXPECT("\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80");
	EXPECT("\xf5\x80\x80\x80\xf8\xfe\xff", 0, "\\xf5\\x80\\x80\\x80\\xf8\\xfe\\xff");
	/* cut short: at the end, before ASCII, before another lead */
	EXPECT("\xc3", 0, "\\xc3");
	EXPECT("\xe2\x82", 0, "\\xe2\\x82");
	EXPECT("\xf0\x9f\x98", 0, "\\xf0\\x9f\\x98");
	EXPECT("\xe2\x82z", 0, "\\xe2\\x82z");
	EXPECT("\xe2\xc3\xa9", 0, "\\xe2\xc3\xa9");
	/* stray continuation bytes */
	EXPECT("\x80\xbf", 0, "\\x80\\xbf");
	/* a NUL is a control byte like the others */
	EXPECT("a\0b", 0, "a\\x00b");
	/* long clean runs around one bad byte, at every 8-byte phase */
	for (unsigned k = 0; k < 40; k++) {
		char in[41], want[64];

		memset(in, 'x', 40);
		in[k] = '\033';
		in[40] = 0;
		snprintf(want, sizeof(want), "%.*s\\x1b%s", (int)k, in, in + k + 1);
		expect(in, 40, 0, want, "ESC at k");
		CHECK(sl_esc_scan(in, 40, 0) == k, "scan: ESC at %u found at %zu", k, sl_esc_scan(in, 40, 0));
	}
}

/* ---- a slow reference: decode code points, then decide ---- */

static size_t ref_valid(const uint8_t *s, size_t n, uint32_t *cp)
{
	size_t len, i;
	uint32_t v;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		v = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		v = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		v = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if ((len == 2 && v < 0x80) || (len == 3 && v < 0x800) || (len == 4 && v < 0x10000))
		return 0;	/* overlong */
	if ((v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
		return 0;
	*cp = v;
	return len;
}

static size_t ref_escape(char *o, const uint8_t *s, size_t n, unsigned flags)
{
	size_t i = 0, w = 0;

	while (i < n) {
		uint32_t cp = 0;
		size_t len = ref_valid(s + i, n - i, &cp);
		bool esc = !len || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);

		if (cp == '\t' && len && (flags & SL_ESC_KEEP_TAB))
			esc = false;
		if (cp == '\\' && (flags & SL_ESC_BACKSLASH))
			esc = true;
		if (esc) {
			w += (size_t)sprintf(o + w, "\\x%02x", s[i]);
			i++;
		} else {
			memcpy(o + w, s + i, len);
			w += len;
			i += len;
		}
	}
	return w;
}

static uint64_t rng = 0x243f6a8885a308d3ULL;

static unsigned rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (unsigned)((rng * 0x2545f4914f6cdd1dULL) >> 32);
}

/* Mostly ASCII, some UTF-8 (valid or broken), some controls. */
static uint8_t rnd_byte(void)
{
	static const uint8_t odd[] = { 0, '\t', '\n', 0x1b, 0x7f, '\\', 0x80, 0x9b, 0xbf, 0xc0, 0xc2, 0xc3,
				       0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0xa0, 0x9f, 0x8f, 0x90 };
	unsigned r = rnd() % 8;

	if (r < 5)
		return (uint8_t)(0x20 + rnd() % 95);
	return odd[rnd() % sizeof(odd)];
}

static void random_inputs(void)
{
	static uint8_t buf[80 + 8];
	static char want[80 * 4 + 1], got[80 * 4 + 1];

	for (unsigned t = 0; t < 300000; t++) {
		size_t n = rnd() % 80, off = rnd() % 8, wl, gl, used;
		unsigned m = modes[rnd() % 4];
		uint8_t *s = buf + off;

		for (size_t i = 0; i < n; i++)
			s[i] = rnd_byte();
		wl = ref_escape(want, s, n, m);
		gl = sl_esc_write(got, sizeof(got), s, n, m, &used);
		CHECK(gl == wl && !memcmp(got, want, wl) && used == n, "random %u: got '%.*s' want '%.*s'", t,
		      (int)gl, got, (int)wl, want);
		CHECK(sl_esc_len(s, n, m) == wl, "random %u: len", t);
		CHECK((sl_esc_scan(s, n, m) == n) == (wl == n && !memcmp(want, s, n)), "random %u: scan", t);
		/* the output needs nothing more: the safety pass leaves it alone */
		CHECK(sl_esc_scan(got, gl, SL_ESC_KEEP_TAB) == gl, "random %u: output not clean", t);

		/* every capacity: a prefix of the whole, cut on a boundary */
		if (t % 16 == 0) {
			for (size_t cap = 0; cap <= wl; cap++) {
				char part[80 * 4 + 1], redo[80 * 4 + 1];
				size_t pl = sl_esc_write(part, cap, s, n, m, &used), rl;

				CHECK(pl <= cap && !memcmp(part, want, pl), "cap %zu: not a prefix", cap);
				rl = ref_escape(redo, s, used, m);
				CHECK(rl == pl, "cap %zu: %zu bytes for %zu used (want %zu)", cap, pl, used, rl);
				CHECK(used == n || cap - pl < wl - pl, "cap %zu: stopped early", cap);
				/* the next unit would not have fitted */
				if (used < n)
					CHECK(ref_escape(redo, s, used + 1, m) > cap ||
					      (s[used] >= 0xc2 && s[used] <= 0xf4),
					      "cap %zu: room left for the next byte", cap);
			}
		}
	}
}

static void cuts(void)
{
	/* "ab\x1bc\xc3\xa9d" escaped with backslashes: ab\x1bcéd */
	const char *p = "ab\\x1bc\xc3\xa9" "d";
	size_t total = strlen(p);
	static const size_t want[] = { 0, 1, 2, 2, 2, 2, 6, 7, 7, 9, 10 };

	for (size_t len = 0; len <= total; len++)
		CHECK(sl_esc_cut(p, total, len) == want[len], "cut at %zu: %zu want %zu", len,
		      sl_esc_cut(p, total, len), want[len]);
	CHECK(sl_esc_cut(p, total, total + 5) == total, "cut past the end");
}

static void fmt_buf_appends(void)
{
	char mem[16];
	struct sl_fmt_buf b;

	sl_fmt_init(&b, mem, 14);
	sl_fmt_lit(&b, "P:");
	sl_fmt_escaped(&b, "a\nb", 3, 0);
	CHECK(!b.overflow && b.len == 8 && !memcmp(mem, "P:a\\x0ab", 8), "append");
	sl_fmt_escaped(&b, "\x1b\x1b", 2, 0);	/* 8 more, room for 6: one fits */
	CHECK(b.overflow && b.len == 12 && !memcmp(mem + 8, "\\x1b", 4), "append cut: len %zu", b.len);
	sl_fmt_escaped(&b, "x", 1, 0);
	CHECK(b.len == 12, "append after overflow");
	sl_fmt_init(&b, NULL, 0);
	sl_fmt_escaped(&b, "x", 1, 0);
	CHECK(b.overflow && b.len == 0, "append to nothing");
}

/*
 * sl_fmt_escaped's shortcut for short clean text (interface names, prefixes)
 * against the reference, at every length up to 20 and at every room from
 * none to an exact fit: the same text, overflow exactly when it does not fit.
 */
static void short_appends(void)
{
	static const unsigned fl[] = { 0, SL_ESC_BACKSLASH, SL_ESC_KEEP_TAB };
	uint8_t in[24];
	char want[24 * 4 + 1], mem[24 * 4 + 8];

	for (unsigned t = 0; t < 20000; t++) {
		size_t n = t % 21, wl;
		unsigned flags = fl[t % 3];

		for (size_t i = 0; i < n; i++)	/* mostly plain ASCII, now and then not */
			in[i] = rnd() % 8 ? (uint8_t)(0x20 + rnd() % 0x5f) : rnd_byte();
		wl = ref_escape(want, in, n, flags);
		for (size_t cap = wl > 2 ? wl - 2 : 0; cap <= wl + 2; cap++) {
			struct sl_fmt_buf b;

			sl_fmt_init(&b, mem, cap);
			sl_fmt_escaped(&b, in, n, flags);
			if (cap >= wl)
				CHECK(!b.overflow && b.len == wl && !memcmp(mem, want, wl),
				      "short append n %zu cap %zu", n, cap);
			else
				CHECK(b.overflow && b.len <= cap, "short append n %zu cap %zu: no overflow", n, cap);
		}
	}
}

/* json's strings need nothing from the safety pass, whatever went in. */
static void json_is_clean(void)
{
	static uint8_t in[64];
	static char mem[64 * 6 + 2];

	for (unsigned t = 0; t < 100000; t++) {
		size_t n = rnd() % 64;
		struct sl_fmt_buf b;

		for (size_t i = 0; i < n; i++)
			in[i] = t % 2 ? (uint8_t)rnd() : rnd_byte();
		sl_fmt_init(&b, mem, sizeof(mem));
		sl_fmt_json_str(&b, in, n);
		CHECK(!b.overflow && sl_esc_scan(b.p, b.len, SL_ESC_KEEP_TAB) == b.len,
		      "json output %u needs escaping at %zu", t, sl_esc_scan(b.p, b.len, SL_ESC_KEEP_TAB));
	}
}

int main(void)
{
	single_bytes();
	sequences();
	random_inputs();
	cuts();
	fmt_buf_appends();
	short_appends();
	json_is_clean();
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("text_escape: all ok\n");
	return 0;
}
