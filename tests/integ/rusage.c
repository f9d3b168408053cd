// SPDX-License-Identifier: Apache-2.0
/*
 * Description: run a command and say what it cost: its wall time and its
 * peak resident set (ru_maxrss from wait4, in KiB), for the tests and the
 * benchmarks that hold a reader to a memory budget.  ulimit -v would be
 * the wrong measure (address space, not memory; and the sanitizers reserve
 * terabytes of it); GNU time is not installed everywhere.
 *
 *	rusage OUT CMD [ARG...]
 *
 * Writes "WALL_MS MAXRSS_KIB" to OUT and exits with the command's status
 * (128 + the signal that ended it; 127 when it could not be run).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	double t0, t1;
	int status;
	pid_t pid;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: rusage OUT CMD [ARG...]\n");
		return 2;
	}
	t0 = now_ms();
	pid = fork();
	if (pid < 0) {
		perror("rusage: fork");
		return 127;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "rusage: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("rusage: wait4");
			return 127;
		}
	}
	t1 = now_ms();
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%.0f %ld\n", t1 - t0, ru.ru_maxrss) < 0 || fclose(f)) {
		perror("rusage: OUT");
		return 127;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
