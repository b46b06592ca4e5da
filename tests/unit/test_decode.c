/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the packet decoder (plugins/common/pkt_decode.c) with
 * hand-built packets.  Every packet is also decoded cut at every length,
 * from a heap buffer of exactly that size, so valgrind or ASan catch any
 * read past the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/record.h>

#include "pkt_decode.h"
#include "check.h"

#define NONE 0xdeadbeefdeadbeefull
#define U64(f) (sl_has(r, (f)) ? r->v[(f)].u64 : NONE)
#define FLAGS() (sl_has(r, SL_F_DECODE_FLAGS) ? r->v[SL_F_DECODE_FLAGS].u64 : 0)

static union {
	struct sl_record r;
	uint8_t raw[sizeof(struct sl_record) + SL_MAX_FIELDS * sizeof(union sl_value)];
} recbuf;

static struct sl_record *r = &recbuf.r;

/* A fresh record: packet plus the optional metadata an input may add. */
struct meta {
	int family;		/* 0: absent */
	int hwtype;		/* -1: absent */
	const uint8_t *hw;
	uint32_t hwlen;
	int hw_protocol;	/* -1: absent */
};

static const struct meta RAW = { 0, -1, NULL, 0, -1 };
static const struct meta FAM4 = { 2, -1, NULL, 0, 0x0800 };
static const struct meta FAM6 = { 10, -1, NULL, 0, 0x86dd };

static uint32_t decode(const uint8_t *pkt, uint32_t len, const struct meta *m, bool csum)
{
	struct sl_pkt_decode_opts o = { .checksums = csum };

	memset(&recbuf, 0, sizeof(recbuf));
	sl_set_bytes(r, SL_F_PACKET, pkt, len);
	if (m->family)
		sl_set_u64(r, SL_F_FAMILY, (uint64_t)m->family);
	if (m->hwtype >= 0)
		sl_set_u64(r, SL_F_HWTYPE, (uint64_t)m->hwtype);
	if (m->hw)
		sl_set_bytes(r, SL_F_HWHDR, m->hw, m->hwlen);
	if (m->hw_protocol >= 0)
		sl_set_u64(r, SL_F_HW_PROTOCOL, (uint64_t)m->hw_protocol);
	return sl_pkt_decode(r, &o);
}

/* ---- reference checksum, the slow obvious way ---- */

static uint32_t ref_sum(uint32_t s, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t ref_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static int csum_off(int proto)
{
	switch (proto) {
	case 6: return 16;
	case 17: case 136: return 6;
	case 1: case 58: return 2;
	}
	return -1;
}

/* Fill in the IPv4 header checksum and the layer-4 checksum. */
static void fix4(uint8_t *pkt)
{
	uint32_t ihl = (pkt[0] & 15u) * 4, tot = (uint32_t)pkt[2] << 8 | pkt[3], n = tot - ihl;
	int proto = pkt[9], off = csum_off(proto);
	uint8_t *l4 = pkt + ihl;
	uint32_t s;

	put16(pkt + 10, 0);
	put16(pkt + 10, ref_fold(ref_sum(0, pkt, ihl)));
	if (off < 0 || tot < ihl)	/* tot 0: GSO, no L4 checksum */
		return;
	put16(l4 + off, 0);
	s = ref_sum(0, l4, n);
	if (proto != 1)
		s += ref_sum(0, pkt + 12, 8) + (uint32_t)proto + n;
	put16(l4 + off, ref_fold(s));
}

static void fix6(uint8_t *pkt, uint32_t l4off, int proto)
{
	uint32_t n = ((uint32_t)pkt[4] << 8 | pkt[5]) + 40 - l4off;
	uint8_t *l4 = pkt + l4off;
	int off = csum_off(proto);
	uint32_t s;

	put16(l4 + off, 0);
	s = ref_sum(0, l4, n) + ref_sum(0, pkt + 8, 32) + (uint32_t)proto + n;
	put16(l4 + off, ref_fold(s));
}

/* ---- packet builders ---- */

static const uint8_t SRC4[4] = { 192, 0, 2, 1 }, DST4[4] = { 198, 51, 100, 2 };
static const uint8_t SRC6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t DST6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };

static uint32_t ip4(uint8_t *b, int proto, const uint8_t *opt, uint32_t optlen, const uint8_t *l4, uint32_t l4len)
{
	uint32_t ihl = 20 + optlen, tot = ihl + l4len;

	memset(b, 0, ihl);
	b[0] = (uint8_t)(0x40 | ihl / 4);
	b[1] = 0x10;
	put16(b + 2, tot);
	put16(b + 4, 0x1234);
	put16(b + 6, 0x4000);	/* DF */
	b[8] = 64;
	b[9] = (uint8_t)proto;
	memcpy(b + 12, SRC4, 4);
	memcpy(b + 16, DST4, 4);
	if (optlen)
		memcpy(b + 20, opt, optlen);
	memcpy(b + ihl, l4, l4len);
	fix4(b);
	return tot;
}

