// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the helper of run-outlive.sh: a program that starts a daemon
 * the way init scripts do, then exits.  It forks; the child starts a new
 * session and forks again, and the grandchild (the daemon) writes its pid
 * to READY (written whole: a temporary name, then renamed) and waits in
 * pause() until it is killed.  The child exits at once, the program once
 * READY exists, so that the daemon outlives it, and rip run, from its
 * first moment.  Never calls librip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	struct stat st;
	pid_t child;

	if (argc != 2) {
		fprintf(stderr, "usage: daemon_prog READY\n");
		return 2;
	}
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		pid_t d;

		setsid();
		d = fork();
		if (d == 0) {
			char tmp[4096];
			FILE *f;

			snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
			f = fopen(tmp, "w");
			if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) ||
			    rename(tmp, argv[1]))
				_exit(1);
			for (;;)
				pause();
		}
		_exit(d < 0);
	}
	if (waitpid(child, NULL, 0) != child)
		return 1;
	for (int i = 0; i < 6000 && stat(argv[1], &st); i++)
		nanosleep(&ts, NULL);
	return 0;
}
