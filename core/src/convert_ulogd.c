/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ulogd2's stacks as sluice YAML.  ulogd runs a chain of plugin
 * instances per `stack=` line (an input, filters that turn raw fields
 * into printable ones, an output); sluice needs only the input, the
 * filters that change what is kept (MARK) and the output's formatter
 * (logline, json), because decode names and prints everything at once.
 * Inputs of the same name are one instance in ulogd and in sluice, and
 * an output used by several stacks becomes one named instance where they
 * meet.  The keys each ulogd plugin takes are ulogd 2.0.8's: a key it
 * does not know is an error here (ulogd ignored typos silently).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "convert_ulogd.h"

enum urole { R_PKT, R_FLOW, R_ACCT, R_FILTER, R_OUT };
/* What an output needs in front of it besides the input. */
enum uneed { N_NONE, N_LINE, N_JSON };

struct conv;
struct uinst;
typedef int (*conv_fn)(struct conv *c, struct uinst *u);

struct uplug {
	const char *name;
	enum urole role;
	bool section;		/* ulogd refuses to start without the instance's [section] */
	const char *keys;	/* ulogd 2.0.8's keys, space-separated */
	conv_fn conv;		/* NULL: a filter sluice needs no counterpart of */
};

struct uinst {
	const char *id;
	const struct uplug *p;
	const struct ini_section *sec;
	unsigned line, col;		/* its first use in a stack */
	char name[96];
	int state;			/* 0 not converted yet, 1 converted, -1 not convertible */
	bool used;			/* by a converted stack */
	char *body;			/* YAML of the instance (options and comments) */
	size_t bodylen;
	enum uneed need;
	char json_el[600];		/* the json element an N_JSON output takes */
	char where[2048];		/* inputs: NFCT's accept filters; MARK: its test */
	int64_t group;			/* NFLOG: its group (two instances cannot share one) */
	unsigned events;		/* NFCT: event bits */
	struct uinst *alias;		/* an input that reads what an earlier one reads */
	bool missing;			/* a sluice plugin it needs is not on the search path */
};

#define MAX_ELEMS 32

struct ustack {
	const struct ini_entry *e;
	struct uinst *el[MAX_ELEMS];
	size_t n;
	const char *unknown;		/* a plugin ulogd does not have: not converted */
	char name[200];
};

struct conv {
	const struct ulogd_ini *ini;
	const char *file;
	const struct convert_caps *caps;
	FILE *diag;
	FILE *o;			/* the body of the instance being converted, or NULL */
	FILE *out;			/* the YAML, written at the end */
	struct convert_result *res;
	struct uinst *u;
	size_t nu, capu;
	struct ustack *s;
	size_t ns;
	char q[ULOGD_INI_MAX_LINE * 2 + 3];
};

/* ---- diagnostics and the YAML body of one instance ---- */

static void error_at(struct conv *c, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;

	fprintf(c->diag, "%s:%u:%u: error: ", c->file, line, col);
	va_start(ap, fmt);
	vfprintf(c->diag, fmt, ap);
	va_end(ap);
	fputc('\n', c->diag);
	c->res->errors++;
}

static void vwarn(struct conv *c, struct uinst *u, unsigned line, const char *what,
		  const char *fmt, va_list ap)
{
	va_list ap2;

	fprintf(c->diag, "%s:%u: warning: ", c->file, line);
	if (u)
		fprintf(c->diag, "[%s] (%s): ", u->id, u->p->name);
	if (what)
		fprintf(c->diag, "%s", what);
	va_copy(ap2, ap);
	vfprintf(c->diag, fmt, ap2);
	va_end(ap2);
	fputc('\n', c->diag);
	if (c->o) {
		fprintf(c->o, "    # %s", what ? what : "note: ");
		vfprintf(c->o, fmt, ap);
		fputc('\n', c->o);
	}
}

/* Something the user relied on that sluice will not do: comment, warning, --check fails. */
static void notconv(struct conv *c, struct uinst *u, unsigned line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(c, u, line, "not converted: ", fmt, ap);
	va_end(ap);
	c->res->not_converted++;
}

/* Converted, but it behaves differently: comment and warning. */
static void note(struct conv *c, struct uinst *u, unsigned line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(c, u, line, NULL, fmt, ap);
	va_end(ap);
	c->res->notes++;
}

/* A comment in the instance's YAML only. */
static void comment(struct conv *c, const char *fmt, ...)
{
	va_list ap;

	fputs("    # ", c->o);
	va_start(ap, fmt);
	vfprintf(c->o, fmt, ap);
	va_end(ap);
	fputc('\n', c->o);
}

/* A YAML double-quoted scalar (the reader let through UTF-8 text and tabs only). */
static const char *yq(struct conv *c, const char *s)
{
	char *d = c->q;

	*d++ = '"';
	for (; *s && d < c->q + sizeof(c->q) - 3; s++) {
		if (*s == '"' || *s == '\\')
			*d++ = '\\';
		if (*s == '\t') {
			*d++ = '\\';
			*d++ = 't';
			continue;
		}
		*d++ = *s;
	}
	*d++ = '"';
	*d = '\0';
	return c->q;
}

static bool has(struct conv *c, const char *plugin, const char *option, const char *choice)
{
	return c->caps->has(c->caps->ctx, plugin, option, choice) == 1;
}

/* `    option: value` when this build's plugin has the option; a not-converted comment if not. */
static bool opt(struct conv *c, struct uinst *u, const char *plugin, const char *option,
		const char *fmt, ...)
{
	va_list ap;

	if (!has(c, plugin, option, NULL)) {
		if (u->missing)
			return false;
		u->missing = !has(c, plugin, NULL, NULL);
		if (u->missing)
			notconv(c, u, u->sec ? u->sec->line : u->line, "no plugin %s on the "
				"plugin search path ($SLUICE_PLUGIN_PATH, then the built-in one)",
				plugin);
		else
			notconv(c, u, u->sec ? u->sec->line : u->line,
				"this build's %s has no option '%s'", plugin, option);
		return false;
	}
	fprintf(c->o, "    %s: ", option);
	va_start(ap, fmt);
	vfprintf(c->o, fmt, ap);
	va_end(ap);
	fputc('\n', c->o);
	return true;
}

static const struct ini_entry *ent(const struct uinst *u, const char *key)
{
	return ulogd_ini_get(u->sec, key);
}

