// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/waits_fork.c - children that share or copy their parent's
 * memory must not write into the parent's slots, for waits-fork.sh.  Run
 * with LD_PRELOAD=librip-preload.so and RIP_RING=FILE; it maps FILE
 * read-only and watches two slots: its own (the main thread's) and that of
 * a thread blocked in read.  Across a vfork whose child calls write and
 * nanosleep (wrapped) before _exit, a vfork + execve, a posix_spawn and a
 * fork whose child calls wrapped functions, reaped with a raw wait4 (not
 * wrapped), neither slot's wait record may change.  Prints "ok STEP" or
 * "FAIL STEP", then "done".
 */
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <rip/abi.h>

static int fds[2];
static volatile pid_t reader_tid;
static const struct rip_file_hdr *hdr;
static int failed;

static void *reader(void *a)
{
	char c;

	reader_tid = (pid_t)syscall(SYS_gettid);
	if (read(fds[0], &c, 1) < 0)
		return NULL;
	return a;
}

static const struct rip_slot *slot_of(pid_t tid)
{
	for (uint32_t i = 0; i < hdr->fresh && i < hdr->slot_count; i++) {
		const struct rip_slot *s =
			(const void *)((const char *)hdr + hdr->slot_off + (size_t)i * RIP_SLOT_SIZE);

		if (s->tid == tid && s->state == RIP_SLOT_RUNNING)
			return s;
	}
	return NULL;
}

/*
 * Reap with the system call instruction itself: the preload library wraps
 * syscall() too (a wait record of kind syscall), and the test wants the
 * parent's records as the children left them.
 */
static void reap(pid_t pid)
{
	int st;
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = 0;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_wait4), "D"((long)pid), "S"((long)&st), "d"(0L), "r"(r10)
			 : "rcx", "r11", "memory");
	(void)ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_wait4;
	register long x0 __asm__("x0") = pid;
	register long x1 __asm__("x1") = (long)&st;
	register long x2 __asm__("x2") = 0;
	register long x3 __asm__("x3") = 0;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
#else
	syscall(SYS_wait4, pid, &st, 0, NULL);
#endif
}

static void check(const char *step, const struct rip_slot *a, const struct rip_wait *wa,
		  const struct rip_slot *b, const struct rip_wait *wb)
{
	int ok = !memcmp(&a->wait, wa, sizeof(*wa)) && !memcmp(&b->wait, wb, sizeof(*wb));

	failed |= !ok;
	printf("%s %s\n", ok ? "ok" : "FAIL", step);
	if (!ok)
		printf("  main seq %u -> %u kind %u -> %u; reader seq %u -> %u kind %u -> %u\n",
		       wa->seq, a->wait.seq, wa->kind, a->wait.kind, wb->seq, b->wait.seq, wb->kind,
		       b->wait.kind);
}

int main(int argc, char **argv)
{
	static char *const argv_true[] = { "true", NULL }, *const envp[] = { NULL };
	struct timespec ms = { .tv_nsec = 1000000 };
	const struct rip_slot *me, *rd;
	struct rip_wait wme, wrd;
	pthread_t t;
	struct stat st;
	pid_t pid;
	int fd, nul = open("/dev/null", O_WRONLY);

	if (argc != 2 || pipe(fds) || (fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &st))
		return 2;
	hdr = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (hdr == MAP_FAILED)
		return 2;
	pthread_create(&t, NULL, reader, NULL);
	while (!reader_tid)
		nanosleep(&ms, NULL);
	/* the reader's record, once it is in read */
	while (!(rd = slot_of(reader_tid)) || rd->wait.kind != RIP_WAIT_READ)
		nanosleep(&ms, NULL);
	me = slot_of((pid_t)syscall(SYS_gettid));
	if (!me)
		return 3;
	nanosleep(&ms, NULL); /* a record in our own slot's history too */

	wme = me->wait;
	wrd = rd->wait;
	pid = vfork();
	if (pid == 0) {
		if (write(nul, "x", 1) < 0)
			_exit(1);
		nanosleep(&ms, NULL);
		_exit(0);
	}
	reap(pid);
	check("vfork", me, &wme, rd, &wrd);

	pid = vfork();
	if (pid == 0) {
		execve("/bin/true", argv_true, envp);
		_exit(127);
	}
	reap(pid);
	check("vfork+exec", me, &wme, rd, &wrd);

	if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv_true, envp) == 0)
		reap(pid);
	check("posix_spawn", me, &wme, rd, &wrd);

	pid = fork();
	if (pid == 0) {
		if (write(nul, "x", 1) < 0)
			_exit(1);
		nanosleep(&ms, NULL);
		_exit(0);
	}
	reap(pid);
	check("fork", me, &wme, rd, &wrd);

	/* And the parent records again after vfork (the mark goes). */
	nanosleep(&ms, NULL);
	printf("%s parent-records\n", me->wait.seq != wme.seq ? "ok" : "FAIL");
	failed |= me->wait.seq == wme.seq;
	printf("done\n");
	return failed;
}
