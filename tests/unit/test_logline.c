/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/logline_fmt.c against lines the kernel's LOG target
 * printed for the same packets (tests/data/logline-kernel.txt, recorded by
 * tests/data/gen-logline-vectors.py), each also with the rule_* fields
 * of nflog's rules: true set (the line stays the kernel's: issue 22),
 * plus hand-made edge cases.  The
 * formatter sources are compiled in so the test needs only the core
 * library the unit-test rule links.
 */
#include "../../plugins/common/fmt.c"
#include "../../plugins/common/logline_fmt.c"
#include "../../plugins/common/text_escape.c"

#include <stdio.h>
#include <stdlib.h>

#ifndef TEST_SOURCE_DIR
#define TEST_SOURCE_DIR "."
#endif

static int failures;

static union {
	struct sl_record r;
	uint8_t mem[sizeof(struct sl_record) + (SL_F_WELL_KNOWN_COUNT + 8) * sizeof(union sl_value)];
} recmem;

static uint8_t pkt[65536], hw[256];
static char bufmem[4096];

static size_t unhex(uint8_t *out, size_t cap, const char *s)
{
	size_t n = 0;

	while (s[0] && s[1] && n < cap) {
		unsigned v;

		if (sscanf(s, "%2x", &v) != 1)
			break;
		out[n++] = (uint8_t)v;
		s += 2;
	}
	return n;
}

static void set_str(struct sl_record *r, sl_field f, const char *s)
{
	if (strcmp(s, "-") != 0)
		sl_set_bytes(r, f, s, (uint32_t)strlen(s));
}

/* One vector: flags family in out hwtype hwhdr hwproto mark uid gid packet expected */
/* nflog's rule_* fields (rules: true), set as its attribution sets them. */
static void set_rule(struct sl_record *r)
{
	const sl_field base = SL_F_WELL_KNOWN_COUNT;

	set_str(r, base, "inet");
	set_str(r, base + 1, "filter");
	set_str(r, base + 2, "input");
	sl_set_u64(r, base + 3, 12);
	set_str(r, base + 4, "ssh in");
	set_str(r, base + 5, "drop");
}

static void run_vector(char *line, unsigned lineno)
{
	char *col[12];
	struct sl_record *r = &recmem.r;
	struct sl_fmt_buf b;
	unsigned i, flags;
	const char *want, *sp;
	char prefix[32];

	for (i = 0; i < 11; i++) {
		col[i] = strsep(&line, "\t");
		if (!col[i] || !line) {
			fprintf(stderr, "logline-kernel.txt:%u: bad vector\n", lineno);
			failures++;
			return;
		}
	}
	want = line;

	memset(recmem.mem, 0, sizeof(recmem.mem));
	flags = (unsigned)strtoul(col[0], NULL, 0);
	sl_set_u64(r, SL_F_FAMILY, strtoull(col[1], NULL, 0));
	if (strcmp(col[2], "-")) {
		set_str(r, SL_F_IFNAME_IN, col[2]);
		sl_set_u64(r, SL_F_IFINDEX_IN, 2);
	}
	if (strcmp(col[3], "-")) {
		set_str(r, SL_F_IFNAME_OUT, col[3]);
		sl_set_u64(r, SL_F_IFINDEX_OUT, 2);
	}
	if (strcmp(col[4], "-"))
		sl_set_u64(r, SL_F_HWTYPE, strtoull(col[4], NULL, 0));
	if (strcmp(col[5], "-"))
		sl_set_bytes(r, SL_F_HWHDR, hw, (uint32_t)unhex(hw, sizeof(hw), col[5]));
	if (strcmp(col[6], "-"))
		sl_set_u64(r, SL_F_HW_PROTOCOL, strtoull(col[6], NULL, 0));
	if (strcmp(col[7], "-"))
		sl_set_u64(r, SL_F_MARK, strtoull(col[7], NULL, 0));
	if (strcmp(col[8], "-"))
		sl_set_u64(r, SL_F_UID, strtoull(col[8], NULL, 0));
	if (strcmp(col[9], "-"))
		sl_set_u64(r, SL_F_GID, strtoull(col[9], NULL, 0));
	sl_set_bytes(r, SL_F_PACKET, pkt, (uint32_t)unhex(pkt, sizeof(pkt), col[10]));
	/* the prefix is the kernel line up to "IN=" */
	sp = strstr(want, "IN=");
	if (!sp || (size_t)(sp - want) >= sizeof(prefix)) {
		fprintf(stderr, "logline-kernel.txt:%u: no IN=\n", lineno);
		failures++;
		return;
	}
	memcpy(prefix, want, (size_t)(sp - want));
	prefix[sp - want] = 0;
	sl_set_bytes(r, SL_F_PREFIX, prefix, (uint32_t)strlen(prefix));

	for (i = 0; i < 2; i++) {
		if (i)	/* attributed to its rule (ids after the well-known fields, as registered) */
			set_rule(r);
		sl_fmt_init(&b, bufmem, sizeof(bufmem));
		if (!sl_logline_format(&b, r, flags) || b.overflow || b.len != strlen(want) ||
		    memcmp(b.p, want, b.len) != 0) {
			fprintf(stderr, "logline-kernel.txt:%u%s:\n  want '%s'\n  got  '%.*s'\n", lineno,
				i ? " (with a rule)" : "", want, (int)b.len, b.p);
			failures++;
		}
	}
}

