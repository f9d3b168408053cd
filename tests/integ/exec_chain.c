/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of tests/integ/run-exec-chain.sh: a forked child
 * that exec's twice, as a shell script run through env does (bash's
 * subshell, then env, then bash).  The child exec's this program "stage1",
 * which waits 300 ms (rip run finishes the child's first file meanwhile and
 * removes it), then exec's it "stage2", which exits at once; the parent
 * waits for the child and prints "done".
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 300000000 };
	pid_t pid;
	int st;

	if (argc > 1 && !strcmp(argv[1], "stage2"))
		return 0;
	if (argc > 1 && !strcmp(argv[1], "stage1")) {
		nanosleep(&ts, NULL);
		execl("/proc/self/exe", "exec_chain", "stage2", (char *)NULL);
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		execl("/proc/self/exe", "exec_chain", "stage1", (char *)NULL);
		_exit(2);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 3;
	printf("done %d\n", (int)pid);
	return 0;
}
