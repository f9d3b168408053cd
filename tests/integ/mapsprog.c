/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: helper of tests/integ/leaks-mremap.sh: one way of making,
 * moving and unmapping mappings per run, named by its first argument, on
 * the file given second (opened read-write, at least 4 pages): private file
 * mappings moved and resized by mremap, shared ones, MREMAP_FIXED and
 * MREMAP_DONTUNMAP, mremaps that fail, munmap of a head, a tail and a hole,
 * MAP_FIXED over recorded mappings, shmat.  Cases named *-leak leave a known
 * mapping mapped (the test checks it is reported); the others leave none.
 * Exit 0 and "done" on stdout, 77 if the kernel refuses a call the case is
 * about, 9 for an unknown case, 2 or 3 when a call fails.
 *
 *	mapsprog CASE FILE
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4 /* Linux 5.7 */
#endif
#define P 4096

/* new_address NULL: Linux 6.x refuses MREMAP_DONTUNMAP with another one unless MREMAP_FIXED */
int main(int argc, char **argv)
{
	const char *what = argc > 2 ? argv[1] : "";
	int fd = argc > 2 ? open(argv[2], O_RDWR) : -1;
	char *p, *q, *r;
	if (fd < 0)
		return 2;
	if (!strcmp(what, "file-grow")) {
		p = mmap(NULL, P, PROT_READ, MAP_PRIVATE, fd, 0);
		q = mremap(p, P, 4 * P, MREMAP_MAYMOVE);
		if (q == MAP_FAILED)
			return 3;
		r = mremap(q, 4 * P, 2 * P, 0);
		if (r == MAP_FAILED)
			return 3;
		munmap(r, 2 * P);
	} else if (!strcmp(what, "file-move")) {
		p = mmap(NULL, P, PROT_READ, MAP_PRIVATE, fd, 0);
		q = mmap(NULL, 8 * P, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		r = mremap(p, P, P, MREMAP_MAYMOVE | MREMAP_FIXED, q + 4 * P);
		if (r == MAP_FAILED)
			return 3;
		munmap(r, P);
		munmap(q, 8 * P);
	} else if (!strcmp(what, "shared-anon")) {
		p = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		q = mremap(p, P, 4 * P, MREMAP_MAYMOVE);
		if (q == MAP_FAILED)
			return 3;
		munmap(q, 4 * P);
	} else if (!strcmp(what, "shared-file")) {
		p = mmap(NULL, P, PROT_READ, MAP_SHARED, fd, 0);
		q = mremap(p, P, 4 * P, MREMAP_MAYMOVE);
		if (q == MAP_FAILED)
			return 3;
		munmap(q, 4 * P);
	} else if (!strcmp(what, "dontunmap")) {
		p = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		q = mremap(p, 2 * P, 2 * P, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL);
		if (q == MAP_FAILED)
			return 77;
		munmap(q, 2 * P);
		munmap(p, 2 * P);
	} else if (!strcmp(what, "dontunmap-leak")) { /* old range stays: must be live */
		p = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		q = mremap(p, 2 * P, 2 * P, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL);
		if (q == MAP_FAILED)
			return 77;
		munmap(q, 2 * P);
	} else if (!strcmp(what, "dontunmap-shared")) {
		p = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		q = mremap(p, 2 * P, 2 * P, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL);
		if (q == MAP_FAILED) {
			munmap(p, 2 * P);
			return 0;
		}
		munmap(q, 2 * P);
		munmap(p, 2 * P);
	} else if (!strcmp(what,
			   "dontunmap-shared-leak")) { /* old range stays: a live attachment */
		p = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		q = mremap(p, 2 * P, 2 * P, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL);
		if (q == MAP_FAILED)
			return 77;
		munmap(q, 2 * P);
	} else if (!strcmp(what,
			   "file-keep")) { /* a remapped file mapping kept to exit is no leak */
		p = mmap(NULL, P, PROT_READ, MAP_PRIVATE, fd, 0);
		q = mremap(p, P, 4 * P, MREMAP_MAYMOVE);
		if (q == MAP_FAILED)
			return 3;
	} else if (!strcmp(what,
			   "shared-over-anon-remap")) { /* mremap FIXED of a shared map over anon */
		p = mmap(NULL, P, PROT_READ, MAP_SHARED, fd, 0);
		q = mmap(NULL, 4 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		r = mremap(p, P, P, MREMAP_MAYMOVE | MREMAP_FIXED, q + P);
		if (r == MAP_FAILED)
			return 3;
		munmap(q, P);
		munmap(q + 2 * P, 2 * P);
		munmap(r, P);
	} else if (!strcmp(what, "anon-over-shared-remap")) { /* mremap FIXED of anon over shared */
		p = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		q = mmap(NULL, 4 * P, PROT_READ, MAP_SHARED, fd, 0);
		r = mremap(p, P, P, MREMAP_MAYMOVE | MREMAP_FIXED, q + P);
		if (r == MAP_FAILED)
			return 3;
		munmap(q, P);
		munmap(q + 2 * P, 2 * P);
		munmap(r, P);
	} else if (!strcmp(what, "fail")) {
		p = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		q = mremap(p, 2 * P, 1ull << 50, 0); /* cannot grow in place that far */
		if (q != MAP_FAILED)
			return 3;
		q = mremap(p + 1, 2 * P, 4 * P, MREMAP_MAYMOVE); /* EINVAL */
		if (q != MAP_FAILED)
			return 3;
		munmap(p, 2 * P);
	} else if (!strcmp(what, "partial")) {
		p = mmap(NULL, 8 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(p, P);		  /* head */
		munmap(p + 7 * P, P);	  /* tail */
		munmap(p + 3 * P, 2 * P); /* hole */
		munmap(p + P, 2 * P);
		munmap(p + 5 * P, 2 * P);
	} else if (!strcmp(what, "partial-leak")) { /* 1 page left of 8 */
		p = mmap(NULL, 8 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(p, P);
		munmap(p + 7 * P, P);
		munmap(p + 3 * P, 2 * P);
		munmap(p + 5 * P, 2 * P);
		munmap(p + P, P);
	} else if (!strcmp(what, "fixed-over")) {
		p = mmap(NULL, 4 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		q = mmap(p + P, P, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0); /* file over anon */
		r = mmap(p + 2 * P, P, PROT_READ, MAP_SHARED | MAP_FIXED, fd,
			 0); /* shared over anon */
		if (q == MAP_FAILED || r == MAP_FAILED)
			return 3;
		munmap(p, 4 * P);
	} else if (!strcmp(what, "fixed-anon-over-shared")) {
		p = mmap(NULL, 4 * P, PROT_READ, MAP_SHARED, fd, 0);
		q = mmap(p + P, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			 -1, 0);
		if (q == MAP_FAILED)
			return 3;
		munmap(p, 4 * P);
	} else if (!strcmp(what, "anon-grow-move")) {
		p = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		q = mmap(NULL, 8 * P, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		r = mremap(p, P, 2 * P, MREMAP_MAYMOVE | MREMAP_FIXED, q + 2 * P);
		if (r == MAP_FAILED)
			return 3;
		munmap(r, 2 * P);
		munmap(q, 8 * P);
	} else if (!strcmp(what, "shmat")) {
		int id = shmget(IPC_PRIVATE, 3 * P, IPC_CREAT | 0600);
		if (id < 0)
			return 77;
		p = shmat(id, NULL, 0);
		q = shmat(id, NULL, SHM_RDONLY);
		shmctl(id, IPC_RMID, NULL);
		if (p == (void *)-1 || q == (void *)-1)
			return 3;
		shmdt(p);
		munmap(q, 3 * P);			  /* munmap of an attachment */
	} else if (!strcmp(what, "anon-partial-remap")) { /* mremap the middle of an anon mapping */
		p = mmap(NULL, 4 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		q = mremap(p + P, P, 3 * P, MREMAP_MAYMOVE);
		if (q == MAP_FAILED)
			return 3;
		munmap(q, 3 * P);
		munmap(p, P);
		munmap(p + 2 * P, 2 * P);
	} else
		return 9;
	close(fd);
	if (write(1, "done\n", 5) != 5)
		return 2;
	return 0;
}
