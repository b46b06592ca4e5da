/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <sys/vfs.h>

#include <linux/magic.h>

#include "netns_open.h"

int sl_netns_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct statfs sfs;

	if (fd < 0)
		return -1;
	if (fstatfs(fd, &sfs) < 0 || sfs.f_type != NSFS_MAGIC) {
		close(fd);
		errno = ENOTNAM;
		return -1;
	}
	return fd;
}

struct in_netns {
	int nsfd, bus;
	struct mnl_socket *nl;
	int err;
};

static void *socket_thread(void *arg)
{
	struct in_netns *j = arg;

	/* this thread only: the others stay where they are */
	if (j->nsfd >= 0 && setns(j->nsfd, CLONE_NEWNET) < 0) {
		j->err = errno;
		return NULL;
	}
	j->nl = mnl_socket_open2(j->bus, SOCK_CLOEXEC);
	if (!j->nl) {
		j->err = errno;
		return NULL;
	}
	if (mnl_socket_bind(j->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		j->err = errno;
		mnl_socket_close(j->nl);
		j->nl = NULL;
	}
	return NULL;
}

struct mnl_socket *sl_netns_mnl_socket(int nsfd, int bus)
{
	struct in_netns j = {.nsfd = nsfd, .bus = bus};
	pthread_t t;
	int err;

	if (nsfd < 0) {
		socket_thread(&j);
	} else {
		/* the thread ends with the socket made: its namespace goes with it */
		err = pthread_create(&t, NULL, socket_thread, &j);
		if (err) {
			errno = err;
			return NULL;
		}
		pthread_join(t, NULL);
	}
	errno = j.err;
	return j.nl;
}