static unsigned line_of(const struct uinst *u, const char *key)
{
	const struct ini_entry *e = ent(u, key);

	return e ? e->line : u->sec ? u->sec->line : u->line;
}

static const char *str(const struct uinst *u, const char *key, const char *def)
{
	const struct ini_entry *e = ent(u, key);

	return e ? e->value : def;
}

/* An integer key as ulogd reads it (strtoul base 0); 1 present, 0 absent, -1 bad. */
static int num(struct conv *c, const struct uinst *u, const char *key, int64_t def,
	       int64_t min, int64_t max, int64_t *out)
{
	const struct ini_entry *e = ent(u, key);
	char *end;
	long long v;

	*out = def;
	if (!e)
		return 0;
	errno = 0;
	v = strtoll(e->value, &end, 0);
	if (!*e->value || *end || errno || v < min || v > max) {
		error_at(c, e->line, e->vcol, "[%s] %s: expected an integer from %" PRId64
			 " to %" PRId64 ", found '%s'", u->id, key, min, max, e->value);
		return -1;
	}
	*out = v;
	return 1;
}

static int64_t clamp(struct conv *c, struct uinst *u, const char *key, int64_t v, int64_t lo,
		     int64_t hi, const char *unit)
{
	int64_t r = v < lo ? lo : v > hi ? hi : v;

	if (r != v)
		note(c, u, line_of(u, key), "%s=%" PRId64 " is outside sluice's range; %" PRId64
		     "%s used", key, v, r, unit);
	return r;
}

/* ---- inputs ---- */

static int conv_nflog(struct conv *c, struct uinst *u)
{
	int64_t v, max;
	bool have;

	fprintf(c->o, "    plugin: nflog\n");
	if (num(c, u, "group", 0, 0, 65535, &u->group) < 0)
		return -1;
	opt(c, u, "nflog", "group", "%" PRId64, u->group);
	if (num(c, u, "bufsize", 0, 0, INT32_MAX, &v) > 0)
		opt(c, u, "nflog", "nlbufsiz", "%" PRId64,
		    clamp(c, u, "bufsize", v, 4096, 131072, " bytes"));
	if (num(c, u, "netlink_socket_buffer_size", 0, 0, INT32_MAX, &v) |
	    num(c, u, "netlink_socket_buffer_maxsize", 0, 0, INT32_MAX, &max)) {
		if (max > v) {
			comment(c, "ulogd grew its buffer up to netlink_socket_buffer_maxsize "
				"on ENOBUFS; sluice sets the largest at start");
			v = max;
		}
		opt(c, u, "nflog", "netlink_buffer", "%" PRId64,
		    clamp(c, u, "netlink_socket_buffer_size", v, 65536, 512 << 20, " bytes"));
	}
	if (num(c, u, "netlink_qthreshold", 0, 0, UINT32_MAX, &v) > 0 && v > 0)
		opt(c, u, "nflog", "qthreshold", "%" PRId64, v);
	if (num(c, u, "netlink_qtimeout", 0, 0, INT32_MAX, &v) > 0 && v > 0)
		opt(c, u, "nflog", "qtimeout", "%" PRId64 "ms",
		    clamp(c, u, "netlink_qtimeout", v, 1, 360000, "0ms") * 10);
	if (num(c, u, "numeric_label", 0, INT32_MIN, INT32_MAX, &v) > 0 && v)
		notconv(c, u, line_of(u, "numeric_label"),
			"numeric_label=%" PRId64 " (the label JSON's boolean_label reads): sluice "
			"records carry no label; tell rules apart by their log prefix", v);
	if (ent(u, "bind") || ent(u, "unbind"))
		comment(c, "bind/unbind: not needed; sluice binds its group and never unbinds "
			"the kernel's log handlers");
	/* both read, so a bad value in either is reported */
	have = num(c, u, "seq_local", 0, 0, 1, &v) > 0 && v;
	if ((num(c, u, "seq_global", 0, 0, 1, &max) > 0 && max) || have)
		opt(c, u, "nflog", "seq", "true");
	if (num(c, u, "attach_conntrack", 0, 0, 1, &v) > 0 && v)
		opt(c, u, "nflog", "conntrack", "true");
	return 0;
}

/* A comma-separated list of addresses and prefixes as a where set; false if not one. */
static bool addr_set(struct conv *c, struct uinst *u, const char *key, const char *field)
{
	const struct ini_entry *e = ent(u, key);
	size_t len = strlen(u->where);
	const char *p;

	if (!e)
		return true;
	for (p = e->value; *p; p++)
		if (!isxdigit((unsigned char)*p) && !strchr(".:/,", *p))
			break;
	if (*p || !*e->value) {
		error_at(c, e->line, e->vcol + (unsigned)(p - e->value),
			 "[%s] %s: expected addresses and prefixes separated by ','", u->id, key);
		return false;
	}
	snprintf(u->where + len, sizeof(u->where) - len, "%s%s in {%s}", len ? " and " : "", field,
		 e->value);
	return true;
}

static const char *const ct_event_names[] = { "new", "update", "destroy" };

static void nfct_events(struct conv *c, struct uinst *u, int64_t mask, int64_t hash)
{
	char list[64] = "";

	if (hash && (mask & 4)) {
		comment(c, "ulogd's hash (hash_enable=1) logs each connection once, at its end");
		u->events = 4;
	} else {
		u->events = (unsigned)mask & 7;
		if (hash)
			note(c, u, line_of(u, "event_mask"), "hash_enable=1 without the destroy "
			     "event: sluice reports the events of event_mask as they come");
	}
	if (mask & ~7)
		note(c, u, line_of(u, "event_mask"), "event_mask bits 0x%" PRIx64 " are not "
		     "conntrack events sluice knows (1 new, 2 update, 4 destroy)", mask & ~7);
	for (unsigned b = 0; b < 3; b++)
		if (u->events & (1u << b))
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 *list ? ", " : "", ct_event_names[b]);
	if (!u->events) {
		notconv(c, u, line_of(u, "event_mask"), "event_mask=0x%" PRIx64 " names no "
			"event", mask);
		return;
	}
	opt(c, u, "nfct", "events", "[%s]", list);
}

