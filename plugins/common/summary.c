/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The summary records of dedup and ratelimit: see summary.h. */
#include "summary.h"

int sl_summary_init(struct sl_summary *s, const struct sl_host *host, struct sl_instance *inst,
		    const uint64_t *avoid, unsigned attempts)
{
	s->host = host;
	s->inst = inst;
	s->avoid = avoid;
	s->attempts = attempts;
	s->out = NULL;
	s->f_suppressed = host->field_id(inst, "suppressed");
	s->f_key = host->field_id(inst, "key");
	if (s->f_suppressed < 0 || s->f_key < 0) {
		host->config_error(inst, NULL, "fields 'suppressed' and 'key' are not registered");
		return -1;
	}
	return 0;
}

int sl_summary_key(struct sl_reckey *k, const struct sl_host *host, struct sl_instance *inst,
		   const struct sl_strlist *key)
{
	for (unsigned i = 0; i < key->n; i++) {
		const char *name = key->v[i];
		int id = host->need_field(inst, "key", name);

		if (id < 0)
			return -1;
		if (sl_reckey_add(k, (sl_field)id, host->field_type(inst, id), name) < 0) {
			host->config_error(inst, "key",
					   "too many fields: a key holds at most %d fields and %d bytes "
					   "(numbers take 16, addresses 24, strings 32)",
					   SL_RECKEY_MAX_FIELDS, SL_RECKEY_MAX_BYTES);
			return -1;
		}
	}
	return 0;
}

char *sl_summary_room(struct sl_batch *b, struct sl_fmt_buf *fb, size_t *mark)
{
	char *mem;

	*mark = sl_batch_mark(b);
	mem = sl_batch_alloc(b, SL_SUMMARY_ROOM);
	if (mem)
		sl_fmt_init(fb, mem, SL_SUMMARY_ROOM);
	return mem;
}

bool sl_summary_fits(struct sl_batch *b, char *mem, const struct sl_fmt_buf *fb, size_t mark)
{
	if (fb->overflow) {
		sl_batch_rewind(b, mark);
		return false;
	}
	sl_batch_trim(b, mem, fb->len);
	return true;
}

void sl_summary_emit(struct sl_summary *s)
{
	struct sl_batch *b = s->out;

	if (!b)
		return;
	s->out = NULL;
	s->host->emit(s->inst, b);
}

void sl_summary_stop(struct sl_summary *s)
{
	if (s->out) {
		s->host->batch_put(s->inst, s->out);
		s->out = NULL;
	}
}

void sl_summary_out(struct sl_summary *s, sl_summary_fill_fn fill, void *arg)
{
	for (unsigned attempt = 0; attempt < s->attempts; attempt++) {
		struct sl_record *r;

		if (!s->out)
			s->out = s->host->batch_get(s->inst);
		if (!s->out)
			break;
		r = sl_batch_add(s->out);
		if (r && fill(arg, s->out, r)) {
			s->host->counter_add(s->inst, s->c_summaries, 1);
			return;
		}
		if (r)
			sl_batch_unadd(s->out);
		if (attempt + 1 < s->attempts)
			sl_summary_emit(s);	/* full: send it, try again in a new one */
	}
	s->host->counter_add(s->inst, s->c_lost, 1);
	s->host->error_add(s->inst, 1);
}

void sl_summary_here(struct sl_summary *s, struct sl_splice *sp, sl_summary_fill_fn fill,
		     void *arg)
{
	struct sl_batch *b = sp->b;
	size_t mark = sl_batch_mark(b);
	struct sl_record *r = sl_splice_insert(sp, s->avoid);

	if (r && fill(arg, b, r)) {
		s->host->counter_add(s->inst, s->c_summaries, 1);
		return;
	}
	if (r) {
		/* the arena is full: the inserted record becomes a gap again */
		sl_splice_uninsert(sp);
		sl_batch_rewind(b, mark);
	}
	sl_summary_out(s, fill, arg);
}
