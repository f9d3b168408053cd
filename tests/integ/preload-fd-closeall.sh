#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program that closes every descriptor from 3 to 1024, the
# ring file's among them, goes on being traced (the ring is mapped; its fd
# is not needed): every successful close is recorded, and so are the opens,
# pipe and the new thread's open after it; a fork after that keeps the
# program's own descriptors (the one that reused the ring's number too);
# nothing crashes.  The tracer's own descriptors never show up as the
# program's, and a shell that closes fd 3 and lists /proc/self/fd sees the
# same count traced and untraced.
. tests/data/common.sh
prog=$BUILD/tests/integ/fdprog
pre=$PWD/$BUILD/librip-preload.so
need_bin "$prog" "$RIP"
[ -f "$pre" ] || die "$pre is missing: run make"
mkdir -p "$TEST_TMP/plain" "$TEST_TMP/work" "$TEST_TMP/ring"

"$prog" closeall "$TEST_TMP/plain" >"$TEST_TMP/plain.out" 2>"$TEST_TMP/plain.err" ||
	die "fdprog closeall fails untraced: $(cat "$TEST_TMP/plain.err")"
LD_PRELOAD=$pre RIP_RING=$TEST_TMP/ring/ "$prog" closeall "$TEST_TMP/work" \
	>"$TEST_TMP/traced.out" 2>"$TEST_TMP/traced.err"
rc=$?
[ "$rc" = 0 ] ||
	fail "fdprog closeall traced: exit $rc: $(grep FAIL "$TEST_TMP/traced.err" | head -n 3)"
cmp -s "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" ||
	fail "output differs with the preload library"

# shellcheck disable=SC2046 # the three numbers
set -- $(sed -nE 's/^closed ([0-9]+) ring-fd (-?[0-9]+) pid ([0-9]+)$/\1 \2 \3/p' \
	"$TEST_TMP/traced.err")
[ $# = 3 ] || die "no 'closed N ring-fd R pid P' line from fdprog: $(cat "$TEST_TMP/traced.err")"
closed=$1 ring_fd=$2 pid=$3
# librip keeps no descriptor of its ring: the program must not see one
[ "$ring_fd" = -1 ] || fail "the ring file is open as fd $ring_fd in the program"

set -- "$TEST_TMP"/ring/rip-"$pid"-*.ring
[ -f "$1" ] || die "no ring file of pid $pid in $TEST_TMP/ring"
expect_status 0 "rip dump" "$RIP" dump "$1"
cp "$TEST_TMP/out" "$TEST_TMP/dump"

# every successful close of the loop, then the pipe's two and the thread's one
n=$(grep -Ec ' fd:close fd=[0-9]+ bt=[0-9]+ kind=close$' "$TEST_TMP/dump")
[ "$n" = $((closed + 3)) ] ||
	fail "$n fd:close events, want $((closed + 3)) ($closed closed by the loop)"
grep -q " fd:open fd=3 bt=[0-9]* kind=open flags=[0-9]* path=\"$TEST_TMP/work/marker\"$" \
	"$TEST_TMP/dump" || fail "no fd:open of the marker after the ring's fd was closed"
grep -q " fd:open fd=[0-9]* bt=[0-9]* kind=pipe flags=1 path=\"\"$" "$TEST_TMP/dump" ||
	fail "no pipe after closing everything"
main_tid=$(grep ' fd:open .*/marker"$' "$TEST_TMP/dump" | awk '{print $2}')
thr=$(grep ' fd:open .*/thread-marker"$' "$TEST_TMP/dump" | awk '{print $2}')
[ -n "$thr" ] && [ "$thr" != "$main_tid" ] ||
	fail "the new thread's open was not recorded in its own stream ($thr vs $main_tid)"
grep -Eq '^[0-9]+ events, [0-9]+ streams?, 0 discarded/overwritten, 0 packets lost$' \
	"$TEST_TMP/dump" || fail "events lost: $(tail -n 1 "$TEST_TMP/dump")"

# the tracer's own work (its ring files, the fork's copy) is not the program's
for f in "$TEST_TMP"/ring/*.ring; do
	"$RIP" dump "$f" >"$TEST_TMP/each.dump" 2>&1 || fail "rip dump $f failed"
	if grep -Eq ' fd:open .*\.ring"$' "$TEST_TMP/each.dump"; then
		fail "$(basename "$f"): the tracer's own ring file recorded as the program's fd"
	fi
done

# A shell that replaces fd 3 and lists its descriptors: none of them is
# librip's.  (libunwind, which unwinds code without frame pointers such as
# ls, keeps a pipe of its own to probe memory: those two are libunwind's.)
list='exec 3>/dev/null; ls -l /proc/self/fd'
fds=$(LD_PRELOAD=$pre RIP_RING=$TEST_TMP/ring/ bash -c "$list" |
	sed -nE 's/.* ([0-9]+ -> .*)/\1/p' | tr '\n' ';')
case $fds in
*.ring*) fail "a ring file is open in the traced ls: $fds" ;;
esac
plain=$(bash -c "$list" | sed -nE 's/.* ([0-9]+ -> .*)/\1/p' | grep -vc pipe)
traced=$(LD_PRELOAD=$pre RIP_RING=$TEST_TMP/ring/ bash -c "$list" |
	sed -nE 's/.* ([0-9]+ -> .*)/\1/p' | grep -vc pipe)
[ "$plain" = "$traced" ] || fail "non-pipe fds: $traced traced, $plain untraced: $fds"
t_done
