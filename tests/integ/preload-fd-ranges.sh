#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Timeout: 120
#
# Description: close_range, closefrom, pidfd_open, pidfd_getfd, posix_spawn
# file actions and ftruncate of a shm_open object.  A program opens
# descriptors, closes a range of them with close_range, marks another
# range close-on-exec (CLOSE_RANGE_CLOEXEC: closes nothing), opens a pidfd
# and copies a descriptor through it, spawns /bin/true with file actions
# that close and replace descriptors in the child only, sizes a shm_open
# object with ftruncate, closes the highest descriptors with closefrom,
# and prints the descriptors open at its start and its end (from
# /proc/self/fd).  rip leaks --json must report exactly the descriptors
# open at the end that were not open at the start, with their kinds, no
# close of a descriptor never seen opened, and the object with its
# ftruncate size; strace must see the same close_range, closefrom and
# pidfd calls succeed.  A kernel without close_range or the pidfd calls
# (ENOSYS) skips the test; any other failure of the program fails it.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3 strace
CC=${CC:-cc}

cat >"$TEST_TMP/fr.c" <<'C'
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1u << 2)
#endif

extern char **environ;

/* A call this kernel does not have (ENOSYS): exit 77, the test skips; else exit code. */
static int failed(const char *call, int code)
{
	if (errno != ENOSYS)
		return code;
	printf("%s: not in this kernel\n", call);
	return 77;
}
int close_range(unsigned int first, unsigned int last, int flags);
void closefrom(int lowfd);
int pidfd_open(pid_t pid, unsigned int flags);
int pidfd_getfd(int pidfd, int targetfd, unsigned int flags);

/* The open descriptors, listed without opening one (no opendir): fcntl probes. */
static void list(const char *what)
{
	printf("%s", what);
	for (int fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			printf(" %d", fd);
	printf("\n");
	fflush(stdout);
}

static int at(int fd, int want)
{
	if (dup2(fd, want) != want)
		exit(10);
	close(fd);
	return want;
}

int main(int argc, char **argv)
{
	const char *shm = argv[2];
	int fds[8], pid_fd, copy, so;
	posix_spawn_file_actions_t fa;
	pid_t child;
	int status;

	list("start");
	/* 20..27: 20-23 closed by close_range, 24-25 marked close-on-exec, 26-27 kept */
	for (int i = 0; i < 8; i++)
		fds[i] = at(open(argv[1], O_RDONLY), 20 + i);
	if (close_range(20, 23, 0))
		return failed("close_range", 11);
	if (close_range(24, 25, CLOSE_RANGE_CLOEXEC) && errno != EINVAL)
		return failed("close_range CLOSE_RANGE_CLOEXEC", 12);
	/* a pidfd, and a copy of 26 through it */
	pid_fd = pidfd_open(getpid(), 0);
	if (pid_fd < 0)
		return failed("pidfd_open", 13);
	copy = pidfd_getfd(pid_fd, fds[6], 0);
	if (copy < 0)
		return failed("pidfd_getfd", 14);
	/* the child closes 26 and dups 27 onto 30: the parent keeps both */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclose(&fa, 26);
	posix_spawn_file_actions_adddup2(&fa, 27, 30);
	posix_spawn_file_actions_addopen(&fa, 31, argv[1], O_RDONLY, 0);
	if (posix_spawn(&child, "/bin/true", &fa, NULL, (char *[]){ "true", NULL }, environ) ||
	    waitpid(child, &status, 0) != child || status)
		return 15;
	posix_spawn_file_actions_destroy(&fa);
	/* a shared memory object sized by ftruncate, left (its name too) */
	so = shm_open(shm, O_CREAT | O_RDWR | O_EXCL, 0600);
	if (so < 0 || ftruncate(so, 65536))
		return 16;
	/* 100..103, closed by closefrom(100) */
	for (int i = 0; i < 4; i++)
		at(open(argv[1], O_RDONLY), 100 + i);
	closefrom(100);
	printf("pidfd %d copy %d shm %d\n", pid_fd, copy, so);
	list("end");
	return 0;
}
C
"$CC" -O0 -g -o "$TEST_TMP/fr" "$TEST_TMP/fr.c" || die "cannot build the test program"
echo data >"$TEST_TMP/file"
name="/rip-test-ranges-$$"
trap 'rm -f "/dev/shm$name"; t_cleanup' EXIT
# Untraced first: the calls exist here?  (glibc 2.34 for close_range and closefrom, 2.36
# for pidfd_getfd, or the build above fails; Linux 5.9 for close_range, 5.6 for pidfd_getfd)
"$TEST_TMP/fr" "$TEST_TMP/file" "$name" >"$TEST_TMP/plain.out" 2>&1
rc=$?
rm -f "/dev/shm$name"
case $rc in
0) ;;
77) skip "$(tail -n 1 "$TEST_TMP/plain.out")" ;;
*) die "the program fails untraced (exit $rc): $(tail -n 3 "$TEST_TMP/plain.out")" ;;
esac

