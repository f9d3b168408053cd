#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: no hook waits for a lock its caller may hold.  Under
# rip run --mem --fd --shm, within a time limit and with the output and
# status of an untraced run: a program whose first traced allocation happens
# inside pthread_getattr_np on the main thread (glibc holds the thread's
# lock there: every Rust program's start-up), the same in a new thread (the
# JVM's GC workers), a thread on a stack the program allocated, and 64
# threads that each ask pthread_getattr_np first.  The leaks of the threads
# are found at their functions with whole stacks (the stack bounds a thread
# gets at its start are right).  A Rust program with threads and `java
# -version` run too (make check installs rustc and java).
. tests/data/common.sh
prog=$BUILD/tests/integ/nohangprog
need_bin "$prog" "$RIP" "$BUILD/librip-preload.so"
need_cmd python3 rustc java

# traced NAME CMD...: plain and traced runs agree (status, stdout, stderr), and the
# traced one ends in time
traced() {
	name=$1
	shift
	timeout -k 5 30 "$@" >"$TEST_TMP/$name.plain" 2>"$TEST_TMP/$name.plainerr"
	prc=$?
	timeout -k 5 30 "$RIP" run --mem --fd --shm -q -o "$TEST_TMP/$name.trace" -- "$@" \
		>"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err"
	trc=$?
	if [ "$trc" = 124 ] || [ "$trc" = 137 ]; then
		fail "$name: hung under rip run (killed after 30 s)"
		return 1
	fi
	[ "$trc" = "$prc" ] || fail "$name: status $trc traced, $prc untraced: $(head -c 300 "$TEST_TMP/$name.err")"
	cmp -s "$TEST_TMP/$name.plain" "$TEST_TMP/$name.out" ||
		fail "$name: output differs: $(diff "$TEST_TMP/$name.plain" "$TEST_TMP/$name.out" | head -n 5)"
	cmp -s "$TEST_TMP/$name.plainerr" "$TEST_TMP/$name.err" ||
		fail "$name: stderr differs: $(diff "$TEST_TMP/$name.plainerr" "$TEST_TMP/$name.err" | head -n 5)"
	return 0
}

traced getattr-main "$prog" getattr-main
traced getattr-thread "$prog" getattr-thread

# leaks NAME FUNCTION BYTES COUNT: rip leaks finds COUNT blocks of BYTES at
# FUNCTION, called from a frame above it
leaks() {
	expect_status 0 "$1: rip leaks" "$RIP" leaks --json "$TEST_TMP/$1.trace"
	python3 - "$TEST_TMP/out" "$2" "$3" "$4" <<'PY' || fail "$1: rip leaks does not show the leak at $2"
import json, sys
r = json.load(open(sys.argv[1]))
fn, size, count = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
got = [g for g in r["leaks"] if g["resource"] == "mem" and g["stack"] and
       g["stack"][0]["function"] == fn]
assert len(got) == 1, ("groups at", fn, got)
g = got[0]
assert (g["count"], g["bytes"]) == (count, count * size), g
assert len(g["stack"]) >= 2 and g["stack"][1]["function"], ("no caller of", fn, g["stack"])
assert r["complete"], "incomplete trace"
PY
}
if traced own-stack "$prog" own-stack; then
	leaks own-stack leak_on_own_stack 4242 1
fi
if traced threads "$prog" threads 64; then
	leaks threads leak_in_thread 3131 64
fi

# real programs that hung
cat >"$TEST_TMP/hello.rs" <<'RS'
use std::thread;
fn main() {
    let hs: Vec<_> = (0..4).map(|i| thread::spawn(move || (0..1000u64).sum::<u64>() + i)).collect();
    let s: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    println!("hi {}", s);
}
RS
if rustc -O -o "$TEST_TMP/hello" "$TEST_TMP/hello.rs" 2>"$TEST_TMP/rustc.err"; then
	traced rust "$TEST_TMP/hello"
else
	fail "rustc could not build a hello world: $(head -c 300 "$TEST_TMP/rustc.err")"
fi
traced java java -version
t_done
