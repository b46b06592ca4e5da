/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfdump flow file writer (layout 2, V3 records) and the little reading
 * that appending to an existing file needs.  See nffile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

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

_Static_assert(12 + EX_GENERIC_LEN + EX_IPV6_LEN + EX_MISC_LEN + EX_CNT_LEN + EX_XLATE6_LEN +
		       EX_XLATE_PORT_LEN <= NF_V3_MAX,
	       "NF_V3_MAX too small");

/* ---- little-endian encoding ---- */

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

static bool is_mapped4(const uint8_t a[16])
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return memcmp(a, mapped, 12) == 0;
}

/* IPv4: the numeric value (10.1.1.1 = 0x0A010101), stored little-endian. */
static void put_ip4(uint8_t *p, const uint8_t a[16])
{
	put32(p, (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15]);
}

/* IPv6: each 8-byte half read big-endian, stored as a little-endian u64. */
static void put_ip6(uint8_t *p, const uint8_t a[16])
{
	for (int h = 0; h < 2; h++) {
		uint64_t v = 0;

		for (int i = 0; i < 8; i++)
			v = v << 8 | a[8 * h + i];
		put64(p + 8 * h, v);
	}
}

static uint8_t *element(uint8_t *p, uint16_t id, uint16_t len)
{
	put16(p, id);
	put16(p + 2, len);
	memset(p + 4, 0, len - 4u);
	return p + 4;
}

static bool flow_is_v6(const struct nf_flow *f)
{
	return !is_mapped4(f->src) || !is_mapped4(f->dst);
}

static bool xlate_is_v6(const struct nf_flow *f)
{
	return flow_is_v6(f) || !is_mapped4(f->xsrc) || !is_mapped4(f->xdst);
}

static size_t v3_size(const struct nf_flow *f)
{
	size_t n = 12 + EX_GENERIC_LEN + (flow_is_v6(f) ? EX_IPV6_LEN : EX_IPV4_LEN);

	if (f->misc)
		n += EX_MISC_LEN;
	if (f->out_packets || f->out_bytes)
		n += EX_CNT_LEN;
	if (f->xlate)
		n += (xlate_is_v6(f) ? EX_XLATE6_LEN : EX_XLATE4_LEN) + EX_XLATE_PORT_LEN;
	return n;
}

size_t nf_encode_v3(uint8_t *dst, const struct nf_flow *f)
{
	uint8_t *p = dst + 12, *e;
	uint16_t nel = 2;
	bool v6 = flow_is_v6(f);

	/* Elements in ascending id order, each at most once (§5.2). */
	e = element(p, EX_GENERIC, EX_GENERIC_LEN);
	put64(e, f->first_ms);
	put64(e + 8, f->last_ms);
	put64(e + 16, f->received_ms);
	put64(e + 24, f->in_packets);
	put64(e + 32, f->in_bytes);
	put16(e + 40, f->sport);
	put16(e + 42, f->dport);
	e[44] = f->proto;
	e[45] = f->tcp_flags;
	e[46] = 0;		/* fwdStatus */
	e[47] = f->tos;
	p += EX_GENERIC_LEN;

	if (v6) {
		e = element(p, EX_IPV6, EX_IPV6_LEN);
		put_ip6(e, f->src);
		put_ip6(e + 16, f->dst);
		p += EX_IPV6_LEN;
	} else {
		e = element(p, EX_IPV4, EX_IPV4_LEN);
		put_ip4(e, f->src);
		put_ip4(e + 4, f->dst);
		p += EX_IPV4_LEN;
	}
	if (f->misc) {
		e = element(p, EX_MISC, EX_MISC_LEN);
		put32(e, f->input);
		put32(e + 4, f->output);
		e[13] = f->end_reason;	/* flowEndReason; masks, dir, tos: 0 */
		p += EX_MISC_LEN;
		nel++;
	}
	if (f->out_packets || f->out_bytes) {
		e = element(p, EX_CNT, EX_CNT_LEN);
		put64(e, 1);	/* flows */
		put64(e + 8, f->out_packets);
		put64(e + 16, f->out_bytes);
		p += EX_CNT_LEN;
		nel++;
	}
	if (f->xlate) {
		if (xlate_is_v6(f)) {
			e = element(p, EX_XLATE6, EX_XLATE6_LEN);
			put_ip6(e, f->xsrc);
			put_ip6(e + 16, f->xdst);
			p += EX_XLATE6_LEN;
		} else {
			e = element(p, EX_XLATE4, EX_XLATE4_LEN);
			put_ip4(e, f->xsrc);
			put_ip4(e + 4, f->xdst);
			p += EX_XLATE4_LEN;
		}
		e = element(p, EX_XLATE_PORT, EX_XLATE_PORT_LEN);
		put16(e, f->xsport);
		put16(e + 2, f->xdport);
		p += EX_XLATE_PORT_LEN;
		nel += 2;
	}
	/* V3 header: engine type/id, exporter id, flags and nfversion 0. */
	put16(dst, NF_V3_TYPE);
	put16(dst + 2, (uint16_t)(p - dst));
	put16(dst + 4, nel);
	memset(dst + 6, 0, 6);
	return (size_t)(p - dst);
}

