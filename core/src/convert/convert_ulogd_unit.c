/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The converted outputs keep ulogd2's file names (/var/log/ulog/...), but
 * the shipped sluice.service runs the daemon as user sluice with the file
 * system read-only except /var/log/sluice and /run/sluice, and Debian's
 * /var/log/ulog is ulog:adm 0750.  Such a configuration passes `sluice -t`
 * and then cannot open its files under the unit; this says so for each
 * file, and prints what makes it work: the directories given to sluice
 * (their group kept, so adm still reads them) and a drop-in with
 * ReadWritePaths= and Group=.  The directories are only looked at (stat),
 * never changed.
 */
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "convert_ulogd.h"
#include "convert_ulogd_int.h"

/* What sluice.service lets the daemon write (LogsDirectory=, RuntimeDirectory=). */
static const char *const unit_rw[] = { "/var/log/sluice", "/run/sluice" };

#define MAX_DIRS 64

struct udir {
	char *path;
	bool exists;
	bool shared;		/* root's (/var/log itself): never to be given away */
	char group[64];		/* its group's name, "" if root's or unknown */
	char owner[64];
	unsigned mode;
};

/* Quoted for sh ('...') or systemd ("..."), when it has more than path characters. */
static void put_path(FILE *o, const char *p, bool shell)
{
	bool plain = *p != '\0';

	for (const char *q = p; *q; q++)
		plain &= (bool)(strchr("/._-+@:,", *q) || (*q >= 'a' && *q <= 'z') ||
				(*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9'));
	if (plain) {
		fputs(p, o);
		return;
	}
	fputc(shell ? '\'' : '"', o);
	for (; *p; p++) {
		if (shell && *p == '\'')
			fputs("'\\''", o);
		else if (!shell && (*p == '"' || *p == '\\'))
			fprintf(o, "\\%c", *p);
		else
			fputc(*p, o);
	}
	fputc(shell ? '\'' : '"', o);
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '/' || !path[n]);
}

static void look(struct udir *d)
{
	struct stat st;
	struct passwd *pw;
	struct group *gr;

	if (stat(d->path, &st) || !S_ISDIR(st.st_mode))
		return;
	d->exists = true;
	d->shared = st.st_uid == 0;
	d->mode = st.st_mode & 07777;
	pw = getpwuid(st.st_uid);
	gr = getgrgid(st.st_gid);
	snprintf(d->owner, sizeof(d->owner), "%s", pw ? pw->pw_name : "?");
	if (st.st_gid && gr && strcmp(gr->gr_name, "sluice") != 0)
		snprintf(d->group, sizeof(d->group), "%s", gr->gr_name);
}

/* The directories outside unit_rw that the used outputs write into, each once. */
static size_t collect(struct conv *c, struct udir *dirs)
{
	size_t n = 0;

	for (struct uinst *u = c->u; u < c->u + c->nu; u++) {
		const char *f = u->wfile, *slash;
		bool inside = false;
		size_t i, len;

		if (!f || !u->used || u->state != 1)
			continue;
		for (i = 0; i < sizeof(unit_rw) / sizeof(unit_rw[0]); i++)
			inside |= under(f, unit_rw[i]);
		if (inside)
			continue;
		if (*f != '/') {
			convert_ulogd_note(c, u, u->sec ? u->sec->line : u->line, "%s is a relative path: under "
				"sluice.service it is relative to /, which the unit keeps read-only; "
				"give the full path", f);
			continue;
		}
		convert_ulogd_note(c, u, u->sec ? u->sec->line : u->line, "%s is outside /var/log/sluice, "
			"the only log directory the shipped sluice.service lets sluice write (what "
			"to do follows the warnings)", f);
		slash = strrchr(f, '/');
		len = slash == f ? 1 : (size_t)(slash - f);
		for (i = 0; i < n; i++)
			if (strlen(dirs[i].path) == len && strncmp(dirs[i].path, f, len) == 0)
				break;
		if (i < n)
			continue;
		if (n == MAX_DIRS) {
			convert_ulogd_note(c, u, u->sec ? u->sec->line : u->line, "more than %d directories "
				"outside /var/log/sluice: %s is not in the drop-in below", MAX_DIRS, f);
			continue;
		}
		dirs[n].path = strndup(f, len);
		if (!dirs[n].path)
			continue;
		look(&dirs[n]);
		n++;
	}
	return n;
}

/* The text, each line after lead (a warning's indent, or "# " in the YAML). */
static void print(FILE *o, const char *lead, const struct udir *dirs, size_t n)
{
	const char *group = NULL;
	bool more = false, own = false;

	for (size_t i = 0; i < n; i++)
		if (dirs[i].shared)
			fprintf(o, "%s%s is root's and shared: move the files written there to "
				"/var/log/sluice (their output's file option)\n", lead, dirs[i].path);
		else
			own = true;
	if (!own)
		return;
	fprintf(o, "%swith ulogd2 stopped, give sluice these directories (the group stays, "
		"for its readers):\n", lead);
	for (size_t i = 0; i < n; i++) {
		const struct udir *d = &dirs[i];

		if (d->shared)
			continue;
		if (d->exists) {
			fprintf(o, "%s  chown -R sluice:%s ", lead, *d->group ? d->group : "sluice");
			put_path(o, d->path, true);
			fprintf(o, "    # now %s:%s %04o\n", d->owner, *d->group ? d->group : "root",
				d->mode);
		} else {
			fprintf(o, "%s  install -d -o sluice -g sluice -m 0750 ", lead);
			put_path(o, d->path, true);
			fputc('\n', o);
		}
		if (*d->group && !group)
			group = d->group;
		else if (*d->group && strcmp(d->group, group) != 0)
			more = true;
	}
	fprintf(o, "%sand add this drop-in (systemctl edit sluice; docs/MIGRATING.md, "
		"\"ulogd2's files and sluice.service\"):\n%s  [Service]\n", lead, lead);
	for (size_t i = 0; i < n; i++)
		if (!dirs[i].shared) {
			fprintf(o, "%s  ReadWritePaths=", lead);
			put_path(o, dirs[i].path, false);
			fputc('\n', o);
		}
	if (group)
		fprintf(o, "%s  # new files get the group the old ones have\n%s  Group=%s\n", lead,
			lead, group);
	for (size_t i = 0; more && i < n; i++)
		if (!dirs[i].shared && *dirs[i].group && strcmp(dirs[i].group, group) != 0)
			fprintf(o, "%s  SupplementaryGroups=%s\n", lead, dirs[i].group);
}

void convert_ulogd_unit_paths(struct conv *c, FILE *o)
{
	struct udir dirs[MAX_DIRS] = {{0}};
	size_t n = collect(c, dirs);

	if (!n)
		return;
	fprintf(c->diag, "%s: warning: the shipped sluice.service lets sluice write only "
		"/var/log/sluice and /run/sluice;\n", c->file);
	print(c->diag, "    ", dirs, n);
	fprintf(o, "# The shipped sluice.service lets sluice write only /var/log/sluice and "
		"/run/sluice;\n");
	print(o, "# ", dirs, n);
	c->res->notes++;
	for (size_t i = 0; i < n; i++)
		free(dirs[i].path);
}
