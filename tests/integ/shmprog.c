/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of the integ/preload-shm-*.sh tests: uses shared
 * memory at known sites (POSIX shm_open + ftruncate + mmap + munmap, in
 * part and in whole, + shm_unlink; anonymous shared mappings and one
 * replaced by MAP_FIXED; System V shmget + shmat + shmdt + IPC_RMID; a
 * memfd), next to private mappings that are not shared memory, and checks
 * that the memory is really shared and errno survives the hooks.
 *
 *	shmprog DIR
 *
 * The shm:* and fd:* events the resource tracer must record are written,
 * in order and as `rip dump` prints them (bt=*), to fd 9 if it is open; the
 * mem:unmap events of the private mappings it unmaps, to fd 8 if it is open.
 * stdout is the same with and without the preload library; failures go to
 * stderr and make the exit status 1.  Ends with exit().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#define SENTINEL 4242

static int expect_fd = -1, expect_mem_fd = -1;
static int failures;
static size_t page;

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "shmprog: FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	failures++;
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fail(__VA_ARGS__);                                                         \
	} while (0)

static void vexpect(int fd, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	if (fd < 0)
		return;
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	line[n++] = '\n';
	if (write(fd, line, (size_t)n) != n)
		fail("cannot write the expected events");
}

static void expect(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vexpect(expect_fd, fmt, ap);
	va_end(ap);
}

/* A munmap of private memory: a mem:unmap event, never a shm:detach. */
static void ev_unmap_private(const void *addr, size_t size)
{
	if (expect_mem_fd >= 0 &&
	    dprintf(expect_mem_fd, "mem:unmap addr=%p size=%zu bt=* kind=munmap\n", addr, size) < 0)
		fail("cannot write the expected events");
}

static void ev_attach(const void *addr, size_t size, long id, const char *kind)
{
	expect("shm:attach addr=%p size=%zu id=%ld bt=* kind=%s", addr, size, id, kind);
}

static void ev_detach(const void *addr, size_t size, const char *kind)
{
	expect("shm:detach addr=%p size=%zu bt=* kind=%s", addr, size, kind);
}

static void *map(void *addr, size_t len, int flags, int fd)
{
	void *p;

	errno = SENTINEL;
	p = mmap(addr, len, PROT_READ | PROT_WRITE, flags, fd, 0);
	CHECK(p != MAP_FAILED, "mmap %zu flags %#x: %s", len, flags, strerror(errno));
	CHECK(errno == SENTINEL, "mmap changed errno to %d", errno);
	return p;
}

static void unmap(void *addr, size_t len)
{
	errno = SENTINEL;
	CHECK(munmap(addr, len) == 0, "munmap: %s", strerror(errno));
	CHECK(errno == SENTINEL, "munmap changed errno to %d", errno);
}

static void posix_shm(void)
{
	char name[64];
	char *p, *q;
	int fd;

	snprintf(name, sizeof(name), "/rip-shmprog-%d", (int)getpid());
	errno = SENTINEL;
	fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	CHECK(fd >= 0, "shm_open: %s", strerror(errno));
	CHECK(errno == SENTINEL, "shm_open changed errno to %d", errno);
	expect("fd:open fd=%d bt=* kind=open flags=%d path=\"/dev/shm%s\"", fd,
	       O_CREAT | O_EXCL | O_RDWR, name);
	expect("shm:create id=%d size=0 bt=* kind=shm_open name=\"%s\"", fd, name);
	CHECK(ftruncate(fd, 3 * page) == 0, "ftruncate: %s", strerror(errno));
	expect("shm:resize id=%d size=%zu bt=* kind=ftruncate name=\"%s\"", fd, 3 * page, name);

	p = map(NULL, 3 * page, MAP_SHARED, fd);
	ev_attach(p, 3 * page, fd, "mmap");
	q = map(NULL, page, MAP_SHARED, fd);
	ev_attach(q, page, fd, "mmap");
	strcpy(p, "shared");
	CHECK(!strcmp(q, "shared"), "the two mappings do not share memory");
	unmap(q, page);
	ev_detach(q, page, "munmap");

	/* part of a mapping, then the rest: what was unmapped, piece by piece */
	unmap(p + page, page);
	ev_detach(p + page, page, "munmap");
	unmap(p, 3 * page);
	ev_detach(p, page, "munmap");
	ev_detach(p + 2 * page, page, "munmap");

	/* a failed shm_open records nothing */
	errno = 0;
	CHECK(shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600) == -1 && errno == EEXIST,
	      "second O_EXCL shm_open: errno %d", errno);

	CHECK(close(fd) == 0, "close");
	expect("fd:close fd=%d bt=* kind=close", fd);
	errno = SENTINEL;
	CHECK(shm_unlink(name) == 0, "shm_unlink: %s", strerror(errno));
	CHECK(errno == SENTINEL, "shm_unlink changed errno to %d", errno);
	expect("shm:remove id=-1 bt=* kind=shm_unlink name=\"%s\"", name);
	errno = 0;
	CHECK(shm_unlink(name) == -1 && errno == ENOENT, "second shm_unlink: errno %d", errno);
	printf("ok posix shm\n");
}

