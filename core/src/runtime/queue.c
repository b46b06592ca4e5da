/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "queue.h"

struct sl_batch *queue_batch_new(unsigned batch_size, size_t stride, size_t arena_size)
{
	size_t recs = batch_size * sizeof(struct sl_record *);
	size_t storage = (size_t)batch_size * stride;
	struct sl_batch *b;
	uint8_t *mem;

	mem = aligned_alloc(64, (sizeof(*b) + recs + storage + arena_size + 63) & ~(size_t)63);
	if (!mem)
		return NULL;
	b = (struct sl_batch *)mem;
	memset(b, 0, sizeof(*b));
	b->capacity = batch_size;
	b->stride = (unsigned)stride;
	b->rec = (struct sl_record **)(mem + sizeof(*b));
	b->storage = mem + ((sizeof(*b) + recs + 63) & ~(size_t)63);
	b->arena.base = b->storage + storage;
	b->arena.size = arena_size;
	return b;
}

/* ---- the copy ---- */

/* len bytes of p into dst's arena; NULL if they do not fit. */
static const uint8_t *arena_dup(struct sl_batch *dst, const uint8_t *p, uint32_t len)
{
	uint8_t *c;

	if (!len)
		return dst->arena.base;	/* a valid pointer for an empty value */
	c = sl_batch_alloc(dst, len);
	if (c)
		memcpy(c, p, len);
	return c;
}

static bool is_pointer_type(unsigned t)
{
	return t == SL_T_BYTES || t == SL_T_STRING;
}

void queue_fields_init(struct bq_fields *bf, const uint8_t *types, unsigned nfields)
{
	memset(bf->copy, 0xff, sizeof(bf->copy));
	memset(bf->ptrs, 0, sizeof(bf->ptrs));
	for (unsigned f = 0; f < nfields && f < SL_MAX_FIELDS; f++)
		if (is_pointer_type(types[f]))
			bf->ptrs[f >> 6] |= 1ull << (f & 63);
}

/* A field pointing to bytes: into the packet's copy, the text's copy, or its own. */
static bool copy_pointer(struct sl_batch *dst, struct sl_record *d, const struct sl_record *s,
			 unsigned f, const uint8_t *npkt)
{
	const struct sl_bytes *sb = &s->v[f].bytes;
	const struct sl_bytes *spkt = &s->v[SL_F_PACKET].bytes;
	uintptr_t p = (uintptr_t)sb->ptr, pkt = (uintptr_t)spkt->ptr;
	const uint8_t *c;

	d->v[f] = s->v[f];
	if (f == SL_F_PACKET) {
		d->v[f].bytes.ptr = npkt;
	} else if (f == SL_F_TEXT_SAFE && sl_text_is_safe(s) && sl_has(d, SL_F_TEXT)) {
		d->v[f].bytes.ptr = d->v[SL_F_TEXT].bytes.ptr;
	} else if (npkt && sb->len && p >= pkt && p - pkt <= spkt->len &&
		   sb->len <= spkt->len - (p - pkt)) {
		d->v[f].bytes.ptr = npkt + (p - pkt);
	} else {
		if (!(c = arena_dup(dst, sb->ptr, sb->len)))
			return false;
		d->v[f].bytes.ptr = c;
	}
	return true;
}

/*
 * One record: the fields of bf->copy it has, their values, and the bytes
 * they point to.  The packet is copied first if it is one of them; fields
 * that point inside it (payload, options) are then pointed inside the
 * copy, not copied again (without it, each is copied on its own).  The
 * text_safe mark is kept by pointing it at the text's copy (it holds when
 * both are the same bytes).  Values first, then the pointer fields in
 * ascending order (text before text_safe).  On failure nothing is left
 * behind in dst.
 */
static bool copy_one(struct sl_batch *dst, const struct sl_record *s, const struct bq_fields *bf)
{
	size_t mark = dst->arena.used;
	struct sl_record *d = sl_batch_add(dst);
	const uint8_t *npkt = NULL;

	for (unsigned w = 0; w < SL_PRESENCE_WORDS; w++)
		d->present[w] = s->present[w] & bf->copy[w];
	if (sl_has(d, SL_F_PACKET) &&
	    !(npkt = arena_dup(dst, s->v[SL_F_PACKET].bytes.ptr, s->v[SL_F_PACKET].bytes.len)))
		goto undo;
	for (unsigned w = 0; w < SL_PRESENCE_WORDS; w++) {
		for (uint64_t bits = d->present[w] & ~bf->ptrs[w]; bits; bits &= bits - 1) {
			unsigned f = w * 64 + (unsigned)__builtin_ctzll(bits);

			d->v[f] = s->v[f];
		}
		for (uint64_t bits = d->present[w] & bf->ptrs[w]; bits; bits &= bits - 1)
			if (!copy_pointer(dst, d, s, w * 64 + (unsigned)__builtin_ctzll(bits), npkt))
				goto undo;
	}
	return true;
undo:
	sl_batch_unadd(dst);
	dst->arena.used = mark;
	return false;
}

