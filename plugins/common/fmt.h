/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fast text formatters for converters (no printf family, no malloc, no
 * syscall).  Two layers:
 *
 * 1. Bounded appenders on a struct sl_fmt_buf (pointer, length, capacity).
 *    Every append checks room; if something does not fit, nothing of it is
 *    written and buf->overflow is set (later appends are ignored), so a
 *    caller formats a whole line and checks overflow once at the end:
 *
 *        struct sl_fmt_buf fb;
 *        sl_fmt_init(&fb, sl_batch_alloc(b, 1024), 1024);   // NULL ok: overflow
 *        sl_fmt_lit(&fb, "SRC=");
 *        sl_fmt_addr(&fb, r->v[SL_F_SRC_ADDR].addr);
 *        if (fb.overflow) ...;
 *
 *    The buffer is NOT NUL-terminated (fields are pointer + length); call
 *    sl_fmt_nul() if you need a C string (the NUL is not counted in len).
 *
 * 2. Raw writers fmt_*_raw(char *p, ...) that write at p without checks
 *    and return the new end; the caller guarantees the SL_FMT_*_MAX room.
 *
 * Output formats:
 *   sl_fmt_u64        decimal, like "%" PRIu64
 *   sl_fmt_hex        hex, at least `width` digits zero-padded (wider values are
 *                  printed in full), like "%0*" PRIx64 / PRIX64
 *   sl_fmt_ip4        a.b.c.d from 4 bytes in network order
 *   sl_fmt_ip6        RFC 5952 compressed lowercase, exactly as glibc's
 *                  inet_ntop(AF_INET6) (including ::ffff:a.b.c.d and the
 *                  deprecated ::a.b.c.d forms)
 *   sl_fmt_ip6_full   8 groups of 4 lowercase hex digits (the kernel's %pI6)
 *   sl_fmt_addr       an SL_T_ADDR value: IPv4-mapped -> a.b.c.d, else sl_fmt_ip6
 *   sl_fmt_addr_in    an address of a record: sl_fmt_ip6 when the record is IPv6
 *                  (sl_fmt_rec_v6), so ::ffff:a.b.c.d stays as the packet had it
 *   sl_fmt_mac        aa:bb:cc:dd:ee:ff (lowercase)
 *   sl_fmt_hexbytes   any bytes as lowercase hex pairs joined by `sep` (0: none)
 *   sl_fmt_rfc3339    2024-05-01T12:34:56.123456Z or ...+02:00 (see below)
 *   sl_fmt_json_str   a JSON string literal including the quotes (see below)
 */
#ifndef SLUICE_FMT_H
#define SLUICE_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <sluice/record.h>

#include "time_clamp.h"

/*
 * Room a raw writer needs at p: the most bytes it produces, or a little
 * more where it stores whole words and may write scratch bytes past the end
 * it returns (those bytes are then free space again).
 */
#define SL_FMT_U64_MAX 20
#define SL_FMT_HEX_MAX 16		/* plus (width - 16) if width > 16 */
#define SL_FMT_IP4_MAX 16		/* 15, and one scratch byte */
#define SL_FMT_IP6_MAX 45		/* like INET6_ADDRSTRLEN - 1 */
#define SL_FMT_IP6_FULL_MAX 39
#define SL_FMT_ADDR_MAX SL_FMT_IP6_MAX
#define SL_FMT_MAC_MAX 18		/* 17, and one scratch byte */
#define SL_FMT_RFC3339_MAX 34	/* 2024-05-01T12:34:56.123456+hh:mm = 32, and 2 scratch bytes */

struct sl_fmt_buf {
	char *p;	/* start of the buffer */
	size_t len;	/* bytes written */
	size_t cap;	/* bytes available at p */
	bool overflow;	/* an append did not fit: the text is incomplete */
};

static inline void sl_fmt_init(struct sl_fmt_buf *b, void *mem, size_t cap)
{
	b->p = (char *)mem;
	b->len = 0;
	b->cap = mem ? cap : 0;
	b->overflow = mem == NULL;
}

/* Room for n more bytes?  Sets overflow when not. */
static inline bool sl_fmt_room(struct sl_fmt_buf *b, size_t n)
{
	if (b->overflow || b->cap - b->len < n) {
		b->overflow = true;
		return false;
	}
	return true;
}

/* Cursor at the end of the text (for raw writers after sl_fmt_room()). */
static inline char *sl_fmt_end(struct sl_fmt_buf *b)
{
	return b->p + b->len;
}

/* Commit a raw writer's end pointer: sl_fmt_commit(b, sl_fmt_u64_raw(sl_fmt_end(b), v)). */
static inline void sl_fmt_commit(struct sl_fmt_buf *b, char *end)
{
	b->len = (size_t)(end - b->p);
}

static inline void sl_fmt_chr(struct sl_fmt_buf *b, char c)
{
	if (sl_fmt_room(b, 1))
		b->p[b->len++] = c;
}

static inline void sl_fmt_mem(struct sl_fmt_buf *b, const void *s, size_t n)
{
	if (sl_fmt_room(b, n)) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
	}
}

