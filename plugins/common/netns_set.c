/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "netns_open.h"
#include "netns_set.h"
#include "netns_spec.h"

/* A glob's file that is not a namespace yet is tried again this often. */
#define RETRY_MS 200
/* A glob's directory that is missing is looked for this often. */
#define DIR_RETRY_MS 1000

int sl_netns_set_init(struct sl_netns_set *set, const struct sl_host *host,
		      struct sl_instance *inst, const char *spec, sl_netns_join_cb join,
		      sl_netns_leave_cb leave, void *arg)
{
	char path[PATH_MAX];
	const char *why;

	memset(set, 0, sizeof(*set));
	pthread_mutex_init(&set->lock, NULL);
	set->host = host;
	set->inst = inst;
	set->ifd = -1;
	set->join = join;
	set->leave = leave;
	set->arg = arg;
	set->kind = sl_netns_spec_check(spec, &why);
	if (set->kind < 0 || sl_netns_spec_path(spec, path, sizeof(path)) < 0) {
		host->log(inst, SL_LOG_ERR, "netns: %s", set->kind < 0 ? why : strerror(errno));
		return -1;
	}
	if (!(set->pattern = strdup(path))) {
		host->log(inst, SL_LOG_ERR, "netns: out of memory");
		return -1;
	}
	return 0;
}

static struct sl_netns_member *member_add(struct sl_netns_set *set, const char *path)
{
	struct sl_netns_member *m = calloc(1, sizeof(*m));

	if (!m || !(m->path = strdup(path))) {
		free(m);
		set->host->log(set->inst, SL_LOG_ERR, "netns %s: out of memory", path);
		return NULL;
	}
	m->label_len = sl_netns_label(m->path, &m->label);
	pthread_mutex_lock(&set->lock);
	m->next = set->members;
	set->members = m;
	pthread_mutex_unlock(&set->lock);
	return m;
}

/* Try to join m: 0 joined, 1 not a namespace yet, -1 failed (logged). */
static int member_join(struct sl_netns_set *set, struct sl_netns_member *m)
{
	int fd = sl_netns_open(m->path);

	if (fd < 0 && errno == ENOTNAM && set->kind == SL_NETNS_GLOB) {
		m->pending = true;
		return 1;
	}
	m->pending = false;
	if (fd < 0) {
		set->host->log(set->inst, SL_LOG_ERR, "netns %s: %s", m->path,
			       errno == ENOTNAM ? "not a network namespace" : strerror(errno));
		m->failed = true;
		return -1;
	}
	{
		struct stat sb = {0};
		void *data = fstat(fd, &sb) == 0 ? set->join(set->arg, m, fd) : NULL;

		m->dev = sb.st_dev;
		m->ino = sb.st_ino;
		pthread_mutex_lock(&set->lock);
		m->data = data;
		pthread_mutex_unlock(&set->lock);
	}
	close(fd);
	m->failed = !m->data;
	if (m->data)
		set->host->log(set->inst, SL_LOG_INFO, "netns %.*s: joined (%s)", (int)m->label_len,
			       m->label, m->path);
	return m->data ? 0 : -1;
}

/* Leave and free m, which the caller unlinked under the lock. */
static void member_drop(struct sl_netns_set *set, struct sl_netns_member *m)
{
	if (m->data)
		set->leave(set->arg, m);
	free(m->path);
	free(m);
}

static void retry_cb(void *ctx);

/* The retry timer every ms (0: off). */
static void arm_retry(struct sl_netns_set *set, unsigned ms)
{
	if (ms == set->retry_ms)
		return;
	if (ms)
		set->host->timer_arm(set->retry, ms, ms);
	else
		set->host->timer_disarm(set->retry);
	set->retry_ms = ms;
}

/* Whether a joined member's file still holds the namespace it joined. */
static bool same_namespace(const struct sl_netns_member *m)
{
	struct stat sb;

	return stat(m->path, &sb) == 0 && sb.st_dev == m->dev && sb.st_ino == m->ino;
}

