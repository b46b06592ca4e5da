/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Secrets in option values (core/src/base/secret.c): what is shown of a secret
 * option, of a secret mapping's entries, of passwords inside URIs and
 * libpq connection strings; the scrub of messages; a refused value of a
 * secret option; and that the built plugins mark their secrets.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "secret.h"
#include "check.h"

static const char *show(const char *v, bool whole)
{
	static char buf[512];

	return secret_show(v, whole, buf, sizeof(buf));
}

static void shown(void)
{
	CHECK_STREQ(show("hunter2", true), SECRET_MASK);
	CHECK_STREQ(show("", true), SECRET_MASK);
	/* not secret, nothing embedded: as written */
	CHECK_STREQ(show("http://127.0.0.1:8123", false), "http://127.0.0.1:8123");
	CHECK_STREQ(show("host=db user=bob dbname=x", false), "host=db user=bob dbname=x");
	CHECK_STREQ(show("c2VjcmV0=", false), "c2VjcmV0=");
	/* a URI's user-info password; the user stays */
	CHECK_STREQ(show("http://bob:pw1@db:8123/x", false), "http://bob:********@db:8123/x");
	CHECK_STREQ(show("https://bob@db", false), "https://bob@db");
	CHECK_STREQ(show("postgresql://u:p%40ss@h1,h2/db", false), "postgresql://u:********@h1,h2/db");
	/* an '@' in the password, unencoded: up to the last one */
	CHECK_STREQ(show("postgresql://u:a@b@h/db", false), "postgresql://u:********@h/db");
	/* a query keyword */
	CHECK_STREQ(show("postgresql://h/db?user=u&password=pw2", false),
		    "postgresql://h/db?user=u&password=********");
	CHECK_STREQ(show("postgresql://u:x@h/db?sslpassword=y", false),
		    "postgresql://u:********@h/db?sslpassword=********");
	/* libpq's connection string: bare, spaced, quoted with escapes, unterminated */
	CHECK_STREQ(show("host=db password=pw3 dbname=x", false),
		    "host=db password=******** dbname=x");
	CHECK_STREQ(show("host=db password = pw3", false), "host=db password = ********");
	CHECK_STREQ(show("password='a \\' b' host=db", false), "password=******** host=db");
	CHECK_STREQ(show("host=db password='open end", false), "host=db password=********");
	CHECK_STREQ(show("host=db sslpassword=k client_secret=s", false),
		    "host=db sslpassword=******** client_secret=********");
	/* a longer word that only ends in password is still one */
	CHECK_STREQ(show("nopassword=x", false), "nopassword=********");
	/* more passwords than spans: the whole value */
	{
		char many[1024] = "", buf[1024 + SECRET_SHOW_EXTRA];
		size_t used = 0;

		for (int i = 0; i < 20; i++)
			used += (size_t)snprintf(many + used, sizeof(many) - used, "password=p%d ", i);
		CHECK_STREQ(secret_show(many, false, buf, sizeof(buf)), SECRET_MASK);
		many[strlen("password=p0 ") * 16] = 0;	/* 16 fit */
		CHECK(strstr(secret_show(many, false, buf, sizeof(buf)), "p15") == NULL, "%s", buf);
		CHECK(strstr(buf, "password=******** password=") == buf, "%s", buf);
	}
	/* truncation keeps the string terminated */
	{
		char small[12];

		secret_show("http://bob:pw1@db:8123/x", false, small, sizeof(small));
		CHECK_STREQ(small, "http://bob:");
	}
}

static void names(void)
{
	static const char *const yes[] = {"sasl.password", "ssl.key.password", "ssl.keystore.password",
		"ssl.key.pem", "sasl.oauthbearer.client.secret", "sasl.oauthbearer.config",
		"SASL.PASSWORD", "api_token", "credentials", NULL};
	static const char *const no[] = {"client.id", "security.protocol", "sasl.username",
		"sasl.mechanisms", "bootstrap.servers", "acks", NULL};

	for (int i = 0; yes[i]; i++)
		CHECK(secret_name(yes[i]), "%s", yes[i]);
	for (int i = 0; no[i]; i++)
		CHECK(!secret_name(no[i]), "%s", no[i]);
}

struct cfg {
	const char *password;
	const char *url;
	const char *plain;
	struct sl_strlist props;
	int64_t pin;
};

static const struct sl_option opts[] = {
	SL_OPT_STR("password", struct cfg, password, SL_SECRET(NULL), "a password"),
	SL_OPT_STR("url", struct cfg, url, NULL, "a URI"),
	SL_OPT_STR("plain", struct cfg, plain, NULL, "nothing secret"),
	SL_OPT_SECRET_MAP("props", struct cfg, props, "library properties"),
	SL_OPT_INT("pin", struct cfg, pin, SL_SECRET(NULL), 0, 9999, "a secret number"),
	SL_OPT_END
};

