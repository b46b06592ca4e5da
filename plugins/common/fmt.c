/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fast formatters: see fmt.h for the formats and the buffer contract. */
#include "fmt.h"
#include "utf8.h"

#include <time.h>

static const char digits2[200] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";
static const char hexlc[16] = "0123456789abcdef";

#define DEC2(n) (char)((n) < 10 ? '0' + (n) : '0' + (n) / 10), (char)((n) < 10 ? 0 : '0' + (n) % 10)
#define D10(n) DEC2(n), DEC2((n) + 1), DEC2((n) + 2), DEC2((n) + 3), DEC2((n) + 4), DEC2((n) + 5), \
	DEC2((n) + 6), DEC2((n) + 7), DEC2((n) + 8), DEC2((n) + 9)
const char sl_fmt_dec2_tab[200] = { D10(0), D10(10), D10(20), D10(30), D10(40), D10(50), D10(60), D10(70),
				 D10(80), D10(90) };
static const char hexuc[16] = "0123456789ABCDEF";

static __attribute__((unused)) unsigned dec_len(uint64_t v)
{
	unsigned n = 1;

	/* Four digits per step keeps the loop short for big values. */
	while (v >= 10000) {
		v /= 10000;
		n += 4;
	}
	if (v >= 1000)
		return n + 3;
	if (v >= 100)
		return n + 2;
	if (v >= 10)
		return n + 1;
	return n;
}

char *sl_fmt_u64_raw(char *p, uint64_t v)
{
#ifdef SL_FMT_U64_INLINE
	return sl_fmt_u64_inline(p, v);
#else
	unsigned n = dec_len(v);
	char *q = p + n;

	while (v >= 100) {
		unsigned i = (unsigned)(v % 100) * 2;

		v /= 100;
		*--q = digits2[i + 1];
		*--q = digits2[i];
	}
	if (v >= 10) {
		*--q = digits2[v * 2 + 1];
		*--q = digits2[v * 2];
	} else {
		*--q = (char)('0' + v);
	}
	return p + n;
#endif
}

/* Two-digit zero-padded decimal, v < 100. */
static inline char *dec2(char *p, unsigned v)
{
	p[0] = digits2[v * 2];
	p[1] = digits2[v * 2 + 1];
	return p + 2;
}

char *sl_fmt_hex_raw(char *p, uint64_t v, unsigned width, bool upper)
{
	const char *h = upper ? hexuc : hexlc;
	unsigned n = v ? (unsigned)(67 - __builtin_clzll(v)) / 4 : 1, i;

	if (n < width)
		n = width;
	for (i = n; i > 0; i--) {
		p[i - 1] = h[v & 15];
		v >>= 4;
	}
	return p + n;
}

/*
 * A byte in decimal, without leading zeros: the digits in the low bytes
 * (first digit lowest), the digit count in the top byte.  One load and one
 * 4-byte store per octet instead of a branch on its length.
 */
#define DEC_U8(n)                                                                            \
	((n) >= 100 ? (uint32_t)('0' + (n) / 100) | (uint32_t)('0' + (n) / 10 % 10) << 8 |  \
			      (uint32_t)('0' + (n) % 10) << 16 | 3u << 24                     \
	 : (n) >= 10 ? (uint32_t)('0' + (n) / 10) | (uint32_t)('0' + (n) % 10) << 8 | 2u << 24 \
		     : (uint32_t)('0' + (n)) | 1u << 24)
#define R4(f, n) f(n), f((n) + 1), f((n) + 2), f((n) + 3)
#define R16(f, n) R4(f, n), R4(f, (n) + 4), R4(f, (n) + 8), R4(f, (n) + 12)
#define R64(f, n) R16(f, n), R16(f, (n) + 16), R16(f, (n) + 32), R16(f, (n) + 48)
#define R256(f) R64(f, 0), R64(f, 64), R64(f, 128), R64(f, 192)

static const uint32_t dec_u8_tab[256] = { R256(DEC_U8) };

