// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/static_snap.c - a program linked with librip.a: its main
 * thread snaps in parked_static() and sleeps, so that rip ps can look at
 * it (tests/integ/static-preload.sh).
 *
 *	static_snap SECONDS	prints "parked" once it snapped, then sleeps
 */
#include <rip.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static __attribute__((noinline)) void parked_static(unsigned secs)
{
	rip_snap();
	printf("parked\n");
	fflush(stdout);
	sleep(secs);
}

int main(int argc, char **argv)
{
	parked_static(argc > 1 ? (unsigned)atoi(argv[1]) : 3);
	return 0;
}
