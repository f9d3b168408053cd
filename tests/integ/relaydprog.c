/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of the integ/relayd-*.sh tests: T named threads
 * emit events over a known stretch of time, so that a live reader of the
 * stream sees them arrive, and one thread can stay idle meanwhile.
 *
 *	relaydprog [--delay MS] [--threads T] [--events N] [--gap-us U]
 *		   [--idle MS] [--go FILE] [--mem]
 *
 * After --delay ms (time for a live reader to attach), or once FILE exists
 * (--go), each thread "worker-K" emits N events relaydprog:tick (seq =
 * thread << 32 | n, K), sleeping U us after every 10.  With --idle, thread
 * 0 emits one event, then sleeps MS ms while the others go on, then emits
 * the rest.  --mem makes a few allocations per thread, two of them
 * never freed (for rip leaks).  Prints "emitted E" at the end.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rip.h>

RIP_EVENT_TYPE(ev_tick, "relaydprog:tick", 9, RIP_FIELD(U64, "seq"), RIP_FIELD(U32, "thread"));

static struct {
	long delay_ms, events, gap_us, idle_ms;
	int threads, mem;
	const char *go;
} opt = { .threads = 3, .events = 1000, .gap_us = 1000 };

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts))
		;
}

void *leaked[64][2]; /* global: the allocations must happen */

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	char name[32];

	snprintf(name, sizeof(name), "worker-%d", t);
	rip_thread_set_name(name);
	if (opt.mem) {
		void *keep = malloc(100 + (size_t)t);

		leaked[t][0] = malloc(4096);
		leaked[t][1] = calloc(3, 1000);
		free(keep);
	}
	for (long n = 0; n < opt.events; n++) {
		rip_event2(&ev_tick, (uint64_t)t << 32 | (uint64_t)n, (uint64_t)t);
		if (t == 0 && n == 0 && opt.idle_ms)
			sleep_us(opt.idle_ms * 1000);
		if (opt.gap_us && n % 10 == 9)
			sleep_us(opt.gap_us);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--mem")) {
			opt.mem = 1;
			continue;
		}
		if (!v) {
			fprintf(stderr, "relaydprog: %s wants a value\n", a);
			return 2;
		}
		i++;
		if (!strcmp(a, "--delay"))
			opt.delay_ms = atol(v);
		else if (!strcmp(a, "--threads"))
			opt.threads = atoi(v);
		else if (!strcmp(a, "--events"))
			opt.events = atol(v);
		else if (!strcmp(a, "--gap-us"))
			opt.gap_us = atol(v);
		else if (!strcmp(a, "--idle"))
			opt.idle_ms = atol(v);
		else if (!strcmp(a, "--go"))
			opt.go = v;
		else {
			fprintf(stderr, "relaydprog: unknown option %s\n", a);
			return 2;
		}
	}
	if (opt.threads < 1 || opt.threads > 64)
		return 2;
	rip_thread_set_name("main");
	if (opt.delay_ms)
		sleep_us(opt.delay_ms * 1000);
	while (opt.go && access(opt.go, F_OK))
		sleep_us(10000);
	for (int t = 0; t < opt.threads; t++)
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	for (int t = 0; t < opt.threads; t++)
		pthread_join(th[t], NULL);
	printf("emitted %ld\n", opt.events * opt.threads);
	return 0;
}
