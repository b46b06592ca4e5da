/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bounded batch queue in front of an instance that runs on its own
 * thread.  Producers (the threads of the inputs above it) copy each batch
 * once into a batch the queue owns: presence bits, the values of present
 * fields, and the bytes text/packet fields point to, into that batch's
 * arena, pointers fixed up.  Only the fields the consumer reads are
 * copied (`copy`, inst_keys_copy_mask(): everything unless the output says
 * what it reads).  Nothing a producer's batch points to is kept,
 * so the "copy what you keep" rule holds.  The consumer takes items in
 * order and gives each batch back when process() has returned.
 *
 * The bound is in batches (`queue:`); batches are allocated when first
 * needed, up to the bound, and then reused: no malloc per record.  When
 * every batch is queued, `when_full: drop` drops the records (counted by
 * the caller), `block` makes the producer wait: on the condition
 * variable, or through the waiter its thread set (queue_set_waiter(): the
 * main thread serves the control socket and signals meanwhile).  At the
 * stop deadline queue_abandon() ends every wait: producers drop what they
 * hand over, the consumer drops what is queued (counted in stop_dropped),
 * control items still pass.  Control items (reopen,
 * stop, a reload's pause) keep their place in the order and are never dropped.
 */
#ifndef SLUICE_QUEUE_H
#define SLUICE_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sluice/record.h>

enum bq_kind { BQ_BATCH = 1, BQ_REOPEN, BQ_STOP, BQ_PAUSE };

struct bq_item {
	enum bq_kind kind;
	struct sl_batch *b;	/* BQ_BATCH */
};

/* What a copy takes of each record: these fields; which of all point to bytes. */
struct bq_fields {
	uint64_t copy[SL_PRESENCE_WORDS];	/* all unless set before start (inst_keys_copy_mask) */
	uint64_t ptrs[SL_PRESENCE_WORDS];	/* SL_T_BYTES and SL_T_STRING fields */
};

struct bqueue {
	pthread_mutex_t lock;
	pthread_cond_t not_full;	/* block policy: a batch came back */
	int efd;			/* eventfd: the consumer's wake-up */
	int room_fd;			/* eventfd: a batch came back while a waiter waits */
	unsigned room_waiters;
	bool block;
	bool abandon;			/* the stop deadline passed: nothing waits */
	void *owner;			/* the output it feeds, for the waiter's messages */
	struct bq_item *ring;		/* 2 * max + 2: batches and control items */
	unsigned ring_cap, head, n;
	struct sl_batch **free;		/* batches back from the consumer */
	unsigned nfree, nalloc, max;	/* max: the bound, in batches */
	unsigned batch_size, stride;
	size_t arena_size;
	struct bq_fields fields;
	uint64_t high_water;		/* most batches queued at once */
	uint64_t dropped;		/* atomic: records refused (worker_feed) */
	uint64_t stop_dropped;		/* atomic: records not written at the stop deadline */
};

/*
 * How a producer on this thread waits for room under `block`; none (the
 * default): the condition variable.  wait() is called without the lock,
 * after q->room_fd was cleared under it: it returns once room_fd is
 * readable (a batch came back, or queue_abandon()) or earlier; 0: look
 * again, -1: give up (the rest is dropped, as at the stop deadline).
 */
struct bq_waiter {
	int (*wait)(void *ctx, struct bqueue *q);
	void *ctx;
};
void queue_set_waiter(const struct bq_waiter *w);

/* One pool-style batch: records, pointer list and arena in one allocation. */
struct sl_batch *queue_batch_new(unsigned batch_size, size_t stride, size_t arena_size);

/*
 * A queue of at most max batches (0: control items only).  types[] gives
 * each field's type (nfields entries), read here only.  It copies every
 * field until q->fields.copy is narrowed (before any queue_put()).
 */
struct bqueue *queue_new(unsigned max, bool block, unsigned batch_size, size_t stride,
		      size_t arena_size, const uint8_t *types, unsigned nfields);
void queue_free(struct bqueue *q);

/*
 * Copy src's records in (in order, split over several batches if their
 * bytes do not fit one arena).  Returns how many records were dropped:
 * the queue was full under `drop`, or one record's bytes exceed a whole
 * arena.
 */
uint64_t queue_put(struct bqueue *q, const struct sl_batch *src);
/*
 * The stop deadline: no producer waits any more (those waiting drop), and
 * queue_abandoned() tells the consumer to drop what it takes.
 */
void queue_abandon(struct bqueue *q);
bool queue_abandoned(struct bqueue *q);
/* Take every queued batch out (the consumer is stuck); how many records they held. */
uint64_t queue_take_queued(struct bqueue *q);
/* Queue a control item after everything already queued.  0, or -1 (no memory). */
int queue_put_ctl(struct bqueue *q, enum bq_kind kind);
/* Consumer: take the next item; false when empty. */
bool queue_get(struct bqueue *q, struct bq_item *it);
/* Consumer: give a BQ_BATCH batch back once it has been processed. */
void queue_release(struct bqueue *q, struct sl_batch *b);
/* Wake the consumer (it left items for its next turn). */
void queue_wake(struct bqueue *q);
/* Consumer: clear the wake-up (before draining). */
void queue_clear_wakeup(struct bqueue *q);
/* Batches in use now (queued or in process()), and the most ever. */
void queue_stats(struct bqueue *q, unsigned *depth, uint64_t *high_water);

/* Every field copied; ptrs[] from types[] (nfields entries). */
void queue_fields_init(struct bq_fields *bf, const uint8_t *types, unsigned nfields);
/*
 * Copy records src->rec[*next..count) into dst until dst or its arena is
 * full, each with only the fields in bf->copy; *next moves past those
 * copied.  Exposed for the unit tests.  Returns false if record *next
 * does not fit an empty batch at all.
 */
bool queue_copy_records(struct sl_batch *dst, const struct sl_batch *src, unsigned *next,
		     const struct bq_fields *bf);

#endif
