#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program in a sandbox that does not list process_vm_readv
# (trust_sandbox: a seccomp filter that kills the process at that call, as
# systemd's SystemCallFilter= without @debug does) runs traced as it runs
# untraced.  rip ps of the live program, with a thread blocked in flock
# where no wrapper sees it, shows that thread in syscall flock with its
# stack (through locker), and the program goes on and exits 0; under rip
# run --mem its exit pagemap snapshot is complete and the program exits 0.
# The watcher copied the stack, and the snapshot zero-tested the pages,
# with process_vm_readv: rip ps killed the program with SIGSYS, and so did
# every exit of a sandboxed program under --mem (python3, one thread or
# four, under such a filter: exit 159).
. tests/data/common.sh
prog=$BUILD/tests/integ/trust_sandbox
need_bin "$prog" "$RIP"

: >"$TEST_TMP/go0"
"$prog" "$TEST_TMP/lock" "$TEST_TMP/go0" >"$TEST_TMP/plain" 2>&1
st=$?
[ $st = 77 ] && skip "no seccomp filter can be installed here"
[ $st = 0 ] || die "trust_sandbox fails untraced (exit $st): $(cat "$TEST_TMP/plain")"
grep -q '^done$' "$TEST_TMP/plain" || die "trust_sandbox untraced: $(cat "$TEST_TMP/plain")"

# rip ps asks the watcher for a sweep, which copies the stack of the thread in flock.
t_bg "$RIP" run -q -o "$TEST_TMP/t1" -- "$prog" "$TEST_TMP/lock" "$TEST_TMP/go1" \
	>"$TEST_TMP/out1" 2>"$TEST_TMP/err1"
run=$T_LAST
wait_file "$TEST_TMP/out1" 30 || die "trust_sandbox did not start: $(cat "$TEST_TMP/err1")"
pid=$(sed -n 's/^ready //p' "$TEST_TMP/out1")
shows_flock() {
	"$RIP" ps "$pid" >"$TEST_TMP/ps.out" 2>"$TEST_TMP/ps.err" &&
		grep -q 'in syscall flock' "$TEST_TMP/ps.out" && grep -q 'locker' "$TEST_TMP/ps.out"
}
kill -0 "$pid" 2>/dev/null || die "trust_sandbox ended at once: $(cat "$TEST_TMP/err1")"
# Dead (killed by the copy), it shows no copy again: no need to wait long then.
wait_until 20 sh -c 'kill -0 "$1" 2>/dev/null || exit 0; exit 1' sh "$pid" &
gone=$!
wait_until 20 shows_flock ||
	fail "rip ps: no stack of the thread in flock: $(cat "$TEST_TMP/ps.out" "$TEST_TMP/ps.err")"
kill "$gone" 2>/dev/null
: >"$TEST_TMP/go1"
wait "$run"
st=$?
[ $st = 0 ] || fail "rip run, rip ps meanwhile: exit $st: $(tail -n 2 "$TEST_TMP/err1")"
grep -q '^done$' "$TEST_TMP/out1" || fail "rip run: the program did not finish: $(cat "$TEST_TMP/out1")"

# The exit snapshot of --mem zero-tests the pages of a program with two threads.
: >"$TEST_TMP/go2"
"$RIP" run -q --mem -o "$TEST_TMP/t2" -- "$prog" "$TEST_TMP/lock" "$TEST_TMP/go2" \
	>"$TEST_TMP/out2" 2>"$TEST_TMP/err2"
st=$?
[ $st = 0 ] || fail "rip run --mem: exit $st: $(tail -n 2 "$TEST_TMP/err2")"
grep -q '^done$' "$TEST_TMP/out2" || fail "rip run --mem: the program did not finish: $(cat "$TEST_TMP/out2")"
if "$RIP" pagemap "$TEST_TMP/t2" >"$TEST_TMP/pm" 2>"$TEST_TMP/pm.err"; then
	grep -q 'complete, at exit' "$TEST_TMP/pm" ||
		fail "rip pagemap: no complete exit snapshot: $(head -n 3 "$TEST_TMP/pm")"
else
	fail "rip pagemap: $(cat "$TEST_TMP/pm.err")"
fi
t_done