/* IPv6 header + raw extension bytes (ext[0] is the first ext header), then l4. */
static uint32_t ip6(uint8_t *b, int first_nh, const uint8_t *ext, uint32_t extlen, int proto, const uint8_t *l4,
		    uint32_t l4len)
{
	uint32_t plen = extlen + l4len;

	memset(b, 0, 40);
	put32(b, 6u << 28 | 0xb8u << 20 | 0x12345);
	put16(b + 4, plen);
	b[6] = (uint8_t)first_nh;
	b[7] = 255;
	memcpy(b + 8, SRC6, 16);
	memcpy(b + 24, DST6, 16);
	if (extlen)
		memcpy(b + 40, ext, extlen);
	if (l4len)
		memcpy(b + 40 + extlen, l4, l4len);
	if (csum_off(proto) >= 0)
		fix6(b, 40 + extlen, proto);
	return 40 + plen;
}

static const uint8_t TCP_SYN[] = {
	0x30, 0x39, 0x00, 0x50,		/* 12345 -> 80 */
	0x01, 0x02, 0x03, 0x04,		/* seq */
	0x0a, 0x0b, 0x0c, 0x0d,		/* ack */
	0x60, 0x12,			/* doff 6, SYN|ACK */
	0x72, 0x10,			/* window 29200 */
	0x00, 0x00, 0x00, 0x07,		/* csum, urgp 7 */
	0x02, 0x04, 0x05, 0xb4,		/* MSS 1460 */
	'h', 'e', 'l', 'l', 'o',
};

static const uint8_t UDP_DNS[] = {
	0x04, 0xd2, 0x00, 0x35, 0x00, 0x0d, 0x00, 0x00, 'q', 'u', 'e', 'r', 'y',
};

static const uint8_t ICMP_ECHO[] = {
	8, 0, 0, 0, 0x11, 0x22, 0x00, 0x03, 'p', 'i', 'n', 'g', '!',
};

/*
 * Decode pkt cut at every length below its size: from an exact-size heap
 * buffer, never crashing, never reporting a bad checksum on a cut packet,
 * and always saying TRUNCATED when the cut falls inside the IP datagram.
 */
static void cut_everywhere(const uint8_t *pkt, uint32_t len, const struct meta *m, uint32_t l3off)
{
	uint32_t i;

	for (i = 0; i < len; i++) {
		uint8_t *cp = malloc(i ? i : 1);
		uint32_t f;

		memcpy(cp, pkt, i);
		f = decode(cp, i, m, true);
		if (i >= l3off) {
			if (!(f & SL_DECODE_TRUNCATED))
				fprintf(stderr, "cut at %u of %u: flags %#x\n", i, len, f);
			CHECK(f & SL_DECODE_TRUNCATED);
		}
		CHECK(!(f & (SL_DECODE_BAD_IP_CSUM | SL_DECODE_BAD_L4_CSUM | SL_DECODE_MALFORMED)));
		free(cp);
	}
}

static void test_csum(void)
{
	uint8_t buf[300];
	unsigned i, n;

	srand(1);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	for (n = 0; n < sizeof(buf); n++) {
		uint16_t want = (uint16_t)~ref_fold(ref_sum(0, buf, n));
		uint16_t got = sl_csum_fold(sl_csum_add(0, buf, n));
		uint8_t be[2];

		/* got is in memory order: compare the bytes. */
		memcpy(be, &got, 2);
		CHECK(((uint16_t)be[0] << 8 | be[1]) == want || (want == 0xffff && got == 0) ||
		      (want == 0 && got == 0xffff));
	}
	/* Large sums must not overflow the 64-bit accumulator logic. */
	memset(buf, 0xff, sizeof(buf));
	CHECK(sl_csum_fold(sl_csum_add(0, buf, sizeof(buf))) == 0xffff);
}