/* Two lowercase hex digits of a byte, in memory order. */
#define HEXC(d) ((d) < 10 ? '0' + (d) : 'a' + (d) - 10)
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HEX2(n) (uint16_t)(HEXC((n) >> 4) << 8 | HEXC((n) & 15))
#else
#define HEX2(n) (uint16_t)(HEXC((n) >> 4) | HEXC((n) & 15) << 8)
#endif
static const uint16_t hex2lc[256] = { R256(HEX2) };

/* Writes 4 bytes at p (1-3 digits and scratch). */
static inline char *dec_u8(char *p, unsigned v)
{
	uint32_t e = dec_u8_tab[v];

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	e = __builtin_bswap32(e);
#endif
	memcpy(p, &e, 4);
	return p + (dec_u8_tab[v] >> 24);
}

static inline char *hex2(char *p, uint8_t v)
{
	memcpy(p, &hex2lc[v], 2);
	return p + 2;
}

/* Stores 4 bytes for the last octet: needs SL_FMT_IP4_MAX (16) bytes. */
char *sl_fmt_ip4_raw(char *p, const uint8_t a[4])
{
	p = dec_u8(p, a[0]);
	*p++ = '.';
	p = dec_u8(p, a[1]);
	*p++ = '.';
	p = dec_u8(p, a[2]);
	*p++ = '.';
	return dec_u8(p, a[3]);
}

/* A 16-bit group in minimal lowercase hex. */
static inline char *hex16(char *p, unsigned w)
{
	if (w >= 0x1000)
		*p++ = hexlc[w >> 12];
	if (w >= 0x100)
		*p++ = hexlc[(w >> 8) & 15];
	if (w >= 0x10)
		*p++ = hexlc[(w >> 4) & 15];
	*p++ = hexlc[w & 15];
	return p;
}

/* glibc's inet_ntop6 algorithm, so the text is byte-identical to it. */
char *sl_fmt_ip6_raw(char *p, const uint8_t a[16])
{
	unsigned w[8];
	int best_base = -1, best_len = 0, cur_base = -1, cur_len = 0;
	int i;

	for (i = 0; i < 8; i++)
		w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
	for (i = 0; i < 8; i++) {
		if (w[i] == 0) {
			if (cur_base == -1) {
				cur_base = i;
				cur_len = 1;
			} else {
				cur_len++;
			}
		} else if (cur_base != -1) {
			if (best_base == -1 || cur_len > best_len) {
				best_base = cur_base;
				best_len = cur_len;
			}
			cur_base = -1;
		}
	}
	if (cur_base != -1 && (best_base == -1 || cur_len > best_len)) {
		best_base = cur_base;
		best_len = cur_len;
	}
	if (best_base != -1 && best_len < 2)
		best_base = -1;

	for (i = 0; i < 8; i++) {
		if (best_base != -1 && i >= best_base && i < best_base + best_len) {
			if (i == best_base)
				*p++ = ':';
			continue;
		}
		if (i != 0)
			*p++ = ':';
		if (i == 6 && best_base == 0 &&
		    (best_len == 6 || (best_len == 5 && w[5] == 0xffff)))
			return sl_fmt_ip4_raw(p, a + 12);
		p = hex16(p, w[i]);
	}
	if (best_base != -1 && best_base + best_len == 8)
		*p++ = ':';
	return p;
}

char *sl_fmt_ip6_full_raw(char *p, const uint8_t a[16])
{
	int i;

	for (i = 0; i < 16; i += 2) {
		if (i)
			*p++ = ':';
		p = hex2(p, a[i]);
		p = hex2(p, a[i + 1]);
	}
	return p;
}

char *sl_fmt_addr_raw(char *p, const uint8_t a[16])
{
	if (sl_addr_is_v4(a))
		return sl_fmt_ip4_raw(p, a + 12);
	return sl_fmt_ip6_raw(p, a);
}

char *sl_fmt_mac_raw(char *p, const uint8_t m[6])
{
	int i;

	p = hex2(p, m[0]);
	for (i = 1; i < 6; i++) {
		*p++ = ':';
		p = hex2(p, m[i]);
	}
	return p;
}

/*
 * Run a raw writer straight into the buffer when the worst case fits, else
 * through a scratch buffer so that an append near the end is exact (it
 * fails only when the real text does not fit).
 */
