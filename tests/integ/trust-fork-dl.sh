#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a fork never leaves the child with the loader's lock held by
# a thread of ours.  librip rescans its module map when a thread exits,
# and dl_iterate_phdr holds dl_load_write_lock while it runs, which glibc's
# fork does not reset in the child: a fork at that moment left the child
# hung in its first dlopen or dl_iterate_phdr.  fork_dl forks 50 times
# while two threads create and destroy coroutines (librip looks at the
# loader's counters at each creation, as at each thread's exit); each
# child calls dl_iterate_phdr and exits.  Without the fork handlers' gate
# 3 of the first 32 forks hung here; every child must exit, under rip run
# and with the program's own file (RIP_RING).
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/fork_dl
need_bin "$prog" "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"

"$RIP" run -o T -- "$prog" 50 >out 2>run.err
rc=$?
[ "$rc" = 0 ] || fail "rip run: exit $rc: $(cat out run.err)"
grep -q "^50 forks, 0 hung\$" out || fail "rip run: $(cat out)"

RIP_RING=$TEST_TMP/ "$prog" 50 >out2 2>err2
rc=$?
[ "$rc" = 0 ] || fail "RIP_RING: exit $rc: $(cat out2 err2)"
grep -q "^50 forks, 0 hung\$" out2 || fail "RIP_RING: $(cat out2)"
t_done