static void mappings(const char *dir)
{
	char path[4096], *p, *a;
	int fd;

	/* anonymous shared: id -1, size in whole pages */
	p = map(NULL, page + 100, MAP_SHARED | MAP_ANONYMOUS, -1);
	ev_attach(p, 2 * page, -1, "mmap");
	unmap(p, page + 100);
	ev_detach(p, 2 * page, "munmap");

	/* private mappings are not shared memory: no shm event */
	p = map(NULL, page, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	unmap(p, page);
	ev_unmap_private(p, page);
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && ftruncate(fd, page) == 0, "file: %s", strerror(errno));
	expect("fd:open fd=%d bt=* kind=open flags=%d path=\"%s\"", fd, O_RDWR | O_CREAT | O_TRUNC,
	       path);
	p = map(NULL, page, MAP_PRIVATE, fd);
	unmap(p, page);
	ev_unmap_private(p, page);

	/* a shared file mapping is: id = the fd */
	p = map(NULL, page, MAP_SHARED, fd);
	ev_attach(p, page, fd, "mmap");
	unmap(p, page);
	ev_detach(p, page, "munmap");
	CHECK(close(fd) == 0, "close");
	expect("fd:close fd=%d bt=* kind=close", fd);

	/* MAP_FIXED over the first page of a shared mapping: that page is replaced */
	a = map(NULL, 2 * page, MAP_SHARED | MAP_ANONYMOUS, -1);
	ev_attach(a, 2 * page, -1, "mmap");
	CHECK(map(a, page, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1) == a, "MAP_FIXED moved");
	ev_detach(a, page, "munmap");
	ev_attach(a, page, -1, "mmap");
	unmap(a + page, page);
	ev_detach(a + page, page, "munmap");
	unmap(a, page);
	ev_detach(a, page, "munmap");
	printf("ok mappings\n");
}

