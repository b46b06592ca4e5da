/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The namespaces one instance reads (`netns:`, netns_spec.h): its members,
 * each a namespace file the input made its own sockets in (netns_open.h).
 *
 * A name or a path is one member, joined at start or the start fails.  A
 * glob's members are the matching files: those there at start, and those
 * that appear later (inotify on the directory wakes a rescan; a file `ip
 * netns add` just created is not a namespace until its bind mount, so a
 * file that is not one yet is tried again every RETRY_MS until it is, or
 * is gone).  A glob's directory that does not exist (yet: /run/netns before
 * the first `ip netns add`) or is removed is looked for every second.  A
 * member whose file disappears, or now holds another namespace, is left (its sockets closed:
 * they would otherwise keep the namespace alive) and logged; a member that
 * cannot be joined is logged and tried again only when its file comes
 * back.  Nothing about a glob's later members is fatal, and none may
 * exist; one there at start that cannot be joined fails the start.
 *
 * One set belongs to one instance and runs on its thread (the host's
 * watch_fd and timers).  join() and leave() are the input's: join makes
 * the member's sockets from the namespace fd (valid during the call only)
 * and returns their state, or NULL having logged why; leave closes them.
 */
#ifndef SLUICE_NETNS_SET_H
#define SLUICE_NETNS_SET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <sluice/plugin.h>

struct sl_netns_member {
	char *path;
	const char *label;	/* into path: sl_netns_label() */
	size_t label_len;
	void *data;		/* join()'s answer; NULL: not joined */
	bool pending;		/* not a namespace yet: tried again */
	bool failed;		/* join() failed: tried again when the file comes back */
	bool seen;		/* found by the current scan */
	dev_t dev;		/* the namespace joined (nsfs), to see a file replaced */
	ino_t ino;
	struct sl_netns_member *next;
};

typedef void *(*sl_netns_join_cb)(void *arg, struct sl_netns_member *m, int nsfd);
typedef void (*sl_netns_leave_cb)(void *arg, struct sl_netns_member *m);

struct sl_netns_set {
	const struct sl_host *host;
	struct sl_instance *inst;
	int kind;		/* enum sl_netns_kind */
	char *pattern;		/* the absolute path or glob */
	int ifd;		/* inotify on the glob's directory; -1: none */
	struct sl_timer *retry;
	unsigned retry_ms;	/* its period; 0: disarmed */
	sl_netns_join_cb join;
	sl_netns_leave_cb leave;
	void *arg;
	/*
	 * The list and each member's data change under the lock (the
	 * instance's thread); another thread reads them with
	 * sl_netns_set_each().  join() and leave() run outside it.
	 */
	pthread_mutex_t lock;
	struct sl_netns_member *members;
};

/*
 * A set for a checked `netns:` value (sl_netns_spec_check()): 0, or -1
 * logged.  Nothing is opened yet.
 */
int sl_netns_set_init(struct sl_netns_set *set, const struct sl_host *host,
		      struct sl_instance *inst, const char *spec, sl_netns_join_cb join,
		      sl_netns_leave_cb leave, void *arg);

/*
 * Join the members there are (a glob: and watch its directory): 0, or -1
 * logged (a name or path that cannot be joined; a glob whose directory
 * cannot be watched).
 */
int sl_netns_set_start(struct sl_netns_set *set);

/* Leave every member, stop watching (the timer freed); the set can be started again. */
void sl_netns_set_stop(struct sl_netns_set *set);

/* Free what init made (after stop). */
void sl_netns_set_free(struct sl_netns_set *set);

/*
 * Call fn on each joined member under the lock, from any thread (a
 * /metrics scrape): fn must not call back into the set.
 */
void sl_netns_set_each(struct sl_netns_set *set,
		       void (*fn)(void *ctx, const struct sl_netns_member *m), void *ctx);

/*
 * The one namespace of an input that reads a single one (nfct, nfacct: a
 * glob's many namespaces would each need the input's whole state): a name
 * or a path, opened at start and kept open for sockets made later.
 */
struct sl_netns_one {
	char *path;		/* NULL: no netns, sluice's own namespace */
	const char *label;	/* into path: sl_netns_label() */
	uint32_t label_len;
	int field;		/* the `netns` field */
	int fd;			/* the namespace file while started; -1 */
};

/*
 * Read a `netns:` value (NULL: none) at configure(): 0, or -1 after
 * config_error() (a glob is refused: `what` says why for this input).
 */
int sl_netns_one_configure(struct sl_netns_one *one, const struct sl_host *host,
			   struct sl_instance *inst, const char *spec);

/* At start: open the namespace file (none: fd -1): 0, or -1 logged. */
int sl_netns_one_open(struct sl_netns_one *one, const struct sl_host *host,
		      struct sl_instance *inst);

/* At stop: close the file. */
void sl_netns_one_close(struct sl_netns_one *one);

/* At destroy. */
void sl_netns_one_free(struct sl_netns_one *one);

/* Tag a record with the namespace's label (nothing without netns). */
static inline void sl_netns_one_tag(const struct sl_netns_one *one, struct sl_record *r)
{
	if (one->path)
		sl_set_bytes(r, (sl_field)one->field, one->label, one->label_len);
}

#endif
