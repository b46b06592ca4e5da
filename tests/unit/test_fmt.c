/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/fmt.c against libc (snprintf, inet_ntop, gmtime_r,
 * localtime_r) for many values, plus the JSON escaper against a slow
 * reference.  The formatter source is compiled in here so this test needs
 * only the core library the unit-test rule links.
 */
#include "../../plugins/common/fmt.c"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so a failure is reproducible */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/* A value with a random number of significant bits. */
static uint64_t rnd_width(void)
{
	unsigned bits = (unsigned)(rnd() % 65);

	return bits == 64 ? rnd() : rnd() & ((1ULL << bits) - 1);
}

static char out[4096];

static struct sl_fmt_buf *fresh(void)
{
	static struct sl_fmt_buf fb;

	sl_fmt_init(&fb, out, sizeof(out));
	return &fb;
}

static void expect(struct sl_fmt_buf *fb, const char *want, const char *what)
{
	CHECK(!fb->overflow, "%s: overflow", what);
	CHECK(fb->len == strlen(want) && memcmp(fb->p, want, fb->len) == 0,
	      "%s: got '%.*s' want '%s'", what, (int)fb->len, fb->p, want);
}

static void test_u64(void)
{
	static const uint64_t fixed[] = {0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999,
					 4294967295ULL, 4294967296ULL, 9999999999999999999ULL,
					 10000000000000000000ULL, UINT64_MAX};
	char want[32];
	unsigned i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]) + 200000; i++) {
		uint64_t v = i < sizeof(fixed) / sizeof(fixed[0]) ? fixed[i] : rnd_width();
		struct sl_fmt_buf *fb = fresh();

		sl_fmt_u64(fb, v);
		snprintf(want, sizeof(want), "%" PRIu64, v);
		expect(fb, want, "u64");
	}
	/* both sides of every power of ten: where the digit count changes */
	for (i = 0; i < 40; i++) {
		uint64_t p10 = 1, v;
		unsigned k;

		for (k = 0; k < i / 2; k++)
			p10 *= 10;
		v = i & 1 ? p10 : p10 - 1;
		if (i / 2 > 19)
			break;
		struct sl_fmt_buf *fb = fresh();

		sl_fmt_u64(fb, v);
		snprintf(want, sizeof(want), "%" PRIu64, v);
		expect(fb, want, "u64 power of ten");
	}
	for (i = 0; i < 1000; i++) {
		int64_t v = (int64_t)rnd_width();
		struct sl_fmt_buf *fb = fresh();

		if (i == 0)
			v = INT64_MIN;
		sl_fmt_i64(fb, v);
		snprintf(want, sizeof(want), "%" PRId64, v);
		expect(fb, want, "i64");
	}
}

static void test_hex(void)
{
	char want[64];
	unsigned i;

	for (i = 0; i < 200000; i++) {
		uint64_t v = rnd_width();
		unsigned w = (unsigned)(rnd() % 22);
		bool up = rnd() & 1;
		struct sl_fmt_buf *fb = fresh();

		sl_fmt_hex(fb, v, w, up);
		snprintf(want, sizeof(want), up ? "%0*" PRIX64 : "%0*" PRIx64, (int)w, v);
		expect(fb, want, "hex");
	}
}

