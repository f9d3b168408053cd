// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/trust_fds.c - a program that closes every descriptor it does
 * not know and opens files again, as daemons, shells and supervisors do,
 * while threads block where only the watcher sees them (trust-fds.sh).
 *
 * usage: trust_fds SECONDS [THREADS]
 *
 * THREADS (default 50) threads block in a raw pause system call; main
 * loops for SECONDS: close_range(3, ~0U, 0), then six opens of files it
 * made, each checked (fstat: the same inode) until the next round.  It
 * prints "rounds R lost L displaced D" and "fds: N" (the descriptors it
 * sees in /proc/self/fd at the end, its own six and 0-2 only when nothing
 * of another is in its table) and exits 0 only when L and D are 0 and N is
 * 9.  A descriptor lost is one that no longer names the file it opened
 * (closed under it, or replaced); one displaced did not get the number
 * open(2) gives when 3 and up are free (3 for the first, and so on):
 * something else held it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define NFILES 6

/* pause with the instruction itself, so that no wrapper records it: the watcher must look */
static void *pauser(void *arg)
{
	(void)arg;
	for (;;) {
#if defined(__x86_64__)
		long ret;

		__asm__ volatile("syscall" : "=a"(ret) : "a"((long)SYS_pause) : "rcx", "r11", "memory");
#else
		syscall(SYS_pause);
#endif
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/trust_fds.XXXXXX", path[NFILES][64];
	ino_t ino[NFILES];
	int fd[NFILES], nthreads = argc > 2 ? atoi(argv[2]) : 50, nfd = 0;
	unsigned long rounds = 0, lost = 0, displaced = 0;
	double end;
	DIR *d;
	struct dirent *e;

	if (argc < 2) {
		fprintf(stderr, "usage: trust_fds SECONDS [THREADS]\n");
		return 2;
	}
	if (!mkdtemp(dir))
		return 2;
	for (int i = 0; i < NFILES; i++) {
		struct stat st;
		int f;

		snprintf(path[i], sizeof(path[i]), "%s/f%d", dir, i);
		f = open(path[i], O_CREAT | O_WRONLY, 0600);
		if (f < 0 || fstat(f, &st))
			return 2;
		ino[i] = st.st_ino;
		close(f);
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, pauser, NULL))
			return 2;
		pthread_detach(t);
	}
	end = now() + atof(argv[1]);
	while (now() < end) {
		syscall(SYS_close_range, 3U, ~0U, 0U);
		for (int i = 0; i < NFILES; i++) {
			fd[i] = open(path[i], O_RDONLY | O_CLOEXEC);
			if (fd[i] != 3 + i)
				displaced++;
		}
		/* hold them a moment, checking: a sweep of the watcher runs meanwhile */
		for (int k = 0; k < 200; k++) {
			for (int i = 0; i < NFILES; i++) {
				struct stat st;

				if (fd[i] < 0)
					continue;
				if (fstat(fd[i], &st) || st.st_ino != ino[i]) {
					lost++;
					fd[i] = -1;
				}
			}
		}
		rounds++;
	}
	/* what the program's table holds now: 0-2 and its six, nothing else */
	d = opendir("/proc/self/fd");
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			nfd++;
	if (d)
		closedir(d);
	printf("rounds %lu lost %lu displaced %lu\nfds: %d\n", rounds, lost, displaced, nfd);
	for (int i = 0; i < NFILES; i++)
		unlink(path[i]);
	rmdir(dir);
	return lost || displaced || nfd != 3 + NFILES;
}
