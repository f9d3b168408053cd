// SPDX-License-Identifier: Apache-2.0
/*
 * Description: a program that allocates as fast as it can from its first
 * instruction, for the tests of loss in followed children (follow-lossless).
 *
 *   burstprog N        N malloc + free pairs (sizes 16..79), nothing else
 *   burstprog fork N   forks; the child makes the N pairs and exits, the
 *                      parent waits for it and makes none
 *
 * The program knows its count: a trace of it holds exactly N allocations
 * (plus none: it neither prints nor uses stdio before it is done).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void burst(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = malloc(16 + (size_t)(i & 63));

		/* The compiler may not drop the pair. */
		__asm__ __volatile__("" : : "r"(p) : "memory");
		free(p);
	}
}

int main(int argc, char **argv)
{
	pid_t pid;
	int status;

	if (argc == 2) {
		burst(atol(argv[1]));
		return 0;
	}
	if (argc != 3 || strcmp(argv[1], "fork"))
		return 2;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		burst(atol(argv[2]));
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return 0;
}
