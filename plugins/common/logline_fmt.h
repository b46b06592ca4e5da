/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel LOG target's text (net/netfilter/nf_log_syslog.c), rebuilt
 * from a record.  Kept apart from the logline plugin so unit tests can feed
 * it hand-built records.
 *
 * The network part is rendered from SL_F_PACKET itself, the way the kernel
 * walks the skb: that is the only way to be identical field for field
 * (embedded packets of ICMP errors, IPv6 extension header walk, INCOMPLETE
 * markers, reserved TCP bits).  The metadata comes from the record:
 *   SL_F_PREFIX                  the prefix (up to its first NUL, like %s)
 * Text taken from the record (the prefix, interface names) is escaped as
 * /dev/kmsg shows printk's lines: control bytes, DEL, '\' and invalid
 * UTF-8 as \xNN (text_escape.h); valid UTF-8 is kept.
 *   SL_F_IFNAME_IN/OUT           IN= OUT= (IFINDEX_IN present = "has an
 *                                input device", which decides MAC=)
 *   SL_F_PHYSNAME_IN/OUT         PHYSIN= PHYSOUT= (when the phys index
 *                                differs from the logical one)
 *   SL_F_HWHDR, SL_F_HWTYPE      MAC= (or MACSRC= ... with macdecode)
 *   SL_F_FAMILY, SL_F_HW_PROTOCOL which dumper runs (ip, ip6, arp, other)
 *   SL_F_ORIG_LEN                skb->len for INCOMPLETE [n bytes] when the
 *                                capture was cut short
 *   SL_F_UID, SL_F_GID, SL_F_MARK
 * Known differences: ARPHRD_SIT's "TUNNEL=" and the bridge VLAN
 * "VPROTO= VID=" parts are not reproduced; header bytes the kernel saw but
 * the capture cut off are reported as INCOMPLETE/TRUNCATED.
 */
#ifndef SLUICE_LOGLINE_FMT_H
#define SLUICE_LOGLINE_FMT_H

#include <sluice/record.h>

#include "fmt.h"

/* Same values as the kernel's NF_LOG_* log flags. */
#define SL_LOGLINE_TCPSEQ 0x01		/* SEQ= ACK= */
#define SL_LOGLINE_TCPOPT 0x02		/* TCP OPT (...) */
#define SL_LOGLINE_IPOPT 0x04		/* IP options / IPv6 ext. headers */
#define SL_LOGLINE_UID 0x08		/* UID= GID= */
#define SL_LOGLINE_MACDECODE 0x20	/* MACSRC= MACDST= MACPROTO= */
#define SL_LOGLINE_NOMARK 0x10000	/* never print MARK= (not a kernel flag) */

/* The kernel's line never exceeds this many bytes (nf_log_buf size). */
#define SL_LOGLINE_MAX 1016

/*
 * Append the line for r to b (no newline).  Returns false when r has no
 * SL_F_PACKET (nothing is written then).  The text is cut at
 * SL_LOGLINE_MAX bytes like the kernel's; b needs that much room or it
 * overflows (b->overflow).
 */
bool sl_logline_format(struct sl_fmt_buf *b, const struct sl_record *r, unsigned flags);

#endif /* SLUICE_LOGLINE_FMT_H */
