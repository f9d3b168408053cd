// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/worker_dies.c - a server whose worker is killed while the
 * server goes on (run-worker-killed.sh): forks a worker that waits in
 * pause(), writes "PARENT WORKER" to READY (through a rename), reaps the
 * worker once it died of a signal, then waits for the file GO to appear
 * and exits 0 (1 when the worker ended otherwise).
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	char tmp[4096];
	pid_t w;
	FILE *f;
	int st;

	if (argc != 3) {
		fprintf(stderr, "usage: worker_dies READY GO\n");
		return 2;
	}
	w = fork();
	if (w < 0)
		return 1;
	if (w == 0) {
		for (;;)
			pause();
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d %d\n", (int)getpid(), (int)w) < 0 || fclose(f) ||
	    rename(tmp, argv[1]))
		return 1;
	if (waitpid(w, &st, 0) != w || !WIFSIGNALED(st))
		return 1;
	/* the server goes on without its worker, up to 60 s */
	for (int i = 0; i < 3000 && access(argv[2], F_OK); i++)
		nanosleep(&ts, NULL);
	return 0;
}