static void test_ip4_tcp(void)
{
	static const uint8_t opt[4] = { 1, 1, 1, 0 };
	uint8_t pkt[128];
	uint32_t len = ip4(pkt, 6, opt, 4, TCP_SYN, sizeof(TCP_SYN));
	uint32_t f;

	f = decode(pkt, len, &FAM4, true);
	CHECK(f == 0);
	CHECK(!sl_has(r, SL_F_DECODE_FLAGS));
	CHECK(U64(SL_F_IP_VERSION) == 4);
	CHECK(sl_has(r, SL_F_SRC_ADDR) && sl_addr_is_v4(r->v[SL_F_SRC_ADDR].addr) &&
	      memcmp(r->v[SL_F_SRC_ADDR].addr + 12, SRC4, 4) == 0);
	CHECK(sl_has(r, SL_F_DST_ADDR) && memcmp(r->v[SL_F_DST_ADDR].addr + 12, DST4, 4) == 0);
	CHECK(U64(SL_F_IP_LEN) == len);
	CHECK(U64(SL_F_IP_HDRLEN) == 24);
	CHECK(U64(SL_F_IP_TOS) == 0x10);
	CHECK(U64(SL_F_IP_TTL) == 64);
	CHECK(U64(SL_F_IP_ID) == 0x1234);
	CHECK(U64(SL_F_IP_FRAG) == SL_FRAG_DF);
	CHECK(U64(SL_F_IP_PROTO) == 6);
	CHECK(sl_has(r, SL_F_IP_OPTIONS) && r->v[SL_F_IP_OPTIONS].bytes.len == 4 &&
	      memcmp(r->v[SL_F_IP_OPTIONS].bytes.ptr, opt, 4) == 0);
	CHECK(U64(SL_F_SPORT) == 12345);
	CHECK(U64(SL_F_DPORT) == 80);
	CHECK(U64(SL_F_TCP_SEQ) == 0x01020304);
	CHECK(U64(SL_F_TCP_ACK) == 0x0a0b0c0d);
	CHECK(U64(SL_F_TCP_FLAGS) == 0x12);
	CHECK(U64(SL_F_TCP_WINDOW) == 29200);
	CHECK(U64(SL_F_TCP_URGP) == 7);
	CHECK(sl_has(r, SL_F_TCP_OPTIONS) && r->v[SL_F_TCP_OPTIONS].bytes.len == 4 &&
	      r->v[SL_F_TCP_OPTIONS].bytes.ptr[0] == 2);
	CHECK(sl_has(r, SL_F_PAYLOAD) && r->v[SL_F_PAYLOAD].bytes.len == 5 &&
	      memcmp(r->v[SL_F_PAYLOAD].bytes.ptr, "hello", 5) == 0);
	CHECK(!sl_has(r, SL_F_MAC_SRC) && !sl_has(r, SL_F_ICMP_TYPE) && !sl_has(r, SL_F_UDP_LEN));

	/* The same packet without any metadata: found by the version nibble. */
	CHECK(decode(pkt, len, &RAW, true) == 0 && U64(SL_F_DPORT) == 80);

	/* Reserved TCP bits go above the 8 flag bits. */
	pkt[24 + 12] |= 0x0f;
	fix4(pkt);
	CHECK(decode(pkt, len, &FAM4, true) == 0 && U64(SL_F_TCP_FLAGS) == 0xf12);
	pkt[24 + 12] &= 0xf0;
	fix4(pkt);

	/* A flipped payload byte breaks the TCP checksum, not the IP one. */
	pkt[len - 1] ^= 0x20;
	CHECK(decode(pkt, len, &FAM4, true) == SL_DECODE_BAD_L4_CSUM);
	CHECK(U64(SL_F_DECODE_FLAGS) == SL_DECODE_BAD_L4_CSUM);
	CHECK(decode(pkt, len, &FAM4, false) == 0);	/* checksums off: not looked at */
	pkt[len - 1] ^= 0x20;
	/* A flipped TTL breaks the IP header checksum. */
	pkt[8]++;
	CHECK(decode(pkt, len, &FAM4, true) == SL_DECODE_BAD_IP_CSUM);
	pkt[8]--;

	/* Checksum left for the NIC (CHECKSUM_PARTIAL): the pseudo-header sum only. */
	{
		uint32_t s = ref_sum(0, pkt + 12, 8) + 6 + (len - 24);

		put16(pkt + 24 + 16, (uint16_t)~ref_fold(s));
		CHECK(decode(pkt, len, &FAM4, true) == 0);
		fix4(pkt);
	}

	/* Trailing bytes past tot_len (Ethernet padding) are not payload. */
	{
		uint8_t padded[128];

		memcpy(padded, pkt, len);
		memset(padded + len, 0xee, 6);
		CHECK(decode(padded, len + 6, &FAM4, true) == 0);
		CHECK(r->v[SL_F_PAYLOAD].bytes.len == 5);
	}
	cut_everywhere(pkt, len, &FAM4, 0);
	cut_everywhere(pkt, len, &RAW, 1);
}