static int conv_nfct(struct conv *c, struct uinst *u)
{
	int64_t mask, hash, v, max;
	const struct ini_entry *e;

	fprintf(c->o, "    plugin: nfct\n");
	if (num(c, u, "event_mask", 5, 0, UINT32_MAX, &mask) < 0 ||
	    num(c, u, "hash_enable", 1, 0, 1, &hash) < 0)
		return -1;
	nfct_events(c, u, mask, hash);
	if (num(c, u, "pollinterval", 0, 0, INT32_MAX, &v) > 0 && v)
		notconv(c, u, line_of(u, "pollinterval"), "pollinterval=%" PRId64 ": sluice "
			"reads conntrack events, it has no polling mode", v);
	if (num(c, u, "hash_max_entries", 0, 0, INT32_MAX, &v) > 0)
		opt(c, u, "nfct", "track_max", "%" PRId64,
		    clamp(c, u, "hash_max_entries", v, 1024, 268435456, ""));
	if (ent(u, "hash_buckets"))
		comment(c, "hash_buckets: sluice sizes its table from track_max");
	if (num(c, u, "netlink_socket_buffer_size", 0, 0, INT32_MAX, &v) |
	    num(c, u, "netlink_socket_buffer_maxsize", 0, 0, INT32_MAX, &max)) {
		if (max > v)
			v = max;
		opt(c, u, "nfct", "netlink_buffer", "%" PRId64,
		    clamp(c, u, "netlink_socket_buffer_size", v, 4096, 1 << 30, " bytes"));
	}
	if (ent(u, "netlink_resync_timeout"))
		comment(c, "netlink_resync_timeout: sluice dumps the table at once after ENOBUFS");
	if (num(c, u, "reliable", 0, 0, 1, &v) > 0 && v)
		opt(c, u, "nfct", "reliable", "true");
	if ((e = ent(u, "accept_proto_filter"))) {
		for (const char *p = e->value; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != ',' && *p != '-') {
				error_at(c, e->line, e->vcol + (unsigned)(p - e->value),
					 "[%s] accept_proto_filter: expected protocol names "
					 "separated by ','", u->id);
				return -1;
			}
		opt(c, u, "nfct", "protocols", "[%s]", e->value);
	}
	if (!addr_set(c, u, "accept_src_filter", "orig_src") ||
	    !addr_set(c, u, "accept_dst_filter", "orig_dst"))
		return -1;
	if (*u->where)
		comment(c, "accept_src/dst_filter: a where filter after it in each stack");
	return 0;
}

static int conv_nfacct(struct conv *c, struct uinst *u)
{
	int64_t v;

	if (!has(c, "nfacct", NULL, NULL)) {
		notconv(c, u, u->line, "this build has no nfacct input (the input that polls "
			"nfacct objects is on its way)");
		return -1;
	}
	fprintf(c->o, "    plugin: nfacct\n");
	if (num(c, u, "pollinterval", 0, 0, INT32_MAX, &v) < 0)
		return -1;
	if (v > 0)
		opt(c, u, "nfacct", "interval", "%" PRId64 "s", v);
	if (num(c, u, "zerocounter", 1, 0, 1, &v) < 0)
		return -1;
	opt(c, u, "nfacct", "reset", "%s", v ? "true" : "false");
	if (ent(u, "timestamp"))
		comment(c, "timestamp: every sluice record has its time");
	return 0;
}

static int conv_gone(struct conv *c, struct uinst *u)
{
	if (strcmp(u->p->name, "ULOG") == 0)
		notconv(c, u, u->line, "the ULOG target left Linux in 3.17; log to an NFLOG "
			"group (nft `log group N`, iptables -j NFLOG) and read it with nflog");
	else
		notconv(c, u, u->line, "sluice has no input for NuFW's unix socket (UNIXSOCK)");
	return -1;
}

/* ---- filters ---- */

static int conv_mark(struct conv *c, struct uinst *u)
{
	int64_t mark, mask;
	size_t len = 0;
	uint32_t zero, ones;

	if (num(c, u, "mark", 0, 0, UINT32_MAX, &mark) < 0 ||
	    num(c, u, "mask", 0xffffffff, 0, UINT32_MAX, &mask) < 0)
		return -1;
	if (mark & ~mask) {
		notconv(c, u, line_of(u, "mark"), "mark=0x%" PRIx64 " has bits outside "
			"mask=0x%" PRIx64 ": ulogd's filter never matched", mark, mask);
		return -1;
	}
	zero = (uint32_t)(mask & ~mark);
	ones = (uint32_t)(mark & mask);
	/* where's '&' is "any of these bits": every set bit is one test. */
	if (mask == 0xffffffff && mark)
		snprintf(u->where, sizeof(u->where), "mark == 0x%" PRIx64, mark);
	else if (zero)
		len = (size_t)snprintf(u->where, sizeof(u->where), "not mark & 0x%" PRIx32, zero);
	for (unsigned b = 0; mask != 0xffffffff && b < 32; b++)
		if (ones & (1u << b))
			len += (size_t)snprintf(u->where + len, sizeof(u->where) - len,
						"%smark & 0x%" PRIx32, len ? " and " : "", 1u << b);
	if (!has(c, "where", NULL, NULL)) {
		notconv(c, u, u->line, "this build has no where filter for mark/mask");
		return -1;
	}
	return 0;
}

static int conv_pwsniff(struct conv *c, struct uinst *u)
{
	notconv(c, u, u->line, "sluice does not extract FTP/POP3 passwords (PWSNIFF); "
		"the stack logs without pwsniff.user/pass");
	return 0;
}

/* ---- outputs ---- */

static int conv_logemu(struct conv *c, struct uinst *u)
{
	const char *def = strcmp(u->p->name, "LOGEMU") == 0 ? "/var/log/ulogd_syslogemu.log" :
			  strcmp(u->p->name, "GPRINT") == 0 ? "/var/log/ulogd_gprint.log" :
							      "/var/log/ulogd_oprint.log";
	int64_t v;

	fprintf(c->o, "    plugin: file\n");
	opt(c, u, "file", "file", "%s", yq(c, str(u, "file", def)));
	if (num(c, u, "sync", 0, 0, 1, &v) > 0 && v)
		opt(c, u, "file", "sync", "true");
	u->need = N_LINE;
	if (strcmp(u->p->name, "GPRINT") == 0)
		note(c, u, u->line, "GPRINT's key=value lists become the kernel LOG line "
		     "(packets) or conntrack -E's line (flows): update what parses the file");
	else if (strcmp(u->p->name, "OPRINT") == 0)
		note(c, u, u->line, "OPRINT's multi-line dump becomes one kernel LOG line "
		     "per packet");
	if (strcmp(u->p->name, "LOGEMU") != 0)
		return num(c, u, "timestamp", 0, 0, 1, &v) < 0 ? -1 : 0;
	if (has(c, "file", "line_header", "syslog")) {
		comment(c, "LOGEMU's \"Dec  1 05:53:27 host\" in front of each line");
		opt(c, u, "file", "line_header", "syslog");
	} else {
		comment(c, "line_header: syslog  (the option that writes LOGEMU's date and host "
			"is on its way)");
		notconv(c, u, u->line, "LOGEMU's \"MMM dd HH:MM:SS host\" in front of each line: "
			"this build's file output has no line_header option");
	}
	return 0;
}

