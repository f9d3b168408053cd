// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/syscall_res.c - a program that makes and releases
 * descriptors, mappings and shared memory through glibc's generic
 * syscall(2) as well as through the wrappers, for preload-syscall-fd.sh,
 * preload-syscall-mem.sh, preload-syscall-shm.sh and
 * preload-syscall-secret.sh.
 *
 * usage: syscall_res fd FILE
 *        syscall_res mem
 *        syscall_res shm         (prints "segment ID" for each segment it leaves)
 *        syscall_res rmid ID...  (untraced: removes the segments shm left)
 *        syscall_res secret
 *
 * Each resource it keeps is made in a function of its own (noinline, the
 * call not in tail position: the function is the first frame of the
 * resource's stack), and printed as "want KIND FUNCTION" (fd) or "want
 * KIND FUNCTION BYTES" (mem), KIND as rip names it.  fd also prints the
 * descriptors open at its start and at its end ("start ...", "end ...",
 * from fcntl probes).  Calls a kernel may refuse (io_uring_setup,
 * userfaultfd, perf_event_open, fanotify_init: sysctls, privileges,
 * seccomp) are tried and, when refused, print "refused CALL" and are not
 * wanted.  shm prints "want RESOURCE KIND FUNCTION BYTES" (RESOURCE shm
 * or shm-map, as rip leaks has them), secret "want fd memfd_secret
 * FUNCTION 0" and "want shm-map mmap FUNCTION BYTES".  Exit 0 when every
 * other call succeeded, 77 when the kernel lacks openat2, pidfd_open or
 * memfd_secret (ENOSYS), another code naming the call that failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1u << 2)
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif

#define NOINLINE __attribute__((noinline))
/* Code after the call: it is not a tail call, and the function stays a frame of its own. */
#define KEEP_FRAME() __asm__ __volatile__("" ::: "memory")

/* A resource left for rip leaks to find, and the function that made it. */
static void want(const char *kind, const char *fn)
{
	printf("want %s %s\n", kind, fn);
}

static void want_bytes(const char *kind, const char *fn, size_t bytes)
{
	printf("want %s %s %zu\n", kind, fn, bytes);
}

/* ---- descriptors ---- */

static NOINLINE int wrap_open(const char *path)
{
	int fd = open(path, O_RDONLY);

	KEEP_FRAME();
	return fd;
}

static NOINLINE int sys_openat(const char *path)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);

	KEEP_FRAME();
	return fd;
}

/* struct open_how of Linux 5.6 (older headers lack it) */
struct how {
	uint64_t flags, mode, resolve;
};

static NOINLINE int sys_openat2(const char *path)
{
	struct how h = { .flags = O_RDONLY | O_CLOEXEC };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &h, sizeof(h));

	KEEP_FRAME();
	return fd;
}

static NOINLINE int sys_pidfd_open(void)
{
	int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);

	KEEP_FRAME();
	return fd;
}

static NOINLINE int sys_dup(int old)
{
	int fd = (int)syscall(SYS_dup, old);

	KEEP_FRAME();
	return fd;
}

static NOINLINE int sys_dup3(int old, int to)
{
	int fd = (int)syscall(SYS_dup3, old, to, 0);

	KEEP_FRAME();
	return fd;
}

static NOINLINE int sys_dupfd(int old)
{
	int fd = (int)syscall(SYS_fcntl, old, F_DUPFD_CLOEXEC, 50);

	KEEP_FRAME();
	return fd;
}

static NOINLINE int sys_pipe2(int fds[2])
{
	int r = (int)syscall(SYS_pipe2, fds, O_CLOEXEC);

	KEEP_FRAME();
	return r;
}

static NOINLINE int sys_socket(void)
{
	int fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	KEEP_FRAME();
	return fd;
}

static NOINLINE int sys_eventfd2(void)
{
	int fd = (int)syscall(SYS_eventfd2, 0, 0);

	KEEP_FRAME();
	return fd;
}

static NOINLINE int sys_memfd_create(void)
{
	int fd = (int)syscall(SYS_memfd_create, "syscall-res", 0);

	KEEP_FRAME();
	return fd;
}

