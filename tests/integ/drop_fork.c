// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/drop_fork.c - a daemon that drops privileges, then forks
 * (run-drop-fork.sh): as root, becomes UID (group GID) for good, forks a
 * child that waits in pause(), prints "PARENT CHILD" on its standard
 * output (the test's file: the helper may no longer open one), and waits
 * for the child, which the test kills.  Exits 0 when the child died of a
 * signal.
 */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "helpers.h"

int main(int argc, char **argv)
{
	pid_t c;

	if (argc != 3) {
		fprintf(stderr, "usage: drop_fork UID GID\n");
		return 2;
	}
	if (setgroups(0, NULL) || setgid((gid_t)atoi(argv[2])) || setuid((uid_t)atoi(argv[1]))) {
		perror("drop_fork: dropping privileges");
		return 1;
	}
	c = fork();
	if (c < 0)
		return 1;
	if (c == 0) {
		for (;;)
			pause();
	}
	return t_parent_of(c);
}