static const char *syslog_name(const char *v, const char *const *names)
{
	if (strncmp(v, "LOG_", 4) != 0)
		return NULL;
	for (; *names; names++)
		if (strcasecmp(v + 4, *names) == 0)
			return *names;
	return NULL;
}

static int conv_syslog(struct conv *c, struct uinst *u)
{
	static const char *const fac[] = { "kern", "user", "mail", "daemon", "auth", "syslog",
		"lpr", "news", "uucp", "cron", "authpriv", "ftp", "local0", "local1", "local2",
		"local3", "local4", "local5", "local6", "local7", NULL };
	static const char *const sev[] = { "emerg", "alert", "crit", "err", "warning", "notice",
		"info", "debug", NULL };
	const char *f = str(u, "facility", "LOG_KERN"), *l = str(u, "level", "LOG_NOTICE");
	const char *fs = syslog_name(f, fac), *ls = syslog_name(l, sev);

	if (!fs || !ls) {
		const struct ini_entry *e = ent(u, fs ? "level" : "facility");

		error_at(c, e->line, e->vcol, "[%s] %s: expected %s, found '%s'", u->id, e->key,
			 fs ? "LOG_EMERG ... LOG_DEBUG" : "LOG_KERN, LOG_USER ... LOG_LOCAL7",
			 e->value);
		return -1;
	}
	fprintf(c->o, "    plugin: syslog\n");
	if (strcmp(fs, "kern") == 0) {
		/* LOG_KERN is 0, which libc's syslog() replaces by openlog's default. */
		comment(c, "facility=%s: libc's syslog() sent ulogd's messages as 'user'", f);
		fs = "user";
	}
	if (has(c, "syslog", "facility", fs) || !has(c, "syslog", NULL, NULL))
		opt(c, u, "syslog", "facility", "%s", fs);
	else
		notconv(c, u, line_of(u, "facility"), "this build's syslog has no facility %s", fs);
	opt(c, u, "syslog", "severity", "%s", ls);
	comment(c, "the tag ulogd's messages had, for the rules that sort them");
	opt(c, u, "syslog", "app_name", "ulogd");
	u->need = N_LINE;
	return 0;
}

