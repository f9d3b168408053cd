// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/trust_sandbox.c - a program in a sandbox that does not list
 * process_vm_readv (tests/integ/trust-sandbox.sh): under a seccomp filter
 * that kills the process at that call, as systemd's SystemCallFilter=
 * without @debug and most hand-made filters do, a second thread blocks in
 * flock(2), where no wrapper sees it (the watcher copies its stack), until
 * the file GO exists; then the program allocates, frees and exits through
 * exit(3) (the exit pagemap snapshot of rip run --mem zero-tests its
 * pages).
 *
 * trust_sandbox LOCK GO: prints "ready PID" once the thread exists, then
 * "done"; exits 0, 2 on a setup failure, 77 where no filter can be
 * installed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"

static const char *lock_path;

static void *locker(void *arg)
{
	int fd = open(lock_path, O_RDWR | O_CLOEXEC);

	(void)arg;
	if (fd < 0 || flock(fd, LOCK_EX)) /* blocks until main unlocks */
		return (void *)1;
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 10000000 };
	pthread_t th;
	void *ret;
	char *p[64];
	int fd;

	if (argc != 3)
		return 2;
	lock_path = argv[1];
	fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX))
		return 2;
	if (sandbox_kill_vm_readv())
		return 77;
	/* The filter first: the watcher, started by this first pthread_create, inherits it. */
	if (pthread_create(&th, NULL, locker, NULL))
		return 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; access(argv[2], F_OK); i++) {
		if (i > 6000)
			return 2; /* a minute */
		nanosleep(&nap, NULL);
	}
	if (flock(fd, LOCK_UN) || pthread_join(th, &ret) || ret)
		return 2;
	for (int i = 0; i < 64; i++) {
		p[i] = malloc(4096 * (size_t)(i + 1));
		if (!p[i])
			return 2;
		memset(p[i], i & 1 ? 0 : 7, 4096 * (size_t)(i + 1));
	}
	for (int i = 0; i < 64; i += 2)
		free(p[i]);
	puts("done");
	return 0;
}