static void test_ip(void)
{
	char want[INET6_ADDRSTRLEN];
	uint8_t a[16];
	unsigned i, j;

	for (i = 0; i < 200000; i++) {
		struct sl_fmt_buf *fb = fresh();
		uint32_t x = (uint32_t)rnd();

		/* bias towards short octets too */
		if (i & 1)
			x &= 0x3f1f0f07u << (i % 3);
		memcpy(a, &x, 4);
		sl_fmt_ip4(fb, a);
		inet_ntop(AF_INET, a, want, sizeof(want));
		expect(fb, want, "ip4");
	}
	for (i = 0; i < 300000; i++) {
		struct sl_fmt_buf *fb = fresh();
		unsigned kind = (unsigned)(rnd() % 8);

		for (j = 0; j < 16; j += 2) {
			uint64_t r = rnd();
			/* groups are zero half the time, to exercise run selection */
			unsigned g = (r & 1) ? 0 : (unsigned)(r >> 8) & ((r & 2) ? 0xf : 0xffff);

			a[j] = (uint8_t)(g >> 8);
			a[j + 1] = (uint8_t)g;
		}
		if (kind == 0) {		/* ::ffff:a.b.c.d */
			memset(a, 0, 10);
			a[10] = a[11] = 0xff;
		} else if (kind == 1) {		/* ::a.b.c.d and ::1-like */
			memset(a, 0, 12);
			if (rnd() & 1)
				a[12] = a[13] = 0;
		} else if (kind == 2) {
			memset(a, 0, 16);
			if (rnd() & 1)
				a[rnd() % 16] = (uint8_t)rnd();
		}
		sl_fmt_ip6(fb, a);
		inet_ntop(AF_INET6, a, want, sizeof(want));
		expect(fb, want, "ip6");

		fb = fresh();
		sl_fmt_ip6_full(fb, a);
		snprintf(want, sizeof(want), "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
			 a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
			 a[14], a[15]);
		expect(fb, want, "ip6_full");

		fb = fresh();
		sl_fmt_addr(fb, a);
		if (kind == 0)
			inet_ntop(AF_INET, a + 12, want, sizeof(want));
		else
			inet_ntop(AF_INET6, a, want, sizeof(want));
		expect(fb, want, "addr");
	}
	/* RFC 5952 examples */
	{
		static const struct { const char *in, *out; } ex[] = {
			{"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},
			{"2001:0db8:0:0:0:0:2:1", "2001:db8::2:1"},
			{"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"},
			{"0:0:0:0:0:0:0:0", "::"},
			{"0:0:0:0:0:0:0:1", "::1"},
			{"fe80:0:0:1:0:0:0:0", "fe80:0:0:1::"},
			{"fe80:0:0:0:1:0:0:0", "fe80::1:0:0:0"},
		};
		for (i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
			struct sl_fmt_buf *fb = fresh();

			inet_pton(AF_INET6, ex[i].in, a);
			sl_fmt_ip6(fb, a);
			expect(fb, ex[i].out, "ip6 rfc5952");
		}
	}
}

static void test_mac(void)
{
	char want[64];
	uint8_t m[8];
	unsigned i;

	for (i = 0; i < 10000; i++) {
		struct sl_fmt_buf *fb = fresh();
		uint64_t r = rnd();

		memcpy(m, &r, 8);
		sl_fmt_mac(fb, m);
		snprintf(want, sizeof(want), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4],
			 m[5]);
		expect(fb, want, "mac");

		fb = fresh();
		sl_fmt_hexbytes(fb, m, 3, '-');
		snprintf(want, sizeof(want), "%02x-%02x-%02x", m[0], m[1], m[2]);
		expect(fb, want, "hexbytes sep");
		fb = fresh();
		sl_fmt_hexbytes(fb, m, 2, 0);
		snprintf(want, sizeof(want), "%02x%02x", m[0], m[1]);
		expect(fb, want, "hexbytes");
	}
}

static void ref_time(char *want, size_t n, int64_t sec, uint32_t nsec, bool local)
{
	time_t t = (time_t)sec;
	struct tm tm;
	char date[64];
	size_t l;

	if (local)
		localtime_r(&t, &tm);
	else
		gmtime_r(&t, &tm);
	/* strftime's %Y does not pad years below 1000 */
	snprintf(date, sizeof(date), "%04d", tm.tm_year + 1900);
	strftime(date + 4, sizeof(date) - 4, "-%m-%dT%H:%M:%S", &tm);
	l = (size_t)snprintf(want, n, "%s.%06u", date, nsec / 1000);
	if (!local) {
		snprintf(want + l, n - l, "Z");
	} else {
		long off = tm.tm_gmtoff;
		char sign = off < 0 ? '-' : '+';

		if (off < 0)
			off = -off;
		snprintf(want + l, n - l, "%c%02ld:%02ld", sign, off / 3600, off / 60 % 60);
	}
}