/* io_uring_setup(8 entries, zeroed params: 120 bytes in Linux 6) */
static NOINLINE int sys_io_uring_setup(void)
{
	uint64_t params[32] = { 0 };
	int fd = (int)syscall(SYS_io_uring_setup, 8, params);

	KEEP_FRAME();
	return fd;
}

/* UFFD_USER_MODE_ONLY (1): allowed unprivileged since Linux 5.11 */
static NOINLINE int sys_userfaultfd(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | 1);

	KEEP_FRAME();
	return fd;
}

/* A software task-clock counter of this process: allowed up to perf_event_paranoid 2. */
static NOINLINE int sys_perf_event_open(void)
{
	uint32_t attr[32] = { 0 }; /* struct perf_event_attr, zeroed */
	int fd;

	attr[0] = 1;   /* type PERF_TYPE_SOFTWARE */
	attr[1] = 128; /* size: PERF_ATTR_SIZE_VER7 */
	attr[2] = 1;   /* config PERF_COUNT_SW_TASK_CLOCK (low word) */
	attr[10] = (1u << 0) | (1u << 5) | (1u << 6); /* disabled, exclude_kernel, exclude_hv */
	fd = (int)syscall(SYS_perf_event_open, attr, 0, -1, -1, 8 /* PERF_FLAG_FD_CLOEXEC */);
	KEEP_FRAME();
	return fd;
}

/* FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC: allowed unprivileged since Linux 5.13 */
static NOINLINE int sys_fanotify_init(void)
{
	int fd = (int)syscall(SYS_fanotify_init, 0x200 | 0x1, O_RDONLY);

	KEEP_FRAME();
	return fd;
}

/* The calls a kernel may refuse: wanted when they succeed. */
static void try_optional(void)
{
	if (sys_io_uring_setup() >= 0)
		want("io_uring", "sys_io_uring_setup");
	else
		printf("refused io_uring_setup %d\n", errno);
	if (sys_userfaultfd() >= 0)
		want("userfaultfd", "sys_userfaultfd");
	else
		printf("refused userfaultfd %d\n", errno);
	if (sys_perf_event_open() >= 0)
		want("perf_event", "sys_perf_event_open");
	else
		printf("refused perf_event_open %d\n", errno);
	if (sys_fanotify_init() >= 0)
		want("fanotify", "sys_fanotify_init");
	else
		printf("refused fanotify_init %d\n", errno);
}

