#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program linked with librip.a run under rip run.  The
# preload library brings librip.so, a second librip in the process, whose
# file is the process's: the program's own copy must stay off and say so,
# not take that file for its image before an execve (rip ps said "replaced
# by execve") nor have its own system calls recorded as the program's.
# Alone (RIP_RING=1, no preload) the static copy records as ever.
. tests/data/common.sh
prog=$BUILD/tests/integ/static_snap
need_bin "$prog" "$RIP"

# alone: its snap is in its file
mkdir -p "$TEST_TMP/alone"
t_bg env RIP_DIR="$TEST_TMP/alone" RIP_RING=1 "$prog" 30 >"$TEST_TMP/alone.out" 2>&1
wait_file "$TEST_TMP/alone.out" 20 || die "static_snap did not start: $(cat "$TEST_TMP/alone.out")"
RIP_DIR="$TEST_TMP/alone" "$RIP" ps "$T_LAST" >"$TEST_TMP/ps-alone.out" 2>&1 ||
	fail "rip ps of the program alone: $(cat "$TEST_TMP/ps-alone.out")"
grep -q 'parked_static' "$TEST_TMP/ps-alone.out" ||
	fail "its own librip recorded no snap alone: $(cat "$TEST_TMP/ps-alone.out")"
t_kill "$T_LAST"

# under rip run: the preload's file stays the live process's, with a note
t_bg "$RIP" run --mem --fd -o "$TEST_TMP/t" -- "$prog" 30 >"$TEST_TMP/run.out" 2>"$TEST_TMP/run.err"
wait_file "$TEST_TMP/run.out" 20 || die "static_snap did not start: $(cat "$TEST_TMP/run.err")"
pid=
found() { pid=$(pgrep -n -f "^$prog 30") && [ -n "$pid" ]; }
wait_until 10 found || die "no static_snap process"
"$RIP" ps "$pid" >"$TEST_TMP/ps.out" 2>&1 || fail "rip ps under rip run: $(cat "$TEST_TMP/ps.out")"
grep -q 'replaced by execve' "$TEST_TMP/ps.out" &&
	fail "the program's own librip marked the live file as an earlier image: $(cat "$TEST_TMP/ps.out")"
grep -q "^static_snap (pid $pid) alive" "$TEST_TMP/ps.out" || fail "not alive: $(cat "$TEST_TMP/ps.out")"
grep -q 'linked in statically) stayed off' "$TEST_TMP/ps.out" ||
	fail "rip ps does not say the program's librip stayed off: $(cat "$TEST_TMP/ps.out")"
run=$T_LAST
kill "$pid"
wait "$run"
grep -q 'linked in statically) stayed off' "$TEST_TMP/run.err" ||
	fail "rip run does not say the program's librip stayed off: $(cat "$TEST_TMP/run.err")"
# the program opens no file and maps nothing itself: no fd or mapping event is its
"$RIP" dump "$TEST_TMP/t" >"$TEST_TMP/dump.out" 2>&1 || fail "rip dump: $(cat "$TEST_TMP/dump.out")"
grep -E 'fd:open|kind=mmap|kind=munmap' "$TEST_TMP/dump.out" >"$TEST_TMP/own.out" &&
	fail "librip's own calls recorded as the program's: $(head -n 5 "$TEST_TMP/own.out")"
t_done