/* A glob's scan: join new and pending files, leave the vanished ones; how many joins failed. */
static unsigned scan(struct sl_netns_set *set)
{
	struct sl_netns_member **mp, *m;
	bool pending = false;
	unsigned failed = 0;
	glob_t g;
	int r = glob(set->pattern, GLOB_NOSORT, NULL, &g);

	if (r != 0 && r != GLOB_NOMATCH) {
		set->host->log(set->inst, SL_LOG_ERR, "netns %s: cannot list the directory",
			       set->pattern);
		return 0;	/* the members stay as they are */
	}
	for (m = set->members; m; m = m->next)
		m->seen = false;
	for (size_t i = 0; r == 0 && i < g.gl_pathc; i++) {
		for (m = set->members; m && strcmp(m->path, g.gl_pathv[i]); m = m->next)
			;
		if (!m && !(m = member_add(set, g.gl_pathv[i])))
			continue;
		m->seen = !m->data || same_namespace(m);
		if (!m->seen)
			pending = true;	/* left below, joined again at the next scan */
		else if (!m->data && !m->failed)
			switch (member_join(set, m)) {
			case 1:
				pending = true;
				break;
			case -1:
				failed++;
				break;
			}
	}
	if (r == 0)
		globfree(&g);
	for (mp = &set->members; (m = *mp);) {
		if (m->seen) {
			mp = &m->next;
			continue;
		}
		if (m->data)
			set->host->log(set->inst, SL_LOG_WARNING, "netns %.*s: gone (%s): left",
				       (int)m->label_len, m->label, m->path);
		pthread_mutex_lock(&set->lock);
		*mp = m->next;
		pthread_mutex_unlock(&set->lock);
		member_drop(set, m);
	}
	arm_retry(set, pending ? RETRY_MS : 0);
	return failed;
}

static int watch_dir(struct sl_netns_set *set, bool quiet);

static void retry_cb(void *ctx)
{
	struct sl_netns_set *set = ctx;

	if (set->ifd < 0 && watch_dir(set, true) < 0)
		return;	/* the directory is still missing */
	scan(set);
}

/* The directory went away (or the watch did): looked for again every second. */
static void dir_lost(struct sl_netns_set *set)
{
	set->host->log(set->inst, SL_LOG_WARNING, "netns %s: the directory is gone: looked for "
		       "every second", set->pattern);
	set->host->unwatch_fd(set->inst, set->ifd);
	close(set->ifd);
	set->ifd = -1;
	scan(set);	/* its members are gone too */
	arm_retry(set, DIR_RETRY_MS);
}

static void inotify_cb(void *ctx, int fd, uint32_t events)
{
	struct sl_netns_set *set = ctx;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool lost = false;
	ssize_t got;

	(void)events;
	/* drained: which file changed does not matter (nor a queue overflow), the scan looks at all */
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + got;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			lost |= (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) != 0;
			p += sizeof(*ev) + ev->len;
		}
	if (lost)
		dir_lost(set);
	else
		scan(set);
}

static int watch_dir(struct sl_netns_set *set, bool quiet)
{
	char dir[PATH_MAX];
	char *slash;

	strcpy(dir, set->pattern);
	slash = strrchr(dir, '/');
	slash[slash == dir] = '\0';	/* "/x*": the root */
	set->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (set->ifd < 0 ||
	    inotify_add_watch(set->ifd, dir,
			      IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB |
				      IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR) < 0) {
		int err = errno;

		if (!quiet)
			set->host->log(set->inst, err == ENOENT ? SL_LOG_WARNING : SL_LOG_ERR,
				       "netns %s: cannot watch %s: %s%s", set->pattern, dir,
				       strerror(err), err == ENOENT ? " (looked for every second)" : "");
		if (set->ifd >= 0)
			close(set->ifd);
		set->ifd = -1;
		errno = err;
		return -1;
	}
	if (set->host->watch_fd(set->inst, set->ifd, EPOLLIN, inotify_cb, set) < 0) {
		set->host->log(set->inst, SL_LOG_ERR, "netns %s: cannot watch: %s", set->pattern,
			       strerror(errno));
		close(set->ifd);
		set->ifd = -1;
		return -1;
	}
	return 0;
}