expect_status 0 "rip run" "$RIP" run --fd --shm -q -o "$TEST_TMP/trace" -- "$TEST_TMP/fr" \
	"$TEST_TMP/file" "$name"
cp "$TEST_TMP/out" "$TEST_TMP/prog.out"
grep -q '^end ' "$TEST_TMP/prog.out" || fail "the program did not run to its end"
expect_status 0 "rip leaks --json" "$RIP" leaks --json "$TEST_TMP/trace"
cp "$TEST_TMP/out" "$TEST_TMP/leaks.json"
expect_status 0 "rip report --json" "$RIP" report --json "$TEST_TMP/trace"
python3 - "$TEST_TMP/prog.out" "$TEST_TMP/leaks.json" "$TEST_TMP/out" "$name" <<'PY' ||
import json, sys
lines = dict(l.split(None, 1) for l in open(sys.argv[1]).read().splitlines())
start = set(lines["start"].split())
end = set(lines["end"].split())
words = lines["pidfd"].split()
pidfd, copy, shm = int(words[0]), int(words[2]), int(words[4])
want = {int(fd) for fd in end - start}
assert want == {24, 25, 26, 27, pidfd, copy, shm}, ("/proc says", sorted(want))
lk = json.load(open(sys.argv[2]))
rp = json.load(open(sys.argv[3]))
fds = [g for g in lk["leaks"] if g["resource"] == "fd"]
got = sum(g["count"] for g in fds)
kinds = set(k for g in fds for k in g["kinds"])
assert got == len(want), ("rip leaks: descriptors open at the end", got, "want", len(want), fds)
assert {"pidfd_open", "pidfd_getfd", "open"} <= kinds, kinds
assert rp["fd"]["closed_unseen"] == 0, ("closes never seen opened", rp["fd"])
assert rp["fd"]["reopened"] == 0, ("opened again while open", rp["fd"])
assert rp["fd"]["open_at_end"] == len(want), ("rip report: open at end", rp["fd"])
segs = [g for g in lk["leaks"] if g["resource"] == "shm"]
assert [(g["count"], g["bytes"]) for g in segs] == [(1, 65536)], ("shm", segs)
PY
	fail "rip leaks and report do not match the descriptors open at the end"

rm -f "/dev/shm$name"
strace -f -o "$TEST_TMP/strace" -e trace=close_range,pidfd_open,pidfd_getfd,ftruncate \
	"$TEST_TMP/fr" "$TEST_TMP/file" "$name" >/dev/null 2>&1 || fail "under strace it fails"
rm -f "/dev/shm$name"
for call in 'close_range\(20, 23, 0\) *= 0' \
	'close_range\(24, 25, CLOSE_RANGE_CLOEXEC\) *= 0' \
	'close_range\(100, 4294967295, 0\) *= 0' 'pidfd_open\([0-9]+, 0\) *= [0-9]+' \
	'pidfd_getfd\([0-9]+, 26, 0\) *= [0-9]+' 'ftruncate\([0-9]+, 65536\) *= 0'; do
	grep -Eq "$call" "$TEST_TMP/strace" || fail "strace does not show $call"
done
t_done
