/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "tail_module.h"
#include "tap.h"

struct tap {
	pthread_mutex_t lock;		/* everything below, between threads */
	bool used;			/* the slot is a session's */
	bool feeding;			/* instances hand it records */
	const struct sl_tail_module *mod;
	struct sl_tail_fmt *fmt;
	struct sl_instance **insts;
	size_t ninsts;
	char *buf;
	size_t len;
	bool full;			/* a line did not fit: the rest is lost until a take */
	uint64_t lost;
};

static struct tap taps[TAP_MAX] = {[0 ... TAP_MAX - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER}};

static bool watches(const struct tap *t, const struct sl_instance *inst)
{
	for (size_t i = 0; i < t->ninsts; i++)
		if (t->insts[i] == inst)
			return true;
	return false;
}

int tap_open(const struct sl_tail_module *mod, struct sl_tail_fmt *fmt,
	     struct sl_instance *const *insts, size_t n)
{
	struct tap *t = NULL;
	int id;

	for (id = 0; id < TAP_MAX && !t; id++)
		if (!taps[id].used)
			t = &taps[id];
	if (!t) {
		mod->close(fmt);
		errno = EBUSY;
		return -1;
	}
	id--;
	pthread_mutex_lock(&t->lock);
	t->insts = malloc((n ? n : 1) * sizeof(*t->insts));
	t->buf = malloc(TAP_BUF);
	if (!t->insts || !t->buf) {
		free(t->insts);
		free(t->buf);
		t->insts = NULL;
		t->buf = NULL;
		pthread_mutex_unlock(&t->lock);
		mod->close(fmt);
		errno = ENOMEM;
		return -1;
	}
	memcpy(t->insts, insts, n * sizeof(*insts));
	t->ninsts = n;
	t->mod = mod;
	t->fmt = fmt;
	t->len = 0;
	t->lost = 0;
	t->full = false;
	t->used = t->feeding = true;
	pthread_mutex_unlock(&t->lock);
	for (size_t i = 0; i < n; i++)
		__atomic_fetch_or(&insts[i]->taps, 1u << id, __ATOMIC_RELEASE);
	return id;
}

/*
 * Under t->lock: b's records as lines.  Once one does not fit, the
 * matching ones are lost (counted) without being formatted, until the
 * next take: a stalled reader costs its session's where and nothing more.
 */
static void tap_lines(struct tap *t, const struct sl_batch *b)
{
	for (unsigned i = 0; i < b->count; i++) {
		size_t room = t->full || TAP_BUF - t->len <= 3 ? 0 : TAP_BUF - t->len - 3;
		long n = t->mod->format(t->fmt, b->rec[i], room ? t->buf + t->len + 2 : t->buf, room);

		if (n < 0) {
			t->full = true;
			t->lost++;
		} else if (n > 0) {
			memcpy(t->buf + t->len, "r ", 2);
			t->buf[t->len + 2 + (size_t)n] = '\n';
			t->len += (size_t)n + 3;
		}
	}
}

void tap_batch(struct sl_instance *inst, const struct sl_batch *b)
{
	unsigned m = __atomic_load_n(&inst->taps, __ATOMIC_ACQUIRE);

	for (; m; m &= m - 1) {
		struct tap *t = &taps[__builtin_ctz(m)];

		pthread_mutex_lock(&t->lock);
		if (t->feeding && watches(t, inst))
			tap_lines(t, b);
		pthread_mutex_unlock(&t->lock);
	}
}

size_t tap_take(int id, char *out, size_t cap, uint64_t *lost, bool *ended)
{
	struct tap *t = &taps[id];
	size_t n;

	pthread_mutex_lock(&t->lock);
	n = t->len <= cap ? t->len : 0;
	memcpy(out, t->buf, n);
	t->len = 0;
	t->full = false;
	*lost = t->lost;
	*ended = !t->feeding;
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* Stop the instances feeding t; its lines stay. */
static void unfeed(int id)
{
	struct tap *t = &taps[id];

	for (size_t i = 0; i < t->ninsts; i++)
		__atomic_fetch_and(&t->insts[i]->taps, ~(1u << id), __ATOMIC_RELEASE);
	pthread_mutex_lock(&t->lock);
	t->feeding = false;
	pthread_mutex_unlock(&t->lock);
}

void tap_close(int id)
{
	struct tap *t;

	if (id < 0 || id >= TAP_MAX)	/* a connection without a session: -1 */
		return;
	t = &taps[id];
	if (!t->used)
		return;
	if (t->feeding)
		unfeed(id);
	pthread_mutex_lock(&t->lock);
	t->mod->close(t->fmt);
	t->fmt = NULL;
	free(t->insts);
	free(t->buf);
	t->insts = NULL;
	t->buf = NULL;
	t->ninsts = t->len = 0;
	t->used = false;
	pthread_mutex_unlock(&t->lock);
}

void tap_end_all(void)
{
	for (int id = 0; id < TAP_MAX; id++)
		if (taps[id].used && taps[id].feeding)
			unfeed(id);
}
