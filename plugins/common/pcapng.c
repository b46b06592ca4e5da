/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pcapng blocks: see pcapng.h for the layout and the comment's text. */
#include "pcapng.h"

#include <string.h>

#include "text_escape.h"

#define BT_SHB 0x0a0d0d0au
#define BT_IDB 1u
#define BT_EPB 6u
#define OPT_END 0
#define OPT_COMMENT 1
#define SHB_USERAPPL 4
#define IF_NAME 2
#define IF_TSRESOL 9

/* the last second whose nanoseconds all fit 64 bits: 2554-07-21T23:34:32Z */
#define NS_SEC_MAX 18446744072LL

static const char other_name[] = "other";

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return p + 4;
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
	return p + 2;
}

/* An option: code, length, value, zero padding to 4. */
static uint8_t *put_opt(uint8_t *p, uint16_t code, const void *v, size_t len)
{
	size_t pad = (4 - (len & 3)) & 3;

	p = put16(p, code);
	p = put16(p, (uint16_t)len);
	memcpy(p, v, len);
	memset(p + len, 0, pad);
	return p + len + pad;
}

void sl_pcapng_init(struct sl_pcapng *w, uint32_t snaplen)
{
	uint8_t *p = w->section;
	uint64_t unknown = UINT64_MAX;	/* section length not known */

	w->snaplen = snaplen;
	w->n_if = 0;
	p = put32(p, BT_SHB);
	p = put32(p, SL_PCAPNG_SHB_LEN);
	p = put32(p, 0x1a2b3c4d);	/* byte-order magic */
	p = put16(p, 1);
	p = put16(p, 0);
	memcpy(p, &unknown, 8);
	p += 8;
	p = put_opt(p, SHB_USERAPPL, "sluice", 6);
	p = put32(p, OPT_END);
	p = put32(p, SL_PCAPNG_SHB_LEN);
	w->section_len = (size_t)(p - w->section);
}

static size_t name_cut(size_t len)
{
	return len < SL_PCAPNG_NAME_MAX ? len : SL_PCAPNG_NAME_MAX;
}

int sl_pcapng_if_find(const struct sl_pcapng *w, uint16_t linktype, const char *name, size_t len)
{
	unsigned i;

	len = name_cut(len);
	for (i = 0; i < w->n_if; i++) {
		const struct sl_pcapng_if *f = &w->ifs[i];

		if (f->linktype == linktype && f->name_len == len && memcmp(f->name, name, len) == 0)
			return (int)i;
	}
	return -1;
}

/* The IDB of interface f at the end of the section. */
static void idb_append(struct sl_pcapng *w, const struct sl_pcapng_if *f)
{
	uint8_t *start = w->section + w->section_len, *p = start;
	char esc[SL_PCAPNG_NAME_MAX * SL_ESC_UNIT];
	size_t elen = sl_esc_write(esc, sizeof(esc), f->name, f->name_len, SL_ESC_BACKSLASH, NULL);
	uint8_t tsresol = 9;	/* 10^-9 s */
	uint32_t total;

	p = put32(p, BT_IDB);
	p = put32(p, 0);	/* length, below */
	p = put16(p, f->linktype);
	p = put16(p, 0);
	p = put32(p, w->snaplen);
	if (elen)
		p = put_opt(p, IF_NAME, esc, elen);
	p = put_opt(p, IF_TSRESOL, &tsresol, 1);
	p = put32(p, OPT_END);
	total = (uint32_t)(p - start) + 4;
	p = put32(p, total);
	put32(start + 4, total);
	w->section_len += total;
}

int sl_pcapng_if_add(struct sl_pcapng *w, uint16_t linktype, const char *name, size_t len,
		     bool *added)
{
	struct sl_pcapng_if *f;

	*added = false;
	/* full: everything else is "other" (of this link type or not) */
	if (w->n_if == SL_PCAPNG_MAX_IF)
		return SL_PCAPNG_MAX_IF - 1;
	if (w->n_if == SL_PCAPNG_MAX_IF - 1) {
		name = other_name;
		len = sizeof(other_name) - 1;
	}
	f = &w->ifs[w->n_if];
	f->linktype = linktype;
	f->name_len = (uint8_t)name_cut(len);
	memcpy(f->name, name, f->name_len);
	idb_append(w, f);
	*added = true;
	return (int)w->n_if++;
}

