#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the watcher never closes or takes a descriptor of the
# program.  trust_fds closes every descriptor above 2 with close_range and
# opens six files again, round after round, while 50 threads block in a
# raw pause that only the watcher sees (RIP_WATCH_PERIOD=10: a sweep every
# 10 ms, each opening /proc files).  Under rip run no descriptor of the
# program may be lost or replaced, and its /proc/self/fd shows only its own;
# the watcher still sees the 50 threads.
. tests/data/common.sh
prog=$BUILD/tests/integ/trust_fds
need_bin "$prog" "$RIP"

"$prog" 1 >"$TEST_TMP/plain.out" 2>&1 || die "trust_fds fails untraced: $(cat "$TEST_TMP/plain.out")"

RIP_WATCH_PERIOD=10 "$RIP" run -o "$TEST_TMP/t" -- "$prog" 4 >"$TEST_TMP/run.out" \
	2>"$TEST_TMP/run.err"
rc=$?
grep -q '^rounds' "$TEST_TMP/run.out" || die "no result: $(cat "$TEST_TMP/run.err")"
[ "$rc" = 0 ] || fail "under rip run: $(cat "$TEST_TMP/run.out")"

# the watcher still works: it sees the raw pauses (the program runs 30 s here)
mkdir -p "$TEST_TMP/w"
t_bg env RIP_RING="$TEST_TMP/w/" LD_PRELOAD="$PWD/$BUILD/librip-preload.so" RIP_WATCH_PERIOD=10 \
	"$prog" 30 >"$TEST_TMP/w.out" 2>&1
ring=
seen() {
	ring=$(ls "$TEST_TMP"/w/rip-*.ring 2>/dev/null | head -n 1)
	[ -n "$ring" ] && "$RIP" ps "$ring" >"$TEST_TMP/ps.out" 2>&1 &&
		grep -Eq '50 threads in syscall pause' "$TEST_TMP/ps.out"
}
wait_until 20 seen || fail "the watcher did not see 50 threads in pause: $(cat "$TEST_TMP/ps.out")"
t_done
