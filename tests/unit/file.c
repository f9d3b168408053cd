/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the ring file itself.  Created mode 0600, the size the
 * header says, with the header and queues backed at once; a second
 * rip_ring_open in the same process is -EALREADY; a path that exists is
 * -EEXIST and the file is left as it was; a symlink at the path is not
 * followed (an error, the target untouched); bad options are -EINVAL, and
 * options longer than the library's whose extra bytes are not all zero
 * -E2BIG (no file made), while a zero tail opens as usual.  On a
 * full tmpfs (a 1 MiB one mounted in TEST_TMP: needs root; without it that
 * case does not run and the test skips) opening a ring too big for it is
 * -ENOSPC, with no SIGBUS
 * and no file left behind; slots are backed as they are first taken, and
 * threads whose slot cannot be backed run untraced and are counted, never
 * a SIGBUS.  Each case runs in a child process of its own,
 * since a process has one ring.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rip.h>

#include "helpers.h"
#include "read/ringfile.h"

static char tmp[PATH_MAX / 2]; /* room for the names appended */
static const char *skipped;    /* a case that could not run here (it said why) */

static int open_at(const char *path, uint32_t slots)
{
	/* the smallest event rings, so that a small file fits a 1 MiB tmpfs */
	RIP_OPTS(rip_ring_opts, o, .path = path, .slots = slots, .ev_rings = 1,
		 .ev_ring_size = 2048, .ev_packet_size = 1024);

	return rip_ring_open(&o);
}

static pthread_barrier_t snap_barrier;

/* Snap, then stay until every thread has snapped: all hold their slot at once. */
static void *snap_thread(void *arg)
{
	for (int i = 0; i < 100; i++)
		rip_snap();
	pthread_barrier_wait(&snap_barrier);
	return arg;
}

static void case_basic(void)
{
	char path[PATH_MAX], back[PATH_MAX], err[RR_ERR_MAX];
	struct rr_file f;
	struct stat st;

	snprintf(path, sizeof(path), "%s/basic.ring", tmp);
	T_EQ(open_at(path, 100), 0);
	T_EQ(stat(path, &st), 0);
	T_EQ(st.st_mode & 07777, 0600);
	T_CHECK(S_ISREG(st.st_mode));
	/* backed at once: the header and the queues; slots and rings as they are first used */
	T_CHECK((long long)st.st_blocks * 512 >= RIP_HDR_SIZE);
	T_EQ(rip_ring_path(back, sizeof(back)), 0);
	T_STREQ(back, path);
	T_EQ(rip_ring_path(back, 4), -ERANGE);
	T_EQ(open_at(path, 100), -EALREADY);
	T_EQ(rip_ring_open(NULL), -EALREADY);
	T_EQ(rr_open(path, &f, err, sizeof(err)), 0);
	T_EQ(f.hdr.file_size, (uint64_t)st.st_size);
	T_EQ(f.hdr.slot_count, 100);
	T_EQ(f.hdr.pid, getpid());
	rr_close(&f);
	T_EQ(rip_ring_close(), 0);
	T_EQ(rip_ring_close(), -ENOENT);
	T_EQ(rip_ring_path(back, sizeof(back)), -ENOENT);
	T_EQ(access(path, F_OK), 0); /* the file outlives the ring */
}

static void case_exists(void)
{
	char path[PATH_MAX], buf[64] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/exists.ring", tmp);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	T_CHECK(fd >= 0);
	T_EQ(write(fd, "keep me\n", 8), 8);
	close(fd);
	T_EQ(open_at(path, 100), -EEXIST);
	fd = open(path, O_RDONLY);
	T_EQ(read(fd, buf, sizeof(buf)), 8);
	close(fd);
	T_STREQ(buf, "keep me\n");
}

