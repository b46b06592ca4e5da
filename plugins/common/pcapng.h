/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcapng blocks for the pcap output's `format: pcapng`, written into
 * memory the caller gives (no I/O, no allocation), in this machine's byte
 * order as the Section Header Block's byte-order magic says.
 *
 * A section is one Section Header Block (SHB, shb_userappl "sluice") and
 * an Interface Description Block (IDB) per (link type, interface name):
 * if_name and if_tsresol 9 (nanoseconds), one snaplen for all.  Packets
 * are Enhanced Packet Blocks (EPB) naming their IDB by its index in the
 * section, with an optional opt_comment.
 *
 * Interfaces are numbered in the order they appear and keep their number
 * for the writer's life; the section the writer keeps (sl_pcapng_section)
 * always holds the IDBs of every interface known, in that order.  So any
 * packet block written so far is valid after any copy of the section
 * written since: the output starts each file, and each opening of a file
 * it appends to, with the section, and writes a new interface's packet as
 * the grown section followed by the packet (never a lone IDB, whose
 * index would depend on what the file held before).
 *
 * The comment (sl_pcapng_comment) says why a packet is there, with what
 * came from the packet or the ruleset escaped (see there).
 */
#ifndef SLUICE_PCAPNG_H
#define SLUICE_PCAPNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/record.h>

#include "fmt.h"

/* The SHB every section starts with: the same bytes in every file. */
#define SL_PCAPNG_SHB_LEN 44
/* Interfaces a writer names; the last one is "other", for any beyond. */
#define SL_PCAPNG_MAX_IF 64
/* Bytes of an interface name kept, before escaping. */
#define SL_PCAPNG_NAME_MAX 32
/* An IDB at its largest: header, if_name escaped, if_tsresol, end, length. */
#define SL_PCAPNG_IDB_MAX (16 + 4 + SL_PCAPNG_NAME_MAX * 4 + 4 + 8 + 4 + 4)
#define SL_PCAPNG_SECTION_MAX (SL_PCAPNG_SHB_LEN + SL_PCAPNG_MAX_IF * SL_PCAPNG_IDB_MAX)
/* EPB bytes besides the packet's: header 28, pad 3, comment option 4 + pad 3, end 4, length 4. */
#define SL_PCAPNG_EPB_HDR 28
#define SL_PCAPNG_EPB_OVERHEAD (SL_PCAPNG_EPB_HDR + 3 + 4 + 3 + 4 + 4)
/* A comment's longest text (every part at its longest, escaped, fits). */
#define SL_PCAPNG_COMMENT_MAX 4096

struct sl_pcapng_if {
	uint16_t linktype;
	uint8_t name_len;
	char name[SL_PCAPNG_NAME_MAX];
};

struct sl_pcapng {
	uint32_t snaplen;
	unsigned n_if;
	struct sl_pcapng_if ifs[SL_PCAPNG_MAX_IF];
	size_t section_len;
	uint8_t section[SL_PCAPNG_SECTION_MAX];
};

/* A writer whose interfaces all have snaplen; its section is the SHB alone. */
void sl_pcapng_init(struct sl_pcapng *w, uint32_t snaplen);

/* The section: SHB and the IDB of every interface known (the file header). */
static inline const uint8_t *sl_pcapng_section(const struct sl_pcapng *w, size_t *len)
{
	*len = w->section_len;
	return w->section;
}

/*
 * The index of interface (linktype, name[0..len)) (a name longer than
 * SL_PCAPNG_NAME_MAX is cut), or -1 when the writer does not know it yet.
 */
int sl_pcapng_if_find(const struct sl_pcapng *w, uint16_t linktype, const char *name, size_t len);

/*
 * Add the interface (its IDB to the section) and return its index; once
 * SL_PCAPNG_MAX_IF - 1 are known, the index of "other" (added once).
 * *added: whether the section grew.  sl_pcapng_if_undo() takes the last
 * one added back (its packet could not be written).
 */
int sl_pcapng_if_add(struct sl_pcapng *w, uint16_t linktype, const char *name, size_t len,
		     bool *added);
void sl_pcapng_if_undo(struct sl_pcapng *w);

/* Bytes of the EPB of a caplen-byte packet with a comment of clen bytes (0: none). */
static inline size_t sl_pcapng_epb_len(uint32_t caplen, size_t clen)
{
	size_t n = SL_PCAPNG_EPB_HDR + ((caplen + 3u) & ~(size_t)3) + 4;

	if (clen)
		n += 4 + ((clen + 3) & ~(size_t)3) + 4;
	return n;
}

/*
 * The EPB's header at dst (SL_PCAPNG_EPB_HDR bytes) for interface if_id,
 * time ts (clamped to what 64-bit nanoseconds hold: 1970..2554), caplen
 * bytes of a len-byte packet; the caller copies the caplen bytes to
 * dst + SL_PCAPNG_EPB_HDR, then sl_pcapng_epb_end() writes the rest.
 */
void sl_pcapng_epb_begin(uint8_t *dst, uint32_t if_id, const struct sl_time *ts, uint32_t caplen,
			 uint32_t len, size_t clen);

/* Padding, the comment option, the end of options and the length. */
void sl_pcapng_epb_end(uint8_t *dst, uint32_t caplen, const char *comment, size_t clen);

/*
 * Why a packet is there: each part present or not.  Byte strings are as
 * the record holds them (not NUL-terminated, a trailing NUL ignored).
 */
struct sl_pcapng_why {
	const struct sl_bytes *prefix;
	/* the rule: table/chain#handle "comment" verdict */
	const struct sl_bytes *table, *chain, *comment, *verdict;
	bool has_handle;
	uint64_t handle;
	bool has_ct_id;
	uint64_t ct_id;
	const struct sl_bytes *community_id;
};

/*
 * The comment text into b (cut at whole units when it is full):
 *   prefix "P"; rule T/C#H "COMMENT" V; ct_id N; community_id X
 * parts separated by "; ", each only when present (the rule when it has a
 * table and a chain; its handle, comment and verdict when present).  What
 * came from the packet or the ruleset is escaped as \xNN (text_escape.h
 * with '\' escaped): control bytes, bytes of invalid UTF-8, C1 controls,
 * and also '"' and ';' so quotes and the separator stay unambiguous.  The
 * text is valid UTF-8 without control bytes.  Returns its length (0: no
 * part present).
 */
size_t sl_pcapng_comment(struct sl_fmt_buf *b, const struct sl_pcapng_why *why);

/*
 * The whole blocks at the start of p[0..len) (after a file's first SHB):
 * a block whose length is not a multiple of 4, below 12, past the end,
 * or not repeated at its end, is where a crash cut the file.  Returns the
 * bytes of whole blocks.
 */
size_t sl_pcapng_whole_end(const uint8_t *p, size_t len);

#endif /* SLUICE_PCAPNG_H */
