/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/integ/ring_late.c - a process whose ring file is there before its
 * header, for tests/integ/ps-file-coming.sh: it puts an empty file where its
 * ring file goes (RIP_DIR/rip-PID-START.ring, all zeros, as librip's is for
 * a moment while it creates it), writes "ready" to argv[1], waits 400 ms,
 * removes it and opens its ring file for real (rip_ring_open), then snaps in
 * waiting() until killed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

__attribute__((noinline)) static void waiting(void)
{
	for (;;) {
		rip_snap();
		pause();
	}
}

int main(int argc, char **argv)
{
	char stat[1024], path[4096], zeros[4096] = { 0 };
	unsigned long long start = 0;
	const char *dir = getenv("RIP_DIR"), *p;
	struct timespec ts = { 0, 400000000 };
	ssize_t n;
	int fd;

	if (argc < 2 || !dir)
		return 2;
	fd = open("/proc/self/stat", O_RDONLY);
	n = fd < 0 ? -1 : read(fd, stat, sizeof(stat) - 1);
	if (n <= 0)
		return 2;
	stat[n] = 0;
	close(fd);
	/* field 22, the start time: the 20th after the name's closing parenthesis */
	p = strrchr(stat, ')');
	for (int i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return 2;
	snprintf(path, sizeof(path), "%s/rip-%d-%llu.ring", dir, (int)getpid(), start);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, zeros, sizeof(zeros)) != (ssize_t)sizeof(zeros))
		return 2;
	close(fd);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "ready\n", 6) != 6)
		return 2;
	close(fd);
	nanosleep(&ts, NULL);
	unlink(path);
	if (rip_ring_open(NULL))
		return 3;
	waiting();
	return 0;
}
