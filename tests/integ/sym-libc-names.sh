#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: libc's frames carry the names gdb and heaptrack give them.
# glibc declares its functions for its own calls under __GI_ names (an asm
# label: the DWARF linkage name), and the reports named the frames by it:
# a block stdio allocates read "__GI__IO_file_doallocate" and "(inlined)
# __GI__IO_doallocbuf".  A C function is named by its DWARF name now; a
# mangled linkage name (C++, Rust) is still demangled.  The program leaks
# the buffer of a stream it never closes; skipped where libc has no
# debug information (no libc6-dbg: no file and line under its frames).
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
t_done
