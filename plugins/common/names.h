/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Names of IP protocols, netfilter families and conntrack TCP states: one
 * table each, for every plugin that prints or reads them (json, the
 * conntrack -E line, nfct's `protocols` option).  Outputs that mimic
 * another tool name only what that tool names, so each protocol row says
 * which vocabularies use it.
 */
#ifndef SLUICE_NAMES_H
#define SLUICE_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* Vocabularies of protocol names (struct sl_proto_name.sets). */
enum {
	SL_PROTO_CONNTRACK = 1u << 0,	/* conntrack -E (libnetfilter_conntrack's l4proto2str) */
	SL_PROTO_JSON = 1u << 1,	/* the json filter's ip_proto */
	SL_PROTO_CONFIG = 1u << 2,	/* accepted in configurations (nfct's protocols) */
};

struct sl_proto_name {
	const char *name;	/* in the vocabularies of `sets` */
	uint8_t sets;
	const char *iana;	/* the IANA keyword in lower case, or NULL */
};

/* Indexed by protocol number; rows without a name are zero. */
extern const struct sl_proto_name sl_proto_names[256];

/* The name of protocol p in vocabulary `set`, or NULL. */
static inline const char *sl_proto_name(uint64_t p, unsigned set)
{
	return p < 256 && (sl_proto_names[p].sets & set) ? sl_proto_names[p].name : NULL;
}

/*
 * The IANA "Assigned Internet Protocol Numbers" keyword of p in lower case
 * (ECS's network.transport: "ipv4" for 4, "ipv6-icmp" for 58), or NULL.
 */
static inline const char *sl_proto_iana(uint64_t p)
{
	return p < 256 ? sl_proto_names[p].iana : NULL;
}

/*
 * A protocol named in a configuration (case-insensitive, SL_PROTO_CONFIG
 * names and "ipv6-icmp") or given as a number 0-255; -1 if neither.
 */
int sl_proto_number(const char *s);

/* NFPROTO_* family (the `family` field; AF_INET and AF_INET6 share the numbers). */
extern const char *const sl_family_names[13];

static inline const char *sl_family_name(uint64_t f)
{
	return f < sizeof(sl_family_names) / sizeof(sl_family_names[0]) ? sl_family_names[f] : NULL;
}

/*
 * NFPROTO_* of a family as nft names it (ip, ip6, inet, arp, bridge,
 * netdev), the first len bytes of name; -1 if not one.
 */
int sl_nft_family_number(const char *name, size_t len);
/* The nft family name of NFPROTO_ number num ("ip", "inet", ...); NULL if none. */
const char *sl_nft_family_name(int num);

/* TCP_CONNTRACK_* states, as conntrack -E writes them and in lower case. */
struct sl_tcp_state_name {
	const char *upper, *lower;
};

#define SL_TCP_STATES 10
extern const struct sl_tcp_state_name sl_tcp_state_names[SL_TCP_STATES];

/* "SYN_SENT"... (conntrack's spelling), NULL past the known states. */
static inline const char *sl_tcp_state_upper(uint64_t s)
{
	return s < SL_TCP_STATES ? sl_tcp_state_names[s].upper : NULL;
}

static inline const char *sl_tcp_state_lower(uint64_t s)
{
	return s < SL_TCP_STATES ? sl_tcp_state_names[s].lower : NULL;
}

#endif /* SLUICE_NAMES_H */
