#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/run.sh - run every test with a timeout and print "N passed, N failed".
#
# A test is either a program build/tests/unit/NAME (from tests/unit/NAME.c),
# the same built with ThreadSanitizer, build/tsan/tests/unit/NAME (named
# tsan/NAME; any ThreadSanitizer report fails it), or a script
# tests/integ/NAME.sh run with sh.  Exit status 0 passes, 77
# skips (with the reason on stdout or stderr), anything else fails.  Tests
# run from the top of the tree with BUILD (the build directory), RIP (the
# rip command), RIP_ASAN (rip built with AddressSanitizer), a private
# RIP_DIR and a RIP_DEBUG_CACHE of the run's own in the environment.
#
#   tests/run.sh              all tests
#   tests/run.sh NAME...      only these (NAME, or unit/NAME, tsan/NAME, integ/NAME)
#   TIMEOUT=120 tests/run.sh  per-test limit in seconds (default 180)
#   VERBOSE=1                 show the output of passing tests too
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
export BUILD
RIP=$PWD/$BUILD/rip
RIP_ASAN=$PWD/$BUILD/asan/rip
export RIP RIP_ASAN
TIMEOUT=${TIMEOUT:-180}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rip-tests.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
# ThreadSanitizer: stop at the first report, with a status of its own (and any report fails
# the test, whatever its status).  gcc 12's runtime cannot place its shadow memory under a
# kernel that randomizes mmap more (vm.mmap_rnd_bits 32): those tests run without address
# space randomization where setarch may turn it off.
TSAN_OPTIONS="halt_on_error=1 exitcode=66${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
export TSAN_OPTIONS
norand=""
setarch "$(uname -m)" -R true 2>/dev/null && norand="setarch $(uname -m) -R"
# inflated debug files go to this run's own cache, not the user's
RIP_DEBUG_CACHE=$tmp/debug-cache
export RIP_DEBUG_CACHE

tests=""
for t in "$BUILD"/tests/unit/*; do
	[ -x "$t" ] && [ -f "$t" ] && tests="$tests unit/$(basename "$t")"
done
for t in "$BUILD"/tsan/tests/unit/*; do
	[ -x "$t" ] && [ -f "$t" ] && tests="$tests tsan/$(basename "$t")"
done
for t in tests/integ/*.sh; do
	[ -f "$t" ] && tests="$tests integ/$(basename "$t" .sh)"
done
if [ $# -gt 0 ]; then
	want=""
	for t in $tests; do
		for a in "$@"; do
			[ "${t#*/}" = "$a" ] || [ "$t" = "$a" ] && want="$want $t"
		done
	done
	tests=$want
fi

pass=0 fail=0 skip=0 failed="" skipped=""
for t in $tests; do
	name=${t%%/*}-${t#*/}
	out="$tmp/$name.out"
	dir="$tmp/$name.dir"
	mkdir -p "$dir"
	start=$(date +%s)
	case $t in
	unit/*) RIP_DIR=$dir TEST_TMP=$dir timeout -k 10 "$TIMEOUT" "$BUILD/tests/$t" >"$out" 2>&1 ;;
	integ/*) RIP_DIR=$dir TEST_TMP=$dir timeout -k 10 "$TIMEOUT" sh "tests/$t.sh" >"$out" 2>&1 ;;
	tsan/*)
		# shellcheck disable=SC2086
		RIP_DIR=$dir TEST_TMP=$dir timeout -k 10 "$TIMEOUT" $norand \
			"$BUILD/tsan/tests/unit/${t#*/}" >"$out" 2>&1
		;;
	esac
	rc=$?
	if [ "${t%%/*}" = tsan ] && grep -q 'WARNING: ThreadSanitizer' "$out"; then
		case $rc in 0 | 77) rc=66 ;; esac
	fi
	secs=$(($(date +%s) - start))
	case $rc:${t%%/*} in
	0:*)
		pass=$((pass + 1))
		printf 'PASS  %-32s %3ds\n' "$t" "$secs"
		[ -n "${VERBOSE:-}" ] && sed 's/^/      /' "$out"
		;;
	77:*)
		skip=$((skip + 1))
		skipped="$skipped $t"
		printf 'SKIP  %-32s %s\n' "$t" "$(tail -n 1 "$out")"
		;;
	66:tsan)
		fail=$((fail + 1))
		failed="$failed $t"
		printf 'FAIL  %-32s exit 66, ThreadSanitizer report\n' "$t"
		sed -n '/ThreadSanitizer/,$p' "$out" | head -n 40 | sed 's/^/      /'
		;;
	124:* | 137:*)
		fail=$((fail + 1))
		failed="$failed $t"
		printf 'FAIL  %-32s timed out after %ss\n' "$t" "$TIMEOUT"
		tail -n 30 "$out" | sed 's/^/      /'
		;;
	*)
		fail=$((fail + 1))
		failed="$failed $t"
		printf 'FAIL  %-32s exit %d\n' "$t" "$rc"
		tail -n 30 "$out" | sed 's/^/      /'
		;;
	esac
done
[ -n "$failed" ] && echo "failed:$failed"
[ -n "$skipped" ] && echo "skipped:$skipped"
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ] && [ "$((pass + skip))" -gt 0 ]