/* ---- stat record ---- */

void nf_stat_add(struct nf_stat *s, const struct nf_flow *f)
{
	uint64_t pk = f->in_packets + f->out_packets, by = f->in_bytes + f->out_bytes;

	if (s->numflows == 0 || f->first_ms < s->first_ms)
		s->first_ms = f->first_ms;
	if (s->numflows == 0 || f->last_ms > s->last_ms)
		s->last_ms = f->last_ms;
	s->numflows++;
	s->numpackets += pk;
	s->numbytes += by;
	switch (f->proto) {
	case 6:
		s->flows_tcp++;
		s->packets_tcp += pk;
		s->bytes_tcp += by;
		break;
	case 17:
		s->flows_udp++;
		s->packets_udp += pk;
		s->bytes_udp += by;
		break;
	case 1:
	case 58:
		s->flows_icmp++;
		s->packets_icmp += pk;
		s->bytes_icmp += by;
		break;
	default:
		s->flows_other++;
		s->packets_other += pk;
		s->bytes_other += by;
		break;
	}
}

void nf_stat_merge(struct nf_stat *a, const struct nf_stat *b)
{
	if (b->numflows) {
		if (a->numflows == 0 || b->first_ms < a->first_ms)
			a->first_ms = b->first_ms;
		if (a->numflows == 0 || b->last_ms > a->last_ms)
			a->last_ms = b->last_ms;
	}
	a->numflows += b->numflows;
	a->numbytes += b->numbytes;
	a->numpackets += b->numpackets;
	a->flows_tcp += b->flows_tcp;
	a->flows_udp += b->flows_udp;
	a->flows_icmp += b->flows_icmp;
	a->flows_other += b->flows_other;
	a->bytes_tcp += b->bytes_tcp;
	a->bytes_udp += b->bytes_udp;
	a->bytes_icmp += b->bytes_icmp;
	a->bytes_other += b->bytes_other;
	a->packets_tcp += b->packets_tcp;
	a->packets_udp += b->packets_udp;
	a->packets_icmp += b->packets_icmp;
	a->packets_other += b->packets_other;
	a->sequence_failures += b->sequence_failures;
}

static void put_stat(uint8_t *p, const struct nf_stat *s)
{
	const uint64_t v[18] = {
		s->numflows, s->numbytes, s->numpackets,
		s->flows_tcp, s->flows_udp, s->flows_icmp, s->flows_other,
		s->bytes_tcp, s->bytes_udp, s->bytes_icmp, s->bytes_other,
		s->packets_tcp, s->packets_udp, s->packets_icmp, s->packets_other,
		s->first_ms, s->last_ms, s->sequence_failures,
	};

	put16(p, NF_TYPE_STAT);
	put16(p + 2, NF_STAT_SIZE);
	for (int i = 0; i < 18; i++)
		put64(p + 4 + 8 * i, v[i]);
}

static void get_stat(const uint8_t *p, struct nf_stat *s)
{
	uint64_t v[18];

	for (int i = 0; i < 18; i++)
		v[i] = get64(p + 4 + 8 * i);
	*s = (struct nf_stat){
		v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8],
		v[9], v[10], v[11], v[12], v[13], v[14], v[15], v[16], v[17],
	};
}

/* ---- writer ---- */

struct nf_writer {
	enum nf_compression comp;
	char ident[NF_IDENT_MAX + 1];
	int64_t created;
	int fd;

	uint8_t *blk;		/* payload of the block being filled */
	uint32_t blk_len, blk_nrec;
	struct nf_stat blk_stat;	/* counted into stat once the block is written */
	uint8_t *cbuf;		/* compressed payload */
	size_t cbuf_size;

