// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the helper of run-child-ends.sh: a
 * server's children ending each way but exit().  Child A calls _exit(3)
 * (as a shell's subshell or a worker does); a vfork child calls _exit(0)
 * at once, in the parent's memory; child B writes "PARENT A B" to READY
 * (written whole: a temporary name, then renamed) and waits in pause()
 * until the test kills it.  The parent then ends by SIGKILL of its own, so
 * that its file must still say it died: the vfork child's _exit is not
 * the parent's.  Never calls librip.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	char tmp[4096];
	pid_t a, v, b;
	FILE *f;
	int st;

	if (argc != 2) {
		fprintf(stderr, "usage: child_ends READY\n");
		return 2;
	}
	a = fork();
	if (a < 0)
		return 1;
	if (a == 0) {
		nanosleep(&ts, NULL);
		_exit(3);
	}
	if (waitpid(a, &st, 0) != a || !WIFEXITED(st) || WEXITSTATUS(st) != 3)
		return 1;
	v = vfork();
	if (v < 0)
		return 1;
	if (v == 0)
		_exit(0);
	if (waitpid(v, &st, 0) != v || !WIFEXITED(st))
		return 1;
	b = fork();
	if (b < 0)
		return 1;
	if (b == 0) {
		for (;;)
			pause();
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d %d %d\n", (int)getpid(), (int)a, (int)b) < 0 || fclose(f) ||
	    rename(tmp, argv[1]))
		return 1;
	if (waitpid(b, &st, 0) != b || !WIFSIGNALED(st))
		return 1;
	kill(getpid(), SIGKILL);
	return 1;
}
