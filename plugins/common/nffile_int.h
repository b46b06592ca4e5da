/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the nfdump file writer (nffile.c) and its crash recovery
 * (nffile_recover.c) share and nobody else sees: the format's constants,
 * little-endian byte access, the writer's state and the one block write.
 * Section numbers refer to docs/NFCAPD-FORMAT.md.
 */
#ifndef SLUICE_NFFILE_INT_H
#define SLUICE_NFFILE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "nffile.h"

#if defined(__has_include)
#if __has_include(<lz4.h>)
#include <lz4.h>
#define NF_HAVE_LZ4 1
#endif
#endif

#define NF_MAGIC 0xA50C
#define NF_LAYOUT 2
#define NF_VERSION_CODE 0x01070100u	/* nfdump 1.7.1: informational */
#define NF_BLOCK_TYPE_3 3
#define NF_BLOCK_TYPE_2 2
#define NF_V3_TYPE 11
#define NF_TYPE_IDENT 0x8001
#define NF_TYPE_STAT 0x8002
#define NF_STAT_SIZE 148
#define NF_UNDO 64		/* data blocks close() may drop to fit the appendix */
#define NF_MARK_OFF 24		/* placeholder header: where absorbed blocks start */

/* Element ids and full lengths (§5.2). */
#define EX_GENERIC 1
#define EX_GENERIC_LEN 52
#define EX_IPV4 2
#define EX_IPV4_LEN 12
#define EX_IPV6 3
#define EX_IPV6_LEN 36
#define EX_MISC 4
#define EX_MISC_LEN 20
#define EX_CNT 5
#define EX_CNT_LEN 28
#define EX_XLATE4 20
#define EX_XLATE4_LEN 12
#define EX_XLATE6 21
#define EX_XLATE6_LEN 36
#define EX_XLATE_PORT 22
#define EX_XLATE_PORT_LEN 8

/* ---- little-endian encoding (§1) ---- */

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* ---- the writer ---- */

struct sl_nf_writer {
	enum sl_nf_compression comp;
	char ident[SL_NF_IDENT_MAX + 1];
	int64_t created;
	int fd;

	uint8_t *blk;		/* payload of the block being filled */
	uint32_t blk_len, blk_nrec;
	struct sl_nf_stat blk_stat;	/* counted into stat once the block is written */
	uint8_t *cbuf;		/* compressed payload */
	size_t cbuf_size;

	uint64_t off;		/* end of the last good block */
	uint32_t nblocks;
	struct sl_nf_stat stat;
	uint64_t absorbed;	/* flows of stat copied from another file */
	uint64_t lost;

	/*
	 * The state before each of the last NF_UNDO data blocks: on a full
	 * disk close() gives their room to the appendix, newest first.
	 */
	struct {
		uint64_t off;
		struct sl_nf_stat stat;
	} undo[NF_UNDO];
	unsigned undo_n, undo_next;
};

/* pwritev until everything is written.  0, or -1 with errno. */
int sl_nf_pwrite_all(int fd, struct iovec *iov, int n, uint64_t off);

/*
 * Compress (if the file is LZ4) and write one block at w->off, moving
 * w->off past it.  cbuf must hold the compression bound of len.  On
 * failure the file is cut back to w->off.  0, or -1 with errno.
 */
int sl_nf_block_write(struct sl_nf_writer *w, const uint8_t *payload, uint32_t len, uint32_t nrec,
		   uint8_t *cbuf, size_t cbuf_size);

#endif /* SLUICE_NFFILE_INT_H */