bool queue_copy_records(struct sl_batch *dst, const struct sl_batch *src, unsigned *next,
		     const struct bq_fields *bf)
{
	while (*next < src->count && dst->filled < dst->capacity) {
		if (!copy_one(dst, src->rec[*next], bf))
			return dst->count != 0;
		(*next)++;
	}
	return true;
}

/* ---- the queue ---- */

struct bqueue *queue_new(unsigned max, bool block, unsigned batch_size, size_t stride,
		      size_t arena_size, const uint8_t *types, unsigned nfields)
{
	struct bqueue *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->efd = -1;
	q->room_fd = -1;
	q->max = max;
	q->block = block;
	q->batch_size = batch_size;
	q->stride = (unsigned)stride;
	q->arena_size = arena_size;
	queue_fields_init(&q->fields, types, nfields);
	/* Control items coalesce, so at most one sits between two batches. */
	q->ring_cap = 2 * max + 4;
	q->ring = calloc(q->ring_cap, sizeof(*q->ring));
	q->free = calloc(max ? max : 1, sizeof(*q->free));
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	q->room_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!q->ring || !q->free || q->efd < 0 || q->room_fd < 0 ||
	    pthread_mutex_init(&q->lock, NULL)) {
		if (q->efd >= 0)
			close(q->efd);
		if (q->room_fd >= 0)
			close(q->room_fd);
		free(q->ring);
		free(q->free);
		free(q);
		return NULL;
	}
	pthread_cond_init(&q->not_full, NULL);
	return q;
}

void queue_free(struct bqueue *q)
{
	if (!q)
		return;
	for (unsigned i = 0; i < q->n; i++) {
		struct bq_item *it = &q->ring[(q->head + i) % q->ring_cap];

		if (it->kind == BQ_BATCH)
			free(it->b);
	}
	for (unsigned i = 0; i < q->nfree; i++)
		free(q->free[i]);
	pthread_cond_destroy(&q->not_full);
	pthread_mutex_destroy(&q->lock);
	close(q->efd);
	close(q->room_fd);
	free(q->ring);
	free(q->free);
	free(q);
}

void queue_wake(struct bqueue *q)
{
	uint64_t one = 1;

	/* EAGAIN only when the counter is huge: the consumer is awake anyway. */
	if (write(q->efd, &one, sizeof(one)) < 0) {
	}
}

/* Under the lock: append an item; true if the consumer must be woken. */
static bool push_locked(struct bqueue *q, enum bq_kind kind, struct sl_batch *b)
{
	q->ring[(q->head + q->n) % q->ring_cap] = (struct bq_item){kind, b};
	return ++q->n == 1;
}

static __thread const struct bq_waiter *thread_waiter;

void queue_set_waiter(const struct bq_waiter *w)
{
	thread_waiter = w;
}

static void poke(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0) {
	}
}

/* Under the lock: wait for room, the thread's way.  false: give up. */
static bool wait_room(struct bqueue *q)
{
	uint64_t v;
	int rc;

	if (!thread_waiter) {
		pthread_cond_wait(&q->not_full, &q->lock);
		return true;
	}
	/* Cleared under the lock: a batch given back after this pokes it again. */
	if (read(q->room_fd, &v, sizeof(v)) < 0) {
	}
	q->room_waiters++;
	pthread_mutex_unlock(&q->lock);
	rc = thread_waiter->wait(thread_waiter->ctx, q);
	pthread_mutex_lock(&q->lock);
	q->room_waiters--;
	return rc >= 0;
}

