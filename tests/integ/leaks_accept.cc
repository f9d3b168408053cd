// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the leaky program of integ/leaks-accept.sh and
 * integ/leaks-golden.sh (C++, so the Makefile does not build it: the
 * scripts compile it with -O0 -g -fno-omit-frame-pointer).  Every leak site
 * is its own noinline function and its line carries a SITE:name tag, and
 * the line in main that calls it a CALL:name tag, so the tests find the
 * line numbers with grep.  argv[1] is the POSIX shm name to create;
 * argv[2], if given, how many times to make the noise (a longer trace).
 *
 * What it leaks (the tests' expectations; pointers are forgotten, so that
 * valgrind calls every block "definitely lost"):
 *	SITE:malloc          5 blocks of 48 bytes (240)
 *	SITE:calloc          1 block, calloc(10, 100) (1000)
 *	SITE:chain-realloc3  1 block of 1024: malloc(16), realloc 64, 256, 1024;
 *	                     the block takes the last realloc's backtrace
 *	SITE:realloc-null    1 block, realloc(NULL, 200)
 *	SITE:new             1 Node, new Node (40)
 *	SITE:new-array       1 block, new Node[7] (280: a trivial type, no cookie)
 *	SITE:open            1 descriptor, /dev/null
 *	SITE:pipe            1 descriptor (the write end; the read end is closed)
 *	SITE:shm-open        1 segment, argv[1], never unlinked
 *	SITE:shm-map         1 mapping of it, 8192 bytes, never unmapped
 * and nothing from realloc_freed, new_deleted, open_closed and noise, which
 * free, delete and close everything they make.  No stdio: its buffers
 * would be allocations made from main.  Before main returns, vg_scrub()
 * (tests/vgscrub.h) wipes every stale copy of a leaked pointer, so that
 * valgrind's verdict does not depend on the run: build with -I tests and
 * -Wl,-z,now.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "vgscrub.h"

#define NOINLINE __attribute__((noinline))

namespace acc {

struct Node {
	long v[5]; // 40 bytes, trivially destructible
};

// Where a pointer goes to be forgotten: no register or live stack slot keeps it.
static void *volatile sink;
// A null the compiler cannot see (it turns realloc(NULL, n) into malloc(n)).
static void *volatile nothing;

NOINLINE void leak_malloc(void)
{
	char *p = (char *)malloc(48); /* SITE:malloc */
	memset(p, 'm', 48);
	sink = p;
	sink = nullptr;
}

NOINLINE void leak_calloc(void)
{
	sink = calloc(10, 100); /* SITE:calloc */
	sink = nullptr;
}

NOINLINE void leak_realloc_chain(void)
{
	char *p = (char *)malloc(16); /* SITE:chain-malloc */
	memset(p, 'a', 16);
	p = (char *)realloc(p, 64); /* SITE:chain-realloc1 */
	memset(p, 'b', 64);
	p = (char *)realloc(p, 256); /* SITE:chain-realloc2 */
	memset(p, 'c', 256);
	p = (char *)realloc(p, 1024); /* SITE:chain-realloc3 */
	memset(p, 'd', 1024);
	sink = p;
	sink = nullptr;
}

NOINLINE void leak_realloc_null(void)
{
	sink = realloc(nothing, 200); /* SITE:realloc-null */
	sink = nullptr;
}

NOINLINE void realloc_freed(void)
{
	char *p = (char *)malloc(32);
	p = (char *)realloc(p, 4000);
	memset(p, 'e', 4000);
	p = (char *)realloc(p, 100);
	free(p);
}

NOINLINE void leak_new(void)
{
	Node *n = new Node(); /* SITE:new */
	n->v[0] = 1;
	sink = n;
	sink = nullptr;
}

NOINLINE void leak_new_array(void)
{
	Node *a = new Node[7](); /* SITE:new-array */
	a[6].v[4] = 2;
	sink = a;
	sink = nullptr;
}

NOINLINE void new_deleted(void)
{
	Node *n = new Node();
	Node *a = new Node[9]();
	std::string *s = new std::string(100, 's');
	sink = n;
	delete n;
	delete[] a;
	delete s;
	sink = nullptr;
}

NOINLINE void leak_open(void)
{
	open("/dev/null", O_RDONLY | O_CLOEXEC); /* SITE:open */
}

NOINLINE void leak_pipe_end(void)
{
	int p[2];

	if (pipe(p) == 0) /* SITE:pipe */
		close(p[0]);
}

NOINLINE void open_closed(void)
{
	int p[2];
	int fd = open("/dev/zero", O_RDONLY);

	if (fd >= 0)
		close(fd);
	if (pipe(p) == 0) {
		close(p[0]);
		close(p[1]);
	}
}

NOINLINE void leak_shm(const char *name)
{
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600); /* SITE:shm-open */
	char *m;

	if (fd < 0 || ftruncate(fd, 8192) != 0)
		_exit(3);
	m = (char *)mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0); /* SITE:shm-map */
	if (m == MAP_FAILED)
		_exit(4);
	m[0] = 1;
	close(fd);
}

NOINLINE void noise(void)
{
	std::vector<std::string> v;

	for (int i = 0; i < 50; i++)
		v.push_back(std::string(40 + i, 'x'));
	for (int i = 0; i < 20; i++)
		free(malloc(100 + i));
	free(calloc(3, 300));
}

} // namespace acc

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	for (int i = 0; i < 5; i++)
		acc::leak_malloc(); /* CALL:malloc */
	acc::leak_calloc(); /* CALL:calloc */
	acc::leak_realloc_chain(); /* CALL:chain-realloc3 */
	acc::leak_realloc_null(); /* CALL:realloc-null */
	acc::realloc_freed();
	acc::leak_new(); /* CALL:new */
	acc::leak_new_array(); /* CALL:new-array */
	acc::new_deleted();
	acc::leak_open(); /* CALL:open */
	acc::leak_pipe_end(); /* CALL:pipe */
	acc::open_closed();
	acc::leak_shm(argv[1]); /* CALL:shm */
	for (int i = argc > 2 ? atoi(argv[2]) : 1; i > 0; i--)
		acc::noise();
	if (write(1, "leaky done\n", 11) != 11)
		return 5;
	vg_scrub();
	return 0;
}
