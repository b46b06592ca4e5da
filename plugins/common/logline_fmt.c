/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel LOG text from a record (see logline_fmt.h).  Every string, space
 * and case below is the kernel's (net/netfilter/nf_log_syslog.c, 6.x):
 * reordering or "tidying" any of them breaks the field-for-field match the
 * e2e test checks against live printk lines.
 */
#include "logline_fmt.h"
#include "text_escape.h"

/* The packet as the kernel's skb_header_pointer() sees it. */
struct pkt {
	const uint8_t *p;
	uint32_t cap;	/* bytes we have */
	uint32_t len;	/* skb->len: the original length */
};

/* Fixed-size appends are all shorter than this; see sl_logline_format(). */
#define SLACK 128

enum {
	NFPROTO_IPV4_ = 2,
	NFPROTO_ARP_ = 3,
	NFPROTO_NETDEV_ = 5,
	NFPROTO_BRIDGE_ = 7,
	NFPROTO_IPV6_ = 10,
	ARPHRD_ETHER_ = 1,
};

static const uint8_t *hp(const struct pkt *k, uint32_t off, uint32_t n)
{
	if (off > k->cap || k->cap - off < n)
		return NULL;
	return k->p + off;
}

static inline unsigned rd16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Variable-length text: copy what fits (the line is cut at the end anyway). */
static void put_trunc(struct sl_fmt_buf *b, const void *s, size_t n)
{
	size_t room;

	if (b->overflow)
		return;
	room = b->cap - b->len;
	if (n > room) {
		n = room;
		b->overflow = true;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* "%02X" for each byte, no separator (IP and TCP options). */
static void put_hex_upper(struct sl_fmt_buf *b, const uint8_t *p, unsigned n)
{
	static const char hx[16] = "0123456789ABCDEF";
	unsigned i;

	for (i = 0; i < n; i++) {
		char two[2] = {hx[p[i] >> 4], hx[p[i] & 15]};

		put_trunc(b, two, 2);
	}
}

static void put_string_field(struct sl_fmt_buf *b, const struct sl_record *r, sl_field f)
{
	const uint8_t *s, *nul;
	size_t n;

	if (!sl_has(r, f))
		return;
	s = r->v[f].bytes.ptr;
	n = r->v[f].bytes.len;
	/* the kernel prints these with %s: they end at the first NUL */
	nul = memchr(s, 0, n);
	if (nul)
		n = (size_t)(nul - s);
	/*
	 * Escaped as /dev/kmsg shows printk's line (\xNN; a newline in a
	 * prefix would forge a second line): ordinary text is copied as is.
	 */
	sl_fmt_escaped(b, s, n, SL_ESC_BACKSLASH);
}

static void incomplete(struct sl_fmt_buf *b, uint32_t bytes)
{
	sl_fmt_lit(b, "INCOMPLETE [");
	sl_fmt_u64(b, bytes);
	sl_fmt_lit(b, " bytes] ");
}

static void uid_mark(struct sl_fmt_buf *b, const struct sl_record *r, unsigned flags)
{
	if ((flags & SL_LOGLINE_UID) && sl_has(r, SL_F_UID) && sl_has(r, SL_F_GID)) {
		sl_fmt_lit(b, "UID=");
		sl_fmt_u64(b, (uint32_t)r->v[SL_F_UID].u64);
		sl_fmt_lit(b, " GID=");
		sl_fmt_u64(b, (uint32_t)r->v[SL_F_GID].u64);
		sl_fmt_chr(b, ' ');
	}
	if (!(flags & SL_LOGLINE_NOMARK) && sl_has(r, SL_F_MARK) && (uint32_t)r->v[SL_F_MARK].u64) {
		sl_fmt_lit(b, "MARK=0x");
		sl_fmt_hex(b, (uint32_t)r->v[SL_F_MARK].u64, 0, false);
		sl_fmt_chr(b, ' ');
	}
}

/* The flags of TCP header byte 13 from its top bit down, 4 bytes each. */
static const char tcp_flag_names[] = "CWR ECE URG ACK PSH RST SYN FIN ";

/* nf_log_dump_tcp_header(): 1 when the caller must stop. */
static int dump_tcp(struct sl_fmt_buf *b, const struct pkt *k, bool fragment, uint32_t off,
		    unsigned flags)
{
	const uint8_t *th;
	unsigned doff;

	sl_fmt_lit(b, "PROTO=TCP ");
	if (fragment)
		return 0;
	th = hp(k, off, 20);
	if (!th) {
		incomplete(b, k->len - off);
		return 1;
	}
	sl_fmt_lit(b, "SPT=");
	sl_fmt_u64(b, rd16(th));
	sl_fmt_lit(b, " DPT=");
	sl_fmt_u64(b, rd16(th + 2));
	sl_fmt_chr(b, ' ');
	if (flags & SL_LOGLINE_TCPSEQ) {
		sl_fmt_lit(b, "SEQ=");
		sl_fmt_u64(b, rd32(th + 4));
		sl_fmt_lit(b, " ACK=");
		sl_fmt_u64(b, rd32(th + 8));
		sl_fmt_chr(b, ' ');
	}
	sl_fmt_lit(b, "WINDOW=");
	sl_fmt_u64(b, rd16(th + 14));
	/* reserved bits 0x0E000000 of the flag word >> 22; the 4th is AE */
	sl_fmt_lit(b, " RES=0x");
	sl_fmt_hex(b, (th[12] & 0x0e) << 2, 2, false);
	sl_fmt_chr(b, ' ');
	if (th[12] & 0x01)
		sl_fmt_lit(b, "AE ");
	for (unsigned i = 0; i < 8; i++)
		if (th[13] & (0x80 >> i))
			sl_fmt_mem(b, tcp_flag_names + 4 * i, 4);
	sl_fmt_lit(b, "URGP=");
	sl_fmt_u64(b, rd16(th + 18));
	sl_fmt_chr(b, ' ');

	doff = (unsigned)(th[12] >> 4) * 4;
	if ((flags & SL_LOGLINE_TCPOPT) && doff > 20) {
		const uint8_t *op = hp(k, off + 20, doff - 20);

		if (!op) {
			sl_fmt_lit(b, "OPT (TRUNCATED)");
			return 1;
		}
		sl_fmt_lit(b, "OPT (");
		put_hex_upper(b, op, doff - 20);
		sl_fmt_lit(b, ") ");
	}
	return 0;
}

/* nf_log_dump_udp_header() */
static int dump_udp(struct sl_fmt_buf *b, const struct pkt *k, unsigned proto, bool fragment,
		    uint32_t off)
{
	const uint8_t *uh;

	if (proto == 17)
		sl_fmt_lit(b, "PROTO=UDP ");
	else
		sl_fmt_lit(b, "PROTO=UDPLITE ");
	if (fragment)
		return 0;
	uh = hp(k, off, 8);
	if (!uh) {
		incomplete(b, k->len - off);
		return 1;
	}
	sl_fmt_lit(b, "SPT=");
	sl_fmt_u64(b, rd16(uh));
	sl_fmt_lit(b, " DPT=");
	sl_fmt_u64(b, rd16(uh + 2));
	sl_fmt_lit(b, " LEN=");
	sl_fmt_u64(b, rd16(uh + 4));
	sl_fmt_chr(b, ' ');
	return 0;
}

static void spi(struct sl_fmt_buf *b, const uint8_t *p)
{
	sl_fmt_lit(b, "SPI=0x");
	sl_fmt_hex(b, rd32(p), 0, false);
}

/* An ICMP or ICMPv6 header's type and code. */
static void type_code(struct sl_fmt_buf *b, const uint8_t *ic)
{
	sl_fmt_lit(b, "TYPE=");
	sl_fmt_u64(b, ic[0]);
	sl_fmt_lit(b, " CODE=");
	sl_fmt_u64(b, ic[1]);
	sl_fmt_chr(b, ' ');
}

/* An ICMP or ICMPv6 echo request or reply: its identifier and sequence. */
static void echo_id_seq(struct sl_fmt_buf *b, const uint8_t *ic)
{
	sl_fmt_lit(b, "ID=");
	sl_fmt_u64(b, rd16(ic + 4));
	sl_fmt_lit(b, " SEQ=");
	sl_fmt_u64(b, rd16(ic + 6));
	sl_fmt_chr(b, ' ');
}

/* Minimum ICMP lengths the kernel wants before decoding a type further. */
static const uint8_t icmp_required_len[19] = {
	[0] = 4, [3] = 28, [4] = 28, [5] = 28, [8] = 4, [11] = 28,
	[12] = 28, [13] = 20, [14] = 20, [17] = 12, [18] = 12,
};

/* dump_ipv4_packet(); iphoff != 0 inside an ICMP error. */
static void dump_ipv4(struct sl_fmt_buf *b, const struct sl_record *r, const struct pkt *k,
		      unsigned flags, uint32_t iphoff)
{
	const uint8_t *ih;
	unsigned frag, ihl, proto;
	uint32_t l4;

	ih = hp(k, iphoff, 20);
	if (!ih) {
		sl_fmt_lit(b, "TRUNCATED");
		return;
	}
	sl_fmt_lit(b, "SRC=");
	sl_fmt_ip4(b, ih + 12);
	sl_fmt_lit(b, " DST=");
	sl_fmt_ip4(b, ih + 16);
	sl_fmt_lit(b, " LEN=");
	sl_fmt_u64(b, rd16(ih + 2));
	sl_fmt_lit(b, " TOS=0x");
	sl_fmt_hex(b, ih[1] & 0x1e, 2, true);
	sl_fmt_lit(b, " PREC=0x");
	sl_fmt_hex(b, ih[1] & 0xe0, 2, true);
	sl_fmt_lit(b, " TTL=");
	sl_fmt_u64(b, ih[8]);
	sl_fmt_lit(b, " ID=");
	sl_fmt_u64(b, rd16(ih + 4));
	sl_fmt_chr(b, ' ');

	frag = rd16(ih + 6);
	if (frag & 0x8000)
		sl_fmt_lit(b, "CE ");
	if (frag & 0x4000)
		sl_fmt_lit(b, "DF ");
	if (frag & 0x2000)
		sl_fmt_lit(b, "MF ");
	if (frag & 0x1fff) {
		sl_fmt_lit(b, "FRAG:");
		sl_fmt_u64(b, frag & 0x1fff);
		sl_fmt_chr(b, ' ');
	}

	ihl = (ih[0] & 15u) * 4;
	if ((flags & SL_LOGLINE_IPOPT) && ihl > 20) {
		const uint8_t *op = hp(k, iphoff + 20, ihl - 20);

		if (!op) {
			sl_fmt_lit(b, "TRUNCATED");
			return;
		}
		sl_fmt_lit(b, "OPT (");
		put_hex_upper(b, op, ihl - 20);
		sl_fmt_lit(b, ") ");
	}

	proto = ih[9];
	l4 = iphoff + ihl;
	switch (proto) {
	case 6:
		if (dump_tcp(b, k, frag & 0x1fff, l4, flags))
			return;
		break;
	case 17:
	case 136:
		if (dump_udp(b, k, proto, frag & 0x1fff, l4))
			return;
		break;
	case 1: {
		const uint8_t *ich;
		unsigned type, code;

		sl_fmt_lit(b, "PROTO=ICMP ");
		if (frag & 0x1fff)
			break;
		ich = hp(k, l4, 8);
		if (!ich) {
			incomplete(b, k->len - l4);
			break;
		}
		type = ich[0];
		code = ich[1];
		type_code(b, ich);
		if (type <= 18 && icmp_required_len[type] && k->len - l4 < icmp_required_len[type]) {
			incomplete(b, k->len - l4);
			break;
		}
		switch (type) {
		case 0:
		case 8:
			echo_id_seq(b, ich);
			break;
		case 12:
			sl_fmt_lit(b, "PARAMETER=");
			sl_fmt_u64(b, ich[4]);
			sl_fmt_chr(b, ' ');
			break;
		case 5:
			sl_fmt_lit(b, "GATEWAY=");
			sl_fmt_ip4(b, ich + 4);
			sl_fmt_chr(b, ' ');
			__attribute__((fallthrough));
		case 3:
		case 4:
		case 11:
			if (!iphoff) {	/* only one level of recursion */
				sl_fmt_chr(b, '[');
				dump_ipv4(b, r, k, flags, l4 + 8);
				sl_fmt_lit(b, "] ");
			}
			if (type == 3 && code == 4) {
				sl_fmt_lit(b, "MTU=");
				sl_fmt_u64(b, rd16(ich + 6));
				sl_fmt_chr(b, ' ');
			}
			break;
		}
		break;
	}
	case 51: {
		const uint8_t *ah;

		if (frag & 0x1fff)
			break;
		sl_fmt_lit(b, "PROTO=AH ");
		ah = hp(k, l4, 12);
		if (!ah) {
			incomplete(b, k->len - l4);
			break;
		}
		spi(b, ah + 4);
		sl_fmt_chr(b, ' ');
		break;
	}
	case 50: {
		const uint8_t *eh;

		sl_fmt_lit(b, "PROTO=ESP ");
		if (frag & 0x1fff)
			break;
		eh = hp(k, l4, 8);
		if (!eh) {
			incomplete(b, k->len - l4);
			break;
		}
		spi(b, eh);
		sl_fmt_chr(b, ' ');
		break;
	}
	default:
		sl_fmt_lit(b, "PROTO=");
		sl_fmt_u64(b, proto);
		sl_fmt_chr(b, ' ');
	}
	if (!iphoff)
		uid_mark(b, r, flags);
}

static bool ip6_ext_hdr(unsigned h)
{
	return h == 0 || h == 43 || h == 44 || h == 50 || h == 51 || h == 59 || h == 60;
}

/*
 * An IPv6 AH or ESP header at ptr, with ip options: its name and the SPI
 * at spi_off of its first len bytes; false when the option (and the
 * line) ends here: a fragment, or a header cut short.
 */
static bool ipsec_opt6(struct sl_fmt_buf *b, const struct pkt *k, uint32_t ptr, bool fragment,
		       const char *name, uint32_t len, uint32_t spi_off)
{
	const uint8_t *h;

	sl_fmt_str(b, name);
	if (fragment) {
		sl_fmt_chr(b, ')');
		return false;
	}
	h = hp(k, ptr, len);
	if (!h) {
		incomplete(b, k->len - ptr);
		sl_fmt_chr(b, ')');
		return false;
	}
	spi(b, h + spi_off);
	return true;
}

/* dump_ipv6_packet() */
static void dump_ipv6(struct sl_fmt_buf *b, const struct sl_record *r, const struct pkt *k,
		      unsigned flags, uint32_t ip6hoff, bool recurse)
{
	const uint8_t *ih;
	uint32_t ptr, w, hdrlen = 0;
	unsigned cur;
	bool fragment = false;

	ih = hp(k, ip6hoff, 40);
	if (!ih) {
		sl_fmt_lit(b, "TRUNCATED");
		return;
	}
	sl_fmt_lit(b, "SRC=");
	sl_fmt_ip6_full(b, ih + 8);
	sl_fmt_lit(b, " DST=");
	sl_fmt_ip6_full(b, ih + 24);
	w = rd32(ih);
	sl_fmt_lit(b, " LEN=");
	sl_fmt_u64(b, rd16(ih + 4) + 40u);
	sl_fmt_lit(b, " TC=");
	sl_fmt_u64(b, (w & 0x0ff00000) >> 20);
	sl_fmt_lit(b, " HOPLIMIT=");
	sl_fmt_u64(b, ih[7]);
	sl_fmt_lit(b, " FLOWLBL=");
	sl_fmt_u64(b, w & 0x000fffff);
	sl_fmt_chr(b, ' ');

	ptr = ip6hoff + 40;
	cur = ih[6];
	while (cur != 59 && ip6_ext_hdr(cur)) {
		const uint8_t *h = hp(k, ptr, 2);

		if (!h) {
			sl_fmt_lit(b, "TRUNCATED");
			return;
		}
		if (flags & SL_LOGLINE_IPOPT)
			sl_fmt_lit(b, "OPT ( ");
		switch (cur) {
		case 44: {
			const uint8_t *fh;
			unsigned fo;

			sl_fmt_lit(b, "FRAG:");
			fh = hp(k, ptr, 8);
			if (!fh) {
				sl_fmt_lit(b, "TRUNCATED ");
				return;
			}
			fo = rd16(fh + 2);
			sl_fmt_u64(b, fo & 0xfff8);
			sl_fmt_chr(b, ' ');
			if (fo & 1)
				sl_fmt_lit(b, "INCOMPLETE ");
			sl_fmt_lit(b, "ID:");
			sl_fmt_hex(b, rd32(fh + 4), 8, false);
			sl_fmt_chr(b, ' ');
			if (fo & 0xfff8)
				fragment = true;
			hdrlen = 8;
			break;
		}
		case 60:
		case 43:
		case 0:
			if (fragment) {
				if (flags & SL_LOGLINE_IPOPT)
					sl_fmt_chr(b, ')');
				return;
			}
			hdrlen = ((uint32_t)h[1] + 1) << 3;
			break;
		case 51:
			if (flags & SL_LOGLINE_IPOPT) {
				if (!ipsec_opt6(b, k, ptr, fragment, "AH ", 12, 4))
					return;
				sl_fmt_chr(b, ' ');
			}
			hdrlen = ((uint32_t)h[1] + 2) << 2;
			break;
		case 50:
			if ((flags & SL_LOGLINE_IPOPT) && ipsec_opt6(b, k, ptr, fragment, "ESP ", 8, 0))
				sl_fmt_lit(b, " )");
			return;
		}
		if (flags & SL_LOGLINE_IPOPT)
			sl_fmt_lit(b, ") ");
		cur = h[0];
		ptr += hdrlen;
	}

	switch (cur) {
	case 6:
		if (dump_tcp(b, k, fragment, ptr, flags))
			return;
		break;
	case 17:
	case 136:
		if (dump_udp(b, k, cur, fragment, ptr))
			return;
		break;
	case 58: {
		const uint8_t *ic;
		unsigned type;

		sl_fmt_lit(b, "PROTO=ICMPv6 ");
		if (fragment)
			break;
		ic = hp(k, ptr, 8);
		if (!ic) {
			incomplete(b, k->len - ptr);
			return;
		}
		type = ic[0];
		type_code(b, ic);
		switch (type) {
		case 128:
		case 129:
			echo_id_seq(b, ic);
			break;
		case 130:
		case 131:
		case 132:
			break;
		case 4:
			sl_fmt_lit(b, "POINTER=");
			sl_fmt_hex(b, rd32(ic + 4), 8, false);
			sl_fmt_chr(b, ' ');
			__attribute__((fallthrough));
		case 1:
		case 2:
		case 3:
			if (recurse) {
				sl_fmt_chr(b, '[');
				dump_ipv6(b, r, k, flags, ptr + 8, false);
				sl_fmt_lit(b, "] ");
			}
			if (type == 2) {
				sl_fmt_lit(b, "MTU=");
				sl_fmt_u64(b, rd32(ic + 4));
				sl_fmt_chr(b, ' ');
			}
			break;
		}
		break;
	}
	default:
		sl_fmt_lit(b, "PROTO=");
		sl_fmt_u64(b, cur);
		sl_fmt_chr(b, ' ');
	}
	if (recurse)
		uid_mark(b, r, flags);
}

/* MACSRC= MACDST= MACPROTO= from an Ethernet header. */
static void mac_decoded(struct sl_fmt_buf *b, const uint8_t *eth)
{
	sl_fmt_lit(b, "MACSRC=");
	sl_fmt_mac(b, eth + 6);
	sl_fmt_lit(b, " MACDST=");
	sl_fmt_mac(b, eth);
	sl_fmt_lit(b, " MACPROTO=");
	sl_fmt_hex(b, rd16(eth + 12), 4, false);
	sl_fmt_chr(b, ' ');
}

static bool hw_is_ether(const struct sl_record *r)
{
	return sl_has(r, SL_F_HWTYPE) && r->v[SL_F_HWTYPE].u64 == ARPHRD_ETHER_;
}

/* dump_mac_header() */
static void dump_mac(struct sl_fmt_buf *b, const struct sl_record *r, unsigned flags)
{
	const uint8_t *h = NULL;
	uint32_t n = 0, i;

	if (sl_has(r, SL_F_HWHDR)) {
		h = r->v[SL_F_HWHDR].bytes.ptr;
		n = r->v[SL_F_HWHDR].bytes.len;
	}
	if ((flags & SL_LOGLINE_MACDECODE) && hw_is_ether(r)) {
		if (n >= 14)
			mac_decoded(b, h);
		return;
	}
	sl_fmt_lit(b, "MAC=");
	if (n) {
		if (3 * (size_t)n - 1 <= SLACK) {
			sl_fmt_hexbytes(b, h, n, ':');
		} else {
			for (i = 0; i < n; i++) {
				char t[3] = {':', "0123456789abcdef"[h[i] >> 4], "0123456789abcdef"[h[i] & 15]};

				put_trunc(b, i ? t : t + 1, i ? 3 : 2);
			}
		}
	}
	sl_fmt_chr(b, ' ');
}

/* dump_arp_packet() */
static void dump_arp(struct sl_fmt_buf *b, const struct sl_record *r, const struct pkt *k, unsigned flags)
{
	const uint8_t *ah, *ap;

	ah = hp(k, 0, 8);
	if (!ah) {
		sl_fmt_lit(b, "TRUNCATED");
		return;
	}
	if ((flags & SL_LOGLINE_MACDECODE) && hw_is_ether(r) && sl_has(r, SL_F_HWHDR) &&
	    r->v[SL_F_HWHDR].bytes.len >= 14)
		mac_decoded(b, r->v[SL_F_HWHDR].bytes.ptr);
	sl_fmt_lit(b, "ARP HTYPE=");
	sl_fmt_u64(b, rd16(ah));
	sl_fmt_lit(b, " PTYPE=0x");
	sl_fmt_hex(b, rd16(ah + 2), 4, false);
	sl_fmt_lit(b, " OPCODE=");
	sl_fmt_u64(b, rd16(ah + 6));
	if (rd16(ah) != 1 || ah[4] != 6 || ah[5] != 4)
		return;
	ap = hp(k, 8, 20);
	if (!ap) {
		sl_fmt_lit(b, " INCOMPLETE [");
		sl_fmt_u64(b, (uint64_t)k->len - 8);	/* %zu of an unsigned difference */
		sl_fmt_lit(b, " bytes]");
		return;
	}
	sl_fmt_lit(b, " MACSRC=");
	sl_fmt_mac(b, ap);
	sl_fmt_lit(b, " IPSRC=");
	sl_fmt_ip4(b, ap + 6);
	sl_fmt_lit(b, " MACDST=");
	sl_fmt_mac(b, ap + 10);
	sl_fmt_lit(b, " IPDST=");
	sl_fmt_ip4(b, ap + 16);
}

static uint64_t u64_or(const struct sl_record *r, sl_field f, uint64_t def)
{
	return sl_has(r, f) ? r->v[f].u64 : def;
}

/* "PHYSIN=port " (key) when the bridge port is not the device itself */
static void physdev(struct sl_fmt_buf *b, const struct sl_record *r, const char *key, sl_field name,
		    sl_field physindex, sl_field ifindex)
{
	if (sl_has(r, name) && u64_or(r, physindex, 0) != u64_or(r, ifindex, 0)) {
		sl_fmt_str(b, key);
		put_string_field(b, r, name);
		sl_fmt_chr(b, ' ');
	}
}

bool sl_logline_format(struct sl_fmt_buf *out, const struct sl_record *r, unsigned flags)
{
	struct sl_fmt_buf b;
	struct pkt k;
	unsigned family, kind;
	bool bridge, in;
	size_t room;

	if (!sl_has(r, SL_F_PACKET))
		return false;
	k.p = r->v[SL_F_PACKET].bytes.ptr;
	k.cap = r->v[SL_F_PACKET].bytes.len;
	k.len = (uint32_t)u64_or(r, SL_F_ORIG_LEN, k.cap);
	if (k.len < k.cap)
		k.len = k.cap;

	/*
	 * Write straight into the caller's buffer, but with room for at most
	 * SL_LOGLINE_MAX + SLACK bytes: fixed-size pieces always fit below
	 * the cut, variable ones are copied partially, and the result is cut
	 * at SL_LOGLINE_MAX like the kernel's vsnprintf into its 1 KiB buffer.
	 */
	if (out->overflow)
		return true;
	room = out->cap - out->len;
	sl_fmt_init(&b, out->p + out->len, room < SL_LOGLINE_MAX + SLACK ? room : SL_LOGLINE_MAX + SLACK);

	family = (unsigned)u64_or(r, SL_F_FAMILY, 0);
	if (family == 0 && k.cap)	/* unknown: guess from the IP version */
		family = (k.p[0] >> 4) == 6 ? NFPROTO_IPV6_ : (k.p[0] >> 4) == 4 ? NFPROTO_IPV4_ : 0;
	bridge = family == NFPROTO_BRIDGE_;
	kind = family;
	if (family == NFPROTO_BRIDGE_ || family == NFPROTO_NETDEV_) {
		/* nf_log_netdev_packet(): dispatch on skb->protocol */
		switch (u64_or(r, SL_F_HW_PROTOCOL, 0)) {
		case 0x0800: kind = NFPROTO_IPV4_; break;
		case 0x86dd: kind = NFPROTO_IPV6_; break;
		case 0x0806:
		case 0x8035: kind = NFPROTO_ARP_; break;
		default: kind = 0; break;
		}
	}

	/* nf_log_dump_packet_common() */
	put_string_field(&b, r, SL_F_PREFIX);
	in = sl_has(r, SL_F_IFINDEX_IN) || sl_has(r, SL_F_IFNAME_IN);
	sl_fmt_lit(&b, "IN=");
	/*
	 * For the bridge family nfnetlink_log reports the bridge as the
	 * input device and the port as PHYSINDEV, while the kernel's line
	 * shows the port as IN=.
	 */
	put_string_field(&b, r,
			 bridge && sl_has(r, SL_F_PHYSNAME_IN) ? SL_F_PHYSNAME_IN : SL_F_IFNAME_IN);
	sl_fmt_lit(&b, " OUT=");
	put_string_field(&b, r,
			 bridge && sl_has(r, SL_F_PHYSNAME_OUT) ? SL_F_PHYSNAME_OUT : SL_F_IFNAME_OUT);
	sl_fmt_chr(&b, ' ');
	if (!bridge) {
		physdev(&b, r, "PHYSIN=", SL_F_PHYSNAME_IN, SL_F_PHYSINDEX_IN, SL_F_IFINDEX_IN);
		physdev(&b, r, "PHYSOUT=", SL_F_PHYSNAME_OUT, SL_F_PHYSINDEX_OUT, SL_F_IFINDEX_OUT);
	}

	switch (kind) {
	case NFPROTO_IPV4_:
		if (in)
			dump_mac(&b, r, flags);
		dump_ipv4(&b, r, &k, flags, 0);
		break;
	case NFPROTO_IPV6_:
		if (in)
			dump_mac(&b, r, flags);
		dump_ipv6(&b, r, &k, flags, 0, true);
		break;
	case NFPROTO_ARP_:
		dump_arp(&b, r, &k, flags);
		break;
	default:
		dump_mac(&b, r, flags);
		break;
	}

	if (b.len > SL_LOGLINE_MAX)	/* not inside a \xNN or a UTF-8 sequence */
		b.len = sl_esc_cut(b.p, b.len, SL_LOGLINE_MAX);
	else if (b.overflow) {
		/* the caller's buffer was too small for a line that short */
		out->overflow = true;
		return true;
	}
	out->len += b.len;
	return true;
}
