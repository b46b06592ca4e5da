/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading nfdump flow files, appending one to the file being written, and
 * recovering a file a writer left unfinished.  The writer is in nffile.h;
 * the format in docs/NFCAPD-FORMAT.md (section numbers below refer to it).
 *
 * What a file a writer left behind can look like (nffile.h writes it so):
 *   - a finished file not yet renamed: the real header (magic 0xA50C) at
 *     offset 0, data blocks, the appendix.  Nothing to recover: it is
 *     whole as it is.
 *   - an unfinished file: a placeholder header (40 bytes, magic 0, so no
 *     nfdump reader takes it) whose bytes 24..31 are 0, or, once
 *     sl_nf_writer_absorb() has started, the offset where the blocks it
 *     copied in start; then the writer's data blocks, each written with
 *     one pwritev(); after the last whole one any of: a torn block (a
 *     crash cut its header or payload), a block whose write failed and
 *     whose cut-back did not happen either, the absorbed blocks, a partial
 *     appendix.
 *   - less than a header, or a header and nothing else: no block was
 *     written.
 *
 * What sl_nf_writer_adopt() keeps: the data blocks from offset 40 up to the
 * first one that is not whole and well formed (type 3, a record count and
 * a size nfdump accepts, inside the file and before the absorb mark, a
 * payload that decompresses and holds exactly its count of V3 records
 * made of whole elements, each with an EXgenericFlow).  Whether the file
 * is plain or LZ4 is not written before close: the first block tells.
 * Everything after the kept blocks is cut off (ftruncate), the absorbed
 * blocks too: they are still in the file they came from.  Nothing is
 * deleted that might not be ours: a header that is neither placeholder
 * nor finished, or a whole first block that does not read as V3 flows,
 * leaves the file as it is.
 *
 * What is counted: the kept blocks and their flows (struct sl_nf_orphan),
 * the bytes cut off; the writer's stat record is recomputed from the kept
 * records by the rule of §6.2, so the finished file's appendix matches
 * what it holds.
 */
#ifndef SLUICE_NFFILE_RECOVER_H
#define SLUICE_NFFILE_RECOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "nffile.h"

/* ---- reading ---- */

/* The parts of a file header (§3) a reader needs. */
struct sl_nf_file_info {
	uint16_t version;
	uint8_t compression;
	uint16_t appendix_blocks;
	uint64_t off_appendix;
	uint32_t num_blocks;
	int64_t created;
	bool has_stat;
	struct sl_nf_stat stat;
	char ident[SL_NF_IDENT_MAX + 2];
};

/*
 * Read the header and appendix of an open file.  0, or -1 with a reason
 * in *why.
 */
int sl_nf_read_info(int fd, struct sl_nf_file_info *info, const char **why);

/*
 * Read the data block at *off (the first is at SL_NF_HEADER_SIZE) and move
 * *off past it.  scratch and out hold SL_NF_BLOCK_READ_MAX bytes each; the
 * payload is decompressed into out.  Returns its length and sets *nrec and
 * *type, or -1 with a reason in *why.
 */
long sl_nf_read_block(int fd, const struct sl_nf_file_info *info, uint64_t *off, uint8_t *scratch,
		   uint8_t *out, uint32_t *nrec, uint16_t *type, const char **why);

/* ---- appending ---- */

/*
 * Append the data blocks of an existing flow file (layout 2, plain or LZ4,
 * converted to this file's compression when it differs) and add its stat
 * record; nfcapd does this when a file for the slot already exists.  On
 * failure (not a flow file we can read, I/O error) the file is left as it
 * was and -1 is returned with a reason in *why.  The absorbed flows are
 * never counted as lost by sl_nf_writer_close(): they are still in path.
 */
int sl_nf_writer_absorb(struct sl_nf_writer *w, const char *path, const char **why);

/* ---- recovery ---- */

/*
 * Recovery of a file a writer left unfinished (crash, kill -9): keep the
 * data blocks up to the last whole, well-formed one, cut the rest off (a
 * torn block, a partial appendix), and continue the file in w (its
 * compression becomes the file's) so that absorb/close finish it.  Blocks
 * that sl_nf_writer_absorb() copied in before the crash are left out: they
 * are still in the file they came from.  w must have no file open.
 *   1: adopted (w owns fd now), or o->complete: the file was finished but
 *      not renamed (w does not own fd);
 *   0: nothing to recover: no block, or only a torn one (reason in *why);
 *  -1: error, or a whole first block this build cannot read (*why).
 */
struct sl_nf_orphan {
	bool complete;
	uint32_t blocks;
	uint64_t flows;
	uint64_t cut_bytes;	/* torn tail removed */
};
int sl_nf_writer_adopt(struct sl_nf_writer *w, int fd, struct sl_nf_orphan *o, const char **why);

#endif /* SLUICE_NFFILE_RECOVER_H */