static void test_ip4_udp_icmp(void)
{
	uint8_t pkt[128], l4[64];
	uint32_t len;

	len = ip4(pkt, 17, NULL, 0, UDP_DNS, sizeof(UDP_DNS));
	CHECK(decode(pkt, len, &FAM4, true) == 0);
	CHECK(U64(SL_F_SPORT) == 1234 && U64(SL_F_DPORT) == 53 && U64(SL_F_UDP_LEN) == 13);
	CHECK(r->v[SL_F_PAYLOAD].bytes.len == 5 && memcmp(r->v[SL_F_PAYLOAD].bytes.ptr, "query", 5) == 0);
	CHECK(!sl_has(r, SL_F_TCP_FLAGS));
	cut_everywhere(pkt, len, &FAM4, 0);
	/* Zero UDP checksum over IPv4: none computed, fine. */
	put16(pkt + 26, 0);
	CHECK(decode(pkt, len, &FAM4, true) == 0);
	put16(pkt + 26, 0x1234);
	CHECK(decode(pkt, len, &FAM4, true) == SL_DECODE_BAD_L4_CSUM);
	/* UDP length beyond the IP datagram. */
	put16(pkt + 24, 14);
	CHECK(decode(pkt, len, &FAM4, false) & SL_DECODE_MALFORMED);
	put16(pkt + 24, 7);
	CHECK(decode(pkt, len, &FAM4, false) & SL_DECODE_MALFORMED);

	/* UDP-Lite, coverage 8 (header only). */
	memcpy(l4, UDP_DNS, sizeof(UDP_DNS));
	put16(l4 + 4, 8);
	len = ip4(pkt, 136, NULL, 0, l4, sizeof(UDP_DNS));
	{
		/* fix4 summed the whole datagram: redo over the coverage only. */
		uint32_t s;

		put16(pkt + 26, 0);
		s = ref_sum(0, pkt + 20, 8) + ref_sum(0, pkt + 12, 8) + 136 + sizeof(UDP_DNS);
		put16(pkt + 26, ref_fold(s));
	}
	CHECK(decode(pkt, len, &FAM4, true) == 0);
	CHECK(U64(SL_F_IP_PROTO) == 136 && U64(SL_F_DPORT) == 53 && U64(SL_F_UDP_LEN) == 8);
	CHECK(r->v[SL_F_PAYLOAD].bytes.len == 5);
	pkt[len - 1] ^= 1;	/* outside the coverage: still good */
	CHECK(decode(pkt, len, &FAM4, true) == 0);
	pkt[21] ^= 1;		/* inside: bad */
	CHECK(decode(pkt, len, &FAM4, true) == SL_DECODE_BAD_L4_CSUM);

	/* ICMP echo. */
	len = ip4(pkt, 1, NULL, 0, ICMP_ECHO, sizeof(ICMP_ECHO));
	CHECK(decode(pkt, len, &FAM4, true) == 0);
	CHECK(U64(SL_F_ICMP_TYPE) == 8 && U64(SL_F_ICMP_CODE) == 0);
	CHECK(U64(SL_F_ICMP_ID) == 0x1122 && U64(SL_F_ICMP_SEQ) == 3);
	CHECK(r->v[SL_F_PAYLOAD].bytes.len == 5);
	CHECK(!sl_has(r, SL_F_SPORT) && !sl_has(r, SL_F_ICMP_MTU));
	cut_everywhere(pkt, len, &FAM4, 0);
	pkt[len - 1] ^= 1;
	CHECK(decode(pkt, len, &FAM4, true) == SL_DECODE_BAD_L4_CSUM);

	/* Fragmentation needed, MTU 1400, quoting the start of a packet. */
	memset(l4, 0, sizeof(l4));
	l4[0] = 3;
	l4[1] = 4;
	put16(l4 + 6, 1400);
	len = ip4(pkt, 1, NULL, 0, l4, 36);
	CHECK(decode(pkt, len, &FAM4, true) == 0);
	CHECK(U64(SL_F_ICMP_MTU) == 1400 && !sl_has(r, SL_F_ICMP_ID));
	/* Redirect: gateway. */
	l4[0] = 5;
	l4[1] = 1;
	memcpy(l4 + 4, SRC4, 4);
	len = ip4(pkt, 1, NULL, 0, l4, 36);
	CHECK(decode(pkt, len, &FAM4, true) == 0);
	CHECK(sl_has(r, SL_F_ICMP_GATEWAY) && sl_addr_is_v4(r->v[SL_F_ICMP_GATEWAY].addr) &&
	      memcmp(r->v[SL_F_ICMP_GATEWAY].addr + 12, SRC4, 4) == 0);
	CHECK(!sl_has(r, SL_F_ICMP_MTU));
	/* Parameter problem: pointer. */
	memset(l4, 0, 8);
	l4[0] = 12;
	l4[4] = 9;
	len = ip4(pkt, 1, NULL, 0, l4, 36);
	CHECK(decode(pkt, len, &FAM4, true) == 0 && U64(SL_F_ICMP_PARAM) == 9);

	/* ESP: SPI. */
	memset(l4, 0, sizeof(l4));
	put32(l4, 0xdeadbeef);
	len = ip4(pkt, 50, NULL, 0, l4, 24);
	CHECK(decode(pkt, len, &FAM4, true) == 0 && U64(SL_F_IPSEC_SPI) == 0xdeadbeef);
	CHECK(r->v[SL_F_PAYLOAD].bytes.len == 16);
	/* AH over IPv4: SPI at offset 4, IP_PROTO stays AH like the kernel's LOG. */
	memset(l4, 0, sizeof(l4));
	l4[0] = 6;
	l4[1] = 4;	/* (4+2)*4 = 24 bytes */
	put32(l4 + 4, 0xabcd);
	len = ip4(pkt, 51, NULL, 0, l4, 30);
	CHECK(decode(pkt, len, &FAM4, true) == 0 && U64(SL_F_IPSEC_SPI) == 0xabcd && U64(SL_F_IP_PROTO) == 51);
	CHECK(r->v[SL_F_PAYLOAD].bytes.len == 6);
	/* Unknown protocol: the payload is what follows the IP header. */
	len = ip4(pkt, 47, NULL, 0, l4, 12);
	CHECK(decode(pkt, len, &FAM4, true) == 0 && r->v[SL_F_PAYLOAD].bytes.len == 12);
	/* SCTP ports. */
	put16(l4, 5000);
	put16(l4 + 2, 6000);
	len = ip4(pkt, 132, NULL, 0, l4, 16);
	CHECK(decode(pkt, len, &FAM4, true) == 0 && U64(SL_F_SPORT) == 5000 && U64(SL_F_DPORT) == 6000);
	CHECK(r->v[SL_F_PAYLOAD].bytes.len == 4);
}

