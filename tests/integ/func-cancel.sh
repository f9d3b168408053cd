#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: threads that leave through patched functions run every
# cleanup and destructor above them.  funcprog-cxx-patch --cancel: threads
# end by pthread_exit, by pthread_cancel in a read, and in
# pthread_testcancel, each under a frame whose local object's destructor
# prints a line; glibc unwinds them through libgcc's unwinder by a handle
# of its own (librip-preload.so's hooks of the unwinder never see it), and
# an unwinder cannot walk the return trampoline of a patched call: the
# preload library's hooks of pthread_exit and pthread_testcancel, and its
# wrappers of blocking calls, put the real return addresses back first.
# Under rip run --functions='*cancel_*' (patched before main) the program
# prints what it prints alone; and so does the -finstrument-functions
# build (funcprog-cxx) under rip run --functions.
. tests/data/common.sh
top=$PWD
need_bin "$top/$BUILD/tests/integ/funcprog-cxx-patch" "$top/$BUILD/tests/integ/funcprog-cxx" "$RIP"
cd "$TEST_TMP" || die "no TEST_TMP"

for v in funcprog-cxx-patch funcprog-cxx; do
	prog=$top/$BUILD/tests/integ/$v
	opt=--functions
	[ $v = funcprog-cxx-patch ] && opt='--functions=*cancel_*'
	"$prog" --cancel >plain.$v 2>&1 || die "$v --cancel alone: $(cat plain.$v)"
	grep -q "^destructor read\$" plain.$v || die "$v --cancel alone: no destructor: $(cat plain.$v)"
	"$RIP" run "$opt" -o t.$v -- "$prog" --cancel >rip.$v 2>rip.$v.err ||
		fail "$v: rip run: $(cat rip.$v.err)"
	grep -q "no function patched" rip.$v.err && fail "$v: nothing patched: $(cat rip.$v.err)"
	sort plain.$v >plain.$v.s
	sort rip.$v >rip.$v.s
	cmp -s plain.$v.s rip.$v.s || fail "$v: under rip run (want, got): $(diff plain.$v.s rip.$v.s)"
done
t_done