void sl_pcapng_if_undo(struct sl_pcapng *w)
{
	uint32_t total;

	if (!w->n_if)
		return;
	/* the last IDB ends the section; its length is its last word */
	memcpy(&total, w->section + w->section_len - 4, 4);
	w->section_len -= total;
	w->n_if--;
}

void sl_pcapng_epb_begin(uint8_t *dst, uint32_t if_id, const struct sl_time *ts, uint32_t caplen,
			 uint32_t len, size_t clen)
{
	uint64_t ns = 0;

	if (ts->sec > NS_SEC_MAX)
		ns = UINT64_MAX;
	else if (ts->sec >= 0)
		ns = (uint64_t)ts->sec * 1000000000u + ts->nsec;
	dst = put32(dst, BT_EPB);
	dst = put32(dst, (uint32_t)sl_pcapng_epb_len(caplen, clen));
	dst = put32(dst, if_id);
	dst = put32(dst, (uint32_t)(ns >> 32));
	dst = put32(dst, (uint32_t)ns);
	dst = put32(dst, caplen);
	put32(dst, len);
}

void sl_pcapng_epb_end(uint8_t *dst, uint32_t caplen, const char *comment, size_t clen)
{
	uint8_t *p = dst + SL_PCAPNG_EPB_HDR + caplen;
	size_t pad = (4 - (caplen & 3)) & 3;

	memset(p, 0, pad);
	p += pad;
	if (clen) {
		p = put_opt(p, OPT_COMMENT, comment, clen);
		p = put32(p, OPT_END);
	}
	put32(p, (uint32_t)sl_pcapng_epb_len(caplen, clen));
}

/* s without a trailing NUL (strings in records may keep the C one). */
static size_t text_len(const struct sl_bytes *s)
{
	const uint8_t *nul = memchr(s->ptr, 0, s->len);

	return nul ? (size_t)(nul - s->ptr) : s->len;
}

/* s escaped: text_escape's rule with '\', and '"' and ';' as \xNN too. */
static void put_text(struct sl_fmt_buf *b, const struct sl_bytes *s)
{
	const uint8_t *p = s->ptr;
	size_t n = text_len(s), i, start = 0;

	for (i = 0; i < n; i++) {
		if (p[i] != '"' && p[i] != ';')
			continue;
		sl_fmt_escaped(b, p + start, i - start, SL_ESC_BACKSLASH);
		sl_fmt_str(b, p[i] == '"' ? "\\x22" : "\\x3b");
		start = i + 1;
	}
	sl_fmt_escaped(b, p + start, n - start, SL_ESC_BACKSLASH);
}

static void put_quoted(struct sl_fmt_buf *b, const struct sl_bytes *s)
{
	sl_fmt_chr(b, '"');
	put_text(b, s);
	sl_fmt_chr(b, '"');
}

/* The separator before every part but the first. */
static void part(struct sl_fmt_buf *b, size_t start, const char *name)
{
	if (b->len > start)
		sl_fmt_str(b, "; ");
	sl_fmt_str(b, name);
}

size_t sl_pcapng_comment(struct sl_fmt_buf *b, const struct sl_pcapng_why *why)
{
	size_t start = b->len;

	if (why->prefix) {
		part(b, start, "prefix ");
		put_quoted(b, why->prefix);
	}
	if (why->table && why->chain) {
		part(b, start, "rule ");
		put_text(b, why->table);
		sl_fmt_chr(b, '/');
		put_text(b, why->chain);
		if (why->has_handle) {
			sl_fmt_chr(b, '#');
			sl_fmt_u64(b, why->handle);
		}
		if (why->comment) {
			sl_fmt_chr(b, ' ');
			put_quoted(b, why->comment);
		}
		if (why->verdict && text_len(why->verdict)) {
			sl_fmt_chr(b, ' ');
			put_text(b, why->verdict);
		}
	}
	if (why->has_ct_id) {
		part(b, start, "ct_id ");
		sl_fmt_u64(b, why->ct_id);
	}
	if (why->community_id && text_len(why->community_id)) {
		part(b, start, "community_id ");
		put_text(b, why->community_id);
	}
	return b->len - start;
}

size_t sl_pcapng_whole_end(const uint8_t *p, size_t len)
{
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t total, again;

		memcpy(&total, p + off + 4, 4);
		if (total < 12 || (total & 3) || total > len - off)
			break;
		memcpy(&again, p + off + total - 4, 4);
		if (again != total)
			break;
		off += total;
	}
	return off;
}
