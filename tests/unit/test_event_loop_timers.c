/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Timers freed from callbacks, as sluice-plugin(3) allows (timer_free()
 * goes straight to event_loop_timer_free()): a one-shot timer freeing itself, a
 * periodic one freeing itself on its third run, one freeing another timer
 * that is due in the same turn (which then never runs), one freeing a
 * timer from a descriptor callback, and a new timer created inside a
 * callback.  Each freed timer never runs again; under ASan (build-asan)
 * any use of freed memory by the loop's walk aborts the test.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "event_loop.h"
#include "check.h"

struct tctx {
	struct event_loop *loop;
	struct loop_timer *self, *other;
	int runs, free_at;
};

static void free_self(void *ctx)
{
	struct tctx *c = ctx;

	if (++c->runs == c->free_at)
		event_loop_timer_free(c->self);
}

static void free_other(void *ctx)
{
	struct tctx *c = ctx;

	c->runs++;
	event_loop_timer_free(c->other);
	c->other = NULL;
}

static struct tctx created;

static void create_one(void *ctx)
{
	struct tctx *c = ctx;

	c->runs++;
	/* a timer made inside a callback runs on a later turn, and frees itself there */
	created.loop = c->loop;
	created.free_at = 1;
	created.self = event_loop_timer_new(c->loop, free_self, &created);
	CHECK(created.self != NULL);
	event_loop_timer_arm(created.self, 0, 0);
	event_loop_timer_free(c->self);
}

static struct tctx from_fd;

static void on_fd(void *ctx, int fd, uint32_t events)
{
	uint64_t v;

	(void)ctx;
	(void)events;
	if (read(fd, &v, sizeof(v)) < 0) {
	}
	if (from_fd.self) {
		event_loop_timer_free(from_fd.self);
		from_fd.self = NULL;
	}
}

static void stop(void *ctx)
{
	struct tctx *c = ctx;

	/* Stop once every other timer had its turns. */
	if (++c->runs == 10)
		event_loop_stop(c->loop);
}

int main(void)
{
	struct event_loop *loop = event_loop_new();
	struct tctx once = {0}, periodic = {0}, killer = {0}, victim = {0}, maker = {0}, last = {0};
	int efd = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);

	CHECK(loop != NULL && efd >= 0);
	if (!loop || efd < 0)
		return check_summary("test_event_loop_timers");
	once.loop = periodic.loop = killer.loop = victim.loop = maker.loop = last.loop = loop;
	from_fd.loop = loop;

	once.free_at = 1;
	once.self = event_loop_timer_new(loop, free_self, &once);
	event_loop_timer_arm(once.self, 0, 0);

	periodic.free_at = 3;
	periodic.self = event_loop_timer_new(loop, free_self, &periodic);
	event_loop_timer_arm(periodic.self, 0, 1);

	/* Both due in the first turn: the killer frees the victim (created
	 * before it, so later in the list walk) before its turn. */
	victim.free_at = 1000;
	victim.self = event_loop_timer_new(loop, free_self, &victim);
	event_loop_timer_arm(victim.self, 0, 1);
	killer.self = event_loop_timer_new(loop, free_other, &killer);
	killer.other = victim.self;
	event_loop_timer_arm(killer.self, 0, 0);

	maker.self = event_loop_timer_new(loop, create_one, &maker);
	event_loop_timer_arm(maker.self, 0, 0);

	/* Freed from a descriptor callback while it is armed and periodic. */
	from_fd.free_at = 1000;
	from_fd.self = event_loop_timer_new(loop, free_self, &from_fd);
	event_loop_timer_arm(from_fd.self, 5, 5);
	CHECK(event_loop_watch(loop, efd, EPOLLIN, on_fd, NULL) == 0);

	last.self = event_loop_timer_new(loop, stop, &last);
	event_loop_timer_arm(last.self, 1, 1);

	CHECK(event_loop_run(loop) == 0);
	CHECK_EQ_I(once.runs, 1);
	CHECK_EQ_I(periodic.runs, 3);
	CHECK_EQ_I(killer.runs, 1);
	CHECK_EQ_I(victim.runs, 0);
	CHECK_EQ_I(maker.runs, 1);
	CHECK_EQ_I(created.runs, 1);
	CHECK_EQ_I(from_fd.runs, 0);
	CHECK_EQ_I(last.runs, 10);
	event_loop_unwatch(loop, efd);
	close(efd);
	event_loop_free(loop);
	return check_summary("test_event_loop_timers");
}
