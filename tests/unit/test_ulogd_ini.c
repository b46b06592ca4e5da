/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ulogd.conf reader: sections and keys with their lines and columns,
 * bare and quoted values, comments after values, CRLF, blank and comment
 * lines; each syntax error at its line and column; and the converter on
 * a small file with a fixed set of plugins (which it asks through its
 * caps callback, so an option the "build" lacks becomes a comment).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_ulogd.h"
#include "ulogd_ini.h"
#include "check.h"

static int read_str(struct ulogd_ini *ini, const char *s)
{
	return ulogd_ini_read_mem(ini, s, strlen(s));
}

static void good(void)
{
	struct ulogd_ini ini;
	const struct ini_section *s;
	const struct ini_entry *e;

	CHECK(read_str(&ini, "# top\n[global]\r\nstack=a:NFLOG,b:PCAP\n\n  [a]  # c\n"
			     "group = 5 # the group\n\tfile=\"/var/log/x y.log\"  \nempty=\n"
			     "q=\"a#b\"#c\n") == 0, "%s", ini.err);
	CHECK_EQ_U(ini.n, 2);
	s = ulogd_ini_section(&ini, "global");
	CHECK(s && s->line == 2 && s->n == 1);
	e = ulogd_ini_get(s, "stack");
	CHECK(e && strcmp(e->value, "a:NFLOG,b:PCAP") == 0 && e->line == 3 && e->col == 1 &&
	      e->vcol == 7);
	s = ulogd_ini_section(&ini, "a");
	CHECK(s && s->line == 5 && s->n == 4);
	e = ulogd_ini_get(s, "group");
	CHECK(e && strcmp(e->value, "5") == 0 && e->line == 6 && e->vcol == 9);
	e = ulogd_ini_get(s, "file");
	CHECK(e && strcmp(e->value, "/var/log/x y.log") == 0 && e->col == 2 && e->vcol == 8);
	CHECK_STREQ(ulogd_ini_get(s, "empty")->value, "");
	CHECK_STREQ(ulogd_ini_get(s, "q")->value, "a#b");
	CHECK(ulogd_ini_get(s, "nope") == NULL && ulogd_ini_section(&ini, "b") == NULL);
	ulogd_ini_free(&ini);
	CHECK(read_str(&ini, "") == 0 && ini.n == 0);
	ulogd_ini_free(&ini);
}

static void bad(const char *text, unsigned line, unsigned col, const char *msg)
{
	struct ulogd_ini ini;

	CHECK(ulogd_ini_read_mem(&ini, text, strlen(text)) == -1, "accepted: %s", text);
	CHECK(ini.err_line == line && ini.err_col == col && strstr(ini.err, msg),
	      "%s: got %u:%u %s, expected %u:%u %s", text, ini.err_line, ini.err_col, ini.err,
	      line, col, msg);
	ulogd_ini_free(&ini);
}

