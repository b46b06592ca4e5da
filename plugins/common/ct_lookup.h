/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A logged packet's connection, looked up through ctnetlink: nflog's
 * `conntrack: true` on a kernel without CONFIG_NETFILTER_NETLINK_GLUE_CT
 * (no NFULA_CT in the packet messages).  The protocol engine, on bytes:
 *   - the conntrack tuple of an IPv4/IPv6 packet (addresses, protocol,
 *     ports or ICMP id/type/code), as the kernel's nf_ct_get_tuple() makes
 *     it, and its inverse;
 *   - the IPCTNL_MSG_CT_GET request for a tuple, and its reply parsed;
 *   - a bounded cache tuple -> conntrack id with a short lifetime.
 * The kernel finds a connection by either direction's tuple, so one request
 * with the packet's tuple answers for both directions; the inverse tuple
 * answers for a packet seen after NAT rewrote it.  Nothing here allocates
 * or reads outside the bytes given.
 */
#ifndef SLUICE_CT_LOOKUP_H
#define SLUICE_CT_LOOKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/netlink.h>

#include "ct_attrs.h"

/* A tuple, zero-padded so that two tuples compare with memcmp(). */
struct sl_ct_tuple {
	uint8_t src[16], dst[16];	/* IPv4: the first 4 bytes, the rest zero */
	uint16_t sport, dport;		/* host order; ICMP: id, and type << 8 | code */
	uint8_t family;			/* AF_INET, AF_INET6 */
	uint8_t proto;			/* IPPROTO_* */
	uint8_t kind;			/* SL_CT_K_* */
	uint8_t pad_;			/* zero */
};

enum {
	SL_CT_K_NONE,	/* no ports: protocol number only (conntrack's generic tracker) */
	SL_CT_K_PORTS,	/* TCP, UDP, UDP-Lite, SCTP, DCCP, GRE (keys, 0 unless PPTP) */
	SL_CT_K_ICMP,	/* ICMP or ICMPv6 query: id, type, code */
};

/* sl_ct_tuple_from_packet()'s flags. */
enum {
	SL_CT_PKT_SYN = 1u << 0,	/* a TCP SYN without ACK: a connection may begin */
	SL_CT_PKT_RELATED = 1u << 1,	/* an ICMP error: the tuple is the quoted packet's */
};

/*
 * The tuple of the IP packet (IPv4 or IPv6 by its version; `len` bytes from
 * its network header) into *t: 0 with *flags set, or -1 when conntrack
 * keeps no connection for it or it is too short to say: not IP, cut before
 * the L4 ports, a fragment after the first, an ICMP type conntrack does not
 * track.  An ICMP error (destination unreachable, time exceeded...) gets
 * the tuple of the packet it quotes, whose connection conntrack relates it
 * to, and SL_CT_PKT_RELATED.
 */
int sl_ct_tuple_from_packet(struct sl_ct_tuple *t, const uint8_t *pkt, size_t len,
			    unsigned *flags);

/* The tuple of the other direction: addresses and ports swapped, ICMP query <-> reply. */
void sl_ct_tuple_invert(struct sl_ct_tuple *t);

/* Room sl_ct_get_put() needs. */
#define SL_CT_GET_MAX 256

/*
 * IPCTNL_MSG_CT_GET for the connection with tuple t (as CTA_TUPLE_ORIG,
 * zone 0) built in buf (SL_CT_GET_MAX bytes, 4-byte aligned), sequence seq.
 */
struct nlmsghdr *sl_ct_get_put(void *buf, const struct sl_ct_tuple *t, uint32_t seq);

/*
 * The reply to request seq among the `len` bytes of one received datagram:
 * 1 with *ci filled (ci->have has SL_CI_ID when the kernel gave the id),
 * 0 when the kernel has no such connection (ENOENT), -1 with errno for
 * another error the kernel sent (EPERM, EOPNOTSUPP: no ctnetlink...), or
 * EPROTO for a malformed reply, or EAGAIN when the datagram holds no
 * answer to seq (a stale reply: read on).
 */
int sl_ct_get_reply(const void *buf, size_t len, uint32_t seq, struct sl_ct_info *ci);

/*
 * The tuples of both directions of a parsed connection (a destroy event)
 * in the form sl_ct_tuple_from_packet() makes them: 0, or -1 when it has
 * no tuple a packet would have (no ports where the protocol has them, an
 * unknown family, no reply tuple).
 */
int sl_ct_tuples_of(const struct sl_ct_info *ci, struct sl_ct_tuple *orig,
		    struct sl_ct_tuple *reply);

/* Cache entries: a direct-mapped table, a colliding tuple takes the slot. */
#define SL_CT_CACHE_SLOTS 1024

struct sl_ct_cache_slot {
	struct sl_ct_tuple t;
	uint32_t id;
	int64_t expires_ns;	/* 0: empty */
};

struct sl_ct_cache {
	struct sl_ct_cache_slot slot[SL_CT_CACHE_SLOTS];
};

/* The id cached for t, if it has not expired at now_ns: true and *id. */
bool sl_ct_cache_get(const struct sl_ct_cache *c, const struct sl_ct_tuple *t, int64_t now_ns,
		     uint32_t *id);

/* Cache id for t until expires_ns (> 0). */
void sl_ct_cache_put(struct sl_ct_cache *c, const struct sl_ct_tuple *t, uint32_t id,
		     int64_t expires_ns);

#endif /* SLUICE_CT_LOOKUP_H */
