/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "event_loop.h"
#include "log.h"

/*
 * Watches and timers are kept in lists that callbacks change while they
 * are walked: an entry removed during the walk is only marked dead, and
 * reap() unlinks and frees the dead ones after it.  Each entry begins with
 * its link, so a link is also the address of its watch or timer.
 */
struct link {
	struct link *next;
	bool dead;
};

struct watch {
	struct link link;	/* first */
	int fd;
	bool service;		/* in the service set: also served by event_loop_serve() */
	loop_fd_cb cb;
	void *ctx;
};

struct loop_timer {
	struct link link;	/* first */
	struct event_loop *loop;
	loop_timer_cb cb;
	void *ctx;
	uint64_t deadline;
	uint64_t period;
	bool armed;
	bool service;		/* also run by event_loop_serve() */
};

struct event_loop {
	int epfd;
	int sigfd;
	loop_signal_cb sig_cb;
	void *sig_ctx;
	struct link *watches;	/* of struct watch */
	struct link *timers;	/* of struct loop_timer */
	int wakefd;		/* eventfd: event_loop_stop() from another thread */
	/*
	 * The service set (signals, the control socket, metrics): an epoll
	 * descriptor of its own, itself watched by epfd, so event_loop_serve() can
	 * wait on it alone while the inputs' descriptors stay unread.
	 */
	int svc_epfd;
	bool stop;		/* atomic: set by any thread, read by the loop's */
	bool dispatching;
	bool in_timers;
	bool serving;		/* inside event_loop_serve() */
};

static bool stopping(const struct event_loop *loop)
{
	return __atomic_load_n(&loop->stop, __ATOMIC_ACQUIRE);
}

static void on_wake(void *ctx, int fd, uint32_t events)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
	}
}

uint64_t event_loop_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct event_loop *event_loop_new(void)
{
	struct event_loop *loop = calloc(1, sizeof(*loop));

	if (!loop)
		return NULL;
	loop->sigfd = -1;
	loop->svc_epfd = -1;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0) {
		free(loop);
		return NULL;
	}
	loop->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (loop->wakefd < 0 || event_loop_watch(loop, loop->wakefd, EPOLLIN, on_wake, loop) < 0) {
		if (loop->wakefd >= 0)
			close(loop->wakefd);
		close(loop->epfd);
		free(loop);
		return NULL;
	}
	return loop;
}

/* Unlink and free the dead entries of a list. */
static void reap(struct link **pp)
{
	while (*pp) {
		struct link *l = *pp;

		if (l->dead) {
			*pp = l->next;
			free(l);
		} else {
			pp = &l->next;
		}
	}
}

static void push(struct link **head, struct link *l)
{
	l->next = *head;
	*head = l;
}

void event_loop_free(struct event_loop *loop)
{
	if (!loop)
		return;
	for (struct link *l = loop->watches; l; l = l->next)
		l->dead = true;
	for (struct link *l = loop->timers; l; l = l->next)
		l->dead = true;
	reap(&loop->watches);
	reap(&loop->timers);
	if (loop->sigfd >= 0)
		close(loop->sigfd);
	if (loop->svc_epfd >= 0)
		close(loop->svc_epfd);
	close(loop->wakefd);
	close(loop->epfd);
	free(loop);
}

static struct watch *find_watch(struct event_loop *loop, int fd)
{
	for (struct link *l = loop->watches; l; l = l->next)
		if (!l->dead && ((struct watch *)l)->fd == fd)
			return (struct watch *)l;
	return NULL;
}