static void test_ip4_frag_malformed(void)
{
	uint8_t pkt[128];
	uint32_t len = ip4(pkt, 6, NULL, 0, TCP_SYN, sizeof(TCP_SYN));

	/* First fragment (MF): L4 decoded, checksum not verifiable. */
	put16(pkt + 6, 0x2000);
	pkt[len - 1] ^= 1;
	fix4(pkt);
	pkt[len - 1] ^= 1;	/* L4 checksum now wrong, but unverifiable */
	CHECK(decode(pkt, len, &FAM4, true) == 0);
	CHECK(U64(SL_F_IP_FRAG) == SL_FRAG_MF && U64(SL_F_DPORT) == 80);
	/* Non-first fragment: no L4. */
	put16(pkt + 6, 0x8000 | 185);	/* CE (evil bit) + offset 1480 */
	fix4(pkt);
	CHECK(decode(pkt, len, &FAM4, true) == SL_DECODE_FRAGMENT);
	CHECK(U64(SL_F_IP_FRAG) == (SL_FRAG_CE | 1480));
	CHECK(U64(SL_F_IP_PROTO) == 6 && !sl_has(r, SL_F_SPORT) && !sl_has(r, SL_F_PAYLOAD));
	put16(pkt + 6, 0x4000);

	/* IHL below 5. */
	pkt[0] = 0x44;
	CHECK(decode(pkt, len, &FAM4, false) == SL_DECODE_MALFORMED);
	CHECK(sl_has(r, SL_F_SRC_ADDR) && !sl_has(r, SL_F_SPORT));
	pkt[0] = 0x45;
	/* Total length shorter than the header. */
	put16(pkt + 2, 16);
	CHECK(decode(pkt, len, &FAM4, false) == SL_DECODE_MALFORMED);
	/* Total length shorter than the TCP header it carries. */
	put16(pkt + 2, 30);
	CHECK(decode(pkt, len, &FAM4, false) == SL_DECODE_MALFORMED);
	CHECK(U64(SL_F_SPORT) == 12345);
	put16(pkt + 2, len);
	/* TCP data offset below 5 words. */
	pkt[20 + 12] = 0x30;
	CHECK(decode(pkt, len, &FAM4, false) == SL_DECODE_MALFORMED);
	/* TCP data offset past the datagram. */
	pkt[20 + 12] = 0xf0;
	CHECK(decode(pkt, len, &FAM4, false) == SL_DECODE_MALFORMED);
	pkt[20 + 12] = 0x60;
	/* Version says 6 where the family says 4. */
	pkt[0] = 0x65;
	CHECK(decode(pkt, len, &FAM4, false) == SL_DECODE_MALFORMED && !sl_has(r, SL_F_IP_VERSION));
	pkt[0] = 0x45;
	/* tot_len 0 (GSO / BIG TCP): the captured length rules, nothing flagged. */
	put16(pkt + 2, 0);
	fix4(pkt);
	CHECK(decode(pkt, len, &FAM4, true) == 0 && r->v[SL_F_PAYLOAD].bytes.len == 5);
}

