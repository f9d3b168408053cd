/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/coroutines.c - coroutine slots with the scheduler of coro.h.
 *
 * A producer coroutine hands items to three consumers through a queue; each
 * coroutine has a slot of its own in the ring, named "producer",
 * "consumer-N", and rip_snap() in a coroutine records into that slot.  The
 * program prints the ring file's path, runs a few rounds and exits; with
 * --wait it stays parked afterwards so that `rip ps PID` shows the
 * consumers waiting in consume() and the producer done.
 *
 *	build/examples/coroutines [--wait]
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rip.h>

#include "coro.h"

#define CONSUMERS 3
#define ITEMS 30

static struct coro_queue idle_consumers; /* consumers waiting for an item */
static int items[ITEMS];
static int produced, consumed;

__attribute__((noinline)) static void consume(int id)
{
	while (consumed < produced) {
		int item = items[consumed++];

		rip_snap();
		printf("consumer-%d got item %d\n", id, item);
		coro_yield(); /* take turns with the others */
	}
	rip_snap(); /* about to wait: the ring shows it here */
	coro_wait(&idle_consumers);
}

static void consumer_main(void *arg)
{
	int id = (int)(intptr_t)arg;

	for (;;)
		consume(id);
}

__attribute__((noinline)) static void produce(void *arg)
{
	(void)arg;
	while (produced < ITEMS) {
		items[produced] = produced * produced;
		produced++;
		rip_snap();
		coro_wake_one(&idle_consumers);
		if (produced % 5 == 0)
			coro_yield(); /* let the consumers drain the queue */
	}
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "--wait");
	struct coro_sched sched;
	char path[4096], name[32];
	unsigned long switches;
	int err;

	err = rip_ring_open(NULL);
	if (!err)
		err = rip_ring_path(path, sizeof(path));
	if (err) {
		fprintf(stderr, "coroutines: cannot open the ring: %s\n", strerror(-err));
		return 1;
	}
	printf("ring %s\n", path);
	err = coro_sched_init(&sched, CONSUMERS + 1);
	if (err) {
		fprintf(stderr, "coroutines: no memory for stacks: %s\n", strerror(-err));
		return 1;
	}
	for (int i = 0; i < CONSUMERS; i++) {
		snprintf(name, sizeof(name), "consumer-%d", i);
		coro_spawn(&sched, name, consumer_main, (void *)(intptr_t)i);
	}
	coro_spawn(&sched, "producer", produce, NULL);
	switches = coro_sched_run(&sched);
	printf("%lu switches, %u coroutines left parked\n", switches, sched.live);
	fflush(stdout);
	while (wait) {
		rip_snap(); /* the main thread idles here */
		pause();
	}
	return 0;
}