/* The open descriptors, listed without opening one: fcntl probes. */
static void list(const char *what)
{
	printf("%s", what);
	for (int fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			printf(" %d", fd);
	printf("\n");
	fflush(stdout);
}

/* fd moved to number to (an open descriptor there is replaced), with the wrappers. */
static int at(int fd, int to)
{
	if (fd < 0 || dup2(fd, to) != to)
		exit(10);
	close(fd);
	return to;
}

static int fd_main(const char *path)
{
	int fds[2], fd, e;

	list("start");
	/* kept, made by the wrappers and by syscall() */
	if (wrap_open(path) < 0)
		return 11;
	want("open", "wrap_open");
	if (sys_openat(path) < 0)
		return 12;
	want("openat", "sys_openat");
	if (sys_openat2(path) < 0) {
		if (errno == ENOSYS)
			return printf("openat2: not in this kernel\n"), 77;
		return 13;
	}
	want("openat2", "sys_openat2");
	if (sys_pidfd_open() < 0) {
		if (errno == ENOSYS)
			return printf("pidfd_open: not in this kernel\n"), 77;
		return 14;
	}
	want("pidfd_open", "sys_pidfd_open");
	if (sys_dup(0) < 0)
		return 15;
	want("dup", "sys_dup");
	if (sys_dupfd(0) < 0)
		return 16;
	want("fcntl_dupfd", "sys_dupfd");
	if (sys_pipe2(fds))
		return 17;
	want("pipe", "sys_pipe2");
	want("pipe", "sys_pipe2");
	if (sys_socket() < 0)
		return 18;
	want("socket", "sys_socket");
	if (sys_eventfd2() < 0)
		return 19;
	want("eventfd", "sys_eventfd2");
	if (sys_memfd_create() < 0)
		return 20;
	want("memfd", "sys_memfd_create");
	try_optional();

	/* closed by syscall(SYS_close): one opened by a wrapper, one by syscall() */
	fd = wrap_open(path);
	if (fd < 0 || syscall(SYS_close, fd))
		return 21;
	fd = sys_openat(path);
	if (fd < 0 || syscall(SYS_close, fd))
		return 22;
	/* and a close of a descriptor that is not open: nothing, and errno EBADF */
	errno = 0;
	if (syscall(SYS_close, 1000) != -1 || errno != EBADF)
		return 23;

	/* 30..35 by dup3 through syscall() (each original closed through it); 30-33 closed by
	 * syscall(SYS_close_range), 34-35 marked close-on-exec by it (still open: wanted) */
	for (int i = 0; i < 6; i++) {
		fd = i % 2 ? wrap_open(path) : sys_openat(path);
		if (fd < 0 || sys_dup3(fd, 30 + i) != 30 + i || syscall(SYS_close, fd))
			return 24;
	}
	if (syscall(SYS_close_range, 30, 33, 0))
		return 25;
	if (syscall(SYS_close_range, 34, 35, CLOSE_RANGE_CLOEXEC))
		return 26;
	want("dup3", "sys_dup3");
	want("dup3", "sys_dup3");
	/* a refused range records nothing: errno EINVAL */
	errno = 0;
	if (syscall(SYS_close_range, 35, 34, 0) != -1 || errno != EINVAL)
		return 27;

	/* 40 opened by a wrapper, replaced by syscall(SYS_dup3) onto it */
	at(wrap_open(path), 40);
	if (sys_dup3(0, 40) != 40)
		return 28;
	want("dup3", "sys_dup3");

	/* 100..103 opened by the wrappers, closed by syscall(SYS_close_range, 100, ~0U, 0) */
	for (int i = 0; i < 4; i++)
		at(wrap_open(path), 100 + i);
	errno = 0;
	e = (int)syscall(SYS_close_range, 100, ~0U, 0);
	if (e || errno)
		return 29;
	list("end");
	return 0;
}

/* ---- mappings ---- */

#define PAGE 4096ul

/* A macro: the stack's first frame is the function that uses it. */
#define sys_map(len)                                                                               \
	((void *)syscall(SYS_mmap, NULL, (len), PROT_READ | PROT_WRITE,                            \
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))

static NOINLINE void *sys_mmap_keep(void)
{
	void *p = sys_map(3 * PAGE);

	KEEP_FRAME();
	return p;
}

static NOINLINE void *sys_mmap_drop(void)
{
	void *p = sys_map(2 * PAGE);

	KEEP_FRAME();
	return p;
}

static NOINLINE void *wrap_mmap_drop(void)
{
	void *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	KEEP_FRAME();
	return p;
}

static NOINLINE void *sys_mmap_partial(void)
{
	void *p = sys_map(4 * PAGE);

	KEEP_FRAME();
	return p;
}

static NOINLINE void *sys_mremap_keep(void *old)
{
	void *p = (void *)syscall(SYS_mremap, old, PAGE, 5 * PAGE, MREMAP_MAYMOVE);

	KEEP_FRAME();
	return p;
}

static int mem_main(void)
{
	char *p;

	p = sys_mmap_keep();
	if (p == MAP_FAILED)
		return 31;
	memset(p, 1, 3 * PAGE);
	want_bytes("mmap", "sys_mmap_keep", 3 * PAGE);

	p = sys_mmap_drop();
	if (p == MAP_FAILED || syscall(SYS_munmap, p, 2 * PAGE))
		return 32;

	/* made by the wrapper, unmapped through syscall() */
	p = wrap_mmap_drop();
	if (p == MAP_FAILED || syscall(SYS_munmap, p, 4 * PAGE))
		return 33;

	/* the last two pages unmapped: two are left */
	p = sys_mmap_partial();
	if (p == MAP_FAILED || syscall(SYS_munmap, p + 2 * PAGE, 2 * PAGE))
		return 34;
	want_bytes("mmap", "sys_mmap_partial", 2 * PAGE);

	/* one page, grown to five (and moved, maybe): the old range goes */
	p = sys_map(PAGE);
	if (p == MAP_FAILED)
		return 35;
	p = sys_mremap_keep(p);
	if (p == MAP_FAILED)
		return 36;
	want_bytes("mremap", "sys_mremap_keep", 5 * PAGE);

	/* a failed munmap and mremap: errno as the kernel says, nothing recorded */
	errno = 0;
	if (syscall(SYS_munmap, (void *)1, PAGE) != -1 || errno != EINVAL)
		return 37;
	errno = 0;
	if (syscall(SYS_mremap, (void *)1, PAGE, PAGE, 0) != -1 || errno != EINVAL)
		return 38;
	printf("done\n");
	return 0;
}

/* ---- System V shared memory ---- */

static NOINLINE int sys_shmget_keep(size_t size)
{
	int id = (int)syscall(SYS_shmget, IPC_PRIVATE, size, IPC_CREAT | 0600);

	KEEP_FRAME();
	return id;
}

static NOINLINE int sys_shmget_drop(size_t size)
{
	int id = (int)syscall(SYS_shmget, IPC_PRIVATE, size, IPC_CREAT | 0600);

	KEEP_FRAME();
	return id;
}

static NOINLINE int wrap_shmget_drop(size_t size)
{
	int id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);

	KEEP_FRAME();
	return id;
}