static int json_socket(struct conv *c, struct uinst *u, const char *mode)
{
	const char *host = str(u, "host", NULL), *port = str(u, "port", "12345");
	char addr[ULOGD_INI_MAX_LINE * 2 + 8];

	fprintf(c->o, "    plugin: syslog\n");
	if (strcmp(mode, "unix") == 0) {
		opt(c, u, "syslog", "transport", "unix");
		opt(c, u, "syslog", "address", "%s", yq(c, str(u, "file", "/var/run/ulogd.socket")));
		note(c, u, line_of(u, "mode"), "ulogd wrote bare JSON lines to a unix stream "
		     "socket; sluice sends each object as a syslog datagram (RFC 3164 header)");
		return 0;
	}
	if (!host) {
		notconv(c, u, line_of(u, "mode"), "mode=%s without host", mode);
		return -1;
	}
	opt(c, u, "syslog", "transport", "%s", mode);
	snprintf(addr, sizeof(addr), strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
	opt(c, u, "syslog", "address", "%s", yq(c, addr));
	if (strcmp(mode, "tcp") == 0)
		opt(c, u, "syslog", "framing", "lf");
	note(c, u, line_of(u, "mode"), "ulogd sent bare JSON over %s; sluice sends each "
	     "object as a syslog message (RFC 3164 header, then the JSON)", mode);
	return 0;
}

static int conv_json(struct conv *c, struct uinst *u)
{
	const char *mode = str(u, "mode", "file"), *dev = str(u, "device", NULL);
	int64_t v;
	int ret;

	if (strcmp(mode, "file") && strcmp(mode, "udp") && strcmp(mode, "tcp") &&
	    strcmp(mode, "unix")) {
		const struct ini_entry *e = ent(u, "mode");

		error_at(c, e->line, e->vcol, "[%s] mode: expected file, udp, tcp or unix, "
			 "found '%s'", u->id, mode);
		return -1;
	}
	if (strcmp(mode, "file") == 0) {
		fprintf(c->o, "    plugin: file\n");
		opt(c, u, "file", "file", "%s", yq(c, str(u, "file", "/var/log/ulogd.json")));
		if (num(c, u, "sync", 0, 0, 1, &v) > 0 && v)
			opt(c, u, "file", "sync", "true");
		ret = 0;
	} else {
		ret = json_socket(c, u, mode);
	}
	u->need = N_JSON;
	if (dev && has(c, "json", "host", NULL))
		snprintf(u->json_el, sizeof(u->json_el), "{ plugin: json, host: %s }", yq(c, dev));
	else if (dev)
		notconv(c, u, line_of(u, "device"), "this build's json has no option 'host'");
	else
		strcpy(u->json_el, "json");
	if (num(c, u, "boolean_label", 0, 0, 1, &v) > 0 && v)
		notconv(c, u, line_of(u, "boolean_label"), "boolean_label: sluice records "
			"carry no numeric label (NFLOG numeric_label)");
	if (num(c, u, "eventv1", 0, 0, 1, &v) > 0 && v)
		notconv(c, u, line_of(u, "eventv1"), "eventv1's @version/@timestamp layout; "
			"sluice writes docs/JSON.md's keys (json schema: ecs for Elastic)");
	if (num(c, u, "timestamp", 1, 0, 1, &v) > 0 && !v)
		note(c, u, line_of(u, "timestamp"), "timestamp=0: sluice's objects always "
		     "have their \"timestamp\"");
	return ret;
}

static int conv_pcap(struct conv *c, struct uinst *u)
{
	int64_t v;

	fprintf(c->o, "    plugin: pcap\n");
	opt(c, u, "pcap", "file", "%s", yq(c, str(u, "file", "/var/log/ulogd.pcap")));
	comment(c, "ulogd's link type; 'nflog' would keep prefix, interfaces and mark too");
	opt(c, u, "pcap", "linktype", "raw");
	if (num(c, u, "sync", 0, 0, 1, &v) > 0 && v)
		opt(c, u, "pcap", "sync", "true");
	return 0;
}

static int conv_ipfix(struct conv *c, struct uinst *u)
{
	const char *host = str(u, "host", NULL), *port = str(u, "port", "4739");
	const char *proto = str(u, "proto", "udp");
	char addr[ULOGD_INI_MAX_LINE * 2 + 8];
	int64_t v;

	if (!host) {
		notconv(c, u, u->line, "no host: ulogd had no collector to send to");
		return -1;
	}
	fprintf(c->o, "    plugin: ipfix\n");
	snprintf(addr, sizeof(addr), strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
	opt(c, u, "ipfix", "address", "%s", yq(c, addr));
	if (strcmp(proto, "udp") != 0)
		notconv(c, u, line_of(u, "proto"), "proto=%s: sluice exports IPFIX over UDP "
			"only", proto);
	if (num(c, u, "oid", 0, 0, UINT32_MAX, &v) > 0)
		opt(c, u, "ipfix", "observation_domain", "%" PRId64, v);
	if (num(c, u, "mtu", 0, 0, INT32_MAX, &v) > 0)
		opt(c, u, "ipfix", "mtu", "%" PRId64, clamp(c, u, "mtu", v, 256, 65000, ""));
	if (ent(u, "send_template"))
		comment(c, "send_template: sluice resends its templates every template_interval");
	return 0;
}

/* A libpq keyword=value pair, quoted when the value needs it. */
static void pq_pair(char *buf, size_t size, const char *key, const char *v)
{
	size_t len = strlen(buf);

	if (!v)
		return;
	len += (size_t)snprintf(buf + len, size - len, "%s%s='", len ? " " : "", key);
	for (; *v && len + 3 < size; v++) {
		if (*v == '\'' || *v == '\\')
			buf[len++] = '\\';
		buf[len++] = *v;
	}
	snprintf(buf + len, size - len, "'");
}

static int conv_sql(struct conv *c, struct uinst *u)
{
	bool pg = strcmp(u->p->name, "PGSQL") == 0;
	const char *table = str(u, "table", NULL), *schema = str(u, "schema", NULL);
	char dsn[2048] = "";

	if (!pg && strcmp(u->p->name, "SQLITE3") != 0) {
		notconv(c, u, u->line, "sluice's sql output speaks PostgreSQL and SQLite, not %s",
			strcmp(u->p->name, "DBI") == 0 ? "libdbi" : "MySQL");
		return -1;
	}
	if (!has(c, "sql", NULL, NULL)) {
		notconv(c, u, u->line, "this build has no sql output (PostgreSQL and SQLite; on "
			"its way)");
		return -1;
	}
	fprintf(c->o, "    plugin: sql\n");
	if (!opt(c, u, "sql", "driver", pg ? "postgresql" : "sqlite"))
		return -1;
	if (pg && ent(u, "connstring")) {
		opt(c, u, "sql", "dsn", "%s", yq(c, str(u, "connstring", "")));
	} else if (pg) {
		pq_pair(dsn, sizeof(dsn), "host", str(u, "host", NULL));
		pq_pair(dsn, sizeof(dsn), "port", str(u, "port", NULL));
		pq_pair(dsn, sizeof(dsn), "dbname", str(u, "db", NULL));
		pq_pair(dsn, sizeof(dsn), "user", str(u, "user", NULL));
		pq_pair(dsn, sizeof(dsn), "password", str(u, "pass", NULL));
		opt(c, u, "sql", "dsn", "%s", yq(c, dsn));
	} else {
		opt(c, u, "sql", "path", "%s", yq(c, str(u, "db", "/var/log/ulogd.sqlite3db")));
	}
	if (table) {
		snprintf(dsn, sizeof(dsn), "%s%s%s", schema ? schema : "", schema ? "." : "", table);
		opt(c, u, "sql", "table", "%s", yq(c, dsn));
	}
	if (ent(u, "procedure"))
		note(c, u, line_of(u, "procedure"), "procedure=%s: sluice writes rows into the "
		     "table itself (conf/sql/ has its schema), it calls no procedure",
		     str(u, "procedure", ""));
	if (ent(u, "backlog_memcap") || ent(u, "ring_buffer_size"))
		comment(c, "backlog_memcap/ring_buffer_size: sluice queues on the output's thread");
	return 0;
}

static int conv_none(struct conv *c, struct uinst *u)
{
	const char *why = strcmp(u->p->name, "XML") == 0 ? "sluice writes no XML (json is "
			  "the structured format)" :
			  strcmp(u->p->name, "NACCT") == 0 ? "sluice has no nacct-format output" :
			  "sluice has no Graphite output (/metrics serves its counters)";

	notconv(c, u, u->line, "%s", why);
	return -1;
}

#define SQLKEYS "db host user pass port table procedure reconnect connect_timeout " \
		"backlog_memcap backlog_oneshot_requests ring_buffer_size"

static const struct uplug uplugs[] = {
	{ "NFLOG", R_PKT, true, "bufsize group unbind bind seq_local seq_global numeric_label "
	  "netlink_socket_buffer_size netlink_socket_buffer_maxsize netlink_qthreshold "
	  "netlink_qtimeout attach_conntrack", conv_nflog },
	{ "ULOG", R_PKT, true, "bufsize nlgroup rmem numeric_label", conv_gone },
	{ "UNIXSOCK", R_PKT, true, "socket_path bufsize perms owner group", conv_gone },
	{ "NFCT", R_FLOW, true, "pollinterval hash_enable hash_buckets hash_max_entries "
	  "event_mask netlink_socket_buffer_size netlink_socket_buffer_maxsize "
	  "netlink_resync_timeout reliable accept_src_filter accept_dst_filter "
	  "accept_proto_filter", conv_nfct },
	{ "NFACCT", R_ACCT, true, "pollinterval zerocounter timestamp", conv_nfacct },
	{ "BASE", R_FILTER, false, "", NULL },
	{ "IFINDEX", R_FILTER, false, "", NULL },
	{ "IP2STR", R_FILTER, false, "", NULL },
	{ "IP2BIN", R_FILTER, false, "", NULL },
	{ "IP2HBIN", R_FILTER, false, "", NULL },
	{ "HWHDR", R_FILTER, false, "", NULL },
	{ "MAC2STR", R_FILTER, false, "", NULL },
	{ "PRINTPKT", R_FILTER, false, "", NULL },
	{ "PRINTFLOW", R_FILTER, false, "", NULL },
	{ "MARK", R_FILTER, true, "mark mask", conv_mark },
	{ "PWSNIFF", R_FILTER, false, "", conv_pwsniff },
	{ "LOGEMU", R_OUT, true, "file sync", conv_logemu },
	{ "OPRINT", R_OUT, true, "file sync", conv_logemu },
	{ "GPRINT", R_OUT, true, "file sync timestamp", conv_logemu },
	{ "SYSLOG", R_OUT, false, "facility level", conv_syslog },
	{ "JSON", R_OUT, true, "file sync timestamp eventv1 device boolean_label mode host port",
	  conv_json },
	{ "PCAP", R_OUT, true, "file sync", conv_pcap },
	{ "IPFIX", R_OUT, true, "oid host port proto mtu send_template", conv_ipfix },
	{ "PGSQL", R_OUT, true, SQLKEYS " schema connstring", conv_sql },
	{ "SQLITE3", R_OUT, true, "db table buffer", conv_sql },
	{ "MYSQL", R_OUT, true, SQLKEYS, conv_sql },
	{ "DBI", R_OUT, true, SQLKEYS " dbtype", conv_sql },
	{ "XML", R_OUT, true, "directory sync stdout", conv_none },
	{ "NACCT", R_OUT, true, "file sync", conv_none },
	{ "GRAPHITE", R_OUT, true, "host port prefix", conv_none },
};

static const struct uplug *find_plug(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(uplugs) / sizeof(uplugs[0]); i++)
		if (strlen(uplugs[i].name) == len && strncmp(uplugs[i].name, name, len) == 0)
			return &uplugs[i];
	return NULL;
}

static bool word_in(const char *list, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = list; (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

/* ---- stacks and instances ---- */

static bool name_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '-' || ch == '.';
}

/* The ulogd id as a sluice name: not another instance's, not a plugin's. */
static void sluice_name(struct conv *c, struct uinst *u)
{
	char base[80];
	size_t n = 0;
	bool taken = true;

	for (const char *p = u->id; *p && n < sizeof(base) - 1; p++)
		base[n++] = name_char(*p) ? *p : '_';
	base[n] = '\0';
	snprintf(u->name, sizeof(u->name), "%s", base);
	for (unsigned k = 1; taken && k < 1000; k++) {
		taken = has(c, u->name, NULL, NULL);
		for (const struct uinst *o = c->u; !taken && o < u; o++)
			taken = strcmp(o->name, u->name) == 0;
		if (taken)
			snprintf(u->name, sizeof(u->name), "%s_%u", base, k);
	}
}

/* ulogd would refuse these: an unknown or repeated key, a missing section. */
static void check_section(struct conv *c, struct uinst *u)
{
	const struct ini_section *s = u->sec;

	if (!s) {
		if (u->p->section)
			error_at(c, u->line, u->col, "no [%s] section for %s:%s (ulogd2 does not "
				 "start without it)", u->id, u->id, u->p->name);
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct ini_entry *e = &s->e[i];

		if (!word_in(u->p->keys, e->key)) {
			error_at(c, e->line, e->col, "unknown key '%s' in [%s]: %s takes %s%s",
				 e->key, u->id, u->p->name, *u->p->keys ? "" : "no keys",
				 u->p->keys);
			continue;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->e[j].key, e->key) == 0) {
				error_at(c, e->line, e->col, "'%s' set twice in [%s] (first on line "
					 "%u)", e->key, u->id, s->e[j].line);
				break;
			}
	}
}

static struct uinst *get_inst(struct conv *c, const char *id, size_t len,
			      const struct uplug *p, unsigned line, unsigned col)
{
	struct uinst *u;

	for (u = c->u; u < c->u + c->nu; u++)
		if (strlen(u->id) == len && strncmp(u->id, id, len) == 0) {
			/* ulogd shares inputs by id; every other plugin is one per stack */
			if (u->p == p)
				return u;
			if (u->p->role <= R_ACCT && p->role <= R_ACCT) {
				error_at(c, line, col, "input '%s' is %s here but %s on line %u",
					 u->id, p->name, u->p->name, u->line);
				return NULL;
			}
		}
	u = &c->u[c->nu++];
	u->id = strndup(id, len);
	if (!u->id) {
		error_at(c, line, col, "out of memory");
		c->nu--;
		return NULL;
	}
	u->p = p;
	u->line = line;
	u->col = col;
	u->sec = ulogd_ini_section(c->ini, u->id);
	check_section(c, u);
	return u;
}

static bool role_ok(struct conv *c, const struct ustack *s)
{
	const struct ini_entry *e = s->e;

	if (s->n < 2) {
		error_at(c, e->line, e->vcol, "a stack needs an input and an output");
		return false;
	}
	for (size_t i = 0; i < s->n; i++) {
		enum urole r = s->el[i]->p->role;
		bool ok = i == 0 ? r <= R_ACCT : i == s->n - 1 ? r == R_OUT : r == R_FILTER;

		if (!ok) {
			error_at(c, e->line, e->vcol, "%s:%s: a stack is an input, filters, then an "
				 "output", s->el[i]->id, s->el[i]->p->name);
			return false;
		}
	}
	return true;
}

/* stack=id:PLUGIN,id:PLUGIN,... */
static void parse_stack(struct conv *c, const struct ini_entry *e)
{
	struct ustack *s = &c->s[c->ns++];
	const char *p = e->value;

	s->e = e;
	while (*p) {
		const char *end = strchr(p, ','), *colon;
		unsigned col = e->vcol + (unsigned)(p - e->value);
		const struct uplug *pl;
		struct uinst *u;

		if (!end)
			end = p + strlen(p);
		colon = memchr(p, ':', (size_t)(end - p));
		if (!colon || colon == p || colon + 1 == end) {
			error_at(c, e->line, col, "expected ID:PLUGIN, found '%.*s'", (int)(end - p), p);
			return;
		}
		if (s->n == MAX_ELEMS) {
			error_at(c, e->line, col, "more than %d plugins in one stack", MAX_ELEMS);
			return;
		}
		pl = find_plug(colon + 1, (size_t)(end - colon - 1));
		if (!pl) {
			snprintf(s->name, sizeof(s->name), "%.*s", (int)(end - colon - 1), colon + 1);
			s->unknown = s->name;
		} else if ((u = get_inst(c, p, (size_t)(colon - p), pl, e->line, col))) {
			s->el[s->n++] = u;
		}
		p = *end ? end + 1 : end;
	}
	if (!s->unknown)
		role_ok(c, s);
}

static void convert_inst(struct conv *c, struct uinst *u)
{
	if (!u->p->conv) {
		u->state = 1;
		return;
	}
	c->o = open_memstream(&u->body, &u->bodylen);
	if (!c->o) {
		error_at(c, u->line, u->col, "out of memory");
		return;
	}
	u->state = u->p->conv(c, u) < 0 || u->missing ? -1 : 1;
	fclose(c->o);
	c->o = NULL;
}

/* Two ulogd inputs reading the same group: sluice reads it once, for both. */
static void find_alias(struct conv *c, struct uinst *u)
{
	for (struct uinst *o = c->u; o < u; o++) {
		if (o->state != 1 || o->p != u->p || o->alias)
			continue;
		if ((u->p->role == R_PKT && o->group == u->group) ||
		    (u->p->role == R_FLOW && (o->events & u->events))) {
			u->alias = o;
			note(c, u, u->line, "reads what [%s] reads (%s %" PRId64 "): its stacks use "
			     "%s, and [%s]'s options", o->id, u->p->role == R_PKT ? "group" :
			     "events", u->p->role == R_PKT ? u->group : (int64_t)u->events, o->name,
			     o->id);
			return;
		}
	}
}

/* Why a stack cannot be written, or NULL. */
static const char *stack_problem(struct conv *c, struct ustack *s, char *buf, size_t size)
{
	const struct uinst *in, *out;

	if (s->unknown) {
		snprintf(buf, size, "%s is not a ulogd2 2.0.8 plugin", s->unknown);
		notconv(c, NULL, s->e->line, "stack uses %s", buf);
		return buf;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->el[i]->state < 0) {
			snprintf(buf, size, "[%s] (%s) is not converted", s->el[i]->id,
				 s->el[i]->p->name);
			return buf;
		}
	in = s->el[0];
	out = s->el[s->n - 1];
	if ((strcmp(out->p->name, "PCAP") == 0 && in->p->role != R_PKT) ||
	    (strcmp(out->p->name, "IPFIX") == 0 && in->p->role != R_FLOW)) {
		snprintf(buf, size, "%s takes %s, not what %s gives", out->p->name,
			 in->p->role == R_PKT ? "flows" : "packets", in->p->name);
		notconv(c, NULL, s->e->line, "stack: %s", buf);
		return buf;
	}
	return NULL;
}

static void stack_name(struct conv *c, struct ustack *s, const char *in, const char *out)
{
	snprintf(s->name, sizeof(s->name), "%s_%s", in, out);
	for (unsigned k = 2; k < 1000; k++) {
		bool taken = false;

		for (const struct ustack *o = c->s; o < s && !taken; o++)
			taken = strcmp(o->name, s->name) == 0;
		if (!taken)
			return;
		snprintf(s->name, sizeof(s->name), "%s_%s_%u", in, out, k);
	}
}

static bool write_stack(struct conv *c, struct ustack *s, FILE *o)
{
	struct uinst *in, *out;
	enum urole role;
	char why[200];
	const char *bad;

	fprintf(o, "  # stack=%s (line %u)\n", s->e->value, s->e->line);
	if ((bad = stack_problem(c, s, why, sizeof(why)))) {
		fprintf(o, "  # not converted: %s\n", bad);
		return false;
	}
	/* without an unknown plugin, role_ok() saw an input and an output */
	in = s->el[0]->alias ? s->el[0]->alias : s->el[0];
	out = s->el[s->n - 1];
	role = in->p->role;
	stack_name(c, s, in->name, out->name);
	fprintf(o, "  %s: [%s", s->name, in->name);
	/* an input read through another's instance keeps its own accept filters */
	if (*s->el[0]->where)
		fprintf(o, ", { plugin: where, expr: %s }", yq(c, s->el[0]->where));
	for (size_t i = 1; i + 1 < s->n; i++)
		if (*s->el[i]->where)
			fprintf(o, ", { plugin: where, expr: %s }", yq(c, s->el[i]->where));
	if (role == R_PKT && strcmp(out->p->name, "PCAP") != 0)
		fprintf(o, ", decode");
	if (out->need == N_LINE && role == R_ACCT) {
		fprintf(o, ", json");
		note(c, out, s->e->line, "accounting records are written as JSON (logline prints "
		     "packets and connections)");
	} else if (out->need == N_LINE) {
		fprintf(o, ", logline");
	} else if (out->need == N_JSON) {
		fprintf(o, ", %s", out->json_el);
	}
	fprintf(o, ", %s]\n", out->name);
	in->used = out->used = true;
	return true;
}

/* A body of comments and "    key: value" lines, commented out entirely. */
static void write_commented(FILE *o, const char *body)
{
	for (const char *p = body; p && *p;) {
		const char *nl = strchr(p, '\n');
		int len = (int)(nl ? nl - p : (ptrdiff_t)strlen(p));

		if (strncmp(p, "    #", 5) == 0)
			fprintf(o, "%.*s\n", len, p);
		else
			fprintf(o, "    # %.*s\n", len - 4 > 0 ? len - 4 : 0, p + 4);
		p = nl ? nl + 1 : p + len;
	}
}

static void write_instances(struct conv *c, FILE *o)
{
	bool any = false;

	for (struct uinst *u = c->u; u < c->u + c->nu; u++)
		any |= u->used && u->state == 1 && u->p->role != R_FILTER;
	if (any)
		fprintf(o, "instances:\n");
	for (struct uinst *u = c->u; u < c->u + c->nu; u++) {
		unsigned line = u->sec ? u->sec->line : u->line;

		if (u->p->role == R_FILTER && u->bodylen) {
			fprintf(o, "  # [%s] (%s), %s:%u\n%s", u->id, u->p->name, c->file, line,
				u->body);
		} else if (u->p->role != R_FILTER && u->state == 1 && u->used) {
			fprintf(o, "  # from [%s] (%s), %s:%u\n  %s:\n%s", u->id, u->p->name,
				c->file, line, u->name, u->body ? u->body : "");
		} else if (u->p->role != R_FILTER && !u->alias) {
			fprintf(o, "  # [%s] (%s), %s:%u: %s\n", u->id, u->p->name, c->file, line,
				u->state == 1 ? "converted, but no converted stack uses it" :
				"not converted");
			write_commented(o, u->body);
		}
	}
}

static void write_daemon(struct conv *c, const struct ini_section *g, FILE *o)
{
	static const char *const levels[] = { "debug", "debug", "debug", "info", "info",
		"notice", "warning", "err", "err" };
	const struct ini_entry *e = ulogd_ini_get(g, "loglevel");
	const struct ini_entry *f = ulogd_ini_get(g, "logfile");
	char *end;
	long v;

	if (f)
		fprintf(o, "# logfile=%s: sluice logs to stderr (the journal under systemd)\n",
			f->value);
	if (!e)
		return;
	v = strtol(e->value, &end, 0);
	if (!*e->value || *end || v < 0 || v > 8) {
		error_at(c, e->line, e->vcol, "loglevel: expected 1 (debug) to 8 (fatal), found "
			 "'%s'", e->value);
		return;
	}
	fprintf(o, "daemon:\n  log_level: %s   # loglevel=%ld\n", levels[v], v);
}

/* [global]: plugin=, stack=, logfile=, loglevel= (ulogd 2.0.8's keys). */
static size_t read_global(struct conv *c, const struct ini_section *g, size_t *elems)
{
	size_t stacks = 0;

	for (size_t i = 0; i < g->n; i++) {
		const struct ini_entry *e = &g->e[i];
		const char *base, *name;

		if (strcmp(e->key, "stack") == 0) {
			stacks++;
			*elems += 1;
			for (const char *p = e->value; (p = strchr(p, ',')); p++)
				*elems += 1;
		} else if (strcmp(e->key, "plugin") == 0) {
			base = strrchr(e->value, '/');
			base = base ? base + 1 : e->value;
			name = strrchr(base, '_');
			if (!name || !strstr(name, ".so") ||
			    !find_plug(name + 1, (size_t)(strstr(name, ".so") - name - 1))) {
				note(c, NULL, e->line, "plugin=%s is not one of ulogd2 2.0.8's "
				     "plugins; a stack using it is not converted", e->value);
			}
		} else if (strcmp(e->key, "logfile") && strcmp(e->key, "loglevel")) {
			error_at(c, e->line, e->col, "unknown key '%s' in [global] (expected plugin, "
				 "stack, logfile or loglevel)", e->key);
		}
	}
	if (!stacks)
		error_at(c, g->line, 1, "[global] has no stack= line: nothing to convert");
	return stacks;
}

static void write_yaml(struct conv *c, const struct ini_section *g, const char *stacks,
		       unsigned converted)
{
	FILE *o = c->out;
	bool first = true;

	fprintf(o, "# sluice configuration converted from %s by `sluice convert ulogd`.\n"
		"# Check it with `sluice -t -c FILE` before switching (docs/MIGRATING.md).\n",
		c->file);
	if (c->res->not_converted)
		fprintf(o, "# %u thing%s could not be converted: see the \"not converted\" "
			"comments.\n", c->res->not_converted, c->res->not_converted == 1 ? "" : "s");
	for (size_t i = 0; i < c->ini->n; i++) {
		const struct ini_section *s = &c->ini->s[i];
		bool used = s == g;

		for (const struct uinst *u = c->u; !used && u < c->u + c->nu; u++)
			used = u->sec == s;
		if (used)
			continue;
		fprintf(o, "%s%s", first ? "# sections no stack uses: " : ", ", s->name);
		first = false;
	}
	if (!first)
		fputc('\n', o);
	write_daemon(c, g, o);
	write_instances(c, o);
	fprintf(o, "stacks:%s\n%s", converted ? "" : " {}", stacks);
}

static int convert(struct conv *c)
{
	const struct ini_section *g = ulogd_ini_section(c->ini, "global");
	size_t nstacks, elems = 0;
	unsigned converted = 0;
	char *stacks = NULL;
	size_t slen = 0;
	FILE *so;

	if (!g) {
		error_at(c, 1, 1, "no [global] section (with the stack= lines)");
		return -1;
	}
	nstacks = read_global(c, g, &elems);
	c->s = calloc(nstacks ? nstacks : 1, sizeof(*c->s));
	c->u = calloc(elems ? elems : 1, sizeof(*c->u));
	if (!c->s || !c->u)
		return -1;
	for (size_t i = 0; i < g->n && !c->res->errors; i++)
		if (strcmp(g->e[i].key, "stack") == 0)
			parse_stack(c, &g->e[i]);
	for (size_t i = 0; i < c->nu && !c->res->errors; i++)
		sluice_name(c, &c->u[i]);
	for (size_t i = 0; i < c->nu && !c->res->errors; i++) {
		convert_inst(c, &c->u[i]);
		if (c->u[i].state == 1 && c->u[i].p->role <= R_FLOW)
			find_alias(c, &c->u[i]);
	}
	if (c->res->errors || !(so = open_memstream(&stacks, &slen)))
		return -1;
	for (size_t i = 0; i < c->ns; i++) {
		converted += write_stack(c, &c->s[i], so);
	}
	fclose(so);
	if (!converted) {
		notconv(c, NULL, g->line, "no stack could be converted");
	}
	if (!c->res->errors)
		write_yaml(c, g, stacks, converted);
	free(stacks);
	return c->res->errors ? -1 : 0;
}

int convert_ulogd(const struct ulogd_ini *ini, const char *file, const struct convert_caps *caps,
		  FILE *out, FILE *diag, struct convert_result *res)
{
	struct conv c = { .ini = ini, .file = file, .caps = caps, .diag = diag, .res = res };

	int ret;

	memset(res, 0, sizeof(*res));
	c.out = out;
	ret = convert(&c);
	for (size_t i = 0; i < c.nu; i++) {
		free((char *)c.u[i].id);
		free(c.u[i].body);
	}
	free(c.u);
	free(c.s);
	return ret;
}