int sl_netns_set_start(struct sl_netns_set *set)
{
	if (set->kind != SL_NETNS_GLOB) {
		if (!set->members && !member_add(set, set->pattern))
			return -1;
		return member_join(set, set->members);
	}
	if (!set->retry && !(set->retry = set->host->timer_new(set->inst, retry_cb, set))) {
		set->host->log(set->inst, SL_LOG_ERR, "netns: cannot make a timer");
		return -1;
	}
	/* watched before the first scan: a file made between them is not missed */
	if (watch_dir(set, false) < 0) {
		if (errno != ENOENT)
			return -1;
		/* not there yet (no `ip netns add` since boot, no docker): not fatal */
		arm_retry(set, DIR_RETRY_MS);
		return 0;
	}
	/*
	 * A namespace there at start that cannot be joined fails the start,
	 * as a name's would: at a reload, the instance this one replaces may
	 * still hold the group there (the reload then fails and says so,
	 * rather than running on without it).
	 */
	if (scan(set) > 0) {
		set->host->log(set->inst, SL_LOG_ERR, "netns %s: a namespace there at start could "
			       "not be joined", set->pattern);
		return -1;
	}
	return 0;
}

void sl_netns_set_stop(struct sl_netns_set *set)
{
	struct sl_netns_member *m;

	if (set->ifd >= 0) {
		set->host->unwatch_fd(set->inst, set->ifd);
		close(set->ifd);
		set->ifd = -1;
	}
	/* freed here, not at destroy: the event loop that owns it is gone by then */
	if (set->retry && SL_HOST_HAS(set->host, timer_free))
		set->host->timer_free(set->retry);
	else if (set->retry)
		arm_retry(set, 0);
	set->retry = NULL;
	set->retry_ms = 0;
	for (;;) {
		pthread_mutex_lock(&set->lock);
		if ((m = set->members))
			set->members = m->next;
		pthread_mutex_unlock(&set->lock);
		if (!m)
			break;
		member_drop(set, m);
	}
}

void sl_netns_set_free(struct sl_netns_set *set)
{
	free(set->pattern);
	set->pattern = NULL;
	pthread_mutex_destroy(&set->lock);
}

void sl_netns_set_each(struct sl_netns_set *set,
		       void (*fn)(void *ctx, const struct sl_netns_member *m), void *ctx)
{
	pthread_mutex_lock(&set->lock);
	for (const struct sl_netns_member *m = set->members; m; m = m->next)
		if (m->data)
			fn(ctx, m);
	pthread_mutex_unlock(&set->lock);
}

int sl_netns_one_configure(struct sl_netns_one *one, const struct sl_host *host,
			   struct sl_instance *inst, const char *spec)
{
	char path[PATH_MAX];
	const char *why;
	int kind;

	memset(one, 0, sizeof(*one));
	one->fd = -1;
	if (!spec)
		return 0;
	kind = sl_netns_spec_check(spec, &why);
	if (kind == SL_NETNS_GLOB)
		why = "a glob is not supported by this input: one instance per namespace";
	if (kind < 0 || kind == SL_NETNS_GLOB) {
		host->config_error(inst, "netns", "%s", why);
		return -1;
	}
	if (sl_netns_spec_path(spec, path, sizeof(path)) < 0 || !(one->path = strdup(path))) {
		host->config_error(inst, "netns", "%s", strerror(errno));
		return -1;
	}
	one->label_len = (uint32_t)sl_netns_label(one->path, &one->label);
	one->field = host->field_id(inst, "netns");
	return 0;
}

int sl_netns_one_open(struct sl_netns_one *one, const struct sl_host *host,
		      struct sl_instance *inst)
{
	if (!one->path)
		return 0;
	if ((one->fd = sl_netns_open(one->path)) < 0) {
		host->log(inst, SL_LOG_ERR, "netns %s: %s", one->path,
			  errno == ENOTNAM ? "not a network namespace" : strerror(errno));
		return -1;
	}
	return 0;
}

void sl_netns_one_close(struct sl_netns_one *one)
{
	if (one->fd >= 0)
		close(one->fd);
	one->fd = -1;
}

void sl_netns_one_free(struct sl_netns_one *one)
{
	free(one->path);
	one->path = NULL;
}
