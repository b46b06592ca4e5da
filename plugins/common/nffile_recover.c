/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading nfdump flow files, appending one to the file being written and
 * recovering a file a crash left unfinished.  See nffile_recover.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "nffile_int.h"
#include "nffile_recover.h"

/* ---- reading ---- */

/* The appendix stat record (§6.2) back into counters. */
static void get_stat(const uint8_t *p, struct sl_nf_stat *s)
{
	uint64_t v[18];

	for (int i = 0; i < 18; i++)
		v[i] = get64(p + 4 + 8 * i);
	*s = (struct sl_nf_stat){
		v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8],
		v[9], v[10], v[11], v[12], v[13], v[14], v[15], v[16], v[17],
	};
}

/* pread until len bytes are in; 0, or -1 with errno (ENODATA: the file ends). */
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

static long decompress(uint8_t comp, const uint8_t *in, uint32_t len, uint8_t *out, const char **why)
{
	if (comp == SL_NF_COMP_NONE) {
		memcpy(out, in, len);
		return (long)len;
	}
#ifdef NF_HAVE_LZ4
	if (comp == SL_NF_COMP_LZ4) {
		int n = LZ4_decompress_safe((const char *)in, (char *)out, (int)len, (int)SL_NF_BLOCK_READ_MAX);

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
static long read_block_header(int fd, uint64_t off, uint8_t hdr[SL_NF_BLOCK_HEADER_SIZE], const char **why)
{
	uint32_t size;

	if (pread_all(fd, hdr, SL_NF_BLOCK_HEADER_SIZE, off) < 0) {
		*why = "short block header";
		return -1;
	}
	size = get32(hdr + 4);
	if (get32(hdr) == 0 || size == 0 || size > SL_NF_BLOCK_READ_MAX) {
		*why = "corrupt block header";
		return -1;
	}
	return (long)size;
}

/* The ident and stat records of one appendix block's payload (§6). */
static int read_appendix_records(const uint8_t *p, const uint8_t *end, uint32_t nrec,
				 struct sl_nf_file_info *info, const char **why)
{
	for (uint32_t r = 0; r < nrec && end - p >= 4; r++) {
		uint16_t type = get16(p), rsize = get16(p + 2);

		if (rsize < 4 || rsize > end - p) {
			*why = "corrupt appendix record";
			return -1;
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
	return 0;
}

int sl_nf_read_info(int fd, struct sl_nf_file_info *info, const char **why)
{
	uint8_t h[SL_NF_HEADER_SIZE], bh[SL_NF_BLOCK_HEADER_SIZE];
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
	raw = malloc(SL_NF_BLOCK_READ_MAX);
	buf = malloc(SL_NF_BLOCK_READ_MAX);
	if (!raw || !buf) {
		*why = "out of memory";
		goto out;
	}
	off = info->off_appendix;
	for (unsigned b = 0; b < info->appendix_blocks; b++) {
		long size = read_block_header(fd, off, bh, why), n;
		uint32_t nrec = get32(bh);

		if (size < 0)
			goto out;
		if (pread_all(fd, raw, (size_t)size, off + SL_NF_BLOCK_HEADER_SIZE) < 0) {
			*why = "short appendix block";
			goto out;
		}
		n = decompress(info->compression, raw, (uint32_t)size, buf, why);
		if (n < 0)
			goto out;
		off += SL_NF_BLOCK_HEADER_SIZE + (uint64_t)size;
		if (read_appendix_records(buf, buf + n, nrec, info, why) < 0)
			goto out;
	}
	ret = 0;
out:
	free(raw);
	free(buf);
	return ret;
}

long sl_nf_read_block(int fd, const struct sl_nf_file_info *info, uint64_t *off, uint8_t *scratch,
		   uint8_t *out, uint32_t *nrec, uint16_t *type, const char **why)
{
	uint8_t bh[SL_NF_BLOCK_HEADER_SIZE];
	long size = read_block_header(fd, *off, bh, why), n;

	if (size < 0)
		return -1;
	if (pread_all(fd, scratch, (size_t)size, *off + SL_NF_BLOCK_HEADER_SIZE) < 0) {
		*why = "short data block";
		return -1;
	}
	n = decompress(info->compression, scratch, (uint32_t)size, out, why);
	if (n < 0)
		return -1;
	*nrec = get32(bh);
	*type = get16(bh + 8);
	*off += SL_NF_BLOCK_HEADER_SIZE + (uint64_t)size;
	return n;
}

/* ---- appending ---- */

/* One absorb: the file read and the buffers its blocks go through. */
struct absorb {
	int fd;			/* the file absorbed; -1: not open */
	struct sl_nf_file_info info;
	uint64_t off;		/* its next data block */
	uint8_t *raw, *plain;	/* a stored block, a decompressed one */
	uint8_t *cbuf;		/* a block recompressed for our file */
	size_t cbuf_size;
};

/* Open path (never through a symbolic link) and read its header and appendix. */
static int absorb_open(struct absorb *a, const char *path, const char **why)
{
	struct stat sb;

	a->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (a->fd < 0) {
		*why = errno == ELOOP ? "a symbolic link (never followed)" : strerror(errno);
		return -1;
	}
	if (fstat(a->fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		*why = "not a regular file";
		return -1;
	}
	if (sl_nf_read_info(a->fd, &a->info, why) < 0)
		return -1;
	if (a->info.compression != SL_NF_COMP_NONE && a->info.compression != SL_NF_COMP_LZ4) {
		*why = "compression method not supported (only none and LZ4 are)";
		return -1;
	}
	return 0;
}

/* Buffers for a block of SL_NF_BLOCK_READ_MAX bytes, recompressed if w is LZ4. */
static int absorb_alloc(struct absorb *a, const struct sl_nf_writer *w)
{
	a->raw = malloc(SL_NF_BLOCK_READ_MAX);
	a->plain = malloc(SL_NF_BLOCK_READ_MAX);
#ifdef NF_HAVE_LZ4
	a->cbuf_size = (size_t)LZ4_compressBound((int)SL_NF_BLOCK_READ_MAX);
	a->cbuf = malloc(a->cbuf_size);
#endif
	return !a->raw || !a->plain || (w->comp == SL_NF_COMP_LZ4 && !a->cbuf) ? -1 : 0;
}

static void absorb_done(struct absorb *a)
{
	if (a->fd >= 0)
		close(a->fd);
	free(a->raw);
	free(a->plain);
	free(a->cbuf);
}

/*
 * Write in the placeholder header where the copied blocks start (0: none).
 * A crash before the rename leaves an orphan whose recovery must not count
 * them twice: sl_nf_writer_adopt() stops there.  Whether all 8 bytes went.
 */
static bool absorb_mark(struct sl_nf_writer *w, uint64_t start)
{
	uint8_t mark[8];

	put64(mark, start);
	return pwrite(w->fd, mark, sizeof(mark), NF_MARK_OFF) == (ssize_t)sizeof(mark);
}

/* Same compression: copy the stored block at a->off as it is. */
static int absorb_copy_block(struct sl_nf_writer *w, struct absorb *a, const char **why)
{
	uint8_t bh[SL_NF_BLOCK_HEADER_SIZE];
	long size = read_block_header(a->fd, a->off, bh, why);
	struct iovec iov[2];

	if (size < 0 || pread_all(a->fd, a->raw, (size_t)size, a->off + SL_NF_BLOCK_HEADER_SIZE) < 0) {
		if (size >= 0)
			*why = "short data block";
		return -1;
	}
	a->off += SL_NF_BLOCK_HEADER_SIZE + (uint64_t)size;
	iov[0] = (struct iovec){bh, sizeof(bh)};
	iov[1] = (struct iovec){a->raw, (size_t)size};
	if (sl_nf_pwrite_all(w->fd, iov, 2, w->off) < 0) {
		*why = strerror(errno);
		return -1;
	}
	w->off += sizeof(bh) + (uint64_t)size;
	w->nblocks++;
	return 0;
}

/* Another compression: decompress the block at a->off and write it as ours. */
static int absorb_recode_block(struct sl_nf_writer *w, struct absorb *a, const char **why)
{
	uint32_t nrec;
	uint16_t type;
	long n = sl_nf_read_block(a->fd, &a->info, &a->off, a->raw, a->plain, &nrec, &type, why);

	if (n < 0)
		return -1;
	if (type != NF_BLOCK_TYPE_3 && type != NF_BLOCK_TYPE_2)
		return 0;	/* nfdump skips other block types too */
	if (sl_nf_block_write(w, a->plain, (uint32_t)n, nrec, a->cbuf, a->cbuf_size) < 0) {
		*why = strerror(errno);
		return -1;
	}
	w->nblocks++;
	return 0;
}

/* Every data block of a's file after ours.  0, or -1 at the first failure. */
static int absorb_blocks(struct sl_nf_writer *w, struct absorb *a, const char **why)
{
	for (uint32_t b = 0; b < a->info.num_blocks; b++) {
		int r = a->info.compression == w->comp ? absorb_copy_block(w, a, why)
						       : absorb_recode_block(w, a, why);

		if (r < 0)
			return -1;
	}
	return 0;
}

/* Back to the file as it was before the absorb started. */
static void absorb_undo(struct sl_nf_writer *w, uint64_t saved_off, uint32_t saved_blocks)
{
	w->off = saved_off;
	w->nblocks = saved_blocks;
	if (ftruncate(w->fd, (off_t)w->off) < 0) {
		/* the next block write overwrites from w->off anyway */
	}
	if (!absorb_mark(w, 0)) {
		/* a stale mark only makes a later recovery keep fewer blocks */
	}
}

int sl_nf_writer_absorb(struct sl_nf_writer *w, const char *path, const char **why)
{
	struct absorb a = {.fd = -1, .off = SL_NF_HEADER_SIZE};
	uint64_t saved_off;
	uint32_t saved_blocks;
	int ret = -1;

	if (w->fd < 0) {
		*why = "no file open";
		return -1;
	}
	if (absorb_open(&a, path, why) < 0)
		goto out;
	/* Our pending records first, so the old blocks follow whole blocks. */
	if (sl_nf_writer_flush(w) < 0) {
		*why = strerror(errno);
		goto out;
	}
	if (absorb_alloc(&a, w) < 0) {
		*why = "out of memory";
		goto out;
	}
	saved_off = w->off;
	saved_blocks = w->nblocks;
	w->undo_n = 0;	/* never drop our blocks under the absorbed ones */
	if (!absorb_mark(w, w->off)) {
		*why = strerror(errno ? errno : EIO);
		goto out;
	}
	if (absorb_blocks(w, &a, why) < 0) {
		absorb_undo(w, saved_off, saved_blocks);
		goto out;
	}
	if (a.info.has_stat) {
		sl_nf_stat_merge(&w->stat, &a.info.stat);
		w->absorbed += a.info.stat.numflows;
	}
	ret = 0;
out:
	absorb_done(&a);
	return ret;
}

/* ---- orphans ---- */

/*
 * Check one block's payload: exactly nrec V3 records filling it, each
 * with whole elements and an EXgenericFlow; count them into s.
 */
static bool scan_v3(const uint8_t *p, size_t len, uint32_t nrec, struct sl_nf_stat *s)
{
	const uint8_t *end = p + len;

	for (uint32_t r = 0; r < nrec; r++) {
		struct sl_nf_flow f = {0};
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
		sl_nf_stat_add(s, &f);
		p = rend;
	}
	return p == end;
}

/*
 * Is the stored block payload raw[0..len) valid under compression comp?
 * Counts its flows into s.
 */
static bool block_ok(int comp, const uint8_t *raw, uint32_t len, uint32_t nrec, uint8_t *plain,
		     struct sl_nf_stat *s)
{
	if (comp == SL_NF_COMP_NONE)
		return scan_v3(raw, len, nrec, s);
#ifdef NF_HAVE_LZ4
	if (comp == SL_NF_COMP_LZ4) {
		int n = LZ4_decompress_safe((const char *)raw, (char *)plain, (int)len, (int)SL_NF_BLOCK_READ_MAX);

		return n > 0 && scan_v3(plain, (size_t)n, nrec, s);
	}
#endif
	(void)plain;
	return false;
}

/* Adopt the scanned state: the writer continues the file at off. */
static int adopt_state(struct sl_nf_writer *w, int fd, int comp, uint64_t off, uint32_t nblocks,
		       const struct sl_nf_stat *stat)
{
#ifdef NF_HAVE_LZ4
	if (comp == SL_NF_COMP_LZ4 && !w->cbuf) {
		w->cbuf_size = (size_t)LZ4_compressBound((int)SL_NF_BLOCK_PAYLOAD);
		w->cbuf = malloc(w->cbuf_size);
		if (!w->cbuf)
			return -1;
	}
#endif
	if (ftruncate(fd, (off_t)off) < 0)
		return -1;
	w->comp = (enum sl_nf_compression)comp;
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

/*
 * The data blocks from *off up to limit that are whole and well formed,
 * each counted into o and *stat; *off ends after the last of them.  The
 * first block decides *comp (-1 before).  0, or -1 when that first block
 * is whole but reads neither plain nor LZ4 (*why).
 */
static int scan_blocks(int fd, uint64_t limit, uint64_t *off, int *comp, uint8_t *raw, uint8_t *plain,
		       struct sl_nf_stat *stat, struct sl_nf_orphan *o, const char **why)
{
	uint8_t bh[SL_NF_BLOCK_HEADER_SIZE];

	while (limit - *off >= SL_NF_BLOCK_HEADER_SIZE && pread_all(fd, bh, sizeof(bh), *off) == 0) {
		uint32_t nrec = get32(bh), len = get32(bh + 4);
		struct sl_nf_stat bs = {0};

		if (nrec == 0 || len == 0 || len > SL_NF_BLOCK_READ_MAX || get16(bh + 8) != NF_BLOCK_TYPE_3 ||
		    len > limit - *off - SL_NF_BLOCK_HEADER_SIZE ||
		    pread_all(fd, raw, len, *off + SL_NF_BLOCK_HEADER_SIZE) < 0)
			break;
		if (*comp < 0) {
			/* The placeholder does not say: the first block tells. */
			if (block_ok(SL_NF_COMP_NONE, raw, len, nrec, plain, &bs)) {
				*comp = SL_NF_COMP_NONE;
			} else if (memset(&bs, 0, sizeof(bs)), block_ok(SL_NF_COMP_LZ4, raw, len, nrec, plain, &bs)) {
				*comp = SL_NF_COMP_LZ4;
			} else {
				/* A whole block we cannot read: not ours to delete. */
				*why = "its first block is whole but not readable as V3 flows (plain or LZ4)";
				return -1;
			}
		} else if (!block_ok(*comp, raw, len, nrec, plain, &bs)) {
			break;
		}
		sl_nf_stat_merge(stat, &bs);
		o->blocks++;
		*off += SL_NF_BLOCK_HEADER_SIZE + len;
	}
	return 0;
}

int sl_nf_writer_adopt(struct sl_nf_writer *w, int fd, struct sl_nf_orphan *o, const char **why)
{
	uint8_t h[SL_NF_HEADER_SIZE];
	uint8_t *raw = NULL, *plain = NULL;
	uint64_t off = SL_NF_HEADER_SIZE, limit;
	struct sl_nf_stat stat = {0};
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
	limit = get64(h + NF_MARK_OFF) ? get64(h + NF_MARK_OFF) : (uint64_t)sb.st_size;
	if (limit > (uint64_t)sb.st_size)
		limit = (uint64_t)sb.st_size;
	raw = malloc(SL_NF_BLOCK_READ_MAX);
	plain = malloc(SL_NF_BLOCK_READ_MAX);
	if (!raw || !plain) {
		*why = "out of memory";
		goto out;
	}
	if (scan_blocks(fd, limit, &off, &comp, raw, plain, &stat, o, why) < 0)
		goto out;
	o->cut_bytes = (uint64_t)sb.st_size - off;
	o->flows = stat.numflows;
	if (o->blocks == 0) {
		*why = sb.st_size <= SL_NF_HEADER_SIZE ? "no block was written" : "no whole, well-formed data block";
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
