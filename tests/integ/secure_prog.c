// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of integ/secure-exec.sh, which runs it
 * set-user-ID root as nobody (secure execution) and, for comparison, as
 * root.  Linked with librip, it never asks for a ring by itself; librip's
 * constructor opens one if RIP_RING says so.  Then it asks for one with
 * rip_ring_open(NULL) (librip picks the place), and, given PRELOAD (the
 * path of librip-preload.so), loads the preload library with dlopen, as a
 * loader that let it in would, and counts the slots in use in its ring
 * file before and after (the preload library gives the main thread one).
 * It prints, one per line:
 *
 *	secure N          getauxval(AT_SECURE)
 *	auto PATH|none    the ring file open after the constructors
 *	open ERRNO PATH|none   rip_ring_open(NULL)'s result, the file open then
 *	slots N -> M      slots in use before and after the dlopen (PRELOAD)
 *
 *	secure_prog [PRELOAD]
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <rip.h>
#include <rip/abi.h>

static void print_path(const char *what, int err)
{
	char path[PATH_MAX];

	if (err < 0)
		printf("%s %d", what, -err);
	else
		printf("%s", what);
	if (rip_ring_path(path, sizeof(path)) == 0)
		printf(" %s\n", path);
	else
		printf(" none\n");
}

/* Slots ever used in our ring file (its header's fresh), -1 without a file. */
static long slots_used(void)
{
	struct rip_file_hdr h;
	char path[PATH_MAX];
	long n = -1;
	int fd;

	if (rip_ring_path(path, sizeof(path)))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h))
		n = (long)__atomic_load_n(&h.fresh, __ATOMIC_RELAXED);
	close(fd);
	return n;
}

int main(int argc, char **argv)
{
	long before;

	printf("secure %lu\n", getauxval(AT_SECURE));
	print_path("auto", 0);
	print_path("open", rip_ring_open(NULL));
	if (argc > 1) {
		before = slots_used();
		if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
			printf("dlopen failed: %s\n", dlerror());
			return 1;
		}
		printf("slots %ld -> %ld\n", before, slots_used());
	}
	fflush(stdout);
	return 0;
}
