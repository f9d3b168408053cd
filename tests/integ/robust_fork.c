// SPDX-License-Identifier: Apache-2.0
/*
 * Description: fork without exec and exec of itself, with allocations of
 * sizes no one else uses so that the tests can tell whose they are
 * (tests/integ/robust-fork-exec.sh).  Modes (argv[1]):
 *
 *   fork    the parent keeps 10 blocks of 11111 bytes live across a fork
 *           (made just before it, when rip has likely not read them yet);
 *           the child makes 3 of 22222 it never frees (child_leak), 5 of
 *           33333 it frees, frees one inherited 11111 block, prints "child
 *           done" and exits 5; the parent waits, prints "parent: child
 *           exited 5", frees its blocks, makes and frees one of 44444
 *   exec    one block of 55555 freed, one of 55556 kept, then execv of
 *           /proc/self/exe with "exec2": the new image makes 2 of 66666 it
 *           never frees (image2_leak), 1 of 77777 it frees, prints "image 2
 *           done" and exits 0
 *
 * With ROBUST_INFO=FILE, each process appends "ROLE PID RINGS" there:
 * RINGS is the number of ring files (*.ring) in its /proc/self/maps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINL __attribute__((noinline))

static void *volatile sink;

static int rings_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		size_t len = strcspn(line, "\n");

		if (len >= 5 && !memcmp(line + len - 5, ".ring", 5))
			n++;
	}
	fclose(f);
	return n;
}

static void info(const char *role)
{
	const char *path = getenv("ROBUST_INFO");
	FILE *f;

	if (!path || !*path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "%s %d %d\n", role, (int)getpid(), rings_mapped());
	fclose(f);
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		exit(99);
}

NOINL static void child_leak(void)
{
	char *p = malloc(22222);

	if (!p)
		exit(98);
	memset(p, 2, 22222);
	sink = p;
}

NOINL static void child_temp(void)
{
	char *p = malloc(33333);

	if (!p)
		exit(98);
	memset(p, 3, 33333);
	sink = p;
	free(p);
}

static int do_fork(void)
{
	void *kept[10];
	char buf[64];
	pid_t pid;
	int status;

	for (int i = 0; i < 10; i++) {
		kept[i] = malloc(11111);
		if (!kept[i])
			return 98;
		memset(kept[i], 1, 11111);
	}
	pid = fork();
	if (pid < 0)
		return 97;
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			child_leak();
		for (int i = 0; i < 5; i++)
			child_temp();
		free(kept[0]);
		info("child");
		say("child done\n");
		_exit(5);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 96;
	snprintf(buf, sizeof(buf), "parent: child exited %d\n",
		 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	say(buf);
	for (int i = 0; i < 10; i++)
		free(kept[i]);
	free(sink = malloc(44444));
	info("parent");
	return 0;
}

NOINL static void image2_leak(void)
{
	char *p = malloc(66666);

	if (!p)
		exit(98);
	memset(p, 6, 66666);
	sink = p;
}

static int do_exec(int again)
{
	if (again) {
		image2_leak();
		image2_leak();
		free(sink = malloc(77777));
		info("image2");
		say("image 2 done\n");
		return 0;
	}
	free(sink = malloc(55555));
	sink = malloc(55556);
	info("image1");
	execl("/proc/self/exe", "robust_fork", "exec2", (char *)NULL);
	perror("execl");
	return 95;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "fork"))
		return do_fork();
	if (argc == 2 && !strcmp(argv[1], "exec"))
		return do_exec(0);
	if (argc == 2 && !strcmp(argv[1], "exec2"))
		return do_exec(1);
	fprintf(stderr, "usage: robust_fork fork|exec\n");
	return 2;
}
