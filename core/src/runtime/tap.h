/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tap points for `sluice tail`: a session watches the records leaving
 * some instances (their output point: what an input emits, what a filter
 * hands on after process()), keeps those its formatter matches as lines
 * in a bounded buffer, and the control socket (control.c) sends them to
 * the client from the main loop.
 *
 * Contract:
 *  - Without a session, an instance pays one load and one predictable
 *    branch per batch (host.c: inst->taps == 0).
 *  - tap_batch() runs on the instance's own thread, formats each record
 *    while the batch is being processed (records are valid only then),
 *    and never waits for the client: when the buffer is full a matching
 *    record is lost and counted (tap_take() reports it), nothing blocks
 *    but the session's own lock, held only to format one batch or to
 *    copy the buffer out.
 *  - Every other function runs on the main thread.  A session holds
 *    pointers to instances: tap_end_all() must run before any instance
 *    a session may watch is stopped or freed (a reload, reload.c; the
 *    shutdown closes the control socket first, daemon.c).
 *  - Each line in the buffer is "r " + the formatter's line + "\n".
 */
#ifndef SLUICE_TAP_H
#define SLUICE_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sl_batch;
struct sl_instance;
struct sl_tail_fmt;
struct sl_tail_module;

/* Sessions at once (bits of inst->taps). */
#define TAP_MAX 4
/* Bytes of lines a session holds for its client. */
#define TAP_BUF (256u * 1024)

/*
 * A session on insts[0..n) (copied) with the formatter fmt of mod (owned
 * from now on, also on failure).  Its id, or -1: every session taken, or
 * out of memory (errno EBUSY or ENOMEM).
 */
int tap_open(const struct sl_tail_module *mod, struct sl_tail_fmt *fmt,
	     struct sl_instance *const *insts, size_t n);
/* The instance's thread, after it handled b: b's records to every session on inst. */
void tap_batch(struct sl_instance *inst, const struct sl_batch *b);
/*
 * Move the session's lines to out (cap must be at least TAP_BUF): the
 * bytes moved.  *lost gets the records lost so far; *ended is true once
 * tap_end_all() ended the session (nothing more will come).
 */
size_t tap_take(int id, char *out, size_t cap, uint64_t *lost, bool *ended);
/* End the session: no instance feeds it any more, and its memory is freed. */
void tap_close(int id);
/* End every session's feed (a reload): they stay until tap_close(). */
void tap_end_all(void);

#endif
