/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfdump flow file writer (layout 2, V3 records).  See nffile.h; reading
 * a file, appending one and recovering one a crash left are in
 * nffile_recover.c.
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
#include "nffile_int.h"

_Static_assert(12 + EX_GENERIC_LEN + EX_IPV6_LEN + EX_MISC_LEN + EX_CNT_LEN + EX_XLATE6_LEN +
		       EX_XLATE_PORT_LEN <= SL_NF_V3_MAX,
	       "NF_V3_MAX too small");

/* ---- V3 records (§5) ---- */

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

_Static_assert(EX_IPV4_LEN == EX_XLATE4_LEN && EX_IPV6_LEN == EX_XLATE6_LEN,
	       "an address element is its two addresses");

/* An element of two addresses (EX_IPV4/6, EX_XLATE4/6): what follows it. */
static uint8_t *addr_element(uint8_t *p, uint16_t id, bool v6, const uint8_t src[16],
			     const uint8_t dst[16])
{
	uint16_t len = v6 ? EX_IPV6_LEN : EX_IPV4_LEN;
	uint8_t *e = element(p, id, len);

	if (v6) {
		put_ip6(e, src);
		put_ip6(e + 16, dst);
	} else {
		put_ip4(e, src);
		put_ip4(e + 4, dst);
	}
	return p + len;
}

static bool flow_is_v6(const struct sl_nf_flow *f)
{
	return !is_mapped4(f->src) || !is_mapped4(f->dst);
}

static bool xlate_is_v6(const struct sl_nf_flow *f)
{
	return flow_is_v6(f) || !is_mapped4(f->xsrc) || !is_mapped4(f->xdst);
}

static size_t v3_size(const struct sl_nf_flow *f)
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

size_t sl_nf_encode_v3(uint8_t *dst, const struct sl_nf_flow *f)
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

	p = addr_element(p, v6 ? EX_IPV6 : EX_IPV4, v6, f->src, f->dst);
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
		bool xv6 = xlate_is_v6(f);

		p = addr_element(p, xv6 ? EX_XLATE6 : EX_XLATE4, xv6, f->xsrc, f->xdst);
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

void sl_nf_stat_add(struct sl_nf_stat *s, const struct sl_nf_flow *f)
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

void sl_nf_stat_merge(struct sl_nf_stat *a, const struct sl_nf_stat *b)
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

static void put_stat(uint8_t *p, const struct sl_nf_stat *s)
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

/* ---- writer ---- */

struct sl_nf_writer *sl_nf_writer_new(enum sl_nf_compression comp, const char *ident)
{
	struct sl_nf_writer *w;

#ifndef NF_HAVE_LZ4
	if (comp == SL_NF_COMP_LZ4) {
		errno = ENOTSUP;
		return NULL;
	}
#endif
	if (comp != SL_NF_COMP_NONE && comp != SL_NF_COMP_LZ4) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->comp = comp;
	w->fd = -1;
	/* Room for the ident + stat appendix too (far below a block). */
	w->blk = malloc(SL_NF_BLOCK_PAYLOAD);
#ifdef NF_HAVE_LZ4
	if (comp == SL_NF_COMP_LZ4) {
		w->cbuf_size = (size_t)LZ4_compressBound((int)SL_NF_BLOCK_PAYLOAD);
		w->cbuf = malloc(w->cbuf_size);
	}
#endif
	if (!w->blk || (comp == SL_NF_COMP_LZ4 && !w->cbuf)) {
		sl_nf_writer_free(w);
		errno = ENOMEM;
		return NULL;
	}
	snprintf(w->ident, sizeof(w->ident), "%s", ident && *ident ? ident : "none");
	return w;
}

void sl_nf_writer_free(struct sl_nf_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w->blk);
	free(w->cbuf);
	free(w);
}

void sl_nf_writer_set_created(struct sl_nf_writer *w, int64_t created)
{
	w->created = created;
}

bool sl_nf_writer_is_open(const struct sl_nf_writer *w)
{
	return w->fd >= 0;
}

const struct sl_nf_stat *sl_nf_writer_stat(const struct sl_nf_writer *w)
{
	return &w->stat;
}

