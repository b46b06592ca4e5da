/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What each ulogd2 2.0.8 plugin becomes in sluice: its keys (an unknown
 * one is an error in convert_ulogd.c), and a function per plugin that
 * writes the sluice instance's options from the ulogd section, asking the
 * build's plugins through convert_ulogd_has() whether each option exists.  The
 * mapping is documented in docs/MIGRATING.md.
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
#include "convert_ulogd_int.h"

bool convert_ulogd_has(struct conv *c, const char *plugin, const char *option, const char *choice)
{
	return c->caps->has(c->caps->ctx, plugin, option, choice) == 1;
}

/* `    option: value` when this build's plugin has the option; a not-converted comment if not. */
static bool opt(struct conv *c, struct uinst *u, const char *plugin, const char *option,
		const char *fmt, ...)
{
	va_list ap;

	if (!convert_ulogd_has(c, plugin, option, NULL)) {
		if (u->missing)
			return false;
		u->missing = !convert_ulogd_has(c, plugin, NULL, NULL);
		if (u->missing)
			convert_ulogd_notconv(c, u, u->sec ? u->sec->line : u->line, "no plugin %s on the "
				"plugin search path ($SLUICE_PLUGIN_PATH, then the built-in one)",
				plugin);
		else
			convert_ulogd_notconv(c, u, u->sec ? u->sec->line : u->line,
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

const struct ini_entry *convert_ulogd_ent(struct uinst *u, const char *key)
{
	const struct ini_entry *e = ulogd_ini_get(u->sec, key);

	if (e && u->seen)
		u->seen[e - u->sec->e] = true;
	return e;
}

static unsigned line_of(struct uinst *u, const char *key)
{
	const struct ini_entry *e = convert_ulogd_ent(u, key);

	return e ? e->line : u->sec ? u->sec->line : u->line;
}

static const char *str(struct uinst *u, const char *key, const char *def)
{
	const struct ini_entry *e = convert_ulogd_ent(u, key);

	return e ? e->value : def;
}

/* An integer key as ulogd reads it (strtoul base 0); 1 present, 0 absent, -1 bad. */
static int num(struct conv *c, struct uinst *u, const char *key, int64_t def,
	       int64_t min, int64_t max, int64_t *out)
{
	const struct ini_entry *e = convert_ulogd_ent(u, key);
	char *end;
	long long v;

	*out = def;
	if (!e)
		return 0;
	errno = 0;
	v = strtoll(e->value, &end, 0);
	if (!*e->value || *end || errno || v < min || v > max) {
		convert_ulogd_error_at(c, e->line, e->vcol, "[%s] %s: expected an integer from %" PRId64
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
		convert_ulogd_note(c, u, line_of(u, key), "%s=%" PRId64 " is outside sluice's range; %" PRId64
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
			convert_ulogd_comment(c, "ulogd grew its buffer up to netlink_socket_buffer_maxsize "
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
		convert_ulogd_notconv(c, u, line_of(u, "numeric_label"),
			"numeric_label=%" PRId64 " (the label JSON's boolean_label reads): sluice "
			"records carry no label; tell rules apart by their log prefix", v);
	if (convert_ulogd_ent(u, "bind") || convert_ulogd_ent(u, "unbind"))
		convert_ulogd_comment(c, "bind/unbind: not needed; sluice binds its group and never unbinds "
			"the kernel's log handlers");
	/* both read, so a bad value in either is reported */
	have = num(c, u, "seq_local", 0, 0, 1, &v) > 0 && v;
	if ((num(c, u, "seq_global", 0, 0, 1, &max) > 0 && max) || have)
		opt(c, u, "nflog", "seq", "true");
	if (num(c, u, "attach_conntrack", 0, 0, 1, &v) > 0 && v)
		opt(c, u, "nflog", "conntrack", "true");
	return 0;
}

/*
 * A ulogd list "a,,b," as "a,b": ulogd splits its filter lists with
 * strtok(), which passes over empty items; written as they are, they make
 * a YAML list or a where set that does not parse.  false when no item is
 * left (or, which the reader's line limit rules out, out is too small).
 */
static bool list_items(const char *value, char *out, size_t size)
{
	size_t k = 0;

	if (strlen(value) >= size)
		return false;
	for (const char *p = value; *p; p++)
		if (*p != ',' || (k && out[k - 1] != ','))
			out[k++] = *p;
	if (k && out[k - 1] == ',')
		k--;
	out[k] = '\0';
	return k > 0;
}

/* A comma-separated list of addresses and prefixes as a where set; false if not one. */
static bool addr_set(struct conv *c, struct uinst *u, const char *key, const char *field)
{
	const struct ini_entry *e = convert_ulogd_ent(u, key);
	size_t len = strlen(u->where);
	const char *p;

	if (!e)
		return true;
	for (p = e->value; *p; p++)
		if (!isxdigit((unsigned char)*p) && !strchr(".:/,", *p))
			break;
	char list[ULOGD_INI_MAX_LINE];

	if (*p || !list_items(e->value, list, sizeof(list))) {
		convert_ulogd_error_at(c, e->line, e->vcol + (unsigned)(p - e->value),
			 "[%s] %s: expected addresses and prefixes separated by ','", u->id, key);
		return false;
	}
	snprintf(u->where + len, sizeof(u->where) - len, "%s%s in {%s}", len ? " and " : "", field,
		 list);
	return true;
}

static const char *const ct_event_names[] = { "new", "update", "destroy" };

static void nfct_events(struct conv *c, struct uinst *u, int64_t mask, int64_t hash)
{
	char list[64] = "";

	if (hash && (mask & 4)) {
		convert_ulogd_comment(c, "ulogd's hash (hash_enable=1) logs each connection once, at its end");
		u->events = 4;
	} else {
		u->events = (unsigned)mask & 7;
		if (hash)
			convert_ulogd_note(c, u, line_of(u, "event_mask"), "hash_enable=1 without the destroy "
			     "event: sluice reports the events of event_mask as they come");
	}
	if (mask & ~7)
		convert_ulogd_note(c, u, line_of(u, "event_mask"), "event_mask bits 0x%" PRIx64 " are not "
		     "conntrack events sluice knows (1 new, 2 update, 4 destroy)", mask & ~7);
	for (unsigned b = 0; b < 3; b++)
		if (u->events & (1u << b))
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 *list ? ", " : "", ct_event_names[b]);
	if (!u->events) {
		convert_ulogd_notconv(c, u, line_of(u, "event_mask"), "event_mask=0x%" PRIx64 " names no "
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
		convert_ulogd_notconv(c, u, line_of(u, "pollinterval"), "pollinterval=%" PRId64 ": sluice "
			"reads conntrack events, it has no polling mode", v);
	if (num(c, u, "hash_max_entries", 0, 0, INT32_MAX, &v) > 0)
		opt(c, u, "nfct", "track_max", "%" PRId64,
		    clamp(c, u, "hash_max_entries", v, 1024, 268435456, ""));
	if (convert_ulogd_ent(u, "hash_buckets"))
		convert_ulogd_comment(c, "hash_buckets: sluice sizes its table from track_max");
	if (num(c, u, "netlink_socket_buffer_size", 0, 0, INT32_MAX, &v) |
	    num(c, u, "netlink_socket_buffer_maxsize", 0, 0, INT32_MAX, &max)) {
		if (max > v)
			v = max;
		opt(c, u, "nfct", "netlink_buffer", "%" PRId64,
		    clamp(c, u, "netlink_socket_buffer_size", v, 4096, 1 << 30, " bytes"));
	}
	if (convert_ulogd_ent(u, "netlink_resync_timeout"))
		convert_ulogd_comment(c, "netlink_resync_timeout: sluice dumps the table at once after ENOBUFS");
	if (num(c, u, "reliable", 0, 0, 1, &v) > 0 && v)
		opt(c, u, "nfct", "reliable", "true");
	if ((e = convert_ulogd_ent(u, "accept_proto_filter"))) {
		for (const char *p = e->value; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != ',' && *p != '-') {
				convert_ulogd_error_at(c, e->line, e->vcol + (unsigned)(p - e->value),
					 "[%s] accept_proto_filter: expected protocol names "
					 "separated by ','", u->id);
				return -1;
			}
		char list[ULOGD_INI_MAX_LINE];

		if (!list_items(e->value, list, sizeof(list))) {
			convert_ulogd_error_at(c, e->line, e->vcol, "[%s] accept_proto_filter: no "
					       "protocol names", u->id);
			return -1;
		}
		opt(c, u, "nfct", "protocols", "[%s]", list);
	}
	if (!addr_set(c, u, "accept_src_filter", "orig_src") ||
	    !addr_set(c, u, "accept_dst_filter", "orig_dst"))
		return -1;
	if (*u->where)
		convert_ulogd_comment(c, "accept_src/dst_filter: a where filter after it in each stack");
	return 0;
}

static int conv_nfacct(struct conv *c, struct uinst *u)
{
	int64_t v;

	if (!convert_ulogd_has(c, "nfacct", NULL, NULL)) {
		convert_ulogd_notconv(c, u, u->line, "this build has no nfacct input (the input that polls "
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
	if (convert_ulogd_ent(u, "timestamp"))
		convert_ulogd_comment(c, "timestamp: every sluice record has its time");
	return 0;
}

static int conv_gone(struct conv *c, struct uinst *u)
{
	if (strcmp(u->p->name, "ULOG") == 0)
		convert_ulogd_notconv(c, u, u->line, "the ULOG target left Linux in 3.17; log to an NFLOG "
			"group (nft `log group N`, iptables -j NFLOG) and read it with nflog");
	else
		convert_ulogd_notconv(c, u, u->line, "sluice has no input for NuFW's unix socket (UNIXSOCK)");
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
		convert_ulogd_notconv(c, u, line_of(u, "mark"), "mark=0x%" PRIx64 " has bits outside "
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
	if (!convert_ulogd_has(c, "where", NULL, NULL)) {
		convert_ulogd_notconv(c, u, u->line, "this build has no where filter for mark/mask");
		return -1;
	}
	return 0;
}

static int conv_pwsniff(struct conv *c, struct uinst *u)
{
	convert_ulogd_notconv(c, u, u->line, "sluice does not extract FTP/POP3 passwords (PWSNIFF); "
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
	u->wfile = str(u, "file", def);
	opt(c, u, "file", "file", "%s", convert_ulogd_yq(c, u->wfile));
	if (num(c, u, "sync", 0, 0, 1, &v) > 0 && v)
		opt(c, u, "file", "sync", "true");
	u->need = N_LINE;
	if (strcmp(u->p->name, "GPRINT") == 0)
		convert_ulogd_note(c, u, u->line, "GPRINT's key=value lists become the kernel LOG line "
		     "(packets) or conntrack -E's line (flows): update what parses the file");
	else if (strcmp(u->p->name, "OPRINT") == 0)
		convert_ulogd_note(c, u, u->line, "OPRINT's multi-line dump becomes one kernel LOG line "
		     "per packet");
	if (strcmp(u->p->name, "LOGEMU") != 0)
		return num(c, u, "timestamp", 0, 0, 1, &v) < 0 ? -1 : 0;
	if (convert_ulogd_has(c, "file", "line_header", "syslog")) {
		convert_ulogd_comment(c, "LOGEMU's \"Dec  1 05:53:27 host\" in front of each line");
		opt(c, u, "file", "line_header", "syslog");
		opt(c, u, "file", "header_tag", "\"\"   # no 'kernel:' tag, as LOGEMU");
	} else {
		convert_ulogd_comment(c, "line_header: syslog  (the option that writes LOGEMU's date and host "
			"is on its way)");
		convert_ulogd_notconv(c, u, u->line, "LOGEMU's \"MMM dd HH:MM:SS host\" in front of each line: "
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
		const struct ini_entry *e = convert_ulogd_ent(u, fs ? "level" : "facility");

		convert_ulogd_error_at(c, e->line, e->vcol, "[%s] %s: expected %s, found '%s'", u->id, e->key,
			 fs ? "LOG_EMERG ... LOG_DEBUG" : "LOG_KERN, LOG_USER ... LOG_LOCAL7",
			 e->value);
		return -1;
	}
	fprintf(c->o, "    plugin: syslog\n");
	if (strcmp(fs, "kern") == 0) {
		/* LOG_KERN is 0, which libc's syslog() replaces by openlog's default. */
		convert_ulogd_comment(c, "facility=%s: libc's syslog() sent ulogd's messages as 'user'", f);
		fs = "user";
	}
	if (convert_ulogd_has(c, "syslog", "facility", fs) || !convert_ulogd_has(c, "syslog", NULL, NULL))
		opt(c, u, "syslog", "facility", "%s", fs);
	else
		convert_ulogd_notconv(c, u, line_of(u, "facility"), "this build's syslog has no facility %s", fs);
	opt(c, u, "syslog", "severity", "%s", ls);
	convert_ulogd_comment(c, "the tag ulogd's messages had, for the rules that sort them");
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
		opt(c, u, "syslog", "address", "%s", convert_ulogd_yq(c, str(u, "file", "/var/run/ulogd.socket")));
		convert_ulogd_note(c, u, line_of(u, "mode"), "ulogd wrote bare JSON lines to a unix stream "
		     "socket; sluice sends each object as a syslog datagram (RFC 3164 header)");
		return 0;
	}
	if (!host) {
		convert_ulogd_notconv(c, u, line_of(u, "mode"), "mode=%s without host", mode);
		return -1;
	}
	opt(c, u, "syslog", "transport", "%s", mode);
	snprintf(addr, sizeof(addr), strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
	opt(c, u, "syslog", "address", "%s", convert_ulogd_yq(c, addr));
	if (strcmp(mode, "tcp") == 0)
		opt(c, u, "syslog", "framing", "lf");
	convert_ulogd_note(c, u, line_of(u, "mode"), "ulogd sent bare JSON over %s; sluice sends each "
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
		const struct ini_entry *e = convert_ulogd_ent(u, "mode");

		convert_ulogd_error_at(c, e->line, e->vcol, "[%s] mode: expected file, udp, tcp or unix, "
			 "found '%s'", u->id, mode);
		return -1;
	}
	if (strcmp(mode, "file") == 0) {
		fprintf(c->o, "    plugin: file\n");
		u->wfile = str(u, "file", "/var/log/ulogd.json");
		opt(c, u, "file", "file", "%s", convert_ulogd_yq(c, u->wfile));
		if (num(c, u, "sync", 0, 0, 1, &v) > 0 && v)
			opt(c, u, "file", "sync", "true");
		ret = 0;
	} else {
		ret = json_socket(c, u, mode);
	}
	u->need = N_JSON;
	if (dev && convert_ulogd_has(c, "json", "host", NULL))
		snprintf(u->json_el, sizeof(u->json_el), "{ plugin: json, host: %s }", convert_ulogd_yq(c, dev));
	else if (dev)
		convert_ulogd_notconv(c, u, line_of(u, "device"), "this build's json has no option 'host'");
	else
		strcpy(u->json_el, "json");
	if (num(c, u, "boolean_label", 0, 0, 1, &v) > 0 && v)
		convert_ulogd_notconv(c, u, line_of(u, "boolean_label"), "boolean_label: sluice records "
			"carry no numeric label (NFLOG numeric_label)");
	if (num(c, u, "eventv1", 0, 0, 1, &v) > 0 && v)
		convert_ulogd_notconv(c, u, line_of(u, "eventv1"), "eventv1's @version/@timestamp layout; "
			"sluice writes docs/JSON.md's keys (json schema: ecs for Elastic)");
	if (num(c, u, "timestamp", 1, 0, 1, &v) > 0 && !v)
		convert_ulogd_note(c, u, line_of(u, "timestamp"), "timestamp=0: sluice's objects always "
		     "have their \"timestamp\"");
	return ret;
}

static int conv_pcap(struct conv *c, struct uinst *u)
{
	int64_t v;

	fprintf(c->o, "    plugin: pcap\n");
	u->wfile = str(u, "file", "/var/log/ulogd.pcap");
	opt(c, u, "pcap", "file", "%s", convert_ulogd_yq(c, u->wfile));
	convert_ulogd_comment(c, "ulogd's link type; 'nflog' would keep prefix, interfaces and mark too");
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
		convert_ulogd_notconv(c, u, u->line, "no host: ulogd had no collector to send to");
		return -1;
	}
	fprintf(c->o, "    plugin: ipfix\n");
	snprintf(addr, sizeof(addr), strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
	opt(c, u, "ipfix", "address", "%s", convert_ulogd_yq(c, addr));
	if (strcmp(proto, "udp") != 0)
		convert_ulogd_notconv(c, u, line_of(u, "proto"), "proto=%s: sluice exports IPFIX over UDP "
			"only", proto);
	if (num(c, u, "oid", 0, 0, UINT32_MAX, &v) > 0)
		opt(c, u, "ipfix", "observation_domain", "%" PRId64, v);
	if (num(c, u, "mtu", 0, 0, INT32_MAX, &v) > 0)
		opt(c, u, "ipfix", "mtu", "%" PRId64, clamp(c, u, "mtu", v, 256, 65000, ""));
	if (convert_ulogd_ent(u, "send_template"))
		convert_ulogd_comment(c, "send_template: sluice resends its templates every template_interval");
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

/*
 * The columns of ulogd2's own tables, which ulogd filled by their names
 * (ulogd's keys, '.' as '_'), with the sluice fields that hold the same:
 * Debian's sqlite3.table (ulog_pkt, ulog_ct) and pgsql-ulogd2-flat.sql
 * (ulog2, ulog2_ct; conf/sql-ulogd2.yaml).  sql's own default columns
 * (time, src_addr...) are not in those tables.
 */
static const char *const ulogd_cols[2][2] = {
	{ /* SQLite: sqlite3.table */
	  "raw_pktlen: ip_len\n      oob_prefix: prefix\n      oob_time_sec: \"timestamp:sec\"\n"
	  "      oob_time_usec: \"timestamp:usec\"\n      oob_mark: mark\n      oob_hook: hook\n"
	  "      oob_uid: uid\n      oob_gid: gid",
	  "flow_start_sec: \"flow_start:sec\"\n      flow_start_usec: \"flow_start:usec\"\n"
	  "      flow_end_sec: \"flow_end:sec\"\n      flow_end_usec: \"flow_end:usec\"\n"
	  "      orig_l4_sport: orig_sport\n      orig_l4_dport: orig_dport\n"
	  "      orig_ip_protocol: ip_proto\n      orig_raw_pktlen: orig_bytes\n"
	  "      orig_raw_pktcount: orig_packets\n      reply_raw_pktlen: reply_bytes\n"
	  "      reply_raw_pktcount: reply_packets\n      ct_mark: mark" },
	{ /* PostgreSQL: pgsql-ulogd2-flat.sql */
	  "oob_time_sec: \"timestamp:sec\"\n      oob_time_usec: \"timestamp:usec\"\n"
	  "      oob_prefix: prefix\n      oob_mark: mark\n      oob_in: ifname_in\n"
	  "      oob_out: ifname_out\n      oob_hook: hook\n      oob_family: family\n"
	  "      ip_saddr_str: src_addr\n      ip_daddr_str: dst_addr\n      ip_protocol: ip_proto\n"
	  "      ip_tos: ip_tos\n      ip_ttl: ip_ttl\n      ip_totlen: ip_len\n      ip_id: ip_id\n"
	  "      ip6_flowlabel: ip6_flowlabel\n      mac_saddr_str: mac_src\n"
	  "      mac_daddr_str: mac_dst",	/* then one of pg_proto_cols */
	  "oob_family: family\n      orig_ip_saddr_str: orig_src\n      orig_ip_daddr_str: orig_dst\n"
	  "      orig_ip_protocol: ip_proto\n      orig_l4_sport: orig_sport\n"
	  "      orig_l4_dport: orig_dport\n      orig_raw_pktlen: orig_bytes\n"
	  "      orig_raw_pktcount: orig_packets\n      reply_ip_saddr_str: reply_src\n"
	  "      reply_ip_daddr_str: reply_dst\n      reply_l4_sport: reply_sport\n"
	  "      reply_l4_dport: reply_dport\n      reply_raw_pktlen: reply_bytes\n"
	  "      reply_raw_pktcount: reply_packets\n      ct_mark: mark\n"
	  "      flow_start_sec: \"flow_start:sec\"\n      flow_start_usec: \"flow_start:usec\"\n"
	  "      flow_end_sec: \"flow_end:sec\"\n      flow_end_usec: \"flow_end:usec\"" },
};

/*
 * ulog2 keeps ports and ICMP fields in a column per protocol: a PGSQL
 * packet output becomes one sql instance per protocol here (behind a
 * where on ip_proto, conf/sql-ulogd2.yaml) and one for the others, each
 * with ulogd_cols' common map and its protocol's part.
 */
static const char *const pg_proto_cols[CU_PG_PROTOS] = {
	"tcp_sport: sport\n      tcp_dport: dport\n      tcp_seq: tcp_seq\n"
	"      tcp_ackseq: tcp_ack\n      tcp_window: tcp_window\n      tcp_urgp: tcp_urgp",
	"udp_sport: sport\n      udp_dport: dport\n      udp_len: udp_len",
	"icmp_type: icmp_type\n      icmp_code: icmp_code\n      icmp_echoid: icmp_id\n"
	"      icmp_echoseq: icmp_seq",
	"icmpv6_type: icmp_type\n      icmpv6_code: icmp_code\n      icmpv6_echoid: icmp_id\n"
	"      icmpv6_echoseq: icmp_seq",
};

const char *const convert_ulogd_pg_protos[CU_PG_PROTOS] = { "tcp", "udp", "icmp", "icmpv6" };

void convert_ulogd_pg_columns(FILE *o, int proto)
{
	if (proto >= 0)
		fprintf(o, "    # ulog2's %s columns; this stack's where keeps %s packets only\n",
			convert_ulogd_pg_protos[proto], convert_ulogd_pg_protos[proto]);
	else
		fprintf(o, "    # the other protocols' packets (GRE, ESP, SCTP...): the common "
			"columns; sctp_sport, sctp_dport stay NULL\n");
	fprintf(o, "    columns:\n      %s\n", ulogd_cols[1][0]);
	if (proto >= 0)
		fprintf(o, "      %s\n", pg_proto_cols[proto]);
}

/* The converted stack keeps writing into the table ulogd2 wrote. */
static void ulogd_columns(struct conv *c, struct uinst *u, bool pg, bool flows)
{
	if (!convert_ulogd_has(c, "sql", "columns", NULL)) {
		convert_ulogd_notconv(c, u, u->line, "this build's sql has no option 'columns' for ulogd2's "
			   "table");
		return;
	}
	convert_ulogd_comment(c, "the columns of ulogd2's %s (%s): edit them to your table's",
		   pg ? (flows ? "ulog2_ct" : "ulog2") : (flows ? "ulog_ct" : "ulog_pkt"),
		   pg ? "pgsql-ulogd2-flat.sql" : "sqlite3.table");
	if (u->split) {
		/* the maps follow, one per instance (convert_ulogd_pg_columns) */
		convert_ulogd_comment(c, "one sql instance per protocol (%s, %s, %s, %s, others), so five "
			   "connections to the database", convert_ulogd_pg_protos[0], convert_ulogd_pg_protos[1],
			   convert_ulogd_pg_protos[2], convert_ulogd_pg_protos[3]);
		return;
	}
	fprintf(c->o, "    columns:\n      %s\n", ulogd_cols[pg][flows]);
	if (!pg && !flows)
		convert_ulogd_comment(c, "raw_pktcount (always 1) stays NULL");
	else if (!pg)
		convert_ulogd_comment(c, "orig_ip_saddr, orig_ip_daddr (IPv4 as integers), icmp_type, "
			   "icmp_code stay NULL");
}

static int conv_sql(struct conv *c, struct uinst *u)
{
	bool pg = strcmp(u->p->name, "PGSQL") == 0;
	const char *table = str(u, "table", NULL), *schema = str(u, "schema", NULL);
	char dsn[2048] = "";

	if (!pg && strcmp(u->p->name, "SQLITE3") != 0) {
		convert_ulogd_notconv(c, u, u->line, "sluice's sql output speaks PostgreSQL and SQLite, not %s",
			strcmp(u->p->name, "DBI") == 0 ? "libdbi" : "MySQL");
		return -1;
	}
	if (!convert_ulogd_has(c, "sql", NULL, NULL)) {
		convert_ulogd_notconv(c, u, u->line, "this build has no sql output (PostgreSQL and SQLite; on "
			"its way)");
		return -1;
	}
	fprintf(c->o, "    plugin: sql\n");
	if (!opt(c, u, "sql", "driver", pg ? "postgresql" : "sqlite"))
		return -1;
	if (pg && convert_ulogd_ent(u, "connstring")) {
		opt(c, u, "sql", "dsn", "%s", convert_ulogd_yq(c, str(u, "connstring", "")));
	} else if (pg) {
		pq_pair(dsn, sizeof(dsn), "host", str(u, "host", NULL));
		pq_pair(dsn, sizeof(dsn), "port", str(u, "port", NULL));
		pq_pair(dsn, sizeof(dsn), "dbname", str(u, "db", NULL));
		pq_pair(dsn, sizeof(dsn), "user", str(u, "user", NULL));
		pq_pair(dsn, sizeof(dsn), "password", str(u, "pass", NULL));
		opt(c, u, "sql", "dsn", "%s", convert_ulogd_yq(c, dsn));
	} else {
		u->wfile = str(u, "db", "/var/log/ulogd.sqlite3db");
		opt(c, u, "sql", "path", "%s", convert_ulogd_yq(c, u->wfile));
	}
	if (table) {
		snprintf(dsn, sizeof(dsn), "%s%s%s", schema ? schema : "", schema ? "." : "", table);
		opt(c, u, "sql", "table", "%s", convert_ulogd_yq(c, dsn));
	}
	if (u->in_role == R_PKT + 1 || u->in_role == R_FLOW + 1)
		ulogd_columns(c, u, pg, u->in_role == R_FLOW + 1);
	else if (u->in_role == R_ACCT + 1)
		convert_ulogd_note(c, u, u->line, "accounting records into sql's packets columns: give it "
			"a columns map (docs/PLUGINS.md, sql)");
	if (convert_ulogd_ent(u, "procedure"))
		convert_ulogd_note(c, u, line_of(u, "procedure"), "procedure=%s: sluice writes rows into the "
		     "table itself (conf/sql/ has its schema), it calls no procedure",
		     str(u, "procedure", ""));
	if (convert_ulogd_ent(u, "backlog_memcap") || convert_ulogd_ent(u, "ring_buffer_size"))
		convert_ulogd_comment(c, "backlog_memcap/ring_buffer_size: sluice queues on the output's thread");
	return 0;
}

static int conv_none(struct conv *c, struct uinst *u)
{
	const char *why = strcmp(u->p->name, "XML") == 0 ? "sluice writes no XML (json is "
			  "the structured format)" :
			  strcmp(u->p->name, "NACCT") == 0 ? "sluice has no nacct-format output" :
			  "sluice has no Graphite output (/metrics serves its counters)";

	convert_ulogd_notconv(c, u, u->line, "%s", why);
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

/* Keys no sluice option takes, and what sluice does instead (plugin NULL: any). */
static const struct {
	const char *plugin, *key, *why;
} ignored[] = {
	{ "SQLITE3", "buffer", "sluice writes a batch of batch_size rows per transaction" },
	{ NULL, "reconnect", "sluice always reconnects (retry_min, retry_max, max_retries)" },
	{ NULL, "connect_timeout", "sluice's sql option timeout bounds connecting" },
	{ NULL, "backlog_oneshot_requests", "sluice writes its queue in batches (batch_size)" },
	{ "JSON", "host", "ulogd ignores it with mode=file too" },
	{ "JSON", "port", "ulogd ignores it with mode=file too" },
};

const char *convert_ulogd_ignored_why(const struct uinst *u, const char *key)
{
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (strcmp(ignored[i].key, key) == 0 &&
		    (!ignored[i].plugin || strcmp(ignored[i].plugin, u->p->name) == 0))
			return ignored[i].why;
	return NULL;
}

const struct uplug *convert_ulogd_find_plug(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(uplugs) / sizeof(uplugs[0]); i++)
		if (strlen(uplugs[i].name) == len && strncmp(uplugs[i].name, name, len) == 0)
			return &uplugs[i];
	return NULL;
}

bool convert_ulogd_word_in(const char *list, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = list; (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}
