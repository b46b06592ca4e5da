/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * systemd's readiness protocol (sd_notify(3)) without libsystemd: READY,
 * RELOADING, STOPPING, STATUS with the headline counters, and watchdog
 * pings.  Without $NOTIFY_SOCKET notify_open() returns NULL and every
 * call below does nothing.
 */
#ifndef SLUICE_NOTIFY_H
#define SLUICE_NOTIFY_H

#include <stdbool.h>

struct event_loop;
struct notify;
struct runtime;

/*
 * Read $NOTIFY_SOCKET (and $WATCHDOG_USEC/$WATCHDOG_PID); NULL: not asked
 * to notify.  The timers run on loop; STATUS= counts rt's current graph.
 */
struct notify *notify_open(struct event_loop *loop, const struct runtime *rt);
/* Everything is started: READY=1 with a first STATUS; start the status and watchdog timers. */
void notify_ready(struct notify *n);
/*
 * Around daemon_reload(): RELOADING=1 (with MONOTONIC_USEC), then READY=1
 * with a STATUS=.  failure: NULL after a good reload; else what went
 * wrong, which every STATUS= puts first until a reload succeeds.
 */
void notify_reloading(struct notify *n);
void notify_reloaded(struct notify *n, const char *failure);
/* STOPPING=1 (once). */
void notify_stopping(struct notify *n);
void notify_close(struct notify *n);

#endif