	uint64_t off;		/* end of the last good block */
	uint32_t nblocks;
	struct nf_stat stat;
	uint64_t absorbed;	/* flows of stat copied from another file */
	uint64_t lost;

	/*
	 * The state before each of the last NF_UNDO data blocks: on a full
	 * disk close() gives their room to the appendix, newest first.
	 */
	struct {
		uint64_t off;
		struct nf_stat stat;
	} undo[NF_UNDO];
	unsigned undo_n, undo_next;
};

struct nf_writer *nf_writer_new(enum nf_compression comp, const char *ident)
{
	struct nf_writer *w;

#ifndef NF_HAVE_LZ4
	if (comp == NF_COMP_LZ4) {
		errno = ENOTSUP;
		return NULL;
	}
#endif
	if (comp != NF_COMP_NONE && comp != NF_COMP_LZ4) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->comp = comp;
	w->fd = -1;
	/* Room for the ident + stat appendix too (far below a block). */
	w->blk = malloc(NF_BLOCK_PAYLOAD);
#ifdef NF_HAVE_LZ4
	if (comp == NF_COMP_LZ4) {
		w->cbuf_size = (size_t)LZ4_compressBound((int)NF_BLOCK_PAYLOAD);
		w->cbuf = malloc(w->cbuf_size);
	}
#endif
	if (!w->blk || (comp == NF_COMP_LZ4 && !w->cbuf)) {
		nf_writer_free(w);
		errno = ENOMEM;
		return NULL;
	}
	snprintf(w->ident, sizeof(w->ident), "%s", ident && *ident ? ident : "none");
	return w;
}

void nf_writer_free(struct nf_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w->blk);
	free(w->cbuf);
	free(w);
}

void nf_writer_set_created(struct nf_writer *w, int64_t created)
{
	w->created = created;
}

bool nf_writer_is_open(const struct nf_writer *w)
{
	return w->fd >= 0;
}

const struct nf_stat *nf_writer_stat(const struct nf_writer *w)
{
	return &w->stat;
}

uint64_t nf_writer_blocks(const struct nf_writer *w)
{
	return w->nblocks;
}

uint64_t nf_writer_lost(const struct nf_writer *w)
{
	return w->lost;
}

