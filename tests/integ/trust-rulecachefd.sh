#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the rule cache (RIP_RULE_CACHE, set by rip run --mem) reads
# and writes its files without a descriptor in the program's table.
# trust_rulecachefd loads 12 libraries built here, each with 150 call
# sites of malloc, then calls them while a second thread opens /dev/null
# and checks that it gets the lowest free number every time.  Under rip
# run --mem --follow-fork --follow-exec, a first process ("exit") computes
# the rules and writes each object's file at exit while that thread still
# opens; a second ("load") reads them as its hooks first walk each object
# (the watcher reads and writes them in its own table): no open may get
# another number.  Three runs.  x86-64 only (the walk of the tables is).
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/trust_rulecachefd
CC=${CC:-cc}
need_bin "$prog" "$RIP"
[ "$(uname -m)" = x86_64 ] || skip "the unwind-table walk is x86-64 only"
need_cmd "$CC"

set --
for l in 1 2 3 4 5 6 7 8 9 10 11 12; do
	{
		echo '#include <stdlib.h>'
		echo 'static void *volatile sink;'
		f=0
		while [ $f -lt 150 ]; do
			echo "__attribute__((noinline)) static void f$f(void)"
			echo "{ sink = malloc($f + $l); free(sink); sink = 0; }"
			f=$((f + 1))
		done
		echo 'void rcfd_run(void);'
		echo 'void rcfd_run(void)'
		echo '{'
		f=0
		while [ $f -lt 150 ]; do
			echo "	f$f();"
			f=$((f + 1))
		done
		echo '}'
	} >"$TEST_TMP/lib$l.c"
	$CC -O2 -fomit-frame-pointer -fPIC -shared -Wl,--build-id -o "$TEST_TMP/lib$l.so" \
		"$TEST_TMP/lib$l.c" || die "building lib$l.so failed"
	set -- "$@" "$TEST_TMP/lib$l.so"
done

"$prog" load "$@" >"$TEST_TMP/plain.out" 2>&1 ||
	die "trust_rulecachefd fails untraced: $(cat "$TEST_TMP/plain.out")"

for i in 1 2 3; do
	rm -rf "$TEST_TMP/t"
	RCFD_LIST=$TEST_TMP/list "$RIP" run -q --mem --follow-fork --follow-exec -o "$TEST_TMP/t" -- \
		sh -c '"$0" exit "$@" && ls -A "$RIP_RULE_CACHE" >"$RCFD_LIST" && "$0" load "$@"' \
		"$prog" "$@" \
		>"$TEST_TMP/run.out" 2>"$TEST_TMP/run.err"
	rc=$?
	grep -q '^exiting' "$TEST_TMP/run.out" || die "run $i: no exit: $(cat "$TEST_TMP/run.err")"
	grep -q '^wrong' "$TEST_TMP/run.out" &&
		fail "run $i: a rule cache file took the program's number at exit: $(cat "$TEST_TMP/run.out")"
	grep -q '^libs 12' "$TEST_TMP/run.out" || die "run $i: no load: $(cat "$TEST_TMP/run.err")"
	# the files the load reads: one per library at least, and no temporary one left
	[ "$(grep -c '^[0-9a-f]*$' "$TEST_TMP/list")" -ge 12 ] ||
		die "run $i: the exit wrote too few rule files: $(cat "$TEST_TMP/list")"
	grep -q '^\.' "$TEST_TMP/list" && fail "run $i: a temporary file was left: $(cat "$TEST_TMP/list")"
	[ "$rc" = 0 ] ||
		fail "run $i: a descriptor of ours took the program's number: $(cat "$TEST_TMP/run.out")"
	grep -q 'left in' "$TEST_TMP/run.err" &&
		fail "run $i: rip run left files: $(cat "$TEST_TMP/run.err")"
done
t_done