static int add_watch(struct event_loop *loop, int fd, uint32_t events, loop_fd_cb cb, void *ctx,
		     bool service)
{
	struct epoll_event ev = {.events = events};
	struct watch *w;

	if (find_watch(loop, fd)) {
		errno = EEXIST;
		return -1;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -1;
	w->fd = fd;
	w->cb = cb;
	w->ctx = ctx;
	w->service = service;
	ev.data.ptr = w;
	if (epoll_ctl(service ? loop->svc_epfd : loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		free(w);
		return -1;
	}
	push(&loop->watches, &w->link);
	return 0;
}

int event_loop_watch(struct event_loop *loop, int fd, uint32_t events, loop_fd_cb cb, void *ctx)
{
	return add_watch(loop, fd, events, cb, ctx, false);
}

static void dispatch(struct event_loop *loop, const struct epoll_event *events, int n);

/* The service set is ready: serve it without waiting. */
static void on_service(void *ctx, int fd, uint32_t events)
{
	struct event_loop *loop = ctx;
	struct epoll_event ev[16];
	int n = epoll_wait(fd, ev, 16, 0);

	if (n > 0)
		dispatch(loop, ev, n);
}

int event_loop_watch_service(struct event_loop *loop, int fd, uint32_t events, loop_fd_cb cb, void *ctx)
{
	if (loop->svc_epfd < 0) {
		loop->svc_epfd = epoll_create1(EPOLL_CLOEXEC);
		if (loop->svc_epfd < 0)
			return -1;
		if (add_watch(loop, loop->svc_epfd, EPOLLIN, on_service, loop, false)) {
			close(loop->svc_epfd);
			loop->svc_epfd = -1;
			return -1;
		}
	}
	return add_watch(loop, fd, events, cb, ctx, true);
}

int event_loop_modify(struct event_loop *loop, int fd, uint32_t events)
{
	struct watch *w = find_watch(loop, fd);
	struct epoll_event ev = {.events = events};

	if (!w) {
		errno = ENOENT;
		return -1;
	}
	ev.data.ptr = w;
	return epoll_ctl(w->service ? loop->svc_epfd : loop->epfd, EPOLL_CTL_MOD, fd, &ev);
}

void event_loop_unwatch(struct event_loop *loop, int fd)
{
	struct watch *w = find_watch(loop, fd);

	if (!w)
		return;
	epoll_ctl(w->service ? loop->svc_epfd : loop->epfd, EPOLL_CTL_DEL, fd, NULL);
	w->link.dead = true;
	if (!loop->dispatching)
		reap(&loop->watches);
}

struct loop_timer *event_loop_timer_new(struct event_loop *loop, loop_timer_cb cb, void *ctx)
{
	struct loop_timer *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->loop = loop;
	t->cb = cb;
	t->ctx = ctx;
	push(&loop->timers, &t->link);
	return t;
}

void event_loop_timer_arm(struct loop_timer *t, uint64_t delay_ms, uint64_t period_ms)
{
	t->deadline = event_loop_now_ms() + delay_ms;
	t->period = period_ms;
	t->armed = true;
}

void event_loop_timer_service(struct loop_timer *t)
{
	t->service = true;
}

void event_loop_timer_disarm(struct loop_timer *t)
{
	t->armed = false;
}

void event_loop_timer_free(struct loop_timer *t)
{
	if (!t)
		return;
	t->armed = false;
	t->link.dead = true;
	/* A callback may free any timer, its own too: the walk unlinks it after. */
	if (!t->loop->in_timers)
		reap(&t->loop->timers);
}

static void on_signal_fd(void *ctx, int fd, uint32_t events)
{
	struct event_loop *loop = ctx;
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		loop->sig_cb(loop->sig_ctx, (int)si.ssi_signo);
}

int event_loop_signals(struct event_loop *loop, const int *signals, loop_signal_cb cb, void *ctx)
{
	sigset_t set;

	sigemptyset(&set);
	for (const int *s = signals; *s; s++)
		sigaddset(&set, *s);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	loop->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (loop->sigfd < 0)
		return -1;
	loop->sig_cb = cb;
	loop->sig_ctx = ctx;
	return event_loop_watch_service(loop, loop->sigfd, EPOLLIN, on_signal_fd, loop);
}

void event_loop_stop(struct event_loop *loop)
{
	uint64_t one = 1;

	__atomic_store_n(&loop->stop, true, __ATOMIC_RELEASE);
	/* Called from another thread, the loop may sleep in epoll_wait. */
	if (write(loop->wakefd, &one, sizeof(one)) < 0) {
	}
}

/* Milliseconds until the next timer (a service one) is due; -1 when none is armed. */
static int next_timeout(const struct event_loop *loop, bool service_only)
{
	uint64_t now = event_loop_now_ms(), first = UINT64_MAX;

	for (const struct link *l = loop->timers; l; l = l->next) {
		const struct loop_timer *t = (const struct loop_timer *)l;

		if (t->armed && (t->service || !service_only) && t->deadline < first)
			first = t->deadline;
	}
	if (first == UINT64_MAX)
		return -1;
	if (first <= now)
		return 0;
	return first - now > 60000 ? 60000 : (int)(first - now);
}

/* The due timers (service ones only inside event_loop_serve(), which ignores the stop). */
static void run_timers(struct event_loop *loop, bool service_only)
{
	uint64_t now = event_loop_now_ms();
	bool outer = loop->in_timers;

	loop->in_timers = true;
	for (struct link *l = loop->timers; l && (service_only || !stopping(loop)); l = l->next) {
		struct loop_timer *t = (struct loop_timer *)l;

		if (!t->armed || t->deadline > now || (service_only && !t->service))
			continue;
		if (t->period)
			/* Keep the rhythm, but never fire twice to catch up. */
			t->deadline = t->deadline + t->period > now ? t->deadline + t->period
								    : now + t->period;
		else
			t->armed = false;
		t->cb(t->ctx);
	}
	/* Nested in a walk of the list: that walk unlinks the dead after it. */
	loop->in_timers = outer;
	if (!outer)
		reap(&loop->timers);
}

/* Run the callbacks of ready watches; the dead are unlinked after the outermost walk. */
static void dispatch(struct event_loop *loop, const struct epoll_event *events, int n)
{
	bool outer = loop->dispatching;

	loop->dispatching = true;
	for (int i = 0; i < n && (loop->serving || !stopping(loop)); i++) {
		struct watch *w = events[i].data.ptr;

		if (w && !w->link.dead)
			w->cb(w->ctx, w->fd, events[i].events);
	}
	loop->dispatching = outer;
	if (!outer)
		reap(&loop->watches);
}

int event_loop_serve(struct event_loop *loop, int fd, int timeout_ms)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL}, events[16];
	uint64_t end = timeout_ms >= 0 ? event_loop_now_ms() + (uint64_t)timeout_ms : UINT64_MAX;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int ready = 0;

	/* Nested twice, or nothing to serve: only the descriptor. */
	if (loop->serving || loop->svc_epfd < 0 ||
	    epoll_ctl(loop->svc_epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return poll(&pfd, 1, timeout_ms) > 0;
	loop->serving = true;
	while (!ready) {
		uint64_t now = event_loop_now_ms();
		int wait = next_timeout(loop, true), n;

		if (now >= end)
			break;
		if (end != UINT64_MAX && (wait < 0 || (uint64_t)wait > end - now))
			wait = end - now > 60000 ? 60000 : (int)(end - now);
		n = epoll_wait(loop->svc_epfd, events, 16, wait);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++)
			if (!events[i].data.ptr)
				ready = 1;	/* NULL: fd, which dispatch() skips */
		if (n > 0)
			dispatch(loop, events, n);
		run_timers(loop, true);
	}
	loop->serving = false;
	epoll_ctl(loop->svc_epfd, EPOLL_CTL_DEL, fd, NULL);
	return ready;
}

int event_loop_run(struct event_loop *loop)
{
	struct epoll_event events[64];

	while (!stopping(loop)) {
		int n = epoll_wait(loop->epfd, events, 64, next_timeout(loop, false));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_msg(SL_LOG_ERR, "epoll_wait: %s", strerror(errno));
			return -1;
		}
		dispatch(loop, events, n);
		if (!stopping(loop))
			run_timers(loop, false);
	}
	return 0;
}