/* A free batch, NULL when full under `drop`, at the stop deadline (or out of memory). */
static struct sl_batch *take_batch(struct bqueue *q)
{
	struct sl_batch *b = NULL;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		if (q->nfree) {
			b = q->free[--q->nfree];
			break;
		}
		if (q->nalloc < q->max) {
			q->nalloc++;
			pthread_mutex_unlock(&q->lock);
			/* Only while the queue grows to its bound, never again after. */
			b = queue_batch_new(q->batch_size, q->stride, q->arena_size);
			if (b)
				return b;
			pthread_mutex_lock(&q->lock);
			q->nalloc--;
			break;
		}
		if (!q->block || q->abandon || !wait_room(q))
			break;
	}
	pthread_mutex_unlock(&q->lock);
	return b;
}

uint64_t queue_put(struct bqueue *q, const struct sl_batch *src)
{
	uint64_t dropped = 0;
	unsigned next = 0;

	while (next < src->count) {
		struct sl_batch *b = take_batch(q);
		bool woke;

		if (!b) {
			uint64_t rest = src->count - next;

			if (__atomic_load_n(&q->abandon, __ATOMIC_RELAXED))
				__atomic_fetch_add(&q->stop_dropped, rest, __ATOMIC_RELAXED);
			return dropped + rest;
		}
		b->count = 0;
		b->filled = 0;
		b->arena.used = 0;
		while (!queue_copy_records(b, src, &next, &q->fields)) {
			dropped++;	/* bigger than a whole arena */
			next++;
		}
		pthread_mutex_lock(&q->lock);
		if (b->count) {
			unsigned queued = q->nalloc - q->nfree;

			woke = push_locked(q, BQ_BATCH, b);
			if (queued > q->high_water)
				q->high_water = queued;
		} else {
			q->free[q->nfree++] = b;
			woke = false;
		}
		pthread_mutex_unlock(&q->lock);
		if (woke)
			queue_wake(q);
	}
	return dropped;
}

int queue_put_ctl(struct bqueue *q, enum bq_kind kind)
{
	bool woke = false;
	int rc = 0;

	pthread_mutex_lock(&q->lock);
	if (q->n && q->ring[(q->head + q->n - 1) % q->ring_cap].kind == kind)
		;	/* the same request is already waiting: once is enough */
	else if (q->n == q->ring_cap)
		rc = -1;
	else
		woke = push_locked(q, kind, NULL);
	pthread_mutex_unlock(&q->lock);
	if (woke)
		queue_wake(q);
	return rc;
}

bool queue_get(struct bqueue *q, struct bq_item *it)
{
	bool got = false;

	pthread_mutex_lock(&q->lock);
	if (q->n) {
		*it = q->ring[q->head];
		q->head = (q->head + 1) % q->ring_cap;
		q->n--;
		got = true;
	}
	pthread_mutex_unlock(&q->lock);
	return got;
}

void queue_release(struct bqueue *q, struct sl_batch *b)
{
	pthread_mutex_lock(&q->lock);
	q->free[q->nfree++] = b;
	pthread_cond_signal(&q->not_full);
	if (q->room_waiters)
		poke(q->room_fd);
	pthread_mutex_unlock(&q->lock);
}

void queue_abandon(struct bqueue *q)
{
	pthread_mutex_lock(&q->lock);
	__atomic_store_n(&q->abandon, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&q->not_full);
	poke(q->room_fd);
	pthread_mutex_unlock(&q->lock);
	queue_wake(q);
}

bool queue_abandoned(struct bqueue *q)
{
	bool a;

	pthread_mutex_lock(&q->lock);
	a = q->abandon;
	pthread_mutex_unlock(&q->lock);
	return a;
}

uint64_t queue_take_queued(struct bqueue *q)
{
	uint64_t records = 0;
	unsigned k = 0;

	pthread_mutex_lock(&q->lock);
	/* Control items stay, in order; batches go back to the free list. */
	for (unsigned i = 0; i < q->n; i++) {
		struct bq_item it = q->ring[(q->head + i) % q->ring_cap];

		if (it.kind == BQ_BATCH) {
			records += it.b->count;
			q->free[q->nfree++] = it.b;
		} else {
			q->ring[(q->head + k++) % q->ring_cap] = it;
		}
	}
	q->n = k;
	pthread_mutex_unlock(&q->lock);
	return records;
}

void queue_clear_wakeup(struct bqueue *q)
{
	uint64_t v;

	if (read(q->efd, &v, sizeof(v)) < 0) {
	}
}

void queue_stats(struct bqueue *q, unsigned *depth, uint64_t *high_water)
{
	pthread_mutex_lock(&q->lock);
	*depth = q->nalloc - q->nfree;
	*high_water = q->high_water;
	pthread_mutex_unlock(&q->lock);
}
