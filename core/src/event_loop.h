/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The event loop: epoll for descriptors, a small set of millisecond
 * timers on the monotonic clock, and signals through signalfd.
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

struct event_loop *loop_new(void);
void loop_free(struct event_loop *loop);

int loop_watch(struct event_loop *loop, int fd, uint32_t events, loop_fd_cb cb, void *ctx);
int loop_modify(struct event_loop *loop, int fd, uint32_t events);
void loop_unwatch(struct event_loop *loop, int fd);

struct loop_timer *loop_timer_new(struct event_loop *loop, loop_timer_cb cb, void *ctx);
void loop_timer_arm(struct loop_timer *t, uint64_t delay_ms, uint64_t period_ms);
void loop_timer_disarm(struct loop_timer *t);
/* Disarm and free (at once, or after the running timer callbacks). */
void loop_timer_free(struct loop_timer *t);

/* Block the given signals (0-terminated) and deliver them through cb. */
int loop_signals(struct event_loop *loop, const int *signals, loop_signal_cb cb, void *ctx);

/* Run until loop_stop(); returns 0, or -1 if epoll failed. */
int loop_run(struct event_loop *loop);
void loop_stop(struct event_loop *loop);

uint64_t loop_now_ms(void);

#endif