static void test_time_zone(bool local)
{
	struct sl_fmt_time_cache c;
	char want[80];
	unsigned i;
	int64_t sec = 0;

	sl_fmt_time_cache_init(&c, local);
	for (i = 0; i < 300000; i++) {
		struct sl_fmt_buf *fb = fresh();
		uint32_t nsec = (uint32_t)(rnd() % 1000000000u);

		/* mostly random over 0000..9999, some runs of nearby seconds */
		if (i % 4 == 0)
			sec = (int64_t)(rnd() % (uint64_t)(SECS_MAX - SECS_MIN - 200000)) + SECS_MIN + 100000;
		else
			sec += (int64_t)(rnd() % 3);
		if (i < 4)
			sec = (int64_t[]){0, 951782400 /* 2000-02-29 */, 4107542400LL /* 2100-02-28 */, -1}[i];
		sl_fmt_rfc3339(fb, &c, (struct sl_time){sec, nsec});
		ref_time(want, sizeof(want), sec, nsec, local);
		expect(fb, want, local ? "rfc3339 local" : "rfc3339 utc");
	}
}

static void test_time(void)
{
	struct sl_fmt_time_cache c;
	static const char *zones[] = {"UTC", "Asia/Kolkata", "America/St_Johns", "Europe/Berlin",
				      "Pacific/Chatham", "America/Los_Angeles"};
	unsigned z;

	setenv("TZ", "UTC", 1);
	tzset();
	test_time_zone(false);
	for (z = 0; z < sizeof(zones) / sizeof(zones[0]); z++) {
		setenv("TZ", zones[z], 1);
		tzset();
		test_time_zone(true);
	}
	/* UTC mode ignores TZ */
	test_time_zone(false);

	sl_fmt_time_cache_init(&c, false);
	{
		struct sl_fmt_buf *fb = fresh();

		sl_fmt_rfc3339(fb, &c, (struct sl_time){SECS_MAX + 10, 5000});
		expect(fb, "9999-12-31T23:59:59.000000Z", "clamp high");
		fb = fresh();
		sl_fmt_rfc3339(fb, &c, (struct sl_time){SECS_MIN - 1, 5000});
		expect(fb, "0001-01-01T00:00:00.000000Z", "clamp low");
		fb = fresh();
		sl_fmt_rfc3339(fb, &c, (struct sl_time){SECS_MIN, 999999999});
		expect(fb, "0001-01-01T00:00:00.999999Z", "min");
		fb = fresh();
		sl_fmt_rfc3339(fb, &c, (struct sl_time){INT64_MAX, 0});
		expect(fb, "9999-12-31T23:59:59.000000Z", "2^63-1");
		fb = fresh();
		sl_fmt_rfc3339(fb, &c, (struct sl_time){SECS_MAX, 999999999});
		expect(fb, "9999-12-31T23:59:59.999999Z", "max");
		fb = fresh();
		sl_fmt_rfc3339(fb, &c, (struct sl_time){INT64_MIN, 0});
		expect(fb, "0001-01-01T00:00:00.000000Z", "-2^63");
		fb = fresh();
		sl_fmt_rfc3339(fb, &c, (struct sl_time){1714566896, 123456789});
		expect(fb, "2024-05-01T12:34:56.123456Z", "example");
	}
}

