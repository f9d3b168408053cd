// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/trust_ns.c - namespace calls the kernel allows only to a
 * process that is single-threaded, or whose filesystem state no other
 * thread shares, as container runtimes and sandboxes make them
 * (trust-ns.sh compares what they return traced and untraced).
 *
 * usage: trust_ns
 *
 * The program makes a thread and joins it (it "once had a thread"), then:
 *  - a fork child enters its own namespaces again with setns (mnt, uts,
 *    ipc, net, and type 0), unshares CLONE_NEWNS | CLONE_FS, then
 *    CLONE_NEWUSER with the system call instruction itself (no wrapper
 *    can see it: the child must simply have no thread of ours);
 *  - a second fork child makes a thread, joins it, and unshares
 *    CLONE_NEWUSER through syscall(2);
 *  - a third makes a thread, joins it, and enters its mount namespace;
 *  - the parent unshares CLONE_NEWUSER through syscall(2) last.
 * One line per call: "WHO CALL: ok" or "WHO CALL: ERRNO-NAME".  A call that
 * fails with EINVAL right after a join is tried again for up to 2 s (the
 * joined thread leaves the thread group a moment after pthread_join
 * returns, traced or not).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *nothing(void *arg)
{
	return arg;
}

static void once_a_thread(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, nothing, NULL) == 0)
		pthread_join(t, NULL);
}

/* unshare with the instruction itself: -errno, as the kernel says */
static long asm_unshare(long flags)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"((long)SYS_unshare), "D"(flags)
			 : "rcx", "r11", "memory");
	return ret;
#else
	return syscall(SYS_unshare, flags) ? -errno : 0;
#endif
}

static void report(const char *who, const char *call, long r)
{
	printf("%s %s: %s\n", who, call, r == 0 ? "ok" : strerrorname_np(errno));
	fflush(stdout);
}

/* The system call itself, retried while EINVAL for up to 2 s (a joined thread going). */
static long raw_retry(long nr, long a, long b)
{
	struct timespec ts = { 0, 1000000 };
	long r;

	for (int i = 0; i < 2000; i++) {
		r = syscall(nr, a, b);
		if (r == 0 || errno != EINVAL)
			break;
		nanosleep(&ts, NULL);
	}
	return r;
}

static long enter(const char *ns, int type)
{
	char path[64];
	int fd;
	long r;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = setns(fd, type);
	close(fd);
	return r;
}

int main(void)
{
	pid_t pid;

	once_a_thread();
	pid = fork();
	if (pid == 0) {
		report("child", "setns(mnt)", enter("mnt", CLONE_NEWNS));
		report("child", "setns(uts)", enter("uts", CLONE_NEWUTS));
		report("child", "setns(ipc)", enter("ipc", CLONE_NEWIPC));
		report("child", "setns(net)", enter("net", CLONE_NEWNET));
		report("child", "setns(mnt, 0)", enter("mnt", 0));
		report("child", "unshare(NEWNS|FS)", unshare(CLONE_NEWNS | CLONE_FS));
		{
			long r = asm_unshare(CLONE_NEWUSER);

			errno = (int)-r;
			report("child", "asm unshare(NEWUSER)", r);
		}
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	pid = fork();
	if (pid == 0) {
		once_a_thread();
		report("child2", "syscall(SYS_unshare, NEWUSER)", raw_retry(SYS_unshare, CLONE_NEWUSER, 0));
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	pid = fork();
	if (pid == 0) {
		long r = -1;

		once_a_thread();
		/* retried while EINVAL, as raw_retry does: the joined thread may be going still */
		for (int i = 0; i < 2000; i++) {
			struct timespec ts = { 0, 1000000 };

			r = enter("mnt", CLONE_NEWNS);
			if (r == 0 || errno != EINVAL)
				break;
			nanosleep(&ts, NULL);
		}
		report("child3", "setns(mnt)", r);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	report("parent", "syscall(SYS_unshare, NEWUSER)", raw_retry(SYS_unshare, CLONE_NEWUSER, 0));
	return 0;
}
