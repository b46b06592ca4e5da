/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Community ID v1 flow hash (https://github.com/corelight/community-id-spec):
 * "1:" + base64(SHA-1(seed . saddr . daddr . proto . 0 . sport . dport)),
 * the endpoints ordered so the smaller address (then port) comes first.
 * ICMP and ICMPv6 use type and the counterpart type (or the code, for the
 * one-way types) as ports, after Zeek; protocols other than TCP, UDP, SCTP
 * and the ICMPs hash no ports.  No allocation, no syscall.
 */
#ifndef SLUICE_COMMUNITY_ID_H
#define SLUICE_COMMUNITY_ID_H

#include <stdbool.h>
#include <stdint.h>

/* "1:" and 28 base64 characters; no NUL is written. */
#define SL_COMMUNITY_ID_LEN 30

struct sl_cid_tuple {
	const uint8_t *saddr, *daddr;	/* 16 bytes; IPv4 as ::ffff:a.b.c.d */
	uint8_t proto;
	bool has_ports;			/* TCP/UDP/SCTP ports or ICMP type/code known */
	uint16_t sport, dport;		/* for the ICMPs: type and code */
};

/* Whether proto carries ports (or type/code) in the hash. */
bool sl_cid_proto_has_ports(uint8_t proto);

/*
 * Write the Community ID of t with `seed` to out (SL_COMMUNITY_ID_LEN
 * bytes).  Returns false (out untouched) when the tuple has no hash: the
 * addresses of different families, or a protocol with ports without them.
 */
bool sl_community_id(const struct sl_cid_tuple *t, uint16_t seed, char out[SL_COMMUNITY_ID_LEN]);

#endif /* SLUICE_COMMUNITY_ID_H */