/* pwritev until everything is written.  0, or -1 with errno. */
static int pwrite_all(int fd, struct iovec *iov, int n, uint64_t off)
{
	while (n > 0) {
		ssize_t r = pwritev(fd, iov, n, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		off += (uint64_t)r;
		while (n > 0 && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = ENODATA;
			return -1;
		}
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/*
 * Compress (if the file is LZ4) and write one block at w->off.  cbuf must
 * hold the compression bound of len.  On failure the file is cut back to
 * w->off.  0, or -1 with errno.
 */
static int write_block(struct nf_writer *w, const uint8_t *payload, uint32_t len, uint32_t nrec,
		       uint8_t *cbuf, size_t cbuf_size)
{
	uint8_t hdr[NF_BLOCK_HEADER_SIZE];
	struct iovec iov[2];
	const uint8_t *stored = payload;
	uint32_t stored_len = len;
	int saved;

#ifdef NF_HAVE_LZ4
	if (w->comp == NF_COMP_LZ4) {
		int c = LZ4_compress_default((const char *)payload, (char *)cbuf, (int)len, (int)cbuf_size);

		if (c <= 0) {
			errno = EINVAL;
			return -1;
		}
		stored = cbuf;
		stored_len = (uint32_t)c;
	}
#else
	(void)cbuf;
	(void)cbuf_size;
#endif
	put32(hdr, nrec);
	put32(hdr + 4, stored_len);
	put16(hdr + 8, NF_BLOCK_TYPE_3);
	put16(hdr + 10, 0);	/* never the "uncompressed" flag: -r ignores it (§8) */
	iov[0] = (struct iovec){hdr, sizeof(hdr)};
	iov[1] = (struct iovec){(void *)stored, stored_len};
	if (pwrite_all(w->fd, iov, 2, w->off) < 0) {
		saved = errno;
		/* Keep the file well formed: drop the partial block. */
		if (ftruncate(w->fd, (off_t)w->off) < 0) {
			/* nothing better to do: close() will fail too */
		}
		errno = saved;
		return -1;
	}
	w->off += sizeof(hdr) + stored_len;
	return 0;
}

int nf_writer_attach(struct nf_writer *w, int fd)
{
	uint8_t zero[NF_HEADER_SIZE] = {0};

	if (w->fd >= 0)
		nf_writer_abandon(w);
	w->blk_len = w->blk_nrec = 0;
	w->nblocks = 0;
	w->absorbed = 0;
	w->undo_n = 0;
	memset(&w->stat, 0, sizeof(w->stat));
	memset(&w->blk_stat, 0, sizeof(w->blk_stat));
	/* Placeholder header (magic 0: no reader takes it); the real one goes here at close. */
	if (pwrite(fd, zero, sizeof(zero), 0) != (ssize_t)sizeof(zero) || ftruncate(fd, sizeof(zero)) < 0) {
		int saved = errno ? errno : EIO;

		close(fd);
		errno = saved;
		return -1;
	}
	w->fd = fd;
	w->off = NF_HEADER_SIZE;
	return 0;
}

int nf_writer_open(struct nf_writer *w, const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);

	if (fd < 0)
		return -1;
	return nf_writer_attach(w, fd);
}

int nf_writer_flush(struct nf_writer *w)
{
	uint64_t off;
	int ret = 0;

	if (w->fd < 0 || w->blk_nrec == 0)
		return 0;
	off = w->off;
	if (write_block(w, w->blk, w->blk_len, w->blk_nrec, w->cbuf, w->cbuf_size) == 0) {
		w->undo[w->undo_next].off = off;
		w->undo[w->undo_next].stat = w->stat;
		w->undo_next = (w->undo_next + 1) % NF_UNDO;
		if (w->undo_n < NF_UNDO)
			w->undo_n++;
		w->nblocks++;
		nf_stat_merge(&w->stat, &w->blk_stat);
	} else {
		w->lost += w->blk_nrec;
		ret = -1;
	}
	w->blk_len = w->blk_nrec = 0;
	memset(&w->blk_stat, 0, sizeof(w->blk_stat));
	return ret;
}

int nf_writer_add(struct nf_writer *w, const struct nf_flow *f)
{
	size_t n = v3_size(f);
	int ret = 0;

	if (w->fd < 0) {
		w->lost++;
		errno = EBADF;
		return -1;
	}
	if (w->blk_len + n > NF_BLOCK_PAYLOAD)
		ret = nf_writer_flush(w);
	nf_encode_v3(w->blk + w->blk_len, f);
	w->blk_len += (uint32_t)n;
	w->blk_nrec++;
	nf_stat_add(&w->blk_stat, f);
	return ret;
}

void nf_writer_abandon(struct nf_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	w->lost += w->blk_nrec;
	w->blk_len = w->blk_nrec = 0;
}

/* The appendix block (ident, then stat) at w->off.  0, or -1 with errno. */
static int write_appendix(struct nf_writer *w, uint64_t empty_first_ms, uint64_t empty_last_ms)
{
	size_t idlen = strlen(w->ident);
	uint8_t *p = w->blk;

	if (w->stat.numflows == 0) {
		w->stat.first_ms = empty_first_ms;
		w->stat.last_ms = empty_last_ms;
	}
	put16(p, NF_TYPE_IDENT);
	put16(p + 2, (uint16_t)(4 + idlen + 1));
	memcpy(p + 4, w->ident, idlen + 1);
	p += 4 + idlen + 1;
	put_stat(p, &w->stat);
	p += NF_STAT_SIZE;
	return write_block(w, w->blk, (uint32_t)(p - w->blk), 2, w->cbuf, w->cbuf_size);
}

int nf_writer_close(struct nf_writer *w, uint64_t empty_first_ms, uint64_t empty_last_ms)
{
	uint8_t hdr[NF_HEADER_SIZE];
	uint64_t off_appendix;
	int ret = 0, saved = 0;
	struct iovec iov;

	if (w->fd < 0) {
		errno = EBADF;
		return -1;
	}
	/* A failed last block is lost (counted); the file is well formed without it. */
	nf_writer_flush(w);
	/*
	 * Appendix: one block, ident then stat, compressed like the data.  On
	 * a full disk the newest data blocks give it their room, their flows
	 * counted as lost: a file with fewer flows beats no file at all.
	 */
	for (;;) {
		unsigned u = (w->undo_next + NF_UNDO - 1) % NF_UNDO;

		off_appendix = w->off;
		if (write_appendix(w, empty_first_ms, empty_last_ms) == 0)
			break;
		if ((errno != ENOSPC && errno != EDQUOT && errno != EFBIG) || w->undo_n == 0) {
			saved = errno;
			ret = -1;
			goto out;
		}
		w->lost += w->stat.numflows - w->undo[u].stat.numflows;
		w->off = w->undo[u].off;
		w->stat = w->undo[u].stat;
		w->nblocks--;
		w->undo_next = u;
		w->undo_n--;
	}
	put16(hdr, NF_MAGIC);
	put16(hdr + 2, NF_LAYOUT);
	put32(hdr + 4, NF_VERSION_CODE);
	put64(hdr + 8, (uint64_t)(w->created ? w->created : (int64_t)time(NULL)));
	hdr[16] = (uint8_t)w->comp;
	hdr[17] = 0;		/* encryption */
	put16(hdr + 18, 1);	/* appendix blocks */
	put32(hdr + 20, 0);
	put64(hdr + 24, off_appendix);
	put32(hdr + 32, 0);	/* BlockSize: unused */
	put32(hdr + 36, w->nblocks);
	iov = (struct iovec){hdr, sizeof(hdr)};
	if (pwrite_all(w->fd, &iov, 1, 0) < 0) {
		saved = errno;
		ret = -1;
	}
	/* Nothing after the appendix: a torn block whose cut-back failed ends here. */
	if (ret == 0 && ftruncate(w->fd, (off_t)w->off) < 0) {
		saved = errno;
		ret = -1;
	}
out:
	if (close(w->fd) < 0 && ret == 0) {
		saved = errno;
		ret = -1;
	}
	w->fd = -1;
	if (ret < 0) {
		/* The file is not to be trusted: its own flows are lost (not the absorbed ones). */
		w->lost += w->stat.numflows - w->absorbed;
		errno = saved;
	}
	return ret;
}

/* ---- reading ---- */

static long decompress(uint8_t comp, const uint8_t *in, uint32_t len, uint8_t *out, const char **why)
{
	if (comp == NF_COMP_NONE) {
		memcpy(out, in, len);
		return (long)len;
	}
#ifdef NF_HAVE_LZ4
	if (comp == NF_COMP_LZ4) {
		int n = LZ4_decompress_safe((const char *)in, (char *)out, (int)len, (int)NF_BLOCK_READ_MAX);

		if (n < 0) {
			*why = "LZ4 block does not decompress";
			return -1;
		}
		return n;
	}
#endif
	*why = "compression method not supported (only none and LZ4 are)";
	return -1;
}

/* Read a block header at off; its stored payload size, or -1. */
static long read_block_header(int fd, uint64_t off, uint8_t hdr[NF_BLOCK_HEADER_SIZE], const char **why)
{
	uint32_t size;

	if (pread_all(fd, hdr, NF_BLOCK_HEADER_SIZE, off) < 0) {
		*why = "short block header";
		return -1;
	}
	size = get32(hdr + 4);
	if (get32(hdr) == 0 || size == 0 || size > NF_BLOCK_READ_MAX) {
		*why = "corrupt block header";
		return -1;
	}
	return (long)size;
}

int nf_read_info(int fd, struct nf_file_info *info, const char **why)
{
	uint8_t h[NF_HEADER_SIZE], bh[NF_BLOCK_HEADER_SIZE];
	uint8_t *raw = NULL, *buf = NULL;
	struct stat sb;
	uint64_t off;
	int ret = -1;

	memset(info, 0, sizeof(*info));
	if (pread_all(fd, h, sizeof(h), 0) < 0) {
		*why = "shorter than a file header";
		return -1;
	}
	if (get16(h) != NF_MAGIC) {
		*why = "not an nfdump file (bad magic)";
		return -1;
	}
	info->version = get16(h + 2);
	if (info->version != NF_LAYOUT) {
		*why = "not file layout 2";
		return -1;
	}
	if (h[17] != 0) {
		*why = "encrypted";
		return -1;
	}
	info->created = (int64_t)get64(h + 8);
	info->compression = h[16];
	info->appendix_blocks = get16(h + 18);
	info->off_appendix = get64(h + 24);
	info->num_blocks = get32(h + 36);
	if (fstat(fd, &sb) < 0 || (info->appendix_blocks && info->off_appendix >= (uint64_t)sb.st_size)) {
		*why = "appendix offset beyond the end of the file";
		return -1;
	}
	raw = malloc(NF_BLOCK_READ_MAX);
	buf = malloc(NF_BLOCK_READ_MAX);
	if (!raw || !buf) {
		*why = "out of memory";
		goto out;
	}
	off = info->off_appendix;
	for (unsigned b = 0; b < info->appendix_blocks; b++) {
		long size = read_block_header(fd, off, bh, why), n;
		uint32_t nrec = get32(bh);
		const uint8_t *p, *end;

		if (size < 0)
			goto out;
		if (pread_all(fd, raw, (size_t)size, off + NF_BLOCK_HEADER_SIZE) < 0) {
			*why = "short appendix block";
			goto out;
		}
		n = decompress(info->compression, raw, (uint32_t)size, buf, why);
		if (n < 0)
			goto out;
		off += NF_BLOCK_HEADER_SIZE + (uint64_t)size;
		p = buf;
		end = buf + n;
		for (uint32_t r = 0; r < nrec && end - p >= 4; r++) {
			uint16_t type = get16(p), rsize = get16(p + 2);

			if (rsize < 4 || rsize > end - p) {
				*why = "corrupt appendix record";
				goto out;
			}
			if (type == NF_TYPE_IDENT && rsize < 128) {
				size_t l = strnlen((const char *)p + 4, rsize - 4u);

				memcpy(info->ident, p + 4, l);
				info->ident[l] = '\0';
			} else if (type == NF_TYPE_STAT && rsize == NF_STAT_SIZE) {
				get_stat(p, &info->stat);
				info->has_stat = true;
			}
			p += rsize;
		}
	}
	ret = 0;
out:
	free(raw);
	free(buf);
	return ret;
}

long nf_read_block(int fd, const struct nf_file_info *info, uint64_t *off, uint8_t *scratch,
		   uint8_t *out, uint32_t *nrec, uint16_t *type, const char **why)
{
	uint8_t bh[NF_BLOCK_HEADER_SIZE];
	long size = read_block_header(fd, *off, bh, why), n;

	if (size < 0)
		return -1;
	if (pread_all(fd, scratch, (size_t)size, *off + NF_BLOCK_HEADER_SIZE) < 0) {
		*why = "short data block";
		return -1;
	}
	n = decompress(info->compression, scratch, (uint32_t)size, out, why);
	if (n < 0)
		return -1;
	*nrec = get32(bh);
	*type = get16(bh + 8);
	*off += NF_BLOCK_HEADER_SIZE + (uint64_t)size;
	return n;
}

int nf_writer_absorb(struct nf_writer *w, const char *path, const char **why)
{
	struct nf_file_info info;
	uint8_t *raw = NULL, *plain = NULL, *cbuf = NULL;
	size_t cbuf_size = 0;
	uint64_t off = NF_HEADER_SIZE, saved_off;
	uint32_t saved_blocks;
	struct stat sb;
	uint8_t mark[8];
	int fd, ret = -1;

	if (w->fd < 0) {
		*why = "no file open";
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		*why = errno == ELOOP ? "a symbolic link (never followed)" : strerror(errno);
		return -1;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		*why = "not a regular file";
		goto out;
	}
	if (nf_read_info(fd, &info, why) < 0)
		goto out;
	if (info.compression != NF_COMP_NONE && info.compression != NF_COMP_LZ4) {
		*why = "compression method not supported (only none and LZ4 are)";
		goto out;
	}
	/* Our pending records first, so the old blocks follow whole blocks. */
	if (nf_writer_flush(w) < 0) {
		*why = strerror(errno);
		goto out;
	}
	raw = malloc(NF_BLOCK_READ_MAX);
	plain = malloc(NF_BLOCK_READ_MAX);
#ifdef NF_HAVE_LZ4
	cbuf_size = (size_t)LZ4_compressBound((int)NF_BLOCK_READ_MAX);
	cbuf = malloc(cbuf_size);
#endif
	if (!raw || !plain || (w->comp == NF_COMP_LZ4 && !cbuf)) {
		*why = "out of memory";
		goto out;
	}
	saved_off = w->off;
	saved_blocks = w->nblocks;
	w->undo_n = 0;	/* never drop our blocks under the absorbed ones */
	/*
	 * Mark in the placeholder header where the copied blocks start: a
	 * crash before the rename leaves an orphan whose recovery must not
	 * count them twice (nf_writer_adopt stops there).
	 */
	put64(mark, w->off);
	if (pwrite(w->fd, mark, sizeof(mark), 24) != (ssize_t)sizeof(mark)) {
		*why = strerror(errno ? errno : EIO);
		goto out;
	}
	for (uint32_t b = 0; b < info.num_blocks; b++) {
		uint32_t nrec;
		uint16_t type;
		long n;

		if (info.compression == w->comp) {
			/* Same method: copy the stored block as it is. */
			uint8_t bh[NF_BLOCK_HEADER_SIZE];
			long size = read_block_header(fd, off, bh, why);
			struct iovec iov[2];

			if (size < 0 || pread_all(fd, raw, (size_t)size, off + NF_BLOCK_HEADER_SIZE) < 0) {
				if (size >= 0)
					*why = "short data block";
				goto undo;
			}
			off += NF_BLOCK_HEADER_SIZE + (uint64_t)size;
			iov[0] = (struct iovec){bh, sizeof(bh)};
			iov[1] = (struct iovec){raw, (size_t)size};
			if (pwrite_all(w->fd, iov, 2, w->off) < 0) {
				*why = strerror(errno);
				goto undo;
			}
			w->off += sizeof(bh) + (uint64_t)size;
			w->nblocks++;
			continue;
		}
		n = nf_read_block(fd, &info, &off, raw, plain, &nrec, &type, why);
		if (n < 0)
			goto undo;
		if (type != NF_BLOCK_TYPE_3 && type != NF_BLOCK_TYPE_2)
			continue;	/* nfdump skips other block types too */
		if (write_block(w, plain, (uint32_t)n, nrec, cbuf, cbuf_size) < 0) {
			*why = strerror(errno);
			goto undo;
		}
		w->nblocks++;
	}
	if (info.has_stat) {
		nf_stat_merge(&w->stat, &info.stat);
		w->absorbed += info.stat.numflows;
	}
	ret = 0;
	goto out;
undo:
	w->off = saved_off;
	w->nblocks = saved_blocks;
	if (ftruncate(w->fd, (off_t)w->off) < 0) {
		/* the next block write overwrites from w->off anyway */
	}
	memset(mark, 0, sizeof(mark));
	if (pwrite(w->fd, mark, sizeof(mark), 24) < 0) {
		/* a stale mark only makes a later recovery keep fewer blocks */
	}
out:
	close(fd);
	free(raw);
	free(plain);
	free(cbuf);
	return ret;
}

/* ---- orphans ---- */

/*
 * Check one block's payload: exactly nrec V3 records filling it, each
 * with whole elements and an EXgenericFlow; count them into s.
 */
static bool scan_v3(const uint8_t *p, size_t len, uint32_t nrec, struct nf_stat *s)
{
	const uint8_t *end = p + len;

	for (uint32_t r = 0; r < nrec; r++) {
		struct nf_flow f = {0};
		const uint8_t *e, *rend;
		uint16_t size, nel;
		bool generic = false;

		if (end - p < 12)
			return false;
		size = get16(p + 2);
		nel = get16(p + 4);
		if (get16(p) != NF_V3_TYPE || size < 12 || size > end - p)
			return false;
		rend = p + size;
		e = p + 12;
		for (uint16_t i = 0; i < nel; i++) {
			uint16_t id, elen;

			if (rend - e < 4)
				return false;
			id = get16(e);
			elen = get16(e + 2);
			if (elen < 4 || elen > rend - e)
				return false;
			if (id == EX_GENERIC && elen == EX_GENERIC_LEN) {
				f.first_ms = get64(e + 4);
				f.last_ms = get64(e + 12);
				f.in_packets = get64(e + 28);
				f.in_bytes = get64(e + 36);
				f.proto = e[48];
				generic = true;
			} else if (id == EX_CNT && elen == EX_CNT_LEN) {
				f.out_packets = get64(e + 12);
				f.out_bytes = get64(e + 20);
			}
			e += elen;
		}
		if (e != rend || !generic)
			return false;
		nf_stat_add(s, &f);
		p = rend;
	}
	return p == end;
}

/*
 * Is the stored block payload raw[0..len) valid under compression comp?
 * Counts its flows into s.
 */
static bool block_ok(int comp, const uint8_t *raw, uint32_t len, uint32_t nrec, uint8_t *plain,
		     struct nf_stat *s)
{
	if (comp == NF_COMP_NONE)
		return scan_v3(raw, len, nrec, s);
#ifdef NF_HAVE_LZ4
	if (comp == NF_COMP_LZ4) {
		int n = LZ4_decompress_safe((const char *)raw, (char *)plain, (int)len, (int)NF_BLOCK_READ_MAX);

		return n > 0 && scan_v3(plain, (size_t)n, nrec, s);
	}
#endif
	(void)plain;
	return false;
}

/* Adopt the scanned state: the writer continues the file at off. */
static int adopt_state(struct nf_writer *w, int fd, int comp, uint64_t off, uint32_t nblocks,
		       const struct nf_stat *stat)
{
#ifdef NF_HAVE_LZ4
	if (comp == NF_COMP_LZ4 && !w->cbuf) {
		w->cbuf_size = (size_t)LZ4_compressBound((int)NF_BLOCK_PAYLOAD);
		w->cbuf = malloc(w->cbuf_size);
		if (!w->cbuf)
			return -1;
	}
#endif
	if (ftruncate(fd, (off_t)off) < 0)
		return -1;
	w->comp = (enum nf_compression)comp;
	w->fd = fd;
	w->off = off;
	w->nblocks = nblocks;
	w->stat = *stat;
	w->absorbed = 0;
	w->undo_n = 0;	/* blocks of a dead writer: not dropped to make room */
	w->blk_len = w->blk_nrec = 0;
	memset(&w->blk_stat, 0, sizeof(w->blk_stat));
	return 0;
}

int nf_writer_adopt(struct nf_writer *w, int fd, struct nf_orphan *o, const char **why)
{
	uint8_t h[NF_HEADER_SIZE], bh[NF_BLOCK_HEADER_SIZE];
	uint8_t *raw = NULL, *plain = NULL;
	uint64_t off = NF_HEADER_SIZE, limit;
	struct nf_stat stat = {0};
	struct stat sb;
	int comp = -1, ret = -1;

	memset(o, 0, sizeof(*o));
	if (w->fd >= 0) {
		*why = "the writer has a file open";
		return -1;
	}
	if (fstat(fd, &sb) < 0 || pread_all(fd, h, sizeof(h), 0) < 0) {
		*why = "shorter than a file header: no block was written";
		return 0;
	}
	if (get16(h) == NF_MAGIC) {
		/* Finished, not renamed: complete as it is. */
		o->complete = true;
		return 1;
	}
	if (get16(h) != 0) {
		*why = "not a placeholder header: not a file of ours";
		return 0;
	}
	/* Blocks absorbed from the slot's file start at the mark: not ours. */
	limit = get64(h + 24) ? get64(h + 24) : (uint64_t)sb.st_size;
	if (limit > (uint64_t)sb.st_size)
		limit = (uint64_t)sb.st_size;
	raw = malloc(NF_BLOCK_READ_MAX);
	plain = malloc(NF_BLOCK_READ_MAX);
	if (!raw || !plain) {
		*why = "out of memory";
		goto out;
	}
	while (limit - off >= NF_BLOCK_HEADER_SIZE && pread_all(fd, bh, sizeof(bh), off) == 0) {
		uint32_t nrec = get32(bh), len = get32(bh + 4);
		struct nf_stat bs = {0};

		if (nrec == 0 || len == 0 || len > NF_BLOCK_READ_MAX || get16(bh + 8) != NF_BLOCK_TYPE_3 ||
		    len > limit - off - NF_BLOCK_HEADER_SIZE ||
		    pread_all(fd, raw, len, off + NF_BLOCK_HEADER_SIZE) < 0)
			break;
		if (comp < 0) {
			/* The placeholder does not say: the first block tells. */
			if (block_ok(NF_COMP_NONE, raw, len, nrec, plain, &bs)) {
				comp = NF_COMP_NONE;
			} else if (memset(&bs, 0, sizeof(bs)), block_ok(NF_COMP_LZ4, raw, len, nrec, plain, &bs)) {
				comp = NF_COMP_LZ4;
			} else {
				/* A whole block we cannot read: not ours to delete. */
				*why = "its first block is whole but not readable as V3 flows (plain or LZ4)";
				goto out;
			}
		} else if (!block_ok(comp, raw, len, nrec, plain, &bs)) {
			break;
		}
		nf_stat_merge(&stat, &bs);
		o->blocks++;
		off += NF_BLOCK_HEADER_SIZE + len;
	}
	o->cut_bytes = (uint64_t)sb.st_size - off;
	o->flows = stat.numflows;
	if (o->blocks == 0) {
		*why = sb.st_size <= NF_HEADER_SIZE ? "no block was written" : "no whole, well-formed data block";
		ret = 0;
		goto out;
	}
	if (adopt_state(w, fd, comp, off, o->blocks, &stat) < 0) {
		*why = strerror(errno);
		goto out;
	}
	ret = 1;
out:
	free(raw);
	free(plain);
	return ret;
}
