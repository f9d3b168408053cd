/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/integ/exec_rename.c - a program that changes its own name, or is
 * the image a traced shell exec's into, for tests/integ/run-exec-rename.sh:
 *
 *	exec_rename rename        PR_SET_NAME "renamed", then return 0
 *	exec_rename rename-kill   the same, then SIGKILL itself
 *	exec_rename rename-raw    the same, 100 ms, then the exit_group system call
 *	                          itself (no exit(), no _exit(): no mark in its file)
 *	exec_rename exit3         exit with status 3
 */
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	struct timespec ts = { 0, 100000000 };

	if (!strcmp(m, "exit3"))
		return 3;
	prctl(PR_SET_NAME, "renamed");
	if (!strcmp(m, "rename-kill"))
		raise(SIGKILL);
	if (!strcmp(m, "rename-raw")) {
		nanosleep(&ts, NULL);
		__asm__ volatile("syscall" ::"a"(SYS_exit_group), "D"(0) : "rcx", "r11", "memory");
	}
	return 0;
}