static inline void sl_fmt_str(struct sl_fmt_buf *b, const char *s)
{
	sl_fmt_mem(b, s, strlen(s));
}

/* A string literal: length known at compile time. */
#define sl_fmt_lit(b, lit) sl_fmt_mem((b), "" lit, sizeof(lit) - 1)

/* NUL-terminate (not counted in len); needs one byte of room. */
static inline void sl_fmt_nul(struct sl_fmt_buf *b)
{
	if (sl_fmt_room(b, 1))
		b->p[b->len] = '\0';
}

/* ---- raw writers: no bounds check, return the new end ---- */

#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * v < 10^8 as 8 decimal digits (0..9, not ASCII) in the bytes of a word,
 * the most significant first in memory: v splits into 4 + 4 digits in
 * 32-bit lanes, 2 + 2 in 16-bit lanes, 1 + 1 in bytes, each split a
 * multiply-shift (x * 10486 >> 20 is x / 100 for x < 10^4, x * 103 >> 10
 * is x / 10 for x < 100).  No loop and no branch on the number's length.
 */
static inline __attribute__((always_inline)) uint64_t sl_fmt_digits8(uint32_t v)
{
	uint64_t x = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;
	uint64_t h = ((x * 10486) >> 20) & 0x0000007f0000007fULL;

	x = h | (x - h * 100) << 16;
	h = ((x * 103) >> 10) & 0x000f000f000f000fULL;
	return h | (x - h * 10) << 8;
}

/* v < 10^8 without leading zeros; stores 8 bytes at p. */
static inline __attribute__((always_inline)) char *sl_fmt_dec8_var(char *p, uint32_t v)
{
	uint64_t d = sl_fmt_digits8(v), w;
	/* the leading zero digits are the low zero bytes; keep one digit */
	unsigned lead = d ? (unsigned)__builtin_ctzll(d) / 8 : 7;

	w = (d + 0x3030303030303030ULL) >> (8 * lead);
	memcpy(p, &w, 8);
	return p + 8 - lead;
}

/* v < 10^8 as exactly 8 digits. */
static inline __attribute__((always_inline)) char *sl_fmt_dec8_fixed(char *p, uint32_t v)
{
	uint64_t w = sl_fmt_digits8(v) + 0x3030303030303030ULL;

	memcpy(p, &w, 8);
	return p + 8;
}

/* 0..99 without leading zero: "0".."9" then a scratch byte, "10".."99". */
extern const char sl_fmt_dec2_tab[200];

/* Decimal of v; stores whole words, so it needs SL_FMT_U64_MAX room. */
static inline __attribute__((always_inline)) char *sl_fmt_u64_inline(char *p, uint64_t v)
{
	/* small numbers (TTL, TOS, versions, groups) skip the multiply chain */
	if (v < 100) {
		memcpy(p, &sl_fmt_dec2_tab[2 * v], 2);
		return p + 1 + (v >= 10);
	}
	if (v < 100000000)
		return sl_fmt_dec8_var(p, (uint32_t)v);
	if (v < 10000000000000000ULL) {
		p = sl_fmt_dec8_var(p, (uint32_t)(v / 100000000));
	} else {
		p = sl_fmt_dec8_var(p, (uint32_t)(v / 10000000000000000ULL));
		p = sl_fmt_dec8_fixed(p, (uint32_t)(v / 100000000 % 100000000));
	}
	return sl_fmt_dec8_fixed(p, (uint32_t)(v % 100000000));
}
#define SL_FMT_U64_INLINE 1
#endif

char *sl_fmt_u64_raw(char *p, uint64_t v);
char *sl_fmt_hex_raw(char *p, uint64_t v, unsigned width, bool upper);
char *sl_fmt_ip4_raw(char *p, const uint8_t a[4]);
char *sl_fmt_ip6_raw(char *p, const uint8_t a[16]);
char *sl_fmt_ip6_full_raw(char *p, const uint8_t a[16]);
char *sl_fmt_addr_raw(char *p, const uint8_t a[16]);
char *sl_fmt_mac_raw(char *p, const uint8_t m[6]);

/*
 * Whether record r's addresses are IPv6 ones: its packet's IP version, or
 * without one its family (a conntrack entry's AF_INET6).  An IPv6 packet
 * from ::ffff:a.b.c.d stores its address exactly as an IPv4 packet from
 * a.b.c.d does (IPv4-mapped): only these fields tell them apart.
 */
static inline bool sl_fmt_rec_v6(const struct sl_record *r)
{
	if (sl_has(r, SL_F_IP_VERSION))
		return r->v[SL_F_IP_VERSION].u64 == 6;
	return sl_has(r, SL_F_FAMILY) && r->v[SL_F_FAMILY].u64 == 10;	/* NFPROTO_IPV6 */
}

/* An address of a record whose sl_fmt_rec_v6() is v6. */
static inline char *sl_fmt_addr_in_raw(char *p, const uint8_t a[16], bool v6)
{
	return v6 ? sl_fmt_ip6_raw(p, a) : sl_fmt_addr_raw(p, a);
}

/* ---- bounded appenders ---- */
void sl_fmt_u64_slow(struct sl_fmt_buf *b, uint64_t v);