#define FMT_VIA(b, max, call_at)                                        \
	do {                                                            \
		if (!(b)->overflow && (b)->cap - (b)->len >= (max)) {   \
			char *at_ = sl_fmt_end(b);                         \
			sl_fmt_commit((b), call_at);                       \
		} else {                                                \
			char tmp_[(max)];                               \
			char *at_ = tmp_;                               \
			sl_fmt_mem((b), tmp_, (size_t)((call_at) - tmp_)); \
		}                                                       \
	} while (0)

void sl_fmt_u64_slow(struct sl_fmt_buf *b, uint64_t v)
{
	FMT_VIA(b, SL_FMT_U64_MAX, sl_fmt_u64_raw(at_, v));
}

void sl_fmt_i64(struct sl_fmt_buf *b, int64_t v)
{
	if (v < 0) {
		sl_fmt_chr(b, '-');
		sl_fmt_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		sl_fmt_u64(b, (uint64_t)v);
	}
}

void sl_fmt_hex(struct sl_fmt_buf *b, uint64_t v, unsigned width, bool upper)
{
	if (width > SL_FMT_HEX_MAX) {
		/* rare: pad by hand, then the 16 digits */
		unsigned pad = width - SL_FMT_HEX_MAX;

		if (!sl_fmt_room(b, pad + SL_FMT_HEX_MAX))
			return;
		memset(sl_fmt_end(b), '0', pad);
		b->len += pad;
		width = SL_FMT_HEX_MAX;
	}
	FMT_VIA(b, SL_FMT_HEX_MAX, sl_fmt_hex_raw(at_, v, width, upper));
}

void sl_fmt_ip4(struct sl_fmt_buf *b, const uint8_t a[4])
{
	FMT_VIA(b, SL_FMT_IP4_MAX, sl_fmt_ip4_raw(at_, a));
}

void sl_fmt_ip6(struct sl_fmt_buf *b, const uint8_t a[16])
{
	FMT_VIA(b, SL_FMT_IP6_MAX, sl_fmt_ip6_raw(at_, a));
}

void sl_fmt_ip6_full(struct sl_fmt_buf *b, const uint8_t a[16])
{
	if (sl_fmt_room(b, SL_FMT_IP6_FULL_MAX))
		sl_fmt_commit(b, sl_fmt_ip6_full_raw(sl_fmt_end(b), a));
}

void sl_fmt_addr(struct sl_fmt_buf *b, const uint8_t a[16])
{
	FMT_VIA(b, SL_FMT_ADDR_MAX, sl_fmt_addr_raw(at_, a));
}

void sl_fmt_addr_in(struct sl_fmt_buf *b, const uint8_t a[16], bool v6)
{
	FMT_VIA(b, SL_FMT_ADDR_MAX, sl_fmt_addr_in_raw(at_, a, v6));
}

void sl_fmt_mac(struct sl_fmt_buf *b, const uint8_t m[6])
{
	FMT_VIA(b, SL_FMT_MAC_MAX, sl_fmt_mac_raw(at_, m));
}

void sl_fmt_hexbytes(struct sl_fmt_buf *b, const uint8_t *s, size_t n, char sep)
{
	size_t need, i;
	char *q;

	if (n == 0)
		return;
	need = sep ? 3 * n - 1 : 2 * n;
	if (!sl_fmt_room(b, need))
		return;
	q = hex2(sl_fmt_end(b), s[0]);
	if (sep) {
		for (i = 1; i < n; i++) {
			*q++ = sep;
			q = hex2(q, s[i]);
		}
	} else {
		for (i = 1; i < n; i++)
			q = hex2(q, s[i]);
	}
	sl_fmt_commit(b, q);
}

/* ---- RFC 3339 ---- */

/* the calendar of time_clamp.h: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z */
#define SECS_MIN SL_TIME_SEC_MIN
#define SECS_MAX SL_TIME_SEC_MAX