uint64_t sl_nf_writer_blocks(const struct sl_nf_writer *w)
{
	return w->nblocks;
}

uint64_t sl_nf_writer_lost(const struct sl_nf_writer *w)
{
	return w->lost;
}

int sl_nf_pwrite_all(int fd, struct iovec *iov, int n, uint64_t off)
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

int sl_nf_block_write(struct sl_nf_writer *w, const uint8_t *payload, uint32_t len, uint32_t nrec,
		   uint8_t *cbuf, size_t cbuf_size)
{
	uint8_t hdr[SL_NF_BLOCK_HEADER_SIZE];
	struct iovec iov[2];
	const uint8_t *stored = payload;
	uint32_t stored_len = len;
	int saved;

#ifdef NF_HAVE_LZ4
	if (w->comp == SL_NF_COMP_LZ4) {
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
	if (sl_nf_pwrite_all(w->fd, iov, 2, w->off) < 0) {
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

int sl_nf_writer_attach(struct sl_nf_writer *w, int fd)
{
	uint8_t zero[SL_NF_HEADER_SIZE] = {0};

	if (w->fd >= 0)
		sl_nf_writer_abandon(w);
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
	w->off = SL_NF_HEADER_SIZE;
	return 0;
}

int sl_nf_writer_open(struct sl_nf_writer *w, const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);

	if (fd < 0)
		return -1;
	return sl_nf_writer_attach(w, fd);
}

int sl_nf_writer_flush(struct sl_nf_writer *w)
{
	uint64_t off;
	int ret = 0;

	if (w->fd < 0 || w->blk_nrec == 0)
		return 0;
	off = w->off;
	if (sl_nf_block_write(w, w->blk, w->blk_len, w->blk_nrec, w->cbuf, w->cbuf_size) == 0) {
		w->undo[w->undo_next].off = off;
		w->undo[w->undo_next].stat = w->stat;
		w->undo_next = (w->undo_next + 1) % NF_UNDO;
		if (w->undo_n < NF_UNDO)
			w->undo_n++;
		w->nblocks++;
		sl_nf_stat_merge(&w->stat, &w->blk_stat);
	} else {
		w->lost += w->blk_nrec;
		ret = -1;
	}
	w->blk_len = w->blk_nrec = 0;
	memset(&w->blk_stat, 0, sizeof(w->blk_stat));
	return ret;
}

int sl_nf_writer_add(struct sl_nf_writer *w, const struct sl_nf_flow *f)
{
	size_t n = v3_size(f);
	int ret = 0;

	if (w->fd < 0) {
		w->lost++;
		errno = EBADF;
		return -1;
	}
	if (w->blk_len + n > SL_NF_BLOCK_PAYLOAD)
		ret = sl_nf_writer_flush(w);
	sl_nf_encode_v3(w->blk + w->blk_len, f);
	w->blk_len += (uint32_t)n;
	w->blk_nrec++;
	sl_nf_stat_add(&w->blk_stat, f);
	return ret;
}

void sl_nf_writer_abandon(struct sl_nf_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	w->lost += w->blk_nrec;
	w->blk_len = w->blk_nrec = 0;
}

/* The appendix block (ident, then stat) at w->off.  0, or -1 with errno. */
static int write_appendix(struct sl_nf_writer *w, uint64_t empty_first_ms, uint64_t empty_last_ms)
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
	return sl_nf_block_write(w, w->blk, (uint32_t)(p - w->blk), 2, w->cbuf, w->cbuf_size);
}

int sl_nf_writer_close(struct sl_nf_writer *w, uint64_t empty_first_ms, uint64_t empty_last_ms)
{
	uint8_t hdr[SL_NF_HEADER_SIZE];
	uint64_t off_appendix;
	int ret = 0, saved = 0;
	struct iovec iov;

	if (w->fd < 0) {
		errno = EBADF;
		return -1;
	}
	/* A failed last block is lost (counted); the file is well formed without it. */
	sl_nf_writer_flush(w);
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
	if (sl_nf_pwrite_all(w->fd, &iov, 1, 0) < 0) {
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
