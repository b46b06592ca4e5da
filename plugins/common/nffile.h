/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfdump flow files: file layout 2 with V3 records, as nfdump 1.7 reads
 * them (nfdump -r / -I / -s).  The format is described in
 * docs/NFCAPD-FORMAT.md; section numbers below refer to it.  Reading a
 * file, appending one (absorb) and recovering one a crash left unfinished
 * (adopt) are declared in nffile_recover.h.
 *
 * A writer buffers records into one block (1 MiB of uncompressed payload,
 * the limit nfdump's own writer uses) and writes it, compressed with LZ4 or
 * not, with one writev() when the next record would not fit.  Nothing is
 * allocated per record.  close() writes the appendix (ident and stat
 * record, so `nfdump -I` works) and then the final file header at offset
 * 0.  Until then the file has a placeholder header and is not readable:
 * write it under a temporary name and rename it when closed (nfcapd does).
 *
 * A failed write (disk full) loses the records of that block only: the file
 * is cut back to the last good block, so what is closed later is still a
 * well-formed file, and the stat record counts only what is in it.
 *
 * All integers are written little-endian (nfdump uses host order; every
 * host nfdump runs on today is little-endian).
 */
#ifndef SLUICE_NFFILE_H
#define SLUICE_NFFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SL_NF_HEADER_SIZE 40
#define SL_NF_BLOCK_HEADER_SIZE 12
#define SL_NF_BLOCK_PAYLOAD 1048576u	/* what we put in one block (uncompressed) */
#define SL_NF_BLOCK_READ_MAX 5242880u	/* what nfdump accepts in one block */
#define SL_NF_IDENT_MAX 122		/* ident record size must stay < 128 */
#define SL_NF_V3_MAX 256			/* longest record sl_nf_encode_v3() makes */

enum sl_nf_compression { SL_NF_COMP_NONE = 0, SL_NF_COMP_LZ4 = 3 };

/* IPFIX flowEndReason values, written in EXflowMisc. */
enum { SL_NF_END_IDLE = 1, SL_NF_END_ACTIVE = 2, SL_NF_END_END = 3, SL_NF_END_FORCED = 4, SL_NF_END_RESOURCES = 5 };

/* One flow as the writer takes it. */
struct sl_nf_flow {
	uint8_t src[16], dst[16];	/* IPv4 as IPv4-mapped (::ffff:a.b.c.d) */
	uint64_t first_ms, last_ms;	/* ms since the epoch */
	uint64_t received_ms;
	uint64_t in_packets, in_bytes;
	uint64_t out_packets, out_bytes;	/* EXcntFlow, written when non-zero */
	uint32_t input, output;		/* interface indexes (EXflowMisc) */
	uint16_t sport, dport;		/* ICMP: dport = type << 8 | code */
	uint8_t proto, tcp_flags, tos;
	uint8_t end_reason;		/* SL_NF_END_*, 0: unknown */
	bool misc;			/* write EXflowMisc (interfaces, end reason) */
	bool xlate;			/* write the NAT elements below */
	uint8_t xsrc[16], xdst[16];	/* post-NAT addresses */
	uint16_t xsport, xdport;	/* post-NAT ports */
};

/* The appendix stat record (§6.2): 18 u64. */
struct sl_nf_stat {
	uint64_t numflows, numbytes, numpackets;
	uint64_t flows_tcp, flows_udp, flows_icmp, flows_other;
	uint64_t bytes_tcp, bytes_udp, bytes_icmp, bytes_other;
	uint64_t packets_tcp, packets_udp, packets_icmp, packets_other;
	uint64_t first_ms, last_ms;	/* min msecFirst, max msecLast; 0: none */
	uint64_t sequence_failures;
};

/* Encode one V3 record (§5) at dst (SL_NF_V3_MAX bytes of room); its length. */
size_t sl_nf_encode_v3(uint8_t *dst, const struct sl_nf_flow *f);

/* Count one flow in a stat record as nfdump does (in + out). */
void sl_nf_stat_add(struct sl_nf_stat *s, const struct sl_nf_flow *f);
/* Add b's counters to a's (first/last: min/max of the non-zero ones). */
void sl_nf_stat_merge(struct sl_nf_stat *a, const struct sl_nf_stat *b);

struct sl_nf_writer;

/*
 * Buffers for one file at a time; ident: at most SL_NF_IDENT_MAX bytes
 * (longer is cut).  NULL on ENOMEM, or for LZ4 without liblz4 (errno
 * ENOTSUP).
 */
struct sl_nf_writer *sl_nf_writer_new(enum sl_nf_compression comp, const char *ident);
void sl_nf_writer_free(struct sl_nf_writer *w);

/* For reproducible files (tests): the header's "created"; 0: time(NULL). */
void sl_nf_writer_set_created(struct sl_nf_writer *w, int64_t created);

/*
 * Create path (O_EXCL: never an existing file, never through a symbolic
 * link), mode 0640 before umask.  0, or -1 with errno.
 */
int sl_nf_writer_open(struct sl_nf_writer *w, const char *path);

/* Start a file in fd (read-write, empty; the writer owns it from now). */
int sl_nf_writer_attach(struct sl_nf_writer *w, int fd);
bool sl_nf_writer_is_open(const struct sl_nf_writer *w);

/*
 * Add one flow.  0; -1 when a block had to be written and that failed
 * (errno set): that block's records are lost (sl_nf_writer_lost()).
 */
int sl_nf_writer_add(struct sl_nf_writer *w, const struct sl_nf_flow *f);

/* Write the block being filled now (if any).  0, or -1 as above. */
int sl_nf_writer_flush(struct sl_nf_writer *w);

/*
 * Finish the file: last block, appendix, header; close.  When the file
 * holds no flow, the stat record's first/last are empty_first_ms /
 * empty_last_ms (nfcapd writes the time slot).  On a full disk a last
 * block that cannot be written is lost, and when the appendix does not
 * fit the newest data blocks (up to 64, none of them absorbed) give it
 * their room: their flows are counted in sl_nf_writer_lost() and the file is
 * still whole (0).  -1 (errno): the file is closed either way and must not
 * be trusted; its own flows are counted as lost.
 */
int sl_nf_writer_close(struct sl_nf_writer *w, uint64_t empty_first_ms, uint64_t empty_last_ms);

/* Close without finishing (the file is left unreadable: unlink it). */
void sl_nf_writer_abandon(struct sl_nf_writer *w);

/* Counters of the open (or last closed) file. */
const struct sl_nf_stat *sl_nf_writer_stat(const struct sl_nf_writer *w);
uint64_t sl_nf_writer_blocks(const struct sl_nf_writer *w);
/* Records lost to write errors since sl_nf_writer_new(). */
uint64_t sl_nf_writer_lost(const struct sl_nf_writer *w);

#endif /* SLUICE_NFFILE_H */