static NOINLINE void *sys_shmat_keep(int id)
{
	void *p = (void *)syscall(SYS_shmat, id, NULL, 0);

	KEEP_FRAME();
	return p;
}

static NOINLINE void *sys_shmat_drop(int id)
{
	void *p = (void *)syscall(SYS_shmat, id, NULL, 0);

	KEEP_FRAME();
	return p;
}

static NOINLINE void *wrap_shmat_drop(int id)
{
	void *p = shmat(id, NULL, 0);

	KEEP_FRAME();
	return p;
}

static int shm_main(void)
{
	int kept, id, e;
	key_t key;
	void *p;

	/* made through syscall(), attached through it and never detached nor removed */
	kept = sys_shmget_keep(3 * PAGE);
	if (kept < 0)
		return 41;
	printf("segment %d\n", kept);
	want_bytes("shm shmget", "sys_shmget_keep", 3 * PAGE);
	p = sys_shmat_keep(kept);
	if (p == (void *)-1)
		return 42;
	memset(p, 1, 3 * PAGE);
	want_bytes("shm-map shmat", "sys_shmat_keep", 3 * PAGE);

	/* attached through syscall(), detached by the wrapper */
	p = sys_shmat_drop(kept);
	if (p == (void *)-1 || shmdt(p))
		return 43;
	/* attached by the wrapper, detached through syscall() */
	p = wrap_shmat_drop(kept);
	if (p == (void *)-1 || syscall(SYS_shmdt, p))
		return 44;
	/* attached and detached through syscall() */
	p = sys_shmat_drop(kept);
	if (p == (void *)-1 || syscall(SYS_shmdt, p))
		return 45;

	/* made through syscall(), removed by the wrapper, and the other way round */
	id = sys_shmget_drop(PAGE);
	if (id < 0 || shmctl(id, IPC_RMID, NULL))
		return 46;
	id = wrap_shmget_drop(PAGE);
	if (id < 0 || syscall(SYS_shmctl, id, IPC_RMID, NULL))
		return 47;
	/* made, attached, removed and detached through syscall() */
	id = sys_shmget_drop(2 * PAGE);
	p = id < 0 ? (void *)-1 : sys_shmat_drop(id);
	if (p == (void *)-1 || syscall(SYS_shmctl, id, IPC_RMID, NULL) || syscall(SYS_shmdt, p))
		return 48;

	/* a keyed segment made by the wrapper, got again through syscall() with IPC_CREAT:
	 * it existed (shmget_existing, not the program's to remove), removed once */
	key = (key_t)(0x52490000 | (getpid() & 0xffff));
	id = shmget(key, PAGE, IPC_CREAT | IPC_EXCL | 0600);
	if (id < 0 || syscall(SYS_shmget, key, PAGE, IPC_CREAT | 0600) != id ||
	    syscall(SYS_shmctl, id, IPC_RMID, NULL))
		return 52;

	/* refused calls: errno as the kernel says, nothing recorded */
	errno = 0;
	if (syscall(SYS_shmdt, (void *)PAGE) != -1 || errno != EINVAL)
		return 49;
	errno = 0;
	e = (int)syscall(SYS_shmctl, -1, IPC_RMID, NULL);
	if (e != -1 || errno != EINVAL)
		return 50;
	printf("done\n");
	return 0;
}

