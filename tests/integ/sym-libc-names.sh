#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: libc's frames carry the names gdb and heaptrack give them.
# glibc declares its functions for its own calls under __GI_ names (an asm
# label: the DWARF linkage name), and the reports named the frames by it:
# a block stdio allocates read "__GI__IO_file_doallocate" and "(inlined)
# __GI__IO_doallocbuf".  A C function is named by its DWARF name now; a
# mangled linkage name (C++, Rust) is still demangled.  The program leaks
# the buffer of a stream it never closes.  An assembly function has a
# subprogram for each alias (munmap, __munmap, __GI_munmap...): rip top of
# a program sampled in munmap said __GI_munmap, and says munmap.  Skipped
# where libc has no debug information (no libc6-dbg: no file and line
# under its frames).
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
CC=${CC:-cc}

cat >"$TEST_TMP/fo.c" <<'C'
#include <stdio.h>

int main(void)
{
	FILE *f = fopen("/dev/null", "r");

	/* the first read allocates the stream's buffer (_IO_file_doallocate); never closed */
	return f && getc(f) == EOF ? 0 : 1;
}
C
"$CC" -O1 -g -o "$TEST_TMP/fo" "$TEST_TMP/fo.c" || die "cannot build the test program"
expect_status 0 "rip run" "$RIP" run --mem -q -o "$TEST_TMP/trace" -- "$TEST_TMP/fo"
expect_status 0 "rip leaks" "$RIP" leaks "$TEST_TMP/trace"
grep -q 'filedoalloc\.c' "$TEST_TMP/out" || skip "no debug information for libc here (libc6-dbg)"
grep -q '^ *_IO_file_doallocate (.*filedoalloc\.c' "$TEST_TMP/out" ||
	fail "the stream's buffer is not made in _IO_file_doallocate: $(cat "$TEST_TMP/out")"
grep -q '__GI_' "$TEST_TMP/out" && fail "a frame named by its __GI_ alias: $(grep '__GI_' "$TEST_TMP/out")"

# an assembly function: the assembler gives each of its aliases a subprogram of the same range
cat >"$TEST_TMP/mu.c" <<'C'
#include <sys/mman.h>
#include <time.h>

int main(void)
{
	struct timespec t0, t;

	/* 300 ms of CPU in munmap's system call (it fails at once) */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++)
			munmap(NULL, 0);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 300000000L);
	return 0;
}
C
"$CC" -O1 -g -o "$TEST_TMP/mu" "$TEST_TMP/mu.c" || die "cannot build the munmap program"
expect_status 0 "rip run --sample" "$RIP" run -q --sample=1000 -o "$TEST_TMP/mt" -- "$TEST_TMP/mu"
expect_status 0 "rip top" "$RIP" top "$TEST_TMP/mt"
grep -q ' run   munmap (syscall-template\.S' "$TEST_TMP/out" ||
	fail "the samples in munmap are not named munmap: $(cat "$TEST_TMP/out")"
grep -q '__GI_' "$TEST_TMP/out" && fail "a function named by its __GI_ alias: $(grep '__GI_' "$TEST_TMP/out")"
t_done