static void test_ip6(void)
{
	uint8_t pkt[256], ext[64];
	uint32_t len, f;

	/* Plain TCP. */
	len = ip6(pkt, 6, NULL, 0, 6, TCP_SYN, sizeof(TCP_SYN));
	CHECK(decode(pkt, len, &FAM6, true) == 0);
	CHECK(U64(SL_F_IP_VERSION) == 6 && U64(SL_F_IP_TOS) == 0xb8 && U64(SL_F_IP6_FLOWLABEL) == 0x12345);
	CHECK(U64(SL_F_IP_TTL) == 255 && U64(SL_F_IP_LEN) == len && U64(SL_F_IP_HDRLEN) == 40);
	CHECK(U64(SL_F_IP_PROTO) == 6 && U64(SL_F_DPORT) == 80 && !sl_has(r, SL_F_IP_OPTIONS));
	CHECK(sl_has(r, SL_F_SRC_ADDR) && memcmp(r->v[SL_F_SRC_ADDR].addr, SRC6, 16) == 0);
	CHECK(sl_has(r, SL_F_DST_ADDR) && !sl_addr_is_v4(r->v[SL_F_DST_ADDR].addr));
	CHECK(!sl_has(r, SL_F_IP_ID) && !sl_has(r, SL_F_IP_FRAG));
	cut_everywhere(pkt, len, &FAM6, 0);
	pkt[len - 2] ^= 0x40;
	CHECK(decode(pkt, len, &FAM6, true) == SL_DECODE_BAD_L4_CSUM);

	/* UDP behind hop-by-hop (8), destination options (16) and routing (8, segments left 0). */
	memset(ext, 0, sizeof(ext));
	ext[0] = 60;	/* HBH -> dstopts */
	ext[1] = 0;
	ext[2] = 1;	/* PadN */
	ext[3] = 4;
	ext[8] = 43;	/* dstopts -> routing */
	ext[9] = 1;	/* 16 bytes */
	ext[10] = 1;
	ext[11] = 12;
	ext[24] = 17;	/* routing -> UDP */
	ext[25] = 0;
	ext[26] = 4;	/* type 4 (SRH-like) */
	ext[27] = 0;	/* segments left */
	len = ip6(pkt, 0, ext, 32, 17, UDP_DNS, sizeof(UDP_DNS));
	CHECK(decode(pkt, len, &FAM6, true) == 0);
	CHECK(U64(SL_F_IP_PROTO) == 17 && U64(SL_F_IP_HDRLEN) == 72 && U64(SL_F_DPORT) == 53);
	CHECK(sl_has(r, SL_F_IP_OPTIONS) && r->v[SL_F_IP_OPTIONS].bytes.len == 32);
	CHECK(r->v[SL_F_PAYLOAD].bytes.len == 5);
	cut_everywhere(pkt, len, &FAM6, 0);
	/* Zero UDP checksum over IPv6 is not allowed. */
	put16(pkt + 72 + 6, 0);
	CHECK(decode(pkt, len, &FAM6, true) == SL_DECODE_BAD_L4_CSUM);
	/* An extension header longer than the payload length. */
	pkt[40 + 9] = 20;
	CHECK(decode(pkt, len, &FAM6, false) == SL_DECODE_MALFORMED && !sl_has(r, SL_F_IP_PROTO));

	/* First fragment, then AH, then TCP. */
	memset(ext, 0, sizeof(ext));
	ext[0] = 51;		/* fragment -> AH */
	put16(ext + 2, 1);	/* offset 0, M */
	put32(ext + 4, 0xcafe);
	ext[8] = 6;		/* AH -> TCP */
	ext[9] = 4;		/* (4+2)*4 = 24 bytes */
	put32(ext + 12, 0x1001);
	len = ip6(pkt, 44, ext, 32, 6, TCP_SYN, sizeof(TCP_SYN));
	CHECK(decode(pkt, len, &FAM6, true) == 0);
	CHECK(U64(SL_F_IP_ID) == 0xcafe && U64(SL_F_IP_FRAG) == SL_FRAG_MF);
	CHECK(U64(SL_F_IPSEC_SPI) == 0x1001 && U64(SL_F_IP_PROTO) == 6 && U64(SL_F_SPORT) == 12345);
	CHECK(U64(SL_F_IP_HDRLEN) == 72);
	cut_everywhere(pkt, len, &FAM6, 0);
	/* Non-first fragment. */
	put16(pkt + 40 + 2, 1448);
	f = decode(pkt, len, &FAM6, true);
	CHECK(f == SL_DECODE_FRAGMENT);
	CHECK(U64(SL_F_IP_FRAG) == 1448 && !sl_has(r, SL_F_SPORT) && U64(SL_F_IP_PROTO) == 51);

	/* ICMPv6 echo request. */
	{
		uint8_t l4[16] = { 128, 0, 0, 0, 0x00, 0x2a, 0x00, 0x01, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h' };

		len = ip6(pkt, 58, NULL, 0, 58, l4, sizeof(l4));
		CHECK(decode(pkt, len, &FAM6, true) == 0);
		CHECK(U64(SL_F_ICMP_TYPE) == 128 && U64(SL_F_ICMP_ID) == 42 && U64(SL_F_ICMP_SEQ) == 1);
		cut_everywhere(pkt, len, &FAM6, 0);
		/* Cut inside the echo header: the id is there, the sequence is not. */
		CHECK(decode(pkt, 46, &FAM6, true) == SL_DECODE_TRUNCATED);
		CHECK(U64(SL_F_ICMP_ID) == 42 && !sl_has(r, SL_F_ICMP_SEQ) && !sl_has(r, SL_F_PAYLOAD));
		pkt[45] ^= 1;
		CHECK(decode(pkt, len, &FAM6, true) == SL_DECODE_BAD_L4_CSUM);
		/* Packet too big. */
		memset(l4, 0, sizeof(l4));
		l4[0] = 2;
		put32(l4 + 4, 1280);
		len = ip6(pkt, 58, NULL, 0, 58, l4, sizeof(l4));
		CHECK(decode(pkt, len, &FAM6, true) == 0 && U64(SL_F_ICMP_MTU) == 1280);
	}
	/* Redirect: the target is the gateway. */
	{
		uint8_t l4[40] = { 137, 0 };

		memcpy(l4 + 8, SRC6, 16);
		memcpy(l4 + 24, DST6, 16);
		len = ip6(pkt, 58, NULL, 0, 58, l4, sizeof(l4));
		CHECK(decode(pkt, len, &FAM6, true) == 0);
		CHECK(sl_has(r, SL_F_ICMP_GATEWAY) && memcmp(r->v[SL_F_ICMP_GATEWAY].addr, SRC6, 16) == 0);
	}
	/* No next header. */
	len = ip6(pkt, 59, NULL, 0, 59, NULL, 0);
	CHECK(decode(pkt, len, &FAM6, true) == 0 && U64(SL_F_IP_PROTO) == 59 && !sl_has(r, SL_F_PAYLOAD));
	/* Payload length beyond the capture: truncated. */
	len = ip6(pkt, 6, NULL, 0, 6, TCP_SYN, sizeof(TCP_SYN));
	CHECK(decode(pkt, len - 3, &FAM6, true) == SL_DECODE_TRUNCATED && r->v[SL_F_PAYLOAD].bytes.len == 2);
}

static void test_link(void)
{
	uint8_t hw[32], pkt[128], frame[160];
	uint32_t len = ip4(pkt, 17, NULL, 0, UDP_DNS, sizeof(UDP_DNS));
	static const uint8_t dst[6] = { 2, 0, 0, 0, 0, 1 }, src[6] = { 2, 0, 0, 0, 0, 2 };
	struct meta m;

	memcpy(hw, dst, 6);
	memcpy(hw + 6, src, 6);
	/* Plain Ethernet, IPv4 family with hwtype ETHER. */
	put16(hw + 12, 0x0800);
	m = (struct meta){ 2, 1, hw, 14, 0x0800 };
	CHECK(decode(pkt, len, &m, true) == 0);
	CHECK(sl_has(r, SL_F_MAC_SRC) && memcmp(r->v[SL_F_MAC_SRC].addr, src, 6) == 0);
	CHECK(sl_has(r, SL_F_MAC_DST) && memcmp(r->v[SL_F_MAC_DST].addr, dst, 6) == 0);
	CHECK(U64(SL_F_ETH_TYPE) == 0x0800 && !sl_has(r, SL_F_VLAN_ID) && U64(SL_F_DPORT) == 53);
	/* A non-Ethernet hwtype: the header is not read as Ethernet. */
	m.hwtype = 776;	/* ARPHRD_SIT */
	CHECK(decode(pkt, len, &m, true) == 0 && !sl_has(r, SL_F_MAC_SRC) && U64(SL_F_DPORT) == 53);
	/* Netdev hook on a GRE device: hwhdr is not Ethernet; hw_protocol says IPv4. */
	m = (struct meta){ 5, 778, hw, 14, 0x0800 };
	CHECK(decode(pkt, len, &m, true) == 0 && !sl_has(r, SL_F_MAC_SRC) && U64(SL_F_DPORT) == 53);

	/* Bridge family, 802.1ad + 802.1Q tags inside the link header. */
	put16(hw + 12, 0x88a8);
	put16(hw + 14, 0x2000 | 100);
	put16(hw + 16, 0x8100);
	put16(hw + 18, 200);
	put16(hw + 20, 0x0800);
	m = (struct meta){ 7, 1, hw, 22, 0x0800 };
	CHECK(decode(pkt, len, &m, true) == 0);
	CHECK(U64(SL_F_VLAN_ID) == 100 && U64(SL_F_ETH_TYPE) == 0x0800 && U64(SL_F_DPORT) == 53);

	/* Link header of 14 bytes, the tag at the start of the packet (Ethernet capture split). */
	put16(hw + 12, 0x8100);
	put16(frame, 0xe000 | 7);
	put16(frame + 2, 0x0800);
	memcpy(frame + 4, pkt, len);
	m = (struct meta){ 0, 1, hw, 14, -1 };
	CHECK(decode(frame, len + 4, &m, true) == 0);
	CHECK(U64(SL_F_VLAN_ID) == 7 && U64(SL_F_ETH_TYPE) == 0x0800 && U64(SL_F_DPORT) == 53);
	CHECK(U64(SL_F_IP_HDRLEN) == 20);
	cut_everywhere(frame, len + 4, &m, 4);
	/* Two tags (802.1ad outer), both past a 14-byte link header. */
	put16(hw + 12, 0x88a8);
	put16(frame, 300);
	put16(frame + 2, 0x8100);
	put16(frame + 4, 42);
	put16(frame + 6, 0x0800);
	memcpy(frame + 8, pkt, len);
	CHECK(decode(frame, len + 8, &m, true) == 0);
	CHECK(U64(SL_F_VLAN_ID) == 300 && U64(SL_F_ETH_TYPE) == 0x0800 && U64(SL_F_DPORT) == 53);
	cut_everywhere(frame, len + 8, &m, 8);

	/* ARP request in a bridge: found by the ethertype. */
	{
		static const uint8_t arp[28] = {
			0, 1, 8, 0, 6, 4, 0, 1,
			2, 0, 0, 0, 0, 2, 192, 0, 2, 1,
			0, 0, 0, 0, 0, 0, 198, 51, 100, 2,
		};
		static const uint8_t zero[6];

		put16(hw + 12, 0x0806);
		m = (struct meta){ 7, 1, hw, 14, 0x0806 };
		CHECK(decode(arp, sizeof(arp), &m, true) == 0);
		CHECK(U64(SL_F_ETH_TYPE) == 0x0806 && U64(SL_F_ARP_OP) == 1 && !sl_has(r, SL_F_IP_VERSION));
		CHECK(sl_has(r, SL_F_ARP_SHA) && memcmp(r->v[SL_F_ARP_SHA].addr, src, 6) == 0);
		CHECK(sl_has(r, SL_F_ARP_THA) && memcmp(r->v[SL_F_ARP_THA].addr, zero, 6) == 0);
		CHECK(sl_has(r, SL_F_ARP_SPA) && memcmp(r->v[SL_F_ARP_SPA].addr + 12, SRC4, 4) == 0);
		CHECK(sl_has(r, SL_F_ARP_TPA) && memcmp(r->v[SL_F_ARP_TPA].addr + 12, DST4, 4) == 0);
		/* ARP family, no link header at all. */
		m = (struct meta){ 3, -1, NULL, 0, -1 };
		CHECK(decode(arp, sizeof(arp), &m, true) == 0 && U64(SL_F_ARP_OP) == 1);
		CHECK(sl_has(r, SL_F_ARP_TPA) && !sl_has(r, SL_F_ETH_TYPE));
		cut_everywhere(arp, sizeof(arp), &m, 0);
	}
	/* An unknown ethertype decodes the link layer only. */
	put16(hw + 12, 0x88cc);
	m = (struct meta){ 7, 1, hw, 14, 0x88cc };
	CHECK(decode(pkt, len, &m, true) == 0 && U64(SL_F_ETH_TYPE) == 0x88cc && !sl_has(r, SL_F_IP_VERSION));
}

/* Random bytes with random metadata: must never crash or read out of bounds. */
static void test_fuzz(void)
{
	static const int fams[] = { 0, 2, 3, 7, 10 };
	uint8_t base[128], hw[22];
	unsigned iter;

	srand(42);
	for (iter = 0; iter < 20000; iter++) {
		uint32_t len = (uint32_t)rand() % 100, i;
		uint8_t *p = malloc(len ? len : 1);
		struct meta m = { fams[rand() % 5], rand() % 2 ? 1 : -1, NULL, 0, -1 };

		/* Start from a valid packet half of the time, then mutate a few bytes. */
		if (rand() % 2) {
			uint32_t full = rand() % 2 ? ip4(base, rand() % 2 ? 6 : 17, NULL, 0, TCP_SYN, sizeof(TCP_SYN))
						   : ip6(base, 44, (const uint8_t[8]){ 6 }, 8, 6, TCP_SYN,
							 sizeof(TCP_SYN));

			if (len > full)
				len = full;
			memcpy(p, base, len);
			for (i = 0; i < 3 && len; i++)
				p[rand() % len] = (uint8_t)rand();
		} else {
			for (i = 0; i < len; i++)
				p[i] = (uint8_t)rand();
		}
		if (rand() % 2) {
			for (i = 0; i < sizeof(hw); i++)
				hw[i] = (uint8_t)(rand() % 4 ? 0x81 : rand());
			m.hw = hw;
			m.hwlen = (uint32_t)rand() % sizeof(hw);
		}
		decode(p, len, &m, rand() % 2);
		free(p);
	}
}

int main(void)
{
	test_csum();
	test_ip4_tcp();
	test_ip4_udp_icmp();
	test_ip4_frag_malformed();
	test_ip6();
	test_link();
	test_fuzz();
	if (failures) {
		fprintf(stderr, "%d checks failed\n", failures);
		return 1;
	}
	printf("test_decode: all checks passed\n");
	return 0;
}