/* RFC 3164 dates against strftime's "%b %e %H:%M:%S" (C locale), across DST changes. */
static void test_date3164(void)
{
	static const char *zones[] = {"UTC", "Europe/Berlin", "America/St_Johns", "Australia/Lord_Howe"};
	struct sl_fmt_date3164_cache c;
	char want[64];
	unsigned z, i;

	for (z = 0; z < sizeof(zones) / sizeof(zones[0]); z++) {
		int64_t sec = 0;

		setenv("TZ", zones[z], 1);
		tzset();
		memset(&c, 0, sizeof(c));
		for (i = 0; i < 200000; i++) {
			struct sl_fmt_buf *fb = fresh();
			time_t t;
			struct tm tm;

			/* 1970..2100, some runs of nearby seconds (cache hits) */
			if (i % 4 == 0)
				sec = (int64_t)(rnd() % 4102444800ULL);
			else
				sec += (int64_t)(rnd() % 3);
			if (i < 3)	/* Berlin: before and after the spring-forward hour of 2026 */
				sec = (int64_t[]){1774745999, 1774746000, 1796104407}[i];
			t = (time_t)sec;
			localtime_r(&t, &tm);
			strftime(want, sizeof(want), "%b %e %H:%M:%S", &tm);
			sl_fmt_date3164(fb, &c, sec);
			expect(fb, want, "rfc3164 date");
		}
	}
	setenv("TZ", "Europe/Berlin", 1);
	tzset();
	{
		struct sl_fmt_buf *fb = fresh();

		sl_fmt_date3164(fb, &c, 1796104407);	/* 2026-12-01T05:53:27Z */
		expect(fb, "Dec  1 06:53:27", "rfc3164 example");
	}
	/* outside the calendar: its last or first second, in every zone */
	for (z = 0; z < sizeof(zones) / sizeof(zones[0]); z++) {
		static const struct {
			int64_t sec;
			const char *want;
		} edge[] = {
			{INT64_MAX, "Dec 31 23:59:59"},	   {253402300800LL, "Dec 31 23:59:59"},
			{253402300799LL + 86400, "Dec 31 23:59:59"}, {INT64_MIN, "Jan  1 00:00:00"},
			{SECS_MIN - 1, "Jan  1 00:00:00"},
		};

		setenv("TZ", zones[z], 1);
		tzset();
		memset(&c, 0, sizeof(c));
		for (i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
			struct sl_fmt_buf *fb = fresh();

			sl_fmt_date3164(fb, &c, edge[i].sec);
			expect(fb, edge[i].want, zones[z]);
		}
	}
}

/* Slow reference: decode code points one by one. */
static size_t ref_json(char *o, const uint8_t *s, size_t n)
{
	size_t i = 0, k = 0;

	o[k++] = '"';
	while (i < n) {
		uint8_t c = s[i];
		uint32_t cp;
		size_t len, j;

		if (c == '"' || c == '\\') {
			o[k++] = '\\';
			o[k++] = (char)c;
			i++;
			continue;
		}
		if (c == '\n' || c == '\t' || c == '\r' || c == '\b' || c == '\f') {
			o[k++] = '\\';
			o[k++] = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : c == '\b' ? 'b' : 'f';
			i++;
			continue;
		}
		if (c >= 0x20 && c < 0x7f) {
			o[k++] = (char)c;
			i++;
			continue;
		}
		len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
		if (len && i + len <= n) {
			cp = c & (0xff >> (len + 1));
			for (j = 1; j < len; j++) {
				if ((s[i + j] & 0xc0) != 0x80)
					break;
				cp = cp << 6 | (s[i + j] & 0x3f);
			}
			if (j == len && cp >= (len == 2 ? 0x80u : len == 3 ? 0x800u : 0x10000u) &&
			    cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff)) {
				if (cp <= 0x9f) {	/* C1 control */
					k += (size_t)sprintf(o + k, "\\u%04x", cp);
					i += len;
					continue;
				}
				memcpy(o + k, s + i, len);
				k += len;
				i += len;
				continue;
			}
		}
		k += (size_t)sprintf(o + k, "\\u%04x", c);
		i++;
	}
	o[k++] = '"';
	return k;
}

