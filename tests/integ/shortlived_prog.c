/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of integ/shortlived.sh.  Runs NTHREADS short-lived
 * threads in batches of at most 200 alive at once; thread i names itself
 * "s<i>" (its comm, taken by the slot at attach) and snaps three times in
 * shortlived_work().  After every 10000 threads it prints one line:
 *
 *	progress THREADS RSS_KB FILE_BYTES SLOTS_USED OVERFLOW LIVE_THREADS
 *
 * read from /proc/self/status, stat() of the ring file and the file's own
 * header (mapped read-only).  The ring is RING, its slot count $RIP_SLOTS.
 *
 *	shortlived_prog RING [NTHREADS]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rip.h>

#define BATCH 200

__attribute__((noinline)) static void shortlived_work(int i)
{
	rip_snap();
	__asm__ volatile("" ::"r"(i) : "memory");
	rip_snap();
	__asm__ volatile("" ::"r"(i) : "memory");
	rip_snap();
}

static void *thread_main(void *arg)
{
	int i = (int)(intptr_t)arg;
	char name[16];

	snprintf(name, sizeof(name), "s%d", i);
	pthread_setname_np(pthread_self(), name);
	shortlived_work(i);
	return NULL;
}

static long rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 100000;
	RIP_OPTS(rip_ring_opts, o);
	const struct rip_file_hdr *h;
	pthread_attr_t attr;
	struct stat st;
	int fd, err, last_first = 0, last_count = 0, short_batches = 0;

	if (argc < 2 || n < 1) {
		fprintf(stderr, "usage: shortlived_prog RING [NTHREADS]\n");
		return 2;
	}
	o.path = argv[1];
	err = rip_ring_open(&o);
	if (err) {
		fprintf(stderr, "shortlived_prog: rip_ring_open: %s\n", strerror(-err));
		return 1;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		return 1;
	h = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return 1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int done = 0; done < n;) {
		pthread_t t[BATCH];
		int k = 0;

		while (k < BATCH && done + k < n) {
			err = pthread_create(&t[k], &attr, thread_main, (void *)(intptr_t)(done + k));
			if (err == EAGAIN && k > 0) {
				short_batches++;
				break; /* the machine is short of threads: join these first */
			}
			if (err == EAGAIN) {
				usleep(100000);
				continue;
			}
			if (err) {
				fprintf(stderr, "shortlived_prog: pthread_create: %s\n", strerror(err));
				return 1;
			}
			k++;
		}
		for (int i = 0; i < k; i++)
			pthread_join(t[i], NULL);
		if ((done + k) / 10000 != done / 10000 || done + k == n) {
			if (stat(argv[1], &st))
				return 1;
			printf("progress %d %ld %lld %u %u %llu\n", done + k, rss_kb(),
			       (long long)st.st_size, h->fresh, h->overflow,
			       (unsigned long long)h->live_threads);
			fflush(stdout);
		}
		last_first = done;
		last_count = k;
		done += k;
	}
	/*
	 * Only the last batch's slots are sure to be left as they were: an
	 * earlier thread's slot may have gone to a later one.  Say which threads
	 * those were, and how many batches were cut short.
	 */
	printf("last %d %d %d\n", last_first, last_count, short_batches);
	return 0;
}
