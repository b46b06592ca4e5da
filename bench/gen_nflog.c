/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gen_nflog: write a large NFLOG-linktype (239) pcap for the offline
 * benchmarks, fast (a few seconds for 5 million records).
 *
 * Each record is what `tcpdump -i nflog:N -w` stores for an event the
 * kernel logged on an input hook of an Ethernet interface: nfgenmsg, then
 * the NFULA TLVs in the kernel's order (packet header, prefix, input
 * interface, hardware address, type, length and header, timestamp,
 * payload), host-order TLV headers, 4-byte padding.
 *
 * Traffic (-m mix): a pool of concurrent flows (TCP 65 %, UDP 25 %, ICMP
 * echo 10 %; 15 % of flows IPv6) between clients in a few prefixes and a
 * small set of servers; each flow lasts a geometric number of packets
 * (mean 8) and is then replaced.  TCP starts with a SYN, then segments of
 * 0 (60 %), 1-256 (25 %) or 1200-1448 (15 %) bytes of data.  All IP and
 * layer-4 checksums are correct.  Packets are ~70 us apart (capture time),
 * so the idle timeouts of the flow filter fire as they would live.
 * (-m size:N): every packet an IPv4 TCP segment whose IP packet (the NFLOG
 * payload) is exactly N bytes, for measuring per-byte costs.
 * (-a SOURCES): each new flow's client is one of SOURCES addresses
 * (10.a.b.c, or 2001:db8::a for 15 % of them), drawn at random, for filters
 * that keep state per source (ratelimit's buckets).
 *
 * (-r RATE): packets exactly 1/RATE s apart instead, for replaying at a
 * fixed rate with `pace: original` (bench/fleet.sh).
 *
 * usage: gen_nflog -o FILE -n RECORDS [-m mix|size:N] [-s SEED] [-f FLOWS] [-a SOURCES] [-r RATE]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINKTYPE_NFLOG 239
#define NFULA_PACKET_HDR 1
#define NFULA_TIMESTAMP 3
#define NFULA_IFINDEX_INDEV 4
#define NFULA_HWADDR 8
#define NFULA_PAYLOAD 9
#define NFULA_PREFIX 10
#define NFULA_HWTYPE 15
#define NFULA_HWHEADER 16
#define NFULA_HWLEN 17

static uint64_t rng_state = 0x243f6a8885a308d3ULL;

static uint64_t rnd(void)
{
	/* xorshift64*: fast, good enough for traffic shapes */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static uint32_t rndn(uint32_t n)
{
	return (uint32_t)((rnd() >> 32) * n >> 32);
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	for (; n > 1; n -= 2, p += 2)
		s += (uint32_t)p[0] << 8 | p[1];
	if (n)
		s += (uint32_t)p[0] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

struct flow {
	int v6;
	uint8_t proto;		/* 6, 17, 1 / 58 */
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint16_t icmp_id, icmp_seq;
	int left;		/* packets still to send */
	int sent;
	int ifindex;
	int prefix;
};

static const char *const prefixes[] = {
	"fw-in-accept ", "fw-in-drop ", "fw-fwd-accept ", "ssh-new ", "dns ", "fw-out-reject ",
};
#define NPREFIX (sizeof(prefixes) / sizeof(prefixes[0]))

static uint32_t nsources;	/* -a: clients drawn from this many addresses; 0: any */

static void new_flow(struct flow *f)
{
	static const uint8_t v4net[][2] = {{10, 1}, {10, 2}, {192, 168}, {172, 16}};
	static const uint16_t tcp_ports[] = {443, 443, 443, 80, 22, 25, 993, 8080};
	uint32_t r = rndn(100), a = 0;

	memset(f, 0, sizeof(*f));
	if (nsources) {
		/* the source decides the family: exactly nsources addresses */
		a = rndn(nsources);
		f->v6 = a % 100 < 15;
	} else {
		f->v6 = rndn(100) < 15;
	}
	f->proto = r < 65 ? 6 : r < 90 ? 17 : f->v6 ? 58 : 1;
	if (f->v6) {
		static const uint8_t net[8] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x10, 0, 0};
		memcpy(f->src, net, 8);
		f->src[5] = (uint8_t)rndn(4);
		put32(f->src + 12, (uint32_t)rnd());
		memcpy(f->dst, net, 8);
		f->dst[5] = 0x80;
		f->dst[15] = (uint8_t)(1 + rndn(16));
	} else {
		const uint8_t *n = v4net[rndn(4)];
		f->src[0] = n[0];
		f->src[1] = n[1];
		f->src[2] = (uint8_t)rndn(256);
		f->src[3] = (uint8_t)(1 + rndn(254));
		f->dst[0] = 203;
		f->dst[1] = 0;
		f->dst[2] = 113;
		f->dst[3] = (uint8_t)(1 + rndn(32));
	}
	if (nsources) {
		if (f->v6) {
			f->src[5] = 0;
			memset(f->src + 8, 0, 8);
			put32(f->src + 12, a);
		} else {
			f->src[0] = 10;
			f->src[1] = (uint8_t)(a >> 16);
			f->src[2] = (uint8_t)(a >> 8);
			f->src[3] = (uint8_t)a;
		}
	}
	f->sport = (uint16_t)(32768 + rndn(28232));
	if (f->proto == 6)
		f->dport = tcp_ports[rndn(8)];
	else if (f->proto == 17)
		f->dport = rndn(10) < 8 ? 53 : rndn(2) ? 123 : 514;
	f->seq = (uint32_t)rnd();
	f->ack = (uint32_t)rnd();
	f->icmp_id = (uint16_t)rnd();
	/* geometric, mean 8 */
	f->left = 1;
	while (rndn(8) != 0 && f->left < 200)
		f->left++;
	f->ifindex = 2 + (int)rndn(2);
	if (f->proto == 6 && f->dport == 22)
		f->prefix = 3;
	else if (f->proto == 17 && f->dport == 53)
		f->prefix = 4;
	else
		f->prefix = (r = rndn(100)) < 60 ? 0 : r < 85 ? 1 : r < 95 ? 2 : 5;
}

/* -m size:N: every flow an IPv4 TCP connection. */
static void new_flow_fixed(struct flow *f)
{
	new_flow(f);
	f->v6 = 0;
	f->proto = 6;
	f->dport = 443;
}

/* Build the IP packet of the flow's next packet into p; returns its length. */
static size_t build_packet(struct flow *f, uint8_t *p, int fixed_len)
{
	size_t iph = f->v6 ? 40 : 20, l4h, data, len;
	uint8_t *l4 = p + iph;
	uint32_t s;

	if (f->proto == 6) {
		int syn = f->sent == 0 && !fixed_len;

		l4h = syn ? 40 : 32;	/* SYN: MSS, SACK, TS, WS; else TS */
		if (fixed_len) {
			data = (size_t)fixed_len > iph + l4h ? (size_t)fixed_len - iph - l4h : 0;
		} else if (syn) {
			data = 0;
		} else {
			uint32_t r = rndn(100);
			data = r < 60 ? 0 : r < 85 ? 1 + rndn(256) : 1200 + rndn(249);
		}
	} else if (f->proto == 17) {
		l4h = 8;
		data = f->dport == 53 ? 28 + rndn(60) : 48;
	} else {
		l4h = 8;
		data = 56;
	}
	len = iph + l4h + data;

	/* network header */
	if (f->v6) {
		put32(p, 6u << 28);
		put16(p + 4, (uint32_t)(len - 40));
		p[6] = f->proto;
		p[7] = 64;
		memcpy(p + 8, f->src, 16);
		memcpy(p + 24, f->dst, 16);
	} else {
		p[0] = 0x45;
		p[1] = 0;
		put16(p + 2, (uint32_t)len);
		put16(p + 4, (uint32_t)rnd());
		put16(p + 6, 0x4000);	/* DF */
		p[8] = 64;
		p[9] = f->proto;
		put16(p + 10, 0);
		memcpy(p + 12, f->src, 4);
		memcpy(p + 16, f->dst, 4);
		put16(p + 10, fold(sum16(p, 20, 0)));
	}

	/* transport header */
	memset(l4, 0, l4h);
	if (f->proto == 6) {
		int syn = l4h == 40;

		put16(l4, f->sport);
		put16(l4 + 2, f->dport);
		put32(l4 + 4, f->seq);
		put32(l4 + 8, syn ? 0 : f->ack);
		l4[12] = (uint8_t)(l4h / 4) << 4;
		l4[13] = syn ? 0x02 : data ? 0x18 : 0x10;
		if (!syn && rndn(50) == 0)
			l4[13] |= 0x01;	/* FIN */
		put16(l4 + 14, 64240);
		if (syn) {
			static const uint8_t opt[20] = {2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1,
							0, 0, 0, 0, 1, 3, 3, 7};
			memcpy(l4 + 20, opt, 20);
		} else {
			static const uint8_t opt[12] = {1, 1, 8, 10, 0, 0, 0, 2, 0, 0, 0, 1};
			memcpy(l4 + 20, opt, 12);
		}
		f->seq += (uint32_t)data + syn;
	} else if (f->proto == 17) {
		put16(l4, f->sport);
		put16(l4 + 2, f->dport);
		put16(l4 + 4, (uint32_t)(l4h + data));
	} else {
		l4[0] = f->v6 ? 128 : 8;	/* echo request */
		put16(l4 + 4, f->icmp_id);
		put16(l4 + 6, f->icmp_seq++);
	}
	/* payload: cheap but not all zero */
	for (size_t i = 0; i < data; i++)
		l4[l4h + i] = (uint8_t)(i * 7 + f->sent);

	/* layer-4 checksum, pseudo-header where the protocol has one */
	s = 0;
	if (f->proto != 1) {
		if (f->v6) {
			s = sum16(f->src, 16, s);
			s = sum16(f->dst, 16, s);
		} else {
			s = sum16(f->src, 4, s);
			s = sum16(f->dst, 4, s);
		}
		s += f->proto;
		s += (uint32_t)(l4h + data);
	}
	s = sum16(l4, l4h + data, s);
	{
		uint16_t c = fold(s);

		if (f->proto == 17 && c == 0)
			c = 0xffff;
		put16(l4 + (f->proto == 6 ? 16 : f->proto == 17 ? 6 : 2), c);
	}
	f->sent++;
	return len;
}

/* One TLV: host-order length and type, value, zero padding to 4. */
static uint8_t *tlv(uint8_t *p, uint16_t type, const void *v, size_t n)
{
	uint16_t l = (uint16_t)(4 + n);
	size_t pad = (4 - (n & 3)) & 3;

	memcpy(p, &l, 2);
	memcpy(p + 2, &type, 2);
	memcpy(p + 4, v, n);
	memset(p + 4 + n, 0, pad);
	return p + 4 + n + pad;
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	long long n = 0;
	int fixed_len = 0, opt;
	uint32_t nflows = 50000;
	struct flow *flows;
	FILE *fp;
	static uint8_t rec[2048 + 256], pkt[2048];
	static char iobuf[1 << 20];
	uint64_t t_us = 1764400000ULL * 1000000;	/* 2025-11-29 07:06:40 UTC */
	const uint64_t t0_us = t_us;
	double total_bytes = 0, rate = 0;

	while ((opt = getopt(argc, argv, "o:n:m:s:f:a:r:")) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'n': n = atoll(optarg); break;
		case 'm':
			if (strncmp(optarg, "size:", 5) == 0)
				fixed_len = atoi(optarg + 5);
			else if (strcmp(optarg, "mix") != 0)
				goto usage;
			break;
		case 's': rng_state ^= strtoull(optarg, NULL, 0) * 0x9e3779b97f4a7c15ULL; break;
		case 'f': nflows = (uint32_t)atoi(optarg); break;
		case 'a': nsources = (uint32_t)atoi(optarg); break;
		case 'r': rate = atof(optarg); break;
		default: goto usage;
		}
	}
	if (!out || n <= 0 || nflows == 0 || rate < 0 || rate > 1e6 || (fixed_len && (fixed_len < 52 || fixed_len > 2000)))
		goto usage;
	fp = strcmp(out, "-") ? fopen(out, "wb") : stdout;
	if (!fp) {
		fprintf(stderr, "gen_nflog: %s: %s\n", out, strerror(errno));
		return 1;
	}
	setvbuf(fp, iobuf, _IOFBF, sizeof(iobuf));
	{
		/* pcap file header, microsecond magic, native byte order */
		uint32_t h[6] = {0xa1b2c3d4, 2 | 4u << 16, 0, 0, 65535, LINKTYPE_NFLOG};
		fwrite(h, sizeof(h), 1, fp);
	}
	flows = calloc(nflows, sizeof(*flows));
	if (!flows)
		return 1;
	for (uint32_t i = 0; i < nflows; i++)
		(fixed_len ? new_flow_fixed : new_flow)(&flows[i]);
	for (long long k = 0; k < n; k++) {
		struct flow *f = &flows[rndn(nflows)];
		uint8_t *p = rec, v[16];
		size_t plen = build_packet(f, pkt, fixed_len);
		uint32_t rh[4];

		/* nfgenmsg: family, version 0, group 5 (big-endian) */
		p[0] = f->v6 ? 10 : 2;
		p[1] = 0;
		put16(p + 2, 5);
		p += 4;
		put16(v, f->v6 ? 0x86dd : 0x0800);	/* hw_protocol, hook 1 (input), pad */
		v[2] = 1;
		v[3] = 0;
		p = tlv(p, NFULA_PACKET_HDR, v, 4);
		p = tlv(p, NFULA_PREFIX, prefixes[f->prefix], strlen(prefixes[f->prefix]) + 1);
		put32(v, (uint32_t)f->ifindex);
		p = tlv(p, NFULA_IFINDEX_INDEV, v, 4);
		{
			uint8_t hw[12] = {0, 6, 0, 0, 0x52, 0x54, 0, 0x12, 0x34, (uint8_t)f->src[3]};
			p = tlv(p, NFULA_HWADDR, hw, 12);
		}
		put16(v, 1);
		p = tlv(p, NFULA_HWTYPE, v, 2);
		put16(v, 14);
		p = tlv(p, NFULA_HWLEN, v, 2);
		{
			uint8_t eth[14] = {0x52, 0x54, 0, 0xab, 0xcd, 0xef, 0x52, 0x54, 0, 0x12, 0x34,
					   (uint8_t)f->src[3], 0x08, 0x00};
			if (f->v6) {
				eth[12] = 0x86;
				eth[13] = 0xdd;
			}
			p = tlv(p, NFULA_HWHEADER, eth, 14);
		}
		if (rate > 0)	/* from the start, so rounding does not add up */
			t_us = t0_us + (uint64_t)((double)(k + 1) * 1e6 / rate);
		else
			t_us += 1 + rndn(140);
		put64(v, t_us / 1000000);
		put64(v + 8, t_us % 1000000);
		p = tlv(p, NFULA_TIMESTAMP, v, 16);
		p = tlv(p, NFULA_PAYLOAD, pkt, plen);

		rh[0] = (uint32_t)(t_us / 1000000);
		rh[1] = (uint32_t)(t_us % 1000000);
		rh[2] = rh[3] = (uint32_t)(p - rec);
		fwrite(rh, sizeof(rh), 1, fp);
		fwrite(rec, (size_t)(p - rec), 1, fp);
		total_bytes += (double)(p - rec);
		if (--f->left <= 0)
			(fixed_len ? new_flow_fixed : new_flow)(f);
	}
	if (fflush(fp) != 0 || (fp != stdout && fclose(fp) != 0)) {
		fprintf(stderr, "gen_nflog: %s: %s\n", out, strerror(errno));
		return 1;
	}
	fprintf(stderr, "gen_nflog: %lld records, mean %.0f bytes per NFLOG record\n", n,
		total_bytes / (double)n);
	free(flows);
	return 0;
usage:
	fprintf(stderr, "usage: gen_nflog -o FILE -n RECORDS [-m mix|size:N] [-s SEED] [-f FLOWS] [-a SOURCES]"
		" [-r RATE]\n");
	return 64;
}
