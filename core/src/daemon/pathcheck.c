/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Paths of instances: checked as the daemon's user, undone after a failed start (or reload). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "control.h"
#include "graph.h"
#include "log.h"
#include "pathcheck.h"
#include "privileges.h"
#include "yaml_tree.h"

typedef void (*path_fn)(void *ctx, const struct sl_instance *inst, const struct sl_option *o,
			const char *path);

/* The path a flagged option names now ('%': today's strftime name); NULL: none. */
static const char *option_path(const struct sl_instance *inst, const struct sl_option *o, char *buf,
			       size_t len)
{
	const char *v = *(const char *const *)((const char *)inst->opt.config + o->offset);
	time_t now = time(NULL);
	struct tm tm;

	if (!v || !*v || ((o->flags & SL_OPT_OUT_FILE) && strcmp(v, "-") == 0))
		return NULL;
	if (!(o->flags & SL_OPT_OUT_FILE) || !strchr(v, '%'))
		return v;
	localtime_r(&now, &tm);
	return strftime(buf, len, v, &tm) ? buf : NULL;
}

static int paths_as_user(const struct graph *g, const char *config_file,
			 const struct drop_target *drop, struct diag *d);

static void each_path(const struct graph *g, path_fn fn, void *ctx)
{
	char buf[PATH_MAX];

	for (size_t i = 0; i < g->nall; i++) {
		const struct sl_instance *inst = g->all[i];

		if (!inst->opts_valid || !inst->opt.config || !inst->desc->options)
			continue;
		for (const struct sl_option *o = inst->desc->options; o->name; o++) {
			const char *p;

			if (o->type != SL_OPT_STRING || !(o->flags & SL_OPT_PATHS))
				continue;
			if ((p = option_path(inst, o, buf, sizeof(buf))))
				fn(ctx, inst, o, p);
		}
	}
}

/* The directory a path is in, into out. */
static void dir_of(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(out, len, ".");
	else if (slash == path)
		snprintf(out, len, "/");
	else
		snprintf(out, len, "%.*s", (int)(slash - path), path);
}

struct check {
	struct diag *d;
	const char *user;	/* "user sluice", or "this user" */
	bool exist_only;	/* not running as that user: only what anyone sees */
};

static void report(struct check *c, const struct sl_instance *inst, const struct sl_option *o,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void report(struct check *c, const struct sl_instance *inst, const struct sl_option *o,
		   const char *fmt, ...)
{
	char msg[PATH_MAX * 2 + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_error(c->d, graph_option_mark(inst, o->name), "%s: %s (%s)", o->name, msg, c->user);
}

/* A directory the instance writes into: 0, or reported. */
static int check_dir(struct check *c, const struct sl_instance *inst, const struct sl_option *o,
		     const char *dir, const char *what)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR || !c->exist_only)
			report(c, inst, o, errno == ENOENT ? "%s %s does not exist%s" : "%s %s: %s", what,
			       dir, errno == ENOENT ? "" : strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		report(c, inst, o, "%s %s is not a directory", what, dir);
		return -1;
	}
	if (!c->exist_only && access(dir, W_OK | X_OK) < 0) {
		report(c, inst, o, "%s %s is not writable: %s", what, dir, strerror(errno));
		return -1;
	}
	return 0;
}

