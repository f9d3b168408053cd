// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of integ/enable-swap.sh, a traced process that
 * swaps the directory of its ring file for a link while rip enable reads
 * the file.  Linked with librip, its ring file DIR/real/x.ring (RIP_RING
 * says so); it makes many small mappings (rip reads /proc/PID/maps to see
 * that the file is still mapped: the time it takes is the window), a FIFO
 * DIR/fake/x.ring, and watches both names.  At the first open of its ring
 * file by someone else it renames DIR/real away and puts a link to
 * DIR/fake in its place, so that the same name now reaches the FIFO (a
 * device, on a real attack: opening some does something).  It prints, one
 * per line, "ready" once set, "swapped" and "fifo opened" as they happen,
 * and ends after SECONDS.
 *
 *	enable_swap DIR SECONDS
 */
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

#define NMAPS 30000

int main(int argc, char **argv)
{
	char ring[PATH_MAX], fifo[PATH_MAX], real[PATH_MAX], moved[PATH_MAX], fake[PATH_MAX];
	long page = sysconf(_SC_PAGESIZE);
	char have[PATH_MAX];
	bool swapped = false;
	time_t end;
	char *m;
	int in, wr, wf;

	if (argc != 3)
		return 2;
	end = time(NULL) + atoi(argv[2]);
	snprintf(ring, sizeof(ring), "%s/real/x.ring", argv[1]);
	snprintf(real, sizeof(real), "%s/real", argv[1]);
	snprintf(moved, sizeof(moved), "%s/real.moved", argv[1]);
	snprintf(fake, sizeof(fake), "%s/fake", argv[1]);
	snprintf(fifo, sizeof(fifo), "%s/fake/x.ring", argv[1]);
	if (rip_ring_path(have, sizeof(have)) || strcmp(have, ring)) {
		fprintf(stderr, "the ring file is not %s\n", ring);
		return 1;
	}
	/* Mappings that cannot merge: every other page without access. */
	m = mmap(NULL, (size_t)page * 2 * NMAPS, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	for (int i = 0; i < NMAPS; i++)
		mprotect(m + (size_t)page * (2 * i + 1), (size_t)page, PROT_NONE);
	if (mkdir(fake, 0755) || mkfifo(fifo, 0600))
		return 1;
	in = inotify_init1(IN_CLOEXEC);
	wr = inotify_add_watch(in, ring, IN_OPEN);
	wf = inotify_add_watch(in, fifo, IN_OPEN);
	if (in < 0 || wr < 0 || wf < 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	while (time(NULL) < end) {
		char buf[4096] __attribute__((aligned(8)));
		struct pollfd p = { .fd = in, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(in, buf, sizeof(buf));
		for (char *q = buf; n > 0 && q < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)q;

			if (e->wd == wr && !swapped) {
				swapped = !rename(real, moved) && !symlink("fake", real);
				printf("%s\n", swapped ? "swapped" : "swap failed");
			} else if (e->wd == wf) {
				printf("fifo opened\n");
			}
			fflush(stdout);
			q += sizeof(*e) + e->len;
		}
	}
	return 0;
}