static void test_json(void)
{
	static const uint8_t alpha[] = {'a', 'Z', ' ', '"', '\\', '\n', '\t', 0, 1, 0x1f, 0x7f, 0x80, 0xbf,
					0xc0, 0xc1, 0xc2, 0xc3, 0xa9, 0xdf, 0xe0, 0xa0, 0xed, 0x9f, 0xa0, 0xef,
					0xf0, 0x90, 0xf4, 0x8f, 0x90, 0xf5, 0xff, 0xe2, 0x82, 0xac};
	uint8_t in[64];
	char want[64 * 6 + 3];
	unsigned i, j;

	for (i = 0; i < 300000; i++) {
		size_t n = (size_t)(rnd() % 24), wl;
		struct sl_fmt_buf *fb = fresh();

		for (j = 0; j < n; j++)
			in[j] = (rnd() & 3) ? alpha[rnd() % sizeof(alpha)] : (uint8_t)rnd();
		sl_fmt_json_str(fb, in, n);
		wl = ref_json(want, in, n);
		want[wl] = 0;
		CHECK(!fb->overflow && fb->len == wl && memcmp(fb->p, want, wl) == 0,
		      "json: got '%.*s' want '%s'", (int)fb->len, fb->p, want);
	}
	{
		struct sl_fmt_buf *fb = fresh();

		sl_fmt_json_str(fb, "a\"b\\c\x01\xc3\xa9\xff", 9);
		expect(fb, "\"a\\\"b\\\\c\\u0001\xc3\xa9\\u00ff\"", "json fixed");
	}
}

/* Appends near the end of the buffer: exact fit works, one byte short fails cleanly. */
static void test_bounds(void)
{
	char mem[64];
	struct sl_fmt_buf fb;
	static const uint8_t v6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	size_t cap;

	for (cap = 0; cap < 12; cap++) {
		sl_fmt_init(&fb, mem, cap);
		sl_fmt_ip6(&fb, v6);	/* 2001:db8::1 = 11 bytes */
		CHECK(fb.overflow == (cap < 11), "ip6 cap %zu overflow %d", cap, fb.overflow);
		CHECK(fb.overflow ? fb.len == 0 : fb.len == 11, "ip6 cap %zu len %zu", cap, fb.len);
	}
	for (cap = 0; cap < 8; cap++) {
		sl_fmt_init(&fb, mem, cap);
		sl_fmt_lit(&fb, "ab");
		sl_fmt_u64(&fb, 12345);
		CHECK(fb.overflow == (cap < 7), "u64 cap %zu", cap);
		if (fb.overflow) {
			sl_fmt_lit(&fb, "x");	/* ignored after overflow */
			CHECK(fb.len <= 2, "len after overflow");
		}
	}
	for (cap = 0; cap < 12; cap++) {
		sl_fmt_init(&fb, mem, cap);
		sl_fmt_json_str(&fb, "a\x01", 2);	/* "a\u0001" = 9 bytes */
		CHECK(fb.overflow == (cap < 9), "json cap %zu", cap);
	}
	sl_fmt_init(&fb, NULL, 100);
	sl_fmt_lit(&fb, "x");
	CHECK(fb.overflow && fb.len == 0, "NULL buffer");
	sl_fmt_init(&fb, mem, 40);
	sl_fmt_hex(&fb, 0xab, 20, false);
	CHECK(!fb.overflow && fb.len == 20 && memcmp(mem, "000000000000000000ab", 20) == 0, "hex wide");
}

/*
 * Raw writers may store whole words past the end they return, but never
 * past SL_FMT_*_MAX bytes from where they start: a canary after that room
 * stays untouched, for values of every length.
 */