static void check_one(void *ctx, const struct sl_instance *inst, const struct sl_option *o,
		      const char *path)
{
	struct check *c = ctx;
	char dir[PATH_MAX];
	struct stat st;

	if (o->flags & SL_OPT_IN_FILE) {
		if (c->exist_only ? stat(path, &st) < 0 : access(path, R_OK) < 0)
			report(c, inst, o, "%s is not readable: %s", path, strerror(errno));
		/* stat() never blocks; opening a FIFO to read would (docs/SECURITY.md) */
		else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			report(c, inst, o, "%s is not a regular file", path);
		return;
	}
	if (o->flags & SL_OPT_OUT_DIR) {
		check_dir(c, inst, o, path, "directory");
		return;
	}
	if (o->flags & SL_OPT_OUT_MKDIR) {
		if (stat(path, &st) == 0 || errno != ENOENT) {
			check_dir(c, inst, o, path, "directory");
			return;
		}
		dir_of(path, dir, sizeof(dir));
		check_dir(c, inst, o, dir, "cannot be created: directory");
		return;
	}
	/* An existing device or FIFO (/dev/null) is only written to. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		if (!c->exist_only && access(path, W_OK) < 0)
			report(c, inst, o, "%s is not writable: %s", path, strerror(errno));
		return;
	}
	dir_of(path, dir, sizeof(dir));
	if (check_dir(c, inst, o, dir, "directory") == 0 && !c->exist_only &&
	    stat(path, &st) == 0 && access(path, W_OK) < 0)
		report(c, inst, o, "%s is not writable: %s", path, strerror(errno));
}

static int check_all(const struct graph *g, const char *config_file, struct check *c)
{
	unsigned before = c->d->errors;
	int fd;

	if (!c->exist_only) {
		fd = open(config_file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			diag_error(c->d, NULL, "cannot be read (%s): %s; a reload would fail", c->user,
				   strerror(errno));
		else
			close(fd);
	}
	each_path(g, check_one, c);
	return c->d->errors == before ? 0 : -1;
}

/*
 * The control socket's folder: missing is fine if its parent exists (start
 * creates it); present, not writable by everyone.  Who owns it is checked
 * at start only: -t may run as root for a daemon the unit runs as its user.
 */
static void check_control_dir(const struct graph *g, const struct drop_target *drop,
			      struct diag *d)
{
	const char *path = g->cfg->control_socket;
	const struct ynode *v = yaml_tree_map_get(yaml_tree_map_get(g->cfg->root, "daemon"), "control_socket");
	uid_t uid = drop && geteuid() == 0 ? drop->uid : geteuid();
	gid_t gid = drop && geteuid() == 0 ? drop->gid : getegid();
	char dir[PATH_MAX], parent[PATH_MAX], err[PATH_MAX + 256];
	struct stat st;

	if (!path)
		return;
	dir_of(path, dir, sizeof(dir));
	if (stat(dir, &st) == 0) {
		if ((st.st_mode & S_IWOTH) &&
		    control_dir_unsafe(&st, uid, gid, dir, err, sizeof(err)))
			diag_error(d, v ? &v->mark : NULL, "%s", err);
		return;
	}
	dir_of(dir, parent, sizeof(parent));
	if (errno != ENOENT || stat(parent, &st) < 0)
		diag_error(d, v ? &v->mark : NULL,
			   "control_socket: its directory %s cannot be created: %s", dir,
			   errno == ENOENT ? "its parent does not exist" : strerror(errno));
}

int pathcheck_config(const struct graph *g, const char *config_file, const struct drop_target *drop,
		     struct diag *d)
{
	unsigned before = d->errors;

	check_control_dir(g, drop, d);
	return paths_as_user(g, config_file, drop, d) || d->errors != before ? -1 : 0;
}

static int paths_as_user(const struct graph *g, const char *config_file,
			 const struct drop_target *drop, struct diag *d)
{
	struct check c = {.d = d, .user = "as this user"};
	char user[96], err[256];
	int status;
	pid_t pid;

	if (!drop || geteuid() == drop->uid)
		return check_all(g, config_file, &c);
	snprintf(user, sizeof(user), "as user %s", drop->name);
	c.user = user;
	if (geteuid() != 0) {
		/* Cannot become it: what does not depend on who looks. */
		c.exist_only = true;
		return check_all(g, config_file, &c);
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		diag_error(d, NULL, "cannot check the paths as user %s: fork: %s", drop->name,
			   strerror(errno));
		return -1;
	}
	if (pid == 0) {
		unsigned before = d->errors;

		if (privileges_drop(drop, err, sizeof(err))) {
			diag_error(d, NULL, "cannot check the paths: %s", err);
			_exit(1);
		}
		check_all(g, config_file, &c);
		fflush(NULL);
		_exit(d->errors - before > 100 ? 100 : (int)(d->errors - before));
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			diag_error(d, NULL, "waitpid: %s", strerror(errno));
			return -1;
		}
	if (!WIFEXITED(status)) {
		diag_error(d, NULL, "the check as user %s did not finish", drop->name);
		return -1;
	}
	d->errors += (unsigned)WEXITSTATUS(status);
	return WEXITSTATUS(status) ? -1 : 0;
}

static void mark_one(void *ctx, const struct sl_instance *inst, const struct sl_option *o,
		     const char *path)
{
	struct pathcheck_marks *m = ctx;
	struct stat st;
	char **v;

	/* A kept instance (reload) runs on: what it uses is its own. */
	if (inst->twin || !(o->flags & (SL_OPT_OUT_FILE | SL_OPT_OUT_MKDIR)) || !m->paths ||
	    lstat(path, &st) == 0 || errno != ENOENT)
		return;
	v = realloc(m->paths, (m->n + 2) * sizeof(*v));
	if (!v || !(v[m->n] = strdup(path))) {
		if (v)
			m->paths = v;
		pathcheck_marks_free(m);
		return;
	}
	m->paths = v;
	m->paths[++m->n] = NULL;
}

int pathcheck_mark(struct pathcheck_marks *m, const struct graph *g)
{
	m->n = 0;
	m->paths = calloc(1, sizeof(*m->paths));
	if (m->paths)
		each_path(g, mark_one, m);
	if (!m->paths) {
		log_msg(SL_LOG_ERR, "out of memory");
		return -1;
	}
	return 0;
}

/* A directory this start made: the files in it, then itself (nothing deeper). */
static void remove_dir(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;

	if (dir) {
		while ((e = readdir(dir)))
			if (e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, "..") != 0))
				unlinkat(dirfd(dir), e->d_name, 0);
		closedir(dir);
	}
	if (rmdir(path) == 0)
		log_msg(SL_LOG_INFO, "removed %s: made by the start that failed", path);
	else
		log_msg(SL_LOG_WARNING, "could not remove %s (made by the start that failed): %s",
			path, strerror(errno));
}

void pathcheck_undo(struct pathcheck_marks *m)
{
	struct stat st;

	for (size_t i = 0; i < m->n; i++) {
		if (lstat(m->paths[i], &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			remove_dir(m->paths[i]);
		else if (!S_ISREG(st.st_mode))
			continue;
		else if (unlink(m->paths[i]) == 0)
			log_msg(SL_LOG_INFO, "removed %s: made by the start that failed", m->paths[i]);
		else
			log_msg(SL_LOG_WARNING, "could not remove %s (made by the start that failed): %s",
				m->paths[i], strerror(errno));
	}
}

void pathcheck_marks_free(struct pathcheck_marks *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->paths[i]);
	free(m->paths);
	m->paths = NULL;
	m->n = 0;
}
