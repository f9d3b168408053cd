#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: frees and closes done by a key destructor at thread exit
# (the program's key, made after librip's, so its destructor runs after
# librip's in the same round) are recorded, not counted lost: librip puts
# its own thread exit off to the last destructor round.  20 threads each
# leave a block and a descriptor to their key's destructor: rip run says 0
# lost, the trace is complete, and rip leaks finds no block and no
# descriptor of the program's left (node's and python's worker threads
# lost their destructors' events this way).  Then the same with the
# destructor's work in glibc's last round, after librip gave the thread's
# ring back (python's threads free their dynamic TLS blocks there): the
# events borrow a ring and are recorded all the same.
. tests/data/common.sh
prog=$BUILD/tests/integ/keydtor_prog
need_bin "$prog" "$RIP"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"

timeout -k 5 60 "$RIP" run --mem --fd -o "$TEST_TMP/t" -- "$prog" 20 >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
	die "rip run failed (exit $?): $(tail -n 3 "$TEST_TMP/err")"
grep -qx 'done 20' "$TEST_TMP/out" || fail "the program printed $(cat "$TEST_TMP/out")"
grep -q ', 0 lost$' "$TEST_TMP/err" || fail "rip run: $(grep '^rip run' "$TEST_TMP/err")"
"$RIP" leaks --json "$TEST_TMP/t" >"$TEST_TMP/leaks.json" || die "rip leaks failed"
grep -q '"discarded":0,' "$TEST_TMP/leaks.json" || fail "the trace lost events: $(head -c 200 "$TEST_TMP/leaks.json")"
# what the destructor released must not show as live: no group made in worker
grep -q '"function":"worker"' "$TEST_TMP/leaks.json" &&
	fail "rip leaks shows the blocks or descriptors worker left to the destructor as live: $("$RIP" leaks "$TEST_TMP/t" | head -n 12)"

timeout -k 5 60 "$RIP" run --mem --fd -o "$TEST_TMP/late" -- "$prog" 20 late >"$TEST_TMP/out" \
	2>"$TEST_TMP/err" || die "rip run, late: failed (exit $?): $(tail -n 3 "$TEST_TMP/err")"
grep -qx 'done 20' "$TEST_TMP/out" || fail "late: the program printed $(cat "$TEST_TMP/out")"
grep -q ', 0 lost$' "$TEST_TMP/err" || fail "rip run, late: $(grep '^rip run' "$TEST_TMP/err")"
"$RIP" leaks --json "$TEST_TMP/late" >"$TEST_TMP/leaks.json" || die "rip leaks, late: failed"
grep -q '"discarded":0,' "$TEST_TMP/leaks.json" ||
	fail "late: the trace lost events: $(head -c 200 "$TEST_TMP/leaks.json")"
grep -q '"function":"worker"' "$TEST_TMP/leaks.json" &&
	fail "late: rip leaks shows what the last round released as live: $("$RIP" leaks "$TEST_TMP/late" | head -n 12)"
t_done
