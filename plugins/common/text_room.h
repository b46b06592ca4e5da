/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A record's text (SL_F_TEXT) formatted straight into its batch's arena,
 * for the filters that write one line or object per record (cef, json,
 * logline): room is reserved before the formatter runs and its unused tail
 * given back after, so nothing else may allocate from the arena between
 * sl_text_room_begin() and sl_text_room_keep().
 *
 *	struct sl_text_room t;
 *	struct sl_fmt_buf fb;
 *
 *	sl_text_room_begin(&t, b, 2048);
 *	while (sl_text_room_try(&t, b, &fb))
 *		format(&fb, r);		// at most twice: it must not count anything
 *	if (!sl_text_room_keep(&t, b, &fb, r))
 *		no_room++;		// r has no text, the arena is as it was
 *
 * The first try gets at most `first` bytes (most texts are short); when it
 * overflowed and was cut to `first`, the second gets all the arena has
 * left.  A caller whose texts always fit `first` calls sl_text_room_try()
 * once, without the loop.  Static inline: the filters' hot path.
 */
#ifndef SLUICE_TEXT_ROOM_H
#define SLUICE_TEXT_ROOM_H

#include <stdbool.h>
#include <stddef.h>

#include <sluice/plugin.h>

#include "fmt.h"

struct sl_text_room {
	size_t start;	/* the arena's mark before the text: what a failure rewinds to */
	size_t first;	/* the most the first try reserves */
	size_t room;	/* what the last try reserved */
	void *mem;	/* where (NULL: nothing; its fmt_buf overflowed from the start) */
	unsigned tries;
};

static inline void sl_text_room_begin(struct sl_text_room *t, const struct sl_batch *b, size_t first)
{
	t->start = sl_batch_mark(b);
	t->first = first;
	t->room = 0;
	t->mem = NULL;
	t->tries = 0;
}

/*
 * Reserve the next try's room behind fb (the previous try's given back):
 * true, or false when there is no next try (fb, from the last try, fitted,
 * or already had all there was).
 */
static inline bool sl_text_room_try(struct sl_text_room *t, struct sl_batch *b, struct sl_fmt_buf *fb)
{
	size_t room;

	if (t->tries && (t->tries > 1 || !fb->overflow || t->room < t->first))
		return false;
	sl_batch_rewind(b, t->start);
	room = sl_batch_room(b);
	/* 8 bytes below what is left: the allocation's alignment cannot make it fail */
	room = room > 8 ? (room - 8) & ~(size_t)7 : 0;
	if (!t->tries && room > t->first)
		room = t->first;
	t->room = room;
	t->mem = room ? sl_batch_alloc(b, room) : NULL;
	sl_fmt_init(fb, t->mem, room);
	t->tries++;
	return true;
}

/*
 * After the last try: true with r's text set to what fb holds (not marked
 * safe: the caller knows) and the rest of the room given back; false, when
 * fb overflowed, with r's text unset and the arena rewound to where
 * sl_text_room_begin() found it.
 */
static inline bool sl_text_room_keep(const struct sl_text_room *t, struct sl_batch *b,
				     const struct sl_fmt_buf *fb, struct sl_record *r)
{
	if (fb->overflow) {
		sl_batch_rewind(b, t->start);
		sl_unset(r, SL_F_TEXT);
		return false;
	}
	sl_batch_trim(b, t->mem, fb->len);
	sl_set_bytes(r, SL_F_TEXT, t->mem, (uint32_t)fb->len);
	return true;
}

#endif /* SLUICE_TEXT_ROOM_H */
