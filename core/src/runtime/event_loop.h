/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The event loop: epoll for descriptors, a small set of millisecond
 * timers on the monotonic clock, and signals through signalfd.
 *
 * Descriptors and timers marked "service" (signals, the control socket,
 * the metrics server, systemd's notify timers) form a set of their own
 * that event_loop_serve() can run alone: the main thread waiting for room in a
 * full queue (when_full: block) keeps answering them while the inputs'
 * descriptors and timers wait.
 */
#ifndef SLUICE_EVENT_LOOP_H
#define SLUICE_EVENT_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct event_loop;
struct loop_timer;

typedef void (*loop_fd_cb)(void *ctx, int fd, uint32_t events);
typedef void (*loop_timer_cb)(void *ctx);
typedef void (*loop_signal_cb)(void *ctx, int signo);

struct event_loop *event_loop_new(void);
void event_loop_free(struct event_loop *loop);

int event_loop_watch(struct event_loop *loop, int fd, uint32_t events, loop_fd_cb cb, void *ctx);
/* The same, in the service set. */
int event_loop_watch_service(struct event_loop *loop, int fd, uint32_t events, loop_fd_cb cb, void *ctx);
int event_loop_modify(struct event_loop *loop, int fd, uint32_t events);
void event_loop_unwatch(struct event_loop *loop, int fd);

struct loop_timer *event_loop_timer_new(struct event_loop *loop, loop_timer_cb cb, void *ctx);
void event_loop_timer_arm(struct loop_timer *t, uint64_t delay_ms, uint64_t period_ms);
void event_loop_timer_disarm(struct loop_timer *t);
/* Mark a timer as part of the service set. */
void event_loop_timer_service(struct loop_timer *t);
/* Disarm and free (at once, or after the running timer callbacks). */
void event_loop_timer_free(struct loop_timer *t);

/* Block the given signals (0-terminated) and deliver them through cb (a service). */
int event_loop_signals(struct event_loop *loop, const int *signals, loop_signal_cb cb, void *ctx);

/* Run until event_loop_stop(); returns 0, or -1 if epoll failed. */
int event_loop_run(struct event_loop *loop);
void event_loop_stop(struct event_loop *loop);
/*
 * From inside a callback of this loop's thread: run only the service set
 * (ignoring event_loop_stop()) until fd is readable (1) or timeout_ms passed
 * (0; -1: no timeout).  Not nested: a second call only waits for fd.
 * The service callbacks run here, in the middle of the caller's
 * callback: they must not change what it is using (daemon.c refuses a
 * reload meanwhile).
 */
int event_loop_serve(struct event_loop *loop, int fd, int timeout_ms);

uint64_t event_loop_now_ms(void);

#endif