static void option_rows(void)
{
	char buf[256];

	CHECK(opts[0].flags == SL_OPT_SECRET);
	CHECK(opts[3].flags == (SL_OPT_MAP_ENTRIES | SL_OPT_SECRET));
	CHECK(SL_OPT_SECRET == 1u << 3);
	CHECK_STREQ(secret_show_option(&opts[0], NULL, "pw", buf, sizeof(buf)), SECRET_MASK);
	CHECK_STREQ(secret_show_option(&opts[1], NULL, "http://u:pw@h", buf, sizeof(buf)),
		    "http://u:********@h");
	CHECK_STREQ(secret_show_option(&opts[3], "sasl.password", "pw", buf, sizeof(buf)),
		    SECRET_MASK);
	CHECK_STREQ(secret_show_option(&opts[3], "client.id", "me", buf, sizeof(buf)), "me");
	CHECK_STREQ(secret_show_option(NULL, NULL, "host=h password=pw", buf, sizeof(buf)),
		    "host=h password=********");
}

static void scrub(void)
{
	static const char *const props[] = {"client.id", "fw1", "sasl.password", "Kafka-PW",
					    "ssl.key.pem", "-----BEGIN KEY-----"};
	struct cfg c = {
		.password = "CH-pass", .url = "postgresql://u:p%40ss@[::1/db", .plain = "fw1-x",
		.props = {6, props},
	};
	char msg[512];

	snprintf(msg, sizeof(msg), "auth failed for CH-pass; uri \"postgresql://u:p%%40ss@[::1/db\"; "
		 "decoded p@ss; kafka Kafka-PW and -----BEGIN KEY-----; client fw1");
	secret_scrub(opts, &c, msg, sizeof(msg));
	CHECK_STREQ(msg, "auth failed for ********; uri \"postgresql://u:********@[::1/db\"; "
		    "decoded ********; kafka ******** and ********; client fw1");
	/* many secret entries: every one scrubbed */
	{
		static char names[100][16], values[100][16];
		const char *items[200];
		struct cfg m = {.props = {200, items}};
		char all[2048] = "";
		size_t used = 0;

		for (int i = 0; i < 100; i++) {
			snprintf(names[i], sizeof(names[i]), "x%d.password", i);
			snprintf(values[i], sizeof(values[i]), "V%03d-secret", i);
			items[2 * i] = names[i];
			items[2 * i + 1] = values[i];
			used += (size_t)snprintf(all + used, sizeof(all) - used, "%s ", values[i]);
		}
		secret_scrub(opts, &m, all, sizeof(all));
		CHECK(strstr(all, "-secret") == NULL, "%s", all);
	}
	/* the message grows: cut, terminated */
	snprintf(msg, 12, "CH-passCH-p");
	secret_scrub(opts, &c, msg, 12);
	CHECK_STREQ(msg, "********CH-");
	/* nothing configured: nothing changes */
	memset(&c, 0, sizeof(c));
	snprintf(msg, sizeof(msg), "CH-pass");
	secret_scrub(opts, &c, msg, sizeof(msg));
	CHECK_STREQ(msg, "CH-pass");
}

static void refused_value(void)
{
	struct cfg c = {0};
	char err[256];

	CHECK(options_store_scalar(&opts[4], "12x34", &c, err, sizeof(err)) == -1);
	CHECK(strstr(err, "option 'pin'") != NULL, "%s", err);
	CHECK(strstr(err, "12x34") == NULL, "the value is in: %s", err);
	/* a value that is not secret is still quoted back */
	CHECK(options_store_scalar(&(struct sl_option)SL_OPT_INT("n", struct cfg, pin, NULL, 0, 9, "n"),
			       "12x34", &c, err, sizeof(err)) == -1);
	CHECK(strstr(err, "got '12x34'") != NULL, "%s", err);
	/* but a password inside it is not */
	CHECK(options_store_scalar(&(struct sl_option)SL_OPT_INT("n", struct cfg, pin, NULL, 0, 9, "n"),
			       "http://u:pw9@h", &c, err, sizeof(err)) == -1);
	CHECK(strstr(err, "got 'http://u:********@h'") != NULL, "%s", err);
}

/* The flag as the built plugins carry it. */
static void plugin_flag(const char *plugin, const char *option, unsigned want)
{
	char path[4096];
	const struct sl_plugin *(*entry)(void);
	const struct sl_plugin *d;
	bool found = false;
	void *h;

	snprintf(path, sizeof(path), "%s/plugins/%s.so", TEST_BUILD_DIR, plugin);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("%s not built: its flags not checked\n", plugin);
		return;
	}
	*(void **)&entry = dlsym(h, SL_PLUGIN_ENTRY_SYMBOL);
	CHECK(entry != NULL, "%s", plugin);
	d = entry ? entry() : NULL;
	for (const struct sl_option *o = d ? d->options : NULL; o && o->name; o++)
		if (strcmp(o->name, option) == 0) {
			found = true;
			CHECK((o->flags & (SL_OPT_SECRET | SL_OPT_MAP_ENTRIES)) == want,
			      "%s %s: flags %#x", plugin, option, o->flags);
		}
	CHECK(found, "%s has no option %s", plugin, option);
	dlclose(h);
}

int main(void)
{
	shown();
	names();
	option_rows();
	scrub();
	refused_value();
	plugin_flag("clickhouse", "password", SL_OPT_SECRET);
	plugin_flag("clickhouse", "url", 0);
	plugin_flag("kafka", "properties", SL_OPT_SECRET | SL_OPT_MAP_ENTRIES);
	plugin_flag("sql", "dsn", 0);
	return check_summary("test_secret");
}
