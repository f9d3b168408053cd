// SPDX-License-Identifier: Apache-2.0
/*
 * Description: a program with known allocation sites for the tests of
 * librip-preload.so's memory hooks.  Modes (argv[1]):
 *
 *   basic          every allocator once or more from its own noinline site
 *                  function (sizes 1001..1009, see below), a realloc chain,
 *                  an anonymous mmap, one leak; with MEMPROG_SITES=FILE it
 *                  writes "name address" of each site function there
 *   signal         frees from a SIGALRM handler while main allocates
 *   fork           a child that allocates without exec, then exits
 *   dlopen LIB     dlopen LIB and call its alloc_something(), then dlclose
 *   threads N      N threads that allocate and free
 *   bench N T      N malloc+free pairs of 64 bytes on each of T threads;
 *                  prints "ns/pair X"
 *
 * Prints "memprog done" and exits 0 when all went well.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINL __attribute__((noinline))

static void *volatile sink;
static void *volatile no_ptr; /* NULL the compiler cannot see */

NOINL static void *site_malloc(void)
{
	void *p = malloc(1001);

	sink = p; /* after the call: no tail call, the site is frames[0] */
	return p;
}

NOINL static void *site_calloc(void)
{
	void *p = calloc(7, 143); /* 1001 */

	sink = p; /* after the call: no tail call, the site is frames[0] */
	return p;
}

NOINL static void *site_realloc(void)
{
	void *p = realloc(no_ptr, 1002);

	p = realloc(p, 20020);
	p = realloc(p, 300300);
	sink = p; /* after the call: no tail call, the site is frames[0] */
	return p;
}

NOINL static void *site_memalign(void)
{
	void *p = NULL, *q, *r;

	if (posix_memalign(&p, 64, 1003))
		return NULL;
	q = aligned_alloc(128, 1024 * 1 + 0); /* 1024: a multiple of 128 */
	r = memalign(256, 1005);
	sink = q; /* seen: the compiler may not drop the pair */
	free(sink);
	sink = r;
	free(sink);
	sink = p; /* after the call: no tail call, the site is frames[0] */
	return p;
}

NOINL static void *site_valloc(void)
{
	void *p = valloc(1006);

	sink = p; /* after the call: no tail call, the site is frames[0] */
	return p;
}

NOINL static void *site_mmap(void)
{
	void *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	sink = p; /* after the call: no tail call, the site is frames[0] */
	return p == MAP_FAILED ? NULL : p;
}

NOINL static void *site_leak(void)
{
	void *p = malloc(1009);

	sink = p; /* after the call: no tail call, the site is frames[0] */
	return p;
}

static int basic(void)
{
	const char *out = getenv("MEMPROG_SITES");
	void *p;

	if (out) {
		FILE *f = fopen(out, "w");

		if (!f)
			return 1;
		fprintf(f, "site_malloc %p\nsite_calloc %p\nsite_realloc %p\nsite_memalign %p\n",
			(void *)site_malloc, (void *)site_calloc, (void *)site_realloc,
			(void *)site_memalign);
		fprintf(f, "site_valloc %p\nsite_mmap %p\nsite_leak %p\nbasic %p\n",
			(void *)site_valloc, (void *)site_mmap, (void *)site_leak, (void *)basic);
		fclose(f);
	}
	for (int i = 0; i < 100; i++) /* one stack, one rip:bt */
		free(site_malloc());
	free(site_calloc());
	p = site_realloc();
	if (malloc_usable_size(p) < 300300)
		return 1;
	free(p);
	free(site_memalign());
	free(site_valloc());
	p = site_mmap();
	if (!p || munmap(p, 1 << 16))
		return 1;
	free(NULL);
	sink = site_leak();
	return 0;
}

/* ---- signal ---- */

static void *volatile sig_ptr;
static volatile sig_atomic_t sig_count;

static void on_alarm(int sig)
{
	void *p = sig_ptr;

	sig_ptr = NULL;
	free(p); /* free(NULL) often: fine */
	sig_count++;
}

static int sigmode(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	struct timespec t0, t;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++) {
			void *p = malloc(32 + i % 512);

			free(malloc(16));
			p = __atomic_exchange_n(&sig_ptr, p, __ATOMIC_SEQ_CST);
			free(p);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 1 || sig_count < 20);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	free(sig_ptr);
	return 0;
}

/* ---- fork ---- */

static int forkmode(void)
{
	int st;
	pid_t pid;

	free(malloc(100));
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (int i = 0; i < 1000; i++)
			free(site_malloc());
		sink = site_leak();
		_exit(0);
	}
	free(site_calloc());
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	return 0;
}

/* ---- dlopen ---- */

static int dlmode(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	void *(*fn)(void);
	void *p;

	if (!h) {
		fprintf(stderr, "memprog: %s\n", dlerror());
		return 1;
	}
	fn = (void *(*)(void))dlsym(h, "alloc_something");
	if (!fn)
		return 1;
	p = fn();
	free(p);
	dlclose(h);
	return 0;
}

/* ---- threads and bench ---- */

static long per_thread = 10000;

static void *worker(void *arg)
{
	for (long i = 0; i < per_thread; i++) {
		void *p = malloc(64);

		__asm__ __volatile__("" : : "r"(p) : "memory");
		free(p);
	}
	return NULL;
}

static int run_threads(int n)
{
	pthread_t t[64];

	if (n < 1 || n > 64)
		return 1;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static int bench(long n, int threads)
{
	struct timespec a, b;
	double ns;

	per_thread = n / 10 ? n / 10 : 1;
	run_threads(threads); /* warm up: stacks interned, rings taken */
	per_thread = n;
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (run_threads(threads))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("ns/pair %.1f\n", ns / (double)n); /* wall time per pair on each thread */
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";
	int rc;

	if (!strcmp(mode, "basic"))
		rc = basic();
	else if (!strcmp(mode, "signal"))
		rc = sigmode();
	else if (!strcmp(mode, "fork"))
		rc = forkmode();
	else if (!strcmp(mode, "dlopen") && argc > 2)
		rc = dlmode(argv[2]);
	else if (!strcmp(mode, "threads"))
		rc = run_threads(argc > 2 ? atoi(argv[2]) : 4);
	else if (!strcmp(mode, "bench") && argc > 3)
		rc = bench(atol(argv[2]), atoi(argv[3]));
	else {
		fprintf(stderr, "usage: memprog basic|signal|fork|dlopen LIB|threads N|bench N T\n");
		return 2;
	}
	if (rc)
		fprintf(stderr, "memprog: %s failed\n", mode);
	else
		printf("memprog done\n");
	return rc;
}
