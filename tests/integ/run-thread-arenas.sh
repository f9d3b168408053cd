#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run does not give a thread that never allocates an
# arena of the allocator's.  thread_arenas.c starts 4 threads that only
# wait and prints how many arenas glibc's malloc has; under plain rip run
# (slots and wait records), --mem and --fd it must print what it prints
# untraced (1).  librip-preload.so's start of each thread freed a record
# with free(), and with resources on took the thread's stack bounds with
# pthread_getattr_np, which allocates: a thread's first call of the
# allocator takes an arena (glibc's tcache: a 64 MB reservation each;
# jemalloc starts a background thread for it): 5.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/thread_arenas
need_bin "$prog" "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"

"$prog" >plain 2>&1 || die "the helper failed untraced: $(cat plain)"
grep -q '^[0-9]* arenas$' plain || die "the helper printed: $(cat plain)"
n=0
for opt in -q --mem --fd; do
	n=$((n + 1))
	"$RIP" run -q "$opt" -o T$n -- "$prog" >traced$n 2>run.err ||
		fail "rip run $opt: exit $?: $(cat run.err)"
	same_as_plain traced$n "rip run $opt: the threads have arenas they do not have untraced"
done
t_done