/* Remove the segments shm left (not traced: the test's cleanup). */
static int rmid_main(int n, char **ids)
{
	int rc = 0;

	for (int i = 0; i < n; i++)
		if (shmctl(atoi(ids[i]), IPC_RMID, NULL))
			rc = 51;
	return rc;
}

/* ---- memfd_secret (no glibc wrapper) ---- */

static NOINLINE int sys_memfd_secret_keep(void)
{
	int fd = (int)syscall(SYS_memfd_secret, O_CLOEXEC);

	KEEP_FRAME();
	return fd;
}

static NOINLINE int sys_memfd_secret_drop(void)
{
	int fd = (int)syscall(SYS_memfd_secret, 0);

	KEEP_FRAME();
	return fd;
}

static NOINLINE void *wrap_map_secret(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	KEEP_FRAME();
	return p;
}

static NOINLINE void *sys_map_secret(int fd, size_t len)
{
	void *p = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	KEEP_FRAME();
	return p;
}

static int secret_main(void)
{
	int fd;
	char *p;

	/* kept, mapped twice: one mapping kept, the other unmapped */
	fd = sys_memfd_secret_keep();
	if (fd < 0 && errno == ENOSYS) {
		printf("this kernel has no memfd_secret (ENOSYS)\n");
		return 77;
	}
	if (fd < 0 || ftruncate(fd, 2 * PAGE))
		return 61;
	want_bytes("fd memfd_secret", "sys_memfd_secret_keep", 0);
	p = wrap_map_secret(fd, 2 * PAGE);
	if (p == MAP_FAILED)
		return 62;
	memset(p, 1, 2 * PAGE);
	want_bytes("shm-map mmap", "wrap_map_secret", 2 * PAGE);
#if __SIZEOF_LONG__ == 8
	p = sys_map_secret(fd, PAGE);
	if (p == MAP_FAILED || munmap(p, PAGE))
		return 63;
#endif

	/* made, mapped, unmapped and closed */
	fd = sys_memfd_secret_drop();
	if (fd < 0 || ftruncate(fd, PAGE))
		return 64;
	p = wrap_map_secret(fd, PAGE);
	if (p == MAP_FAILED || munmap(p, PAGE) || close(fd))
		return 65;

	/* refused: errno as the kernel says, nothing recorded */
	errno = 0;
	if (syscall(SYS_memfd_secret, ~0u) != -1 || errno != EINVAL)
		return 66;
	printf("done\n");
	return 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc == 3 && !strcmp(argv[1], "fd"))
		rc = fd_main(argv[2]);
	else if (argc == 2 && !strcmp(argv[1], "mem"))
		rc = mem_main();
	else if (argc == 2 && !strcmp(argv[1], "shm"))
		rc = shm_main();
	else if (argc >= 2 && !strcmp(argv[1], "rmid"))
		rc = rmid_main(argc - 2, argv + 2);
	else if (argc == 2 && !strcmp(argv[1], "secret"))
		rc = secret_main();
	else {
		fprintf(stderr, "usage: syscall_res fd FILE | mem | shm | rmid ID... | secret\n");
		return 2;
	}
	fflush(stdout);
	return rc;
}
