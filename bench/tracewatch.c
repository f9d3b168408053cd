// SPDX-License-Identifier: Apache-2.0
/*
 * bench/tracewatch.c - run one command and watch it, for bench/leakthreads.sh:
 * its wall time, the peak RSS of that process alone (not of its children,
 * which GNU time's %M and wait4's ru_maxrss fold in), and the peak tmpfs
 * taken by the files under a directory (where `rip run` keeps the ring
 * file of the program it traces: RIP_DIR/rip-run.XXXXXX/).
 *
 *   tracewatch DIR CMD [ARG...]
 *
 * prints on stderr, after CMD's own output, one line:
 *
 *   tracewatch wall_s S rss_kib R dir_kib D rss_by exit|poll status X
 *
 * R is the VmHWM of CMD's process (/proc/PID/status).  The child is
 * traced with PTRACE_SEIZE and PTRACE_O_TRACEEXIT only, so it stops once,
 * as it exits with its memory still mapped, and VmHWM is read then: exact
 * ("exit").  Where ptrace is refused, R is the largest VmHWM seen by
 * polling every 10 ms ("poll"), which can miss growth in the last 10 ms.
 * The wait wakes on SIGCHLD, so the wall time ends when CMD ends.
 * Signals the child gets stop it under ptrace and are handed on at once.
 * D is the largest sum of st_blocks (x 512 bytes) of the regular files in
 * DIR and in its subdirectories one level down, polled every 10 ms: the
 * tmpfs pages the ring file holds at its peak, to within the poll.  X is
 * CMD's exit status (128 + signal when killed).  Exit status: X.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* VmHWM of PID in KiB, or -1 (gone, or no memory any more) */
static long hwm_kib(pid_t pid)
{
	char path[64], buf[4096];
	ssize_t n;
	char *p;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "\nVmHWM:");
	return p ? strtol(p + 7, NULL, 10) : -1;
}

/* KiB of tmpfs held by the regular files of DIRFD, and of its subdirectories when DEEP */
static long long dir_kib(int dirfd, int deep)
{
	long long sum = 0;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd;

	fd = dup(dirfd);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	rewinddir(d); /* the duplicate shares the offset the last walk left at the end */
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISREG(st.st_mode)) {
			sum += (long long)st.st_blocks / 2;
		} else if (S_ISDIR(st.st_mode) && deep) {
			int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

			if (sub >= 0) {
				sum += dir_kib(sub, 0);
				close(sub);
			}
		}
	}
	closedir(d);
	return sum;
}

int main(int argc, char **argv)
{
	long rss = -1, h;
	long long ring = 0, k;
	int traced = 0, status = 0, go[2], dirfd;
	const char *how = "poll";
	sigset_t chld, old;
	double t0, t1;
	char c = 0;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: tracewatch DIR CMD [ARG...]\n");
		return 2;
	}
	dirfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || pipe2(go, O_CLOEXEC)) {
		fprintf(stderr, "tracewatch: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	/* blocked here, taken by sigtimedwait; the child unblocks it before exec */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	t0 = now_s();
	pid = fork();
	if (pid < 0) {
		perror("tracewatch: fork");
		return 2;
	}
	if (!pid) {
		/* wait until traced (or not), then become CMD */
		close(go[1]);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (read(go[0], &c, 1) < 0)
			_exit(127);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "tracewatch: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	if (!ptrace(PTRACE_SEIZE, pid, NULL, (void *)(long)PTRACE_O_TRACEEXIT))
		traced = 1;
	if (write(go[1], &c, 1) != 1)
		perror("tracewatch: write");
	close(go[1]);
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG | __WALL);

		if (w == pid && (WIFEXITED(status) || WIFSIGNALED(status)))
			break;
		if (w == pid && WIFSTOPPED(status)) {
			int sig = WSTOPSIG(status);

			if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
				/* exiting, memory still there: the exact high-water mark */
				h = hwm_kib(pid);
				if (h > rss)
					rss = h;
				how = "exit";
				sig = 0;
			} else if (status >> 16) {
				sig = 0; /* another ptrace event (a group stop): go on */
			}
			ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
			continue;
		}
		if (w < 0 && errno != EINTR) {
			perror("tracewatch: waitpid");
			return 2;
		}
		h = hwm_kib(pid);
		if (h > rss)
			rss = h;
		k = dir_kib(dirfd, 1);
		if (k > ring)
			ring = k;
		/* 10 ms, or less when the child stops or exits (SIGCHLD) */
		sigtimedwait(&chld, NULL, &(struct timespec){ .tv_nsec = 10 * 1000 * 1000 });
	}
	t1 = now_s();
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fprintf(stderr, "tracewatch wall_s %.4f rss_kib %ld dir_kib %lld rss_by %s status %d\n",
		t1 - t0, rss, ring, traced ? how : "poll", status);
	return status;
}
