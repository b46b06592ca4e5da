/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon.metrics: the listen address as checked by the configuration, and
 * the Prometheus text of a hand-built graph (label values escaped, plugin
 * counters of several instances grouped into one family each, the values).
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "check.h"
#include "config.h"
#include "host.h"
#include "metrics.h"

static unsigned parse(const char *metrics, struct metrics_config *out)
{
	char text[512];
	struct config c;
	struct diag d = {.file = "test.yaml"};

	snprintf(text, sizeof(text), "daemon:\n  metrics: %s\nstacks:\n  s: [a, b]\n", metrics);
	config_load_string(&c, "test.yaml", text, &d);
	if (out)
		*out = c.metrics;
	config_free(&c);
	return d.errors;
}

static void test_config(void)
{
	struct metrics_config mc;

	CHECK_EQ_U(parse("{}", &mc), 0);
	CHECK(mc.enabled);
	CHECK_STREQ(mc.listen, METRICS_DEFAULT_LISTEN);
	CHECK_EQ_U(ntohs(((struct sockaddr_in *)&mc.addr)->sin_port), 9560);
	CHECK_EQ_U(parse("{ listen: \"[::1]:1\" }", &mc), 0);
	CHECK_EQ_U(mc.addr.ss_family, AF_INET6);
	CHECK_EQ_U(ntohs(((struct sockaddr_in6 *)&mc.addr)->sin6_port), 1);
	CHECK_EQ_U(parse("{ listen: \"127.1.2.3:65535\" }", NULL), 0);
	CHECK_EQ_U(parse("{ listen: \"[::ffff:127.0.0.1]:80\" }", NULL), 0);
	/* not loopback */
	CHECK_EQ_U(parse("{ listen: \"0.0.0.0:9560\" }", NULL), 1);
	CHECK_EQ_U(parse("{ listen: \"[::]:9560\" }", NULL), 1);
	CHECK_EQ_U(parse("{ listen: \"[::ffff:10.0.0.1]:9560\" }", NULL), 1);
	CHECK_EQ_U(parse("{ listen: \"[::]:9560\", allow_remote: true }", &mc), 0);
	CHECK(mc.allow_remote);
	/* not an ADDRESS:PORT */
	static const char *const bad[] = {
		"{ listen: \"127.0.0.1\" }", "{ listen: \"127.0.0.1:0\" }",
		"{ listen: \"127.0.0.1:65536\" }", "{ listen: \"::1:9560\" }",
		"{ listen: \"[::1]9560\" }", "{ listen: \"localhost:9560\" }",
		"{ listen: \"127.0.0.1:9560x\" }", "{ listen: [a] }",
		"{ allow_remote: 2 }", "{ lisen: \"127.0.0.1:1\" }", "5",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ_U(parse(bad[i], NULL), 1);
	/* an empty metrics: serves on the default address */
	CHECK_EQ_U(parse("~", &mc), 0);
	CHECK(mc.enabled);
	CHECK_STREQ(mc.listen, METRICS_DEFAULT_LISTEN);
}

static const char *line_after(const char *text, const char *prefix)
{
	const char *p = strstr(text, prefix);

	return p ? p + strlen(prefix) : NULL;
}

static unsigned count(const char *text, const char *needle)
{
	unsigned n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_text(void)
{
	struct sl_plugin odd = {.kind = SL_KIND_OUTPUT, .name = "we\"ird\\x\n"};
	struct sl_plugin plain = {.kind = SL_KIND_FILTER, .name = "p"};
	struct named_counter c1[] = {{"b", 7}, {"a", 1}}, c2[] = {{"a", 2}}, c3[] = {{"c-1", 5}};
	const char *stacks1[] = {"s1", "s2"}, *stacks2[] = {"s2"};
	struct sl_instance i1 = {.name = "f1", .desc = &plain, .stacks = stacks1, .nstacks = 2,
				 .in = 10, .out = 8, .dropped = 2, .counters = c1, .ncounters = 2};
	struct sl_instance i2 = {.name = "f2", .desc = &odd, .stacks = stacks2, .nstacks = 1,
				 .in = 3, .out = 1, .dropped = 1, .errors = 1, .counters = c3,
				 .ncounters = 1};
	struct sl_instance i3 = {.name = "f3", .desc = &plain, .stacks = stacks2, .nstacks = 1,
				 .counters = c2, .ncounters = 1, .bad_field_writes = 4};
	struct sl_instance *all[] = {&i1, &i2, &i3};
	struct graph g = {.all = all, .nall = 3};
	struct runtime rt = {.graph = &g};
	struct metrics_text t = {0};
	const char *p, *want;

	CHECK_EQ_I(metrics_text_render(&rt, 1700000000, 2, 1, &t), 0);
	CHECK_EQ_U(strlen(t.buf), t.len);
	CHECK(strstr(t.buf, "sluice_records_total{instance=\"f1\",plugin=\"p\",stack=\"s1,s2\","
			    "direction=\"in\"} 10\n"), "%s", t.buf);
	CHECK(strstr(t.buf, "sluice_records_total{instance=\"f2\",plugin=\"we\\\"ird\\\\x\\n\","
			    "stack=\"s2\",direction=\"out\"} 1\n"));
	CHECK(strstr(t.buf, "sluice_dropped_total{instance=\"f1\",plugin=\"p\",reason=\"filtered\"} 2\n"));
	CHECK(strstr(t.buf, "reason=\"output\"} 1\n"));
	CHECK(!strstr(t.buf, "queue_full"), "no queue, no queue_full");
	CHECK(strstr(t.buf, "sluice_errors_total{instance=\"f2\","));
	CHECK(strstr(t.buf, "sluice_reloads_total{result=\"ok\"} 2\nsluice_reloads_total{result=\"failed\"} 1\n"));
	CHECK(strstr(t.buf, "sluice_start_time_seconds 1700000000\n"));
	/* one family for p's counter a, f1 then f3, right after its TYPE line */
	CHECK_EQ_U(count(t.buf, "# TYPE sluice_p_a_total counter\n"), 1);
	p = line_after(t.buf, "# TYPE sluice_p_a_total counter\n");
	want = "sluice_p_a_total{instance=\"f1\"} 1\nsluice_p_a_total{instance=\"f3\"} 2\n";
	CHECK(p && strncmp(p, want, strlen(want)) == 0, "%s", p ? p : "(none)");
	CHECK(strstr(t.buf, "sluice_p_b_total{instance=\"f1\"} 7\n"));
	/* the core's bad_field_writes joins the plugin's counters once non-zero (f3, not f1) */
	CHECK(strstr(t.buf, "# TYPE sluice_p_bad_field_writes_total counter\n"
			    "sluice_p_bad_field_writes_total{instance=\"f3\"} 4\n"), "%s", t.buf);
	CHECK_EQ_U(count(t.buf, "bad_field_writes_total{"), 1);
	/* a name is [a-zA-Z0-9_]: the rest becomes '_' */
	CHECK(strstr(t.buf, "# TYPE sluice_we_ird_x__c_1_total counter\n"
			    "sluice_we_ird_x__c_1_total{instance=\"f2\"} 5\n"));
	CHECK_EQ_U(count(t.buf, "# HELP "), count(t.buf, "# TYPE "));
	CHECK(strstr(t.buf, "# HELP sluice_we_ird_x__c_1_total The we\"ird\\\\x\\n plugin's counter c-1.\n"));
	/* a second render reuses the buffers and says the same */
	{
		size_t len = t.len;

		CHECK_EQ_I(metrics_text_render(&rt, 1700000000, 2, 1, &t), 0);
		CHECK_EQ_U(t.len, len);
	}
	metrics_text_free(&t);
}

int main(void)
{
	test_config();
	test_text();
	return check_summary("test_metrics");
}