static void sysv_shm(void)
{
	char *a, *b;
	key_t key;
	int id, id2;

	errno = SENTINEL;
	id = shmget(IPC_PRIVATE, 10000, IPC_CREAT | 0600);
	if (id < 0 && (errno == ENOSYS || errno == EPERM || errno == ENOSPC)) {
		printf("no System V shared memory here\n");
		return;
	}
	CHECK(id >= 0, "shmget: %s", strerror(errno));
	CHECK(errno == SENTINEL, "shmget changed errno to %d", errno);
	expect("shm:create id=%d size=10000 bt=* kind=shmget name=\"\"", id);

	a = shmat(id, NULL, 0);
	CHECK(a != (void *)-1, "shmat: %s", strerror(errno));
	CHECK(errno == SENTINEL, "shmat changed errno to %d", errno);
	expect("shm:attach addr=%p size=10000 id=%d bt=* kind=shmat", a, id);
	b = shmat(id, NULL, SHM_RDONLY);
	CHECK(b != (void *)-1, "shmat 2: %s", strerror(errno));
	expect("shm:attach addr=%p size=10000 id=%d bt=* kind=shmat", b, id);
	strcpy(a, "sysv");
	CHECK(!strcmp(b, "sysv"), "the two attachments do not share memory");
	CHECK(shmdt(b) == 0, "shmdt: %s", strerror(errno));
	CHECK(errno == SENTINEL, "shmdt changed errno to %d", errno);
	expect("shm:detach addr=%p size=10000 bt=* kind=shmdt", b);
	errno = 0;
	CHECK(shmdt(b) == -1 && errno == EINVAL, "second shmdt: errno %d", errno);
	CHECK(shmat(-1, NULL, 0) == (void *)-1, "shmat of a bad id");

	CHECK(shmctl(id, IPC_RMID, NULL) == 0, "IPC_RMID: %s", strerror(errno));
	expect("shm:remove id=%d bt=* kind=IPC_RMID name=\"\"", id);
	/* still attached after IPC_RMID, until this */
	CHECK(!strcmp(a, "sysv"), "the segment went away with IPC_RMID");
	CHECK(shmdt(a) == 0, "shmdt after IPC_RMID: %s", strerror(errno));
	expect("shm:detach addr=%p size=10000 bt=* kind=shmdt", a);

	/* a keyed segment: created, then looked up again with size 0 */
	key = (key_t)(0x52490000 | (getpid() & 0xffff));
	id = shmget(key, 3000, IPC_CREAT | IPC_EXCL | 0600);
	CHECK(id >= 0, "shmget key: %s", strerror(errno));
	expect("shm:create id=%d size=3000 bt=* kind=shmget name=\"0x%08x\"", id, (unsigned)key);
	id2 = shmget(key, 0, 0600);
	CHECK(id2 == id, "shmget of the existing key: %d, want %d", id2, id);
	expect("shm:create id=%d size=3000 bt=* kind=shmget_existing name=\"0x%08x\"", id,
	       (unsigned)key);
	a = shmat(id, NULL, 0);
	CHECK(a != (void *)-1, "shmat key: %s", strerror(errno));
	expect("shm:attach addr=%p size=3000 id=%d bt=* kind=shmat", a, id);
	/* munmap works on an attachment too */
	unmap(a, page);
	ev_detach(a, 3000, "munmap");
	CHECK(shmctl(id, IPC_RMID, NULL) == 0, "IPC_RMID 2: %s", strerror(errno));
	expect("shm:remove id=%d bt=* kind=IPC_RMID name=\"\"", id);
	printf("ok sysv shm\n");
}

static void memfd(void)
{
	char *p;
	int fd;

	fd = memfd_create("shmprog", 0);
	CHECK(fd >= 0, "memfd_create: %s", strerror(errno));
	expect("fd:open fd=%d bt=* kind=memfd flags=%d path=\"memfd:shmprog\"", fd, O_RDWR);
	expect("shm:create id=%d size=0 bt=* kind=memfd_create name=\"shmprog\"", fd);
	CHECK(ftruncate(fd, page) == 0, "ftruncate memfd");
	p = map(NULL, page, MAP_SHARED, fd);
	ev_attach(p, page, fd, "mmap");
	strcpy(p, "memfd");
	unmap(p, page);
	ev_detach(p, page, "munmap");
	CHECK(close(fd) == 0, "close memfd");
	expect("fd:close fd=%d bt=* kind=close", fd);
	printf("ok memfd\n");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: shmprog DIR\n");
		return 2;
	}
	if (fcntl(9, F_GETFD) >= 0)
		expect_fd = 9;
	if (fcntl(8, F_GETFD) >= 0)
		expect_mem_fd = 8;
	page = (size_t)sysconf(_SC_PAGESIZE);
	posix_shm();
	mappings(argv[1]);
	sysv_shm();
	memfd();
	printf("%s\n", failures ? "FAILED" : "all checks passed");
	fflush(stdout);
	exit(failures ? 1 : 0);
}
