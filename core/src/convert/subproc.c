/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "subproc.h"
#include "yaml_tree.h"

extern char **environ;

/* Read the child's stdout to its end; a listing over YTREE_MAX_FILE is refused anyway. */
static int read_all(int fd, char **out, size_t *outlen)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -1;
	for (;;) {
		ssize_t r;

		if (n + 1 == cap) {
			char *b = cap > YTREE_MAX_FILE ? NULL : realloc(buf, cap * 2);

			if (!b) {
				free(buf);
				return -1;
			}
			buf = b;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*outlen = n;
	return 0;
}

int subproc_run(char *const argv[], char **out, size_t *outlen, int quiet, char *err,
	      size_t errlen)
{
	posix_spawn_file_actions_t fa;
	int pipefd[2] = {-1, -1}, status, rc, rd = 0;
	pid_t pid;

	if (out && pipe2(pipefd, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	if (out)
		posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	else if (quiet)
		posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (out)
		close(pipefd[1]);
	if (rc) {
		if (out)
			close(pipefd[0]);
		snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(rc));
		return -1;
	}
	if (out) {
		rd = read_all(pipefd[0], out, outlen);
		close(pipefd[0]);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(err, errlen, "waitpid %s: %s", argv[0], strerror(errno));
			return -1;
		}
	if (rd) {
		snprintf(err, errlen, "reading the output of %s: out of memory or too long",
			 argv[0]);
		return -1;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
