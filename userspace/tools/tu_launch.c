// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The process launcher of local jobs (tu_launch_local()).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "tu_launch.h"

int tu_launch_local(const char *prog, int world, tu_rank_fn *fn, void *arg)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd, r, status, worst = 0;
	pid_t *pid;

	pid = calloc((size_t)world, sizeof(*pid));
	if (!pid)
		return tu_error(prog, TU_EXIT_RUNTIME, "out of memory");
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, 4 * world + 16) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		worst = tu_error(prog, TU_EXIT_RUNTIME,
				 "cannot listen on 127.0.0.1: %s",
				 strerror(errno));
		if (fd >= 0)
			close(fd);
		free(pid);
		return worst;
	}
	/* what is buffered now must not be written once per child */
	fflush(stdout);
	fflush(stderr);
	for (r = 0; r < world; r++) {
		pid[r] = fork();
		if (pid[r] < 0) {
			worst = tu_error(prog, TU_EXIT_RUNTIME, "fork: %s",
					 strerror(errno));
			while (r--)
				kill(pid[r], SIGKILL);
			close(fd);
			free(pid);
			return worst;
		}
		if (pid[r] == 0) {
			free(pid);
			if (r != 0) {
				close(fd);
				fd = -1;
				/* rank 0 reports the job's error */
				if (!freopen("/dev/null", "w", stderr))
					_exit(TU_EXIT_RUNTIME);
			}
			/* exit(): flush stdout (and let LeakSanitizer look) */
			exit(fn(arg, r, world, ntohs(a.sin_port), fd));
		}
	}
	close(fd);
	for (r = 0; r < world; r++) {
		if (waitpid(pid[r], &status, 0) < 0)
			continue;
		if (WIFSIGNALED(status)) {
			tu_error(prog, TU_EXIT_RUNTIME, "rank %d died of signal %d",
				 r, WTERMSIG(status));
			worst = TU_EXIT_RUNTIME;
		} else if (WEXITSTATUS(status) && !worst) {
			worst = WEXITSTATUS(status);
		}
	}
	free(pid);
	return worst;
}