static void case_symlink(void)
{
	char path[PATH_MAX], target[PATH_MAX], buf[64] = "";
	struct stat st;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/link.ring", tmp);
	snprintf(target, sizeof(target), "%s/target", tmp);
	fd = open(target, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	T_EQ(write(fd, "target\n", 7), 7);
	close(fd);
	T_EQ(symlink(target, path), 0);
	ret = open_at(path, 100);
	T_CHECK(ret < 0);
	T_EQ(stat(target, &st), 0);
	T_EQ(st.st_size, 7);
	T_EQ(st.st_mode & 07777, 0644);
	fd = open(target, O_RDONLY);
	T_EQ(read(fd, buf, sizeof(buf)), 7);
	close(fd);
	T_STREQ(buf, "target\n");
	/* a dangling symlink must not be followed to create its target either */
	snprintf(path, sizeof(path), "%s/dangling.ring", tmp);
	snprintf(target, sizeof(target), "%s/created-through-link", tmp);
	T_EQ(symlink(target, path), 0);
	T_CHECK(open_at(path, 100) < 0);
	T_CHECK(access(target, F_OK) != 0);
}

static void case_bad_opts(void)
{
	char path[PATH_MAX];
	RIP_OPTS(rip_ring_opts, o, .flags = 1);

	snprintf(path, sizeof(path), "%s/opts.ring", tmp);
	o.path = path;
	T_EQ(rip_ring_open(&o), -EINVAL);
	o.flags = 0;
	o.slots = (1u << 22) + 1;
	T_EQ(rip_ring_open(&o), -EINVAL);
	o.slots = 8;
	o.sz = 4;
	T_EQ(rip_ring_open(&o), -EINVAL);
	T_CHECK(access(path, F_OK) != 0);
	setenv("RIP_SLOTS", "lots", 1);
	o.sz = sizeof(o);
	o.slots = 0;
	T_EQ(rip_ring_open(&o), -EINVAL);
	T_CHECK(access(path, F_OK) != 0);
}

/*
 * A caller built against a later header, whose struct is longer: fields
 * this library does not know are refused unless zero (-E2BIG, as libbpf's
 * OPTS_VALID), never dropped.
 */
static void case_opts_tail(void)
{
	char path[PATH_MAX];
	struct {
		struct rip_ring_opts o;
		uint32_t later[3];
	} big;
	struct stat st;

	snprintf(path, sizeof(path), "%s/tail.ring", tmp);
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.o.path = path;
	big.o.slots = 8;
	big.later[2] = 1;
	T_EQ(rip_ring_open(&big.o), -E2BIG);
	big.later[2] = 0;
	big.later[0] = 0x100;
	T_EQ(rip_ring_open(&big.o), -E2BIG);
	T_CHECK(access(path, F_OK) != 0);
	big.later[0] = 0;
	T_EQ(rip_ring_open(&big.o), 0);
	T_EQ(stat(path, &st), 0);
}

/* Fill the tmpfs at dir with dir/fill, then give back keep bytes of it. */
static void fill_tmpfs(const char *dir, off_t keep)
{
	char fill[PATH_MAX + 8];
	static char block[4096];
	struct stat st;
	int fd;

	snprintf(fill, sizeof(fill), "%s/fill", dir);
	fd = open(fill, O_WRONLY | O_CREAT | O_EXCL, 0600);
	T_CHECK(fd >= 0);
	while (fd >= 0 && write(fd, block, sizeof(block)) == (ssize_t)sizeof(block))
		;
	if (fd >= 0)
		close(fd);
	if (keep)
		T_EQ(stat(fill, &st) || truncate(fill, st.st_size - keep), 0);
}

static void case_full_tmpfs(void)
{
	char dir[PATH_MAX / 2 + 16], path[PATH_MAX], probe[PATH_MAX];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/small", tmp);
	mkdir(dir, 0700);
	if (mount("tmpfs", dir, "tmpfs", 0, "size=1m")) {
		printf("cannot mount a tmpfs (%s): the full-tmpfs case cannot run here\n",
		       strerror(errno));
		_exit(T_SKIP);
	}
	snprintf(path, sizeof(path), "%s/big.ring", dir);
	snprintf(probe, sizeof(probe), "%s/probe.ring", dir);
	/*
	 * Creation backs the header and the category names (12 KiB): with
	 * 8 KiB left it fails, and leaves nothing.  The rest is backed as it is
	 * used, so 100000 slots (50 MB) fit in 1 MiB as long as few are used.
	 */
	{
		char fill[PATH_MAX + 8];

		fill_tmpfs(dir, 8192);
		T_EQ(open_at(path, 100000), -ENOSPC);
		T_CHECK(stat(path, &st) != 0);
		snprintf(fill, sizeof(fill), "%s/fill", dir);
		unlink(fill);
	}
	T_EQ(open_at(path, 100000), 0);
	rip_ring_close();
	unlink(path);
	/* a ring that fits still works there, and snaps do not fault */
	T_EQ(open_at(probe, 64), 0);
	for (int i = 0; i < 100; i++)
		rip_snap();
	/*
	 * Fill the tmpfs: slots are backed a page (8 slots) at a time as they
	 * are first taken, so of 20 threads that come now, 7 get the rest of
	 * the main thread's page and 13 find none that can be backed.  Those
	 * run untraced (no SIGBUS), and each is counted in overflow.
	 */
	{
		char err[RR_ERR_MAX];
		struct rr_file f;
		pthread_t t[20];

		fill_tmpfs(dir, 0);
		pthread_barrier_init(&snap_barrier, NULL, 20);
		for (int i = 0; i < 20; i++)
			T_EQ(pthread_create(&t[i], NULL, snap_thread, NULL), 0);
		for (int i = 0; i < 20; i++)
			pthread_join(t[i], NULL);
		T_EQ(rr_open(probe, &f, err, sizeof(err)), 0);
		T_EQ(__atomic_load_n(&((const struct rip_file_hdr *)f.map)->overflow,
				     __ATOMIC_RELAXED),
		     13);
		rr_close(&f);
	}
	rip_ring_close();
	umount2(dir, MNT_DETACH);
}

static int run_case(const char *name, void (*fn)(void))
{
	pid_t pid = fork();
	int status;

	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", name, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		t_failures = 0; /* the cases before, counted by the parent */
		fn();
		_exit(t_result());
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "%s: killed by signal %d\n", name, WTERMSIG(status));
		return 1;
	}
	if (WEXITSTATUS(status) == T_SKIP) {
		printf("%s: not run\n", name);
		skipped = name;
		return 0;
	}
	printf("%s: %s\n", name, WEXITSTATUS(status) ? "FAIL" : "ok");
	return WEXITSTATUS(status) != 0;
}

int main(void)
{
	const char *t = getenv("TEST_TMP");

	T_SKIP_IF(!t, "TEST_TMP is not set (run through tests/run.sh)");
	snprintf(tmp, sizeof(tmp), "%s", t);
	t_failures += run_case("basic", case_basic);
	t_failures += run_case("exists", case_exists);
	t_failures += run_case("symlink", case_symlink);
	t_failures += run_case("bad options", case_bad_opts);
	t_failures += run_case("options of a later header", case_opts_tail);
	t_failures += run_case("full tmpfs", case_full_tmpfs);
	{
		char dir[PATH_MAX];

		/* the child unmounts; this is for a child that died before it could */
		snprintf(dir, sizeof(dir), "%s/small", tmp);
		umount2(dir, MNT_DETACH);
	}
	if (!t_failures && skipped) {
		printf("skip: the %s case could not run here (see above); the others passed\n",
		       skipped);
		return T_SKIP;
	}
	return t_result();
}
