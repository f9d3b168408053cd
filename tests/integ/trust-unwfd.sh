#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: libunwind's pipe takes none of the program's descriptor
# numbers.  libunwind makes a pipe when it first unwinds (and again when a
# read of it fails) to check memory; made inside our walk it took the
# program's two lowest free descriptors, and every descriptor the program
# opened after had another number than untraced.  The program allocates
# from a function without unwind tables (the table walk declines, libunwind
# is asked), opens /dev/null, closes every descriptor above 2 with
# close_range and does it again; under rip run --mem each open must get
# the number it gets untraced, and the only descriptors the program sees
# that it did not open must be libunwind's pipe, high (which also shows
# libunwind was reached: without it the test would prove nothing).
. tests/data/common.sh
CC=${CC:-cc}
need_bin "$RIP"
[ "$(uname -m)" = x86_64 ] || skip "the unwind-table walk is x86-64 only"
need_libunwind
need_cmd "$CC"

cat >"$TEST_TMP/nt.c" <<'EOT'
#include <stdlib.h>
/* built without unwind tables: the walk of the tables declines here */
void *nt_alloc(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}
EOT
cat >"$TEST_TMP/prog.c" <<'EOT'
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

void *nt_alloc(size_t n);

/* the descriptors from 3 on, and which are pipes */
static void fds(const char *when)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int self = dirfd(d);

	while ((e = readdir(d))) {
		struct stat st;
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd < 3 || fd == self || fstat(fd, &st))
			continue;
		printf("%s fd %d%s\n", when, fd, S_ISFIFO(st.st_mode) ? " pipe" : "");
	}
	closedir(d);
}

/* two callers: a stack of its own each (a stack seen before is not walked again) */
__attribute__((noinline)) static void first(void)
{
	free(nt_alloc(100));
}

__attribute__((noinline)) static void second(void)
{
	free(nt_alloc(200));
	__asm__ volatile("");
}

int main(void)
{
	for (int round = 0; round < 2; round++) {
		if (round)
			second();
		else
			first();
		printf("round %d open %d\n", round, open("/dev/null", O_RDONLY));
		fds(round ? "after" : "before");
		syscall(SYS_close_range, 3, ~0u, 0);
	}
	return 0;
}
EOT
"$CC" -O1 -fno-asynchronous-unwind-tables -fno-unwind-tables -fomit-frame-pointer \
	-c "$TEST_TMP/nt.c" -o "$TEST_TMP/nt.o" || die "cannot build nt.c"
"$CC" -O1 -g "$TEST_TMP/prog.c" "$TEST_TMP/nt.o" -o "$TEST_TMP/prog" || die "cannot build prog.c"

# descriptors the harness leaves open are the same in both runs: the numbers are compared
"$TEST_TMP/prog" >"$TEST_TMP/plain.out" 2>&1 || die "untraced: $(cat "$TEST_TMP/plain.out")"
"$RIP" run -q --mem -o "$TEST_TMP/t" -- "$TEST_TMP/prog" >"$TEST_TMP/run.out" \
	2>"$TEST_TMP/run.err" || die "under rip run: $(cat "$TEST_TMP/run.err")"

grep '^round' "$TEST_TMP/plain.out" >"$TEST_TMP/plain.opens"
grep '^round' "$TEST_TMP/run.out" >"$TEST_TMP/run.opens"
[ "$(wc -l <"$TEST_TMP/plain.opens")" = 2 ] || die "no result: $(cat "$TEST_TMP/plain.out")"
cmp -s "$TEST_TMP/plain.opens" "$TEST_TMP/run.opens" ||
	fail "the program's opens got other numbers under rip run:
$(cat "$TEST_TMP/run.opens") against untraced
$(cat "$TEST_TMP/plain.opens")"

# what the program sees under rip run beyond what it sees untraced: libunwind's pipe, high
for when in before after; do
	grep "^$when " "$TEST_TMP/plain.out" | sort >"$TEST_TMP/p.$when"
	grep "^$when " "$TEST_TMP/run.out" | sort >"$TEST_TMP/r.$when"
	extra=$(comm -13 "$TEST_TMP/p.$when" "$TEST_TMP/r.$when")
	# before: libunwind's first walk made it (none: libunwind was not reached, the test proves
	# nothing); after: it is made again only if libunwind checked memory on the second walk
	[ -n "$extra" ] || [ "$when" = after ] ||
		fail "$when close_range: no pipe of libunwind's (was libunwind reached?)"
	[ -n "$extra" ] && echo "$extra" | while read -r w f n kind; do
		[ "$kind" = pipe ] && [ "$n" -ge 64 ] || echo "$w $f $n $kind"
	done >"$TEST_TMP/bad.$when"
	[ -s "$TEST_TMP/bad.$when" ] &&
		fail "$when close_range, descriptors not the program's, not libunwind's pipe high:
$(cat "$TEST_TMP/bad.$when")"
done
t_done
