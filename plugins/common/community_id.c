/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Community ID v1, see community_id.h.  SHA-1 is nettle's: a hash is not
 * code to write by hand, and nettle is small and has no global state (no
 * library initialisation, so no interference between instances or with
 * another plugin's TLS library).
 */
#include <string.h>

#include <nettle/sha1.h>

#include "community_id.h"

enum { P_ICMP = 1, P_TCP = 6, P_UDP = 17, P_ICMPV6 = 58, P_SCTP = 132 };

bool sl_cid_proto_has_ports(uint8_t proto)
{
	return proto == P_TCP || proto == P_UDP || proto == P_SCTP || proto == P_ICMP ||
	       proto == P_ICMPV6;
}

/*
 * The counterpart of an ICMP type (Zeek's ICMP4_counterpart and
 * ICMP6_counterpart, as pycommunityid has them), or -1 for a one-way type.
 */
static int icmp4_counterpart(unsigned type)
{
	switch (type) {
	case 8: return 0;	/* echo request / reply */
	case 0: return 8;
	case 13: return 14;	/* timestamp */
	case 14: return 13;
	case 15: return 16;	/* information */
	case 16: return 15;
	case 10: return 9;	/* router solicitation / advertisement */
	case 9: return 10;
	case 17: return 18;	/* address mask */
	case 18: return 17;
	default: return -1;
	}
}

static int icmp6_counterpart(unsigned type)
{
	switch (type) {
	case 128: return 129;	/* echo request / reply */
	case 129: return 128;
	case 133: return 134;	/* router solicitation / advertisement */
	case 134: return 133;
	case 135: return 136;	/* neighbor solicitation / advertisement */
	case 136: return 135;
	case 130: return 131;	/* MLD query / report */
	case 131: return 130;
	case 139: return 140;	/* node information query / reply */
	case 140: return 139;
	case 144: return 145;	/* home agent address discovery */
	case 145: return 144;
	default: return -1;
	}
}

static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static void base64_20(const uint8_t in[20], char out[28])
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned i, o = 0;

	for (i = 0; i < 18; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = tab[(v >> 6) & 63];
		out[o++] = tab[v & 63];
	}
	/* 2 bytes left: 3 characters and one '=' */
	{
		uint32_t v = (uint32_t)in[18] << 16 | (uint32_t)in[19] << 8;

		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = tab[(v >> 6) & 63];
		out[o++] = '=';
	}
}

bool sl_community_id(const struct sl_cid_tuple *t, uint16_t seed, char out[SL_COMMUNITY_ID_LEN])
{
	bool v4 = !memcmp(t->saddr, v4mapped, 12), one_way = false, swap;
	const uint8_t *a = t->saddr, *b = t->daddr;
	uint16_t pa = t->sport, pb = t->dport;
	uint8_t buf[2 + 16 + 16 + 2 + 4], digest[SHA1_DIGEST_SIZE];
	unsigned alen = v4 ? 4 : 16, off = v4 ? 12 : 0, n = 0;
	bool ports = sl_cid_proto_has_ports(t->proto);
	struct sha1_ctx ctx;
	int c, cp;

	if (v4 != !memcmp(t->daddr, v4mapped, 12) || (ports && !t->has_ports))
		return false;
	if (!ports)
		pa = pb = 0;	/* the addresses alone order the endpoints */
	if (t->proto == P_ICMP || t->proto == P_ICMPV6) {
		cp = t->proto == P_ICMP ? icmp4_counterpart(pa) : icmp6_counterpart(pa);
		if (cp < 0)
			one_way = true;	/* ports stay type and code */
		else
			pb = (uint16_t)cp;
	}
	c = memcmp(a + off, b + off, alen);
	swap = !one_way && (c > 0 || (c == 0 && pa > pb));
	if (swap) {
		const uint8_t *ta = a;
		uint16_t tp = pa;

		a = b;
		b = ta;
		pa = pb;
		pb = tp;
	}
	buf[n++] = (uint8_t)(seed >> 8);
	buf[n++] = (uint8_t)seed;
	memcpy(buf + n, a + off, alen);
	n += alen;
	memcpy(buf + n, b + off, alen);
	n += alen;
	buf[n++] = t->proto;
	buf[n++] = 0;
	if (ports) {
		buf[n++] = (uint8_t)(pa >> 8);
		buf[n++] = (uint8_t)pa;
		buf[n++] = (uint8_t)(pb >> 8);
		buf[n++] = (uint8_t)pb;
	}
	sha1_init(&ctx);
	sha1_update(&ctx, n, buf);
	sha1_digest(&ctx, sizeof(digest), digest);
	out[0] = '1';
	out[1] = ':';
	base64_20(digest, out + 2);
	return true;
}