/* Inline: numbers are the most frequent piece of a line. */
static inline void sl_fmt_u64(struct sl_fmt_buf *b, uint64_t v)
{
#ifdef SL_FMT_U64_INLINE
	if (!b->overflow && b->cap - b->len >= SL_FMT_U64_MAX) {
		sl_fmt_commit(b, sl_fmt_u64_inline(sl_fmt_end(b), v));
		return;
	}
#endif
	sl_fmt_u64_slow(b, v);
}
/* Signed decimal (for offsets and the like). */
void sl_fmt_i64(struct sl_fmt_buf *b, int64_t v);
void sl_fmt_hex(struct sl_fmt_buf *b, uint64_t v, unsigned width, bool upper);
void sl_fmt_ip4(struct sl_fmt_buf *b, const uint8_t a[4]);
void sl_fmt_ip6(struct sl_fmt_buf *b, const uint8_t a[16]);
void sl_fmt_ip6_full(struct sl_fmt_buf *b, const uint8_t a[16]);
void sl_fmt_addr(struct sl_fmt_buf *b, const uint8_t a[16]);
void sl_fmt_addr_in(struct sl_fmt_buf *b, const uint8_t a[16], bool v6);
void sl_fmt_mac(struct sl_fmt_buf *b, const uint8_t m[6]);
void sl_fmt_hexbytes(struct sl_fmt_buf *b, const uint8_t *p, size_t n, char sep);

/*
 * RFC 3339 timestamps with microseconds.  The "YYYY-MM-DDTHH:MM:SS" part
 * and the offset are computed once per second and cached in a struct
 * fmt_time_cache that the caller owns (one per instance: no globals).
 * UTC never calls gmtime (civil-from-days arithmetic); local time calls
 * localtime_r once per new second and writes the offset as +hh:mm
 * (-hh:mm west of UTC; a zero offset is written +00:00 in local mode).
 * Times outside the calendar (time_clamp.h) are clamped to
 * 0001-01-01T00:00:00.000000 / 9999-12-31T23:59:59.000000 (in local mode,
 * the local time is).
 * Nanoseconds are truncated to microseconds.
 */
struct sl_fmt_time_cache {
	bool local;		/* false: UTC with "Z" */
	bool valid;
	int64_t sec;		/* second the cache holds */
	char date[19];		/* YYYY-MM-DDTHH:MM:SS */
	char zone[8];		/* "Z" or "+hh:mm", copied as 8 bytes */
	uint8_t zone_len;
	int8_t clamp;		/* -1/1: time outside 0000..9999, clamped */
};

static inline void sl_fmt_time_cache_init(struct sl_fmt_time_cache *c, bool local)
{
	memset(c, 0, sizeof(*c));
	c->local = local;
}

char *sl_fmt_rfc3339_raw(char *p, struct sl_fmt_time_cache *c, struct sl_time t);
void sl_fmt_rfc3339(struct sl_fmt_buf *b, struct sl_fmt_time_cache *c, struct sl_time t);

/*
 * The BSD syslog (RFC 3164) date "Mmm dd HH:MM:SS" in local time, the day
 * space-padded ("Dec  1 05:53:27"), as rsyslog's %TIMESTAMP% and the
 * kernel-log files it writes show it.  A time outside the calendar
 * (time_clamp.h) is written as its first or last second in local time,
 * "Jan  1 00:00:00" or "Dec 31 23:59:59".  localtime_r once per new second
 * (which also follows DST changes and the zone read by tzset at start);
 * the caller owns the cache (one per instance).
 */
#define SL_FMT_DATE3164_LEN 15

struct sl_fmt_date3164_cache {
	bool valid;
	int64_t sec;
	char date[SL_FMT_DATE3164_LEN];
};

/* Writes SL_FMT_DATE3164_LEN bytes at p, returns p + SL_FMT_DATE3164_LEN. */
char *sl_fmt_date3164_raw(char *p, struct sl_fmt_date3164_cache *c, int64_t sec);
void sl_fmt_date3164(struct sl_fmt_buf *b, struct sl_fmt_date3164_cache *c, int64_t sec);

/*
 * JSON string, with the surrounding quotes.  Escapes '"' and '\\' with a
 * backslash, \b \f \n \r \t by name, other control bytes (< 0x20) and DEL
 * as \u00XX, and so are the C1 controls U+0080..U+009F (terminals obey
 * them).  Other valid UTF-8 sequences are copied as they are.  A byte that is
 * not part of a valid UTF-8 sequence (stray continuation byte, overlong
 * form, surrogate, > U+10FFFF, truncated sequence) is written as \u00XX
 * with XX = the byte: the output is always valid JSON and keeps every input
 * byte recoverable as its Latin-1 code point (chosen over U+FFFD, which
 * would lose the byte's value).  Worst case 6 output bytes per input byte.
 */
void sl_fmt_json_str(struct sl_fmt_buf *b, const void *s, size_t n);
/* Same without the quotes (for building a string in pieces). */
void sl_fmt_json_body(struct sl_fmt_buf *b, const void *s, size_t n);

#endif /* SLUICE_FMT_H */
