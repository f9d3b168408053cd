// SPDX-License-Identifier: Apache-2.0
/*
 * tests/integ/shmexistprog.c - shared memory got by a process that did not
 * make it (tests/integ/shm-existing.sh), the way a PostgreSQL backend
 * attaches the segments its postmaster or another backend made.
 *
 *   shmexistprog make NAME KEY        (untraced) make the POSIX object NAME
 *                                     (4096 bytes) and the System V segment
 *                                     KEY (8192 bytes)
 *   shmexistprog use NAME KEY NEW     open NAME without O_CREAT and with
 *                                     O_CREAT alone, map it; get KEY
 *                                     without IPC_CREAT and with IPC_CREAT
 *                                     alone, attach it; then make NEW with
 *                                     O_CREAT alone (1234 bytes) and leave it
 *   shmexistprog clean NAME KEY NEW   remove all three
 *
 * KEY is a number (strtol base 0).  Exit 0, or 1 with a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#define CHECK(c, ...)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "shmexistprog: " __VA_ARGS__);                             \
			fputc('\n', stderr);                                                       \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static void use_posix(const char *name, int oflag)
{
	int fd = shm_open(name, oflag, 0600);
	void *p;

	CHECK(fd >= 0, "shm_open %s (flags %#x): %s", name, oflag, strerror(errno));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "mmap %s: %s", name, strerror(errno));
	CHECK(munmap(p, 4096) == 0, "munmap: %s", strerror(errno));
	close(fd);
}

static void use_sysv(key_t key, int flags)
{
	int id = shmget(key, 0, flags);
	void *p;

	CHECK(id >= 0, "shmget %#x (flags %#x): %s", (unsigned)key, flags, strerror(errno));
	p = shmat(id, NULL, 0);
	CHECK(p != (void *)-1, "shmat: %s", strerror(errno));
	CHECK(shmdt(p) == 0, "shmdt: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	key_t key;
	int fd;

	CHECK(argc >= 4, "usage: shmexistprog make|use|clean NAME KEY [NEW]");
	key = (key_t)strtol(argv[3], NULL, 0);
	if (!strcmp(argv[1], "make")) {
		fd = shm_open(argv[2], O_CREAT | O_EXCL | O_RDWR, 0600);
		CHECK(fd >= 0, "shm_open %s: %s", argv[2], strerror(errno));
		CHECK(ftruncate(fd, 4096) == 0, "ftruncate: %s", strerror(errno));
		close(fd);
		CHECK(shmget(key, 8192, IPC_CREAT | IPC_EXCL | 0600) >= 0, "shmget: %s",
		      strerror(errno));
		return 0;
	}
	CHECK(argc == 5, "usage: shmexistprog use|clean NAME KEY NEW");
	if (!strcmp(argv[1], "clean")) {
		int id = shmget(key, 0, 0600);

		shm_unlink(argv[2]);
		shm_unlink(argv[4]);
		if (id >= 0)
			shmctl(id, IPC_RMID, NULL);
		return 0;
	}
	CHECK(!strcmp(argv[1], "use"), "unknown mode %s", argv[1]);
	use_posix(argv[2], O_RDWR);
	use_posix(argv[2], O_CREAT | O_RDWR);
	use_sysv(key, 0600);
	use_sysv(key, IPC_CREAT | 0600);
	fd = shm_open(argv[4], O_CREAT | O_RDWR, 0600);
	CHECK(fd >= 0, "shm_open %s: %s", argv[4], strerror(errno));
	CHECK(ftruncate(fd, 1234) == 0, "ftruncate: %s", strerror(errno));
	close(fd);
	return 0;
}