/* Days since 1970-01-01 to y/m/d (proleptic Gregorian; H. Hinnant). */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era, yy;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	yy = (int64_t)yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = yy + (*m <= 2);
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* Fill the cache for second `sec` (date part, zone, clamp state). */
static void time_cache_fill(struct sl_fmt_time_cache *c, int64_t sec)
{
	int64_t off = 0, local, days, y;
	unsigned mo, d, sod;
	char *p;

	if (c->local) {
		time_t tt = (time_t)sec;
		struct tm tm;

		if (localtime_r(&tt, &tm))
			off = tm.tm_gmtoff;
	}
	local = sec + off;
	c->clamp = 0;
	if (local < SECS_MIN) {
		local = SECS_MIN;
		c->clamp = -1;
	} else if (local > SECS_MAX) {
		local = SECS_MAX;
		c->clamp = 1;
	}
	days = floor_div(local, 86400);
	sod = (unsigned)(local - days * 86400);
	civil_from_days(days, &y, &mo, &d);

	p = c->date;
	p = dec2(p, (unsigned)(y / 100));
	p = dec2(p, (unsigned)(y % 100));
	*p++ = '-';
	p = dec2(p, mo);
	*p++ = '-';
	p = dec2(p, d);
	*p++ = 'T';
	p = dec2(p, sod / 3600);
	*p++ = ':';
	p = dec2(p, sod / 60 % 60);
	*p++ = ':';
	dec2(p, sod % 60);

	if (!c->local) {
		c->zone[0] = 'Z';
		c->zone_len = 1;
	} else {
		unsigned a;

		c->zone[0] = off < 0 ? '-' : '+';
		a = (unsigned)((off < 0 ? -off : off) / 60);
		dec2(c->zone + 1, a / 60 % 100);
		c->zone[3] = ':';
		dec2(c->zone + 4, a % 60);
		c->zone_len = 6;
	}
	c->sec = sec;
	c->valid = true;
}

char *sl_fmt_rfc3339_raw(char *p, struct sl_fmt_time_cache *c, struct sl_time t)
{
	unsigned us;

	if (!c->valid || c->sec != t.sec)
		time_cache_fill(c, t.sec);
	memcpy(p, c->date, sizeof(c->date));
	p += sizeof(c->date);
	us = t.nsec / 1000;
	if (c->clamp)	/* the calendar's first or last second (time_clamp.h) */
		us = 0;
	else if (us > 999999)
		us = 999999;
	*p++ = '.';
#ifdef SL_FMT_U64_INLINE
	{
		/* 8 digits "00uuuuuu", the two leading zeros shifted out */
		uint64_t w = (sl_fmt_digits8(us) + 0x3030303030303030ULL) >> 16;

		memcpy(p, &w, 8);
		p += 6;
	}
#else
	p = dec2(p, us / 10000);
	p = dec2(p, us / 100 % 100);
	p = dec2(p, us % 100);
#endif
	memcpy(p, c->zone, sizeof(c->zone));	/* whole: scratch after the zone */
	return p + c->zone_len;
}

void sl_fmt_rfc3339(struct sl_fmt_buf *b, struct sl_fmt_time_cache *c, struct sl_time t)
{
	FMT_VIA(b, SL_FMT_RFC3339_MAX, sl_fmt_rfc3339_raw(at_, c, t));
}

/* ---- RFC 3164 ---- */

static const char month_abbr[] = "JanFebMarAprMayJunJulAugSepOctNovDec";

/*
 * Local time of sec; a time outside the calendar (time_clamp.h), in UTC or
 * in local time, is the calendar's first or last second.
 */
static void date3164_tm(int64_t sec, struct tm *tm)
{
	time_t t = (time_t)sec;

	if (sec >= SECS_MIN && sec <= SECS_MAX && localtime_r(&t, tm) &&
	    tm->tm_year >= 1 - 1900 && tm->tm_year <= 9999 - 1900)
		return;
	memset(tm, 0, sizeof(*tm));
	if (sec > 0) {	/* 9999-12-31T23:59:59 */
		tm->tm_mon = 11;
		tm->tm_mday = 31;
		tm->tm_hour = 23;
		tm->tm_min = 59;
		tm->tm_sec = 59;
	} else {	/* 0001-01-01T00:00:00 */
		tm->tm_mday = 1;
	}
}