static void errors(void)
{
	char longline[ULOGD_INI_MAX_LINE + 20];

	bad("[global]\n[log1\n", 2, 6, "expected ']'");
	bad("[]\n", 1, 2, "expected a section name");
	bad("[a b]\n", 1, 3, "unexpected ' ' in a section name");
	bad("[a] x\n", 1, 5, "unexpected 'x' after the section name");
	bad("[a]\n[b]\n[a]\n", 3, 2, "section [a] again (first on line 1)");
	bad("group=1\n", 1, 1, "before the first [section]");
	bad("[a]\ngroup 1\n", 2, 7, "expected '=' after the key 'group'");
	bad("[a]\n=1\n", 2, 1, "expected a key");
	bad("[a]\nfile=\"x\n", 2, 6, "string not terminated");
	bad("[a]\nfile=\"x\" y\n", 2, 10, "unexpected 'y' after the value");
	bad("[a]\nk=v\001\n", 2, 4, "byte 0x01");
	bad("[a]\nk=\xff\n", 2, 3, "byte 0xff");
	/* what libyaml would refuse or read differently: overlong, surrogate, past U+10FFFF, NEL, LS */
	bad("[a]\nk=\xc0\xaf\n", 2, 3, "byte 0xc0");
	bad("[a]\nk=\xed\xa0\x80\n", 2, 3, "byte 0xed");
	bad("[a]\nk=\xf4\x90\x80\x80\n", 2, 3, "byte 0xf4");
	bad("[a]\nk=x\xc2\x85\n", 2, 4, "byte 0xc2");
	bad("[a]\n# \xe2\x80\xa8\n", 2, 3, "byte 0xe2");
	{
		struct ulogd_ini ini;

		CHECK(read_str(&ini, "[a]\nk=\"caf\xc3\xa9 \xf0\x9f\x90\x8d\"\n") == 0, "%s", ini.err);
		ulogd_ini_free(&ini);
	}
	{
		static const char nul[] = "[a]\nk=v\0w\n";
		struct ulogd_ini ini;

		CHECK(ulogd_ini_read_mem(&ini, nul, sizeof(nul) - 1) == -1 && ini.err_line == 2 &&
		      ini.err_col == 4 && strstr(ini.err, "NUL byte"), "%u:%u %s", ini.err_line,
		      ini.err_col, ini.err);
		ulogd_ini_free(&ini);
	}
	memset(longline, 'k', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	bad(longline, 1, ULOGD_INI_MAX_LINE + 1, "line longer than");
}

/* A build with nflog (group only) and file (file and sync): nothing else. */
static int caps_has(void *ctx, const char *plugin, const char *option, const char *choice)
{
	(void)ctx;
	(void)choice;
	if (strcmp(plugin, "nflog") == 0)
		return !option || strcmp(option, "group") == 0;
	if (strcmp(plugin, "file") == 0)
		return !option || strcmp(option, "file") == 0 || strcmp(option, "sync") == 0;
	return strcmp(plugin, "decode") == 0 || strcmp(plugin, "logline") == 0;
}

static char *convert(const char *text, struct convert_result *res, char **diag, int *ret)
{
	struct convert_caps caps = { .has = caps_has };
	struct ulogd_ini ini;
	char *out = NULL;
	size_t olen = 0, dlen = 0;
	FILE *o = open_memstream(&out, &olen), *d = open_memstream(diag, &dlen);

	CHECK(read_str(&ini, text) == 0, "%s", ini.err);
	*ret = convert_ulogd(&ini, "t.conf", &caps, o, d, res);
	fclose(o);
	fclose(d);
	ulogd_ini_free(&ini);
	return out;
}

static void converter(void)
{
	struct convert_result res;
	char *diag, *out;
	int ret;

	out = convert("[global]\nstack=l:NFLOG,b:BASE,p:PRINTPKT,e:LOGEMU\nstack=l:NFLOG,x:XML\n"
		      "[l]\ngroup=9\nnetlink_qthreshold=4\n[e]\nfile=\"/v/a \\b.log\"\n"
		      "sync=1\n[x]\ndirectory=/tmp\n", &res, &diag, &ret);
	CHECK(ret == 0 && res.errors == 0, "%s", diag);
	CHECK(strstr(out, "  l:\n    plugin: nflog\n    group: 9\n"), "%s", out);
	/* the build's nflog has no qthreshold: a comment and a warning, not an option */
	CHECK(strstr(out, "    # not converted: this build's nflog has no option 'qthreshold'\n"),
	      "%s", out);
	CHECK(strstr(diag, "t.conf:4: warning: [l] (NFLOG): not converted: this build's nflog"),
	      "%s", diag);
	/* ulogd has no escapes: a backslash is text, which YAML escapes */
	CHECK(strstr(out, "    file: \"/v/a \\\\b.log\"\n    sync: true\n"), "%s", out);
	CHECK(strstr(out, "  l_e: [l, decode, logline, e]\n"), "%s", out);
	CHECK(strstr(out, "  # not converted: [x] (XML) is not converted\n"), "%s", out);
	/* qthreshold, LOGEMU's line header, XML */
	CHECK_EQ_U(res.not_converted, 3);
	free(out);
	free(diag);

	out = convert("[global]\nstack=l:NFLOG,e:LOGEMU\n[l]\ngrup=1\n", &res, &diag, &ret);
	CHECK(ret == -1 && res.errors == 2, "%s", diag);
	CHECK(strstr(diag, "t.conf:4:1: error: unknown key 'grup' in [l]"), "%s", diag);
	CHECK(strstr(diag, "t.conf:2:15: error: no [e] section for e:LOGEMU"), "%s", diag);
	CHECK(!out || !*out, "YAML written after errors: %s", out);
	free(out);
	free(diag);

	out = convert("[global]\nstack=l:NFLOG,e:LOGEMU\n[l]\ngroup=1\ngroup=2\n[e]\nfile=x\n", &res,
		      &diag, &ret);
	CHECK(ret == -1 && strstr(diag, "t.conf:5:1: error: 'group' set twice in [l] (first on "
				  "line 4)"), "%s", diag);
	free(out);
	free(diag);
}

int main(void)
{
	good();
	errors();
	converter();
	return check_summary("test_ulogd_ini");
}
