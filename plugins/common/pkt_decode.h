/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Packet decoder of the `decode` filter, kept apart from the plugin so unit
 * tests can feed it hand-built packets.
 *
 * sl_pkt_decode() reads SL_F_PACKET (and, when present, SL_F_HWHDR,
 * SL_F_HWTYPE, SL_F_FAMILY, SL_F_HW_PROTOCOL) from a record and sets the
 * decoded link, network and transport fields on the same record.  It never
 * reads outside the captured bytes, never allocates and makes no syscall.
 * Byte fields it sets (SL_F_IP_OPTIONS, SL_F_TCP_OPTIONS, SL_F_PAYLOAD) point
 * into the packet.
 */
#ifndef SLUICE_PKT_DECODE_H
#define SLUICE_PKT_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include <sluice/record.h>

struct sl_pkt_decode_opts {
	bool checksums;	/* verify IPv4 header and TCP/UDP/ICMP checksums */
};

/*
 * Decode the record's packet.  Returns the SL_DECODE_* bits, which are also
 * stored in SL_F_DECODE_FLAGS when non-zero.  A record without SL_F_PACKET
 * is left alone (returns 0).
 */
uint32_t sl_pkt_decode(struct sl_record *r, const struct sl_pkt_decode_opts *opts);

/*
 * RFC 1071 Internet checksum helpers, summing 32 bits at a time into a
 * 64-bit accumulator.  sl_csum_add() must be called on even-sized pieces
 * except the last one.  sl_csum_fold() returns the folded 16-bit sum as it
 * would be stored in memory (so a correct packet folds to 0xffff).
 */
uint64_t sl_csum_add(uint64_t sum, const uint8_t *p, uint32_t len);
uint16_t sl_csum_fold(uint64_t sum);

#endif /* SLUICE_PKT_DECODE_H */
