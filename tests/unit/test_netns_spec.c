/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * netns_spec: which `netns:` values are names, paths and globs, which are
 * refused, the path each stands for, and the label records carry.
 */
#include <string.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <errno.h>

#include "check.h"
#include "netns_open.h"
#include "netns_spec.h"

static void kind(const char *spec, int want)
{
	const char *why = NULL;

	CHECK_EQ_I(sl_netns_spec_check(spec, &why), want);
	if (want < 0)
		CHECK(why && *why, "no reason for %s", spec);
}

static void path(const char *spec, const char *want)
{
	char buf[4096];

	CHECK_EQ_I(sl_netns_spec_path(spec, buf, sizeof(buf)), 0);
	CHECK_STREQ(buf, want);
}

static void label(const char *p, const char *want)
{
	const char *l;
	size_t n = sl_netns_label(p, &l);

	CHECK_EQ_U(n, strlen(want));
	CHECK(!strncmp(l, want, n), "label of %s", p);
}

/* sl_netns_open(): only a namespace file is taken; a FIFO planted under the name does not block. */
static void open_planted(void)
{
	char dir[] = "/tmp/sluice-netns-open.XXXXXX", p[64];
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(p, sizeof(p), "%s/fifo", dir);
	CHECK_EQ_I(mkfifo(p, 0600), 0);
	errno = 0;
	CHECK_EQ_I(sl_netns_open(p), -1);
	CHECK_EQ_I(errno, ENOTNAM);
	unlink(p);
	snprintf(p, sizeof(p), "%s/file", dir);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	close(fd);
	errno = 0;
	CHECK_EQ_I(sl_netns_open(p), -1);
	CHECK_EQ_I(errno, ENOTNAM);
	unlink(p);
	rmdir(dir);
	fd = sl_netns_open("/proc/self/ns/net");	/* our own namespace: anyone may open it */
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	char longname[5000];

	open_planted();

	kind("blue", SL_NETNS_NAME);
	kind("tenant.a-1_x", SL_NETNS_NAME);
	kind("/proc/1/ns/net", SL_NETNS_PATH);
	kind("/var/run/docker/netns/0123abcd", SL_NETNS_PATH);
	kind("/run/netns/tenant-*", SL_NETNS_GLOB);
	kind("tenant-?", SL_NETNS_GLOB);
	kind("/var/run/docker/netns/[0-9a-f]*", SL_NETNS_GLOB);
	kind("", -1);
	kind("a/b", -1);		/* relative with a slash */
	kind(".", -1);
	kind("..", -1);
	kind("/run/netns/", -1);
	kind("/run/netns/..", -1);
	kind("/run/*/x", -1);	/* a pattern before the last component */
	kind("bad\nname", -1);
	kind("bad\x7fname", -1);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	kind(longname, -1);

	path("blue", "/run/netns/blue");
	path("tenant-*", "/run/netns/tenant-*");
	path("/proc/42/ns/net", "/proc/42/ns/net");
	{
		char small[8];

		CHECK_EQ_I(sl_netns_spec_path("blue-and-more", small, sizeof(small)), -1);
	}

	label("/run/netns/blue", "blue");
	label("/var/run/docker/netns/0123abcd", "0123abcd");
	label("/proc/4242/ns/net", "4242");
	label("/proc/self/ns/net", "self");
	label("/proc/4242/ns/mnt", "mnt");	/* not a net link: its last component */
	label("/proc//ns/net", "net");		/* no PID */
	return check_summary("test_netns_spec");
}