char *sl_fmt_date3164_raw(char *p, struct sl_fmt_date3164_cache *c, int64_t sec)
{
	if (!c->valid || c->sec != sec) {
		struct tm tm;
		char *q = c->date;

		date3164_tm(sec, &tm);
		memcpy(q, month_abbr + 3 * ((unsigned)tm.tm_mon % 12), 3);
		q[3] = ' ';
		q[4] = tm.tm_mday >= 10 ? (char)('0' + tm.tm_mday / 10 % 10) : ' ';
		q[5] = (char)('0' + tm.tm_mday % 10);
		q[6] = ' ';
		q = dec2(q + 7, (unsigned)tm.tm_hour % 100);
		*q++ = ':';
		q = dec2(q, (unsigned)tm.tm_min % 100);
		*q++ = ':';
		dec2(q, (unsigned)tm.tm_sec % 100);	/* 60: a leap second */
		c->sec = sec;
		c->valid = true;
	}
	memcpy(p, c->date, SL_FMT_DATE3164_LEN);
	return p + SL_FMT_DATE3164_LEN;
}

void sl_fmt_date3164(struct sl_fmt_buf *b, struct sl_fmt_date3164_cache *c, int64_t sec)
{
	FMT_VIA(b, SL_FMT_DATE3164_LEN, sl_fmt_date3164_raw(at_, c, sec));
}

/* ---- JSON ---- */

/*
 * Per byte: 0 copy as is; 1 escape with a letter (esc_letter); 2 escape
 * as \u00XX; 3 lead byte of a multi-byte UTF-8 sequence (validate).
 */
static const uint8_t json_class[256] = {
	2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 1, 1, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
	/* 0x80..0xbf: continuation bytes are invalid on their own */
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	/* 0xc0, 0xc1: overlong; 0xc2..0xf4 lead bytes; 0xf5..: invalid */
	2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};

static char esc_letter(uint8_t c)
{
	switch (c) {
	case '"': return '"';
	case '\\': return '\\';
	case '\b': return 'b';
	case '\f': return 'f';
	case '\n': return 'n';
	case '\r': return 'r';
	default: return 't';
	}
}

void sl_fmt_json_body(struct sl_fmt_buf *b, const void *src, size_t n)
{
	const uint8_t *s = src;
	size_t i = 0, save = b->len;
	char *q, *lim;

	if (b->overflow)
		return;
	q = sl_fmt_end(b);
	lim = b->p + b->cap;
	while (i < n) {
		uint8_t c = s[i];
		size_t run;

		switch (json_class[c]) {
		case 0:
			/* a run of plain bytes, copied at once below */
			run = 1;
			while (i + run < n && json_class[s[i + run]] == 0)
				run++;
			break;
		case 1:
			if (lim - q < 2)
				goto full;
			q[0] = '\\';
			q[1] = esc_letter(c);
			q += 2;
			i++;
			continue;
		case 3:
			run = sl_utf8_len(s + i, n - i);
			if (run == 2 && sl_utf8_is_c1(s + i)) {
				/* C1 control U+0080..U+009F: terminals obey them */
				if (lim - q < 6)
					goto full;
				memcpy(q, "\\u00", 4);
				q[4] = hexlc[s[i + 1] >> 4];
				q[5] = hexlc[s[i + 1] & 15];
				q += 6;
				i += 2;
				continue;
			}
			if (run)
				break;	/* a valid character, copied as it is below */
			/* invalid: escape the lead byte alone */
			__attribute__((fallthrough));
		default:
			if (lim - q < 6)
				goto full;
			memcpy(q, "\\u00", 4);
			q[4] = hexlc[c >> 4];
			q[5] = hexlc[c & 15];
			q += 6;
			i++;
			continue;
		}
		if ((size_t)(lim - q) < run)
			goto full;
		memcpy(q, s + i, run);
		q += run;
		i += run;
	}
	sl_fmt_commit(b, q);
	return;
full:
	b->len = save;
	b->overflow = true;
}

void sl_fmt_json_str(struct sl_fmt_buf *b, const void *s, size_t n)
{
	sl_fmt_chr(b, '"');
	sl_fmt_json_body(b, s, n);
	sl_fmt_chr(b, '"');
}