static unsigned run_vectors(void)
{
	char path[4096];
	static char line[200000];
	FILE *f;
	unsigned lineno = 0, n = 0;

	snprintf(path, sizeof(path), "%s/tests/data/logline-kernel.txt", TEST_SOURCE_DIR);
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		exit(1);
	}
	while (fgets(line, sizeof(line), f)) {
		size_t l = strlen(line);

		lineno++;
		if (l && line[l - 1] == '\n')
			line[--l] = 0;
		if (!l || line[0] == '#')
			continue;
		run_vector(line, lineno);
		n++;
	}
	fclose(f);
	return n;
}

static void expect_line(const struct sl_record *r, unsigned flags, const char *want, const char *what)
{
	struct sl_fmt_buf b;

	sl_fmt_init(&b, bufmem, sizeof(bufmem));
	sl_logline_format(&b, r, flags);
	if (b.overflow || b.len != strlen(want) || memcmp(b.p, want, b.len) != 0) {
		fprintf(stderr, "%s:\n  want '%s'\n  got  '%.*s'\n", what, want, (int)b.len, b.p);
		failures++;
	}
}

/* Cases the live kernel run cannot produce (bridges, cut captures, odd input). */
static void edge_cases(void)
{
	struct sl_record *r = &recmem.r;
	static const uint8_t udp4[] = {0x45, 0, 0, 33, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1,
				       10, 0, 0, 2, 0x04, 0xd2, 0x00, 0x35, 0, 13, 0, 0, 'h', 'e', 'l', 'l', 'o'};
	static const char *base =
		"SRC=10.0.0.1 DST=10.0.0.2 LEN=33 TOS=0x00 PREC=0x00 TTL=64 ID=4660 DF PROTO=UDP SPT=1234 DPT=53 LEN=13 ";
	char want[2048], longprefix[1200];
	struct sl_fmt_buf b;

	/* bridged IPv4 (br_netfilter): PHYSIN/PHYSOUT after IN/OUT */
	memset(recmem.mem, 0, sizeof(recmem.mem));
	sl_set_u64(r, SL_F_FAMILY, 2);
	sl_set_bytes(r, SL_F_PACKET, udp4, sizeof(udp4));
	sl_set_bytes(r, SL_F_IFNAME_IN, "br0", 3);
	sl_set_u64(r, SL_F_IFINDEX_IN, 5);
	sl_set_bytes(r, SL_F_PHYSNAME_IN, "eth1", 4);
	sl_set_u64(r, SL_F_PHYSINDEX_IN, 3);
	sl_set_bytes(r, SL_F_IFNAME_OUT, "br0", 3);
	sl_set_u64(r, SL_F_IFINDEX_OUT, 5);
	sl_set_bytes(r, SL_F_PHYSNAME_OUT, "eth2", 4);
	sl_set_u64(r, SL_F_PHYSINDEX_OUT, 4);
	snprintf(want, sizeof(want), "IN=br0 OUT=br0 PHYSIN=eth1 PHYSOUT=eth2 MAC= %s", base);
	expect_line(r, 0, want, "bridged ipv4");

	/* bridge family: nflog's INDEV is the bridge, the kernel shows the port */
	sl_set_u64(r, SL_F_FAMILY, 7);
	sl_set_u64(r, SL_F_HW_PROTOCOL, 0x0800);
	snprintf(want, sizeof(want), "IN=eth1 OUT=eth2 MAC= %s", base);
	expect_line(r, 0, want, "bridge family");

	/* prefix with a NUL: %s stops there; no family: guessed from the packet */
	memset(recmem.mem, 0, sizeof(recmem.mem));
	sl_set_bytes(r, SL_F_PACKET, udp4, sizeof(udp4));
	sl_set_bytes(r, SL_F_PREFIX, "ab\0cd", 5);
	sl_set_u64(r, SL_F_MARK, 0x100000001ULL);	/* skb->mark is 32 bits */
	snprintf(want, sizeof(want), "abIN= OUT= %sMARK=0x1 ", base);
	expect_line(r, 0, want, "nul prefix");
	snprintf(want, sizeof(want), "abIN= OUT= %s", base);
	expect_line(r, SL_LOGLINE_NOMARK, want, "nomark");

	/* capture cut short: INCOMPLETE counts the original length */
	memset(recmem.mem, 0, sizeof(recmem.mem));
	sl_set_bytes(r, SL_F_PACKET, udp4, 22);
	sl_set_u64(r, SL_F_ORIG_LEN, 33);
	expect_line(r, 0,
		    "IN= OUT= SRC=10.0.0.1 DST=10.0.0.2 LEN=33 TOS=0x00 PREC=0x00 TTL=64 ID=4660 DF PROTO=UDP "
		    "INCOMPLETE [13 bytes] ",
		    "cut capture");

	/* no packet: nothing written */
	memset(recmem.mem, 0, sizeof(recmem.mem));
	sl_fmt_init(&b, bufmem, sizeof(bufmem));
	if (sl_logline_format(&b, r, 0) || b.len) {
		fprintf(stderr, "no packet: wrote something\n");
		failures++;
	}

	/* the kernel cuts lines at 1016 bytes */
	memset(recmem.mem, 0, sizeof(recmem.mem));
	sl_set_bytes(r, SL_F_PACKET, udp4, sizeof(udp4));
	memset(longprefix, 'p', sizeof(longprefix));
	sl_set_bytes(r, SL_F_PREFIX, longprefix, 1000);
	snprintf(want, sizeof(want), "%.1000sIN= OUT= %s", longprefix, base);
	want[SL_LOGLINE_MAX] = 0;
	expect_line(r, 0, want, "cut at 1016");
	sl_set_bytes(r, SL_F_PREFIX, longprefix, sizeof(longprefix));
	snprintf(want, sizeof(want), "%.1016s", longprefix);
	expect_line(r, 0, want, "huge prefix");

	/*
	 * Hostile text: one line whatever the prefix holds, escaped as
	 * /dev/kmsg shows it (\xNN for controls, DEL, '\\', invalid UTF-8),
	 * valid UTF-8 kept; interface names the same way.
	 */
	memset(recmem.mem, 0, sizeof(recmem.mem));
	sl_set_bytes(r, SL_F_PACKET, udp4, sizeof(udp4));
	sl_set_bytes(r, SL_F_PREFIX, "a\\b\tc\nFAKE LINE \x1b[31m\xc3\xa9\xff\x7f ", 28);
	sl_set_bytes(r, SL_F_IFNAME_IN, "e\x1b]0;x\x07", 7);
	sl_set_u64(r, SL_F_IFINDEX_IN, 2);
	snprintf(want, sizeof(want),
		 "a\\x5cb\\x09c\\x0aFAKE LINE \\x1b[31m\xc3\xa9\\xff\\x7f IN=e\\x1b]0;x\\x07 OUT= MAC= %s", base);
	expect_line(r, 0, want, "hostile prefix and ifname");

	/* a long escaped prefix is cut at 1016 bytes, never inside \xNN */
	memset(recmem.mem, 0, sizeof(recmem.mem));
	sl_set_bytes(r, SL_F_PACKET, udp4, sizeof(udp4));
	memset(longprefix, '\n', sizeof(longprefix));
	longprefix[0] = 'p';
	longprefix[1] = 'p';
	sl_set_bytes(r, SL_F_PREFIX, longprefix, 300);	/* 2 + 298 * 4 bytes escaped */
	want[0] = 0;
	strcat(want, "pp");
	while (strlen(want) + 4 <= SL_LOGLINE_MAX)
		strcat(want, "\\x0a");
	expect_line(r, 0, want, "escaped prefix cut");

	/* too small a buffer: overflow, nothing half-written counted */
	sl_set_bytes(r, SL_F_PREFIX, "x", 1);
	sl_fmt_init(&b, bufmem, 50);
	sl_logline_format(&b, r, 0);
	if (!b.overflow || b.len != 0) {
		fprintf(stderr, "small buffer: overflow %d len %zu\n", b.overflow, b.len);
		failures++;
	}

	/* garbage packets never read out of bounds (run under ASan in CI) */
	{
		uint64_t s = 42;
		unsigned i, j;
		static uint8_t junk[128];

		for (i = 0; i < 200000; i++) {
			size_t n;

			for (j = 0; j < sizeof(junk); j++) {
				s = s * 6364136223846793005ULL + 1442695040888963407ULL;
				junk[j] = (uint8_t)(s >> 56);
			}
			/* plausible headers more often than not */
			junk[0] = (i & 1) ? 0x45 + (junk[0] & 3) : 0x60;
			junk[9] = (uint8_t[]){1, 6, 17, 50, 51, 136, 58, 0}[i % 8];
			junk[6] = (uint8_t[]){0, 6, 17, 44, 60, 43, 51, 50, 58}[i % 9];
			n = (size_t)(s % sizeof(junk));
			memset(recmem.mem, 0, sizeof(recmem.mem));
			sl_set_bytes(r, SL_F_PACKET, junk, (uint32_t)n);
			sl_set_u64(r, SL_F_FAMILY, (uint64_t[]){2, 10, 3, 5, 7, 0}[i % 6]);
			sl_set_u64(r, SL_F_HW_PROTOCOL, (uint64_t[]){0x800, 0x86dd, 0x806, 0x1234}[i % 4]);
			if (i & 2)
				sl_set_u64(r, SL_F_ORIG_LEN, n + (s & 0xff));
			sl_fmt_init(&b, bufmem, sizeof(bufmem));
			sl_logline_format(&b, r, 0x2f);
			if (b.overflow || b.len > SL_LOGLINE_MAX) {
				fprintf(stderr, "junk %u: overflow %d len %zu\n", i, b.overflow, b.len);
				failures++;
				break;
			}
		}
	}
}

int main(void)
{
	unsigned n = run_vectors();

	edge_cases();
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("test_logline: %u kernel lines matched\n", n);
	return 0;
}