static void test_raw_room(void)
{
	char mem[128];
	uint8_t a[16];
	unsigned i, j;

#define ROOM_CHECK(max, call)                                                        \
	do {                                                                         \
		char *at_ = mem + 8, *end_;                                          \
		memset(mem, 0x5a, sizeof(mem));                                      \
		end_ = (call);                                                       \
		CHECK(end_ - at_ <= (max), "%s: %td bytes", #call, end_ - at_);      \
		for (j = (unsigned)(8 + (max)); j < sizeof(mem); j++)                \
			CHECK(mem[j] == 0x5a, "%s: byte %u past its room written", #call, \
			      j - 8 - (unsigned)(max));                               \
	} while (0)

	for (i = 0; i < 100000; i++) {
		uint64_t v = rnd_width();
		uint32_t x = (uint32_t)rnd();

		for (j = 0; j < 16; j++)
			a[j] = (uint8_t)rnd();
		if (i & 1)
			x &= 0x0f0f0f0fu;
		memcpy(a + 12, &x, 4);
		ROOM_CHECK(SL_FMT_U64_MAX, sl_fmt_u64_raw(at_, v));
		ROOM_CHECK(SL_FMT_IP4_MAX, sl_fmt_ip4_raw(at_, a + 12));
		ROOM_CHECK(SL_FMT_MAC_MAX, sl_fmt_mac_raw(at_, a));
		ROOM_CHECK(SL_FMT_IP6_MAX, sl_fmt_ip6_raw(at_, a));
		memset(a, 0, 10);
		a[10] = a[11] = 0xff;
		ROOM_CHECK(SL_FMT_ADDR_MAX, sl_fmt_addr_raw(at_, a));
		ROOM_CHECK(SL_FMT_IP6_MAX, sl_fmt_ip6_raw(at_, a));
		{
			struct sl_fmt_time_cache c;

			sl_fmt_time_cache_init(&c, i & 1);
			ROOM_CHECK(SL_FMT_RFC3339_MAX,
				   sl_fmt_rfc3339_raw(at_, &c, ((struct sl_time){(int64_t)(v >> 30), (uint32_t)x % 1000000000})));
		}
	}
#undef ROOM_CHECK
}

/* Appenders that go through scratch near the end: exact fit works. */
static void test_exact_fit(void)
{
	static const uint8_t ip[4] = {192, 168, 100, 200}, mac[6] = {0xde, 0xad, 0xbe, 0xef, 0, 1};
	char mem[64];
	struct sl_fmt_buf fb;
	size_t cap;

	for (cap = 0; cap < 20; cap++) {
		sl_fmt_init(&fb, mem, cap);
		sl_fmt_ip4(&fb, ip);	/* 15 bytes */
		CHECK(fb.overflow == (cap < 15), "ip4 cap %zu", cap);
		CHECK(fb.overflow || (fb.len == 15 && memcmp(mem, "192.168.100.200", 15) == 0), "ip4 %zu", cap);
		sl_fmt_init(&fb, mem, cap);
		sl_fmt_mac(&fb, mac);	/* 17 bytes */
		CHECK(fb.overflow == (cap < 17), "mac cap %zu", cap);
		CHECK(fb.overflow || (fb.len == 17 && memcmp(mem, "de:ad:be:ef:00:01", 17) == 0), "mac %zu", cap);
		sl_fmt_init(&fb, mem, cap);
		sl_fmt_u64(&fb, 1234567890123ULL);	/* 13 bytes */
		CHECK(fb.overflow == (cap < 13), "u64 cap %zu", cap);
		CHECK(fb.overflow || (fb.len == 13 && memcmp(mem, "1234567890123", 13) == 0), "u64 %zu", cap);
	}
}

int main(void)
{
	test_u64();
	test_hex();
	test_ip();
	test_mac();
	test_time();
	test_date3164();
	test_json();
	test_bounds();
	test_raw_room();
	test_exact_fit();
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("test_fmt: ok\n");
	return 0;
}
