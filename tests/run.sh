#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/run.sh - run every test with a timeout, several at once, and print
# "N passed, N failed" as the very last line; when tests skipped, the same
# line goes on with ", N skipped (NAME, NAME...)": how many, and which.
#
# A test is either a program build/tests/unit/NAME (from tests/unit/NAME.c),
# the same built with ThreadSanitizer, build/tsan/tests/unit/NAME (named
# tsan/NAME; any ThreadSanitizer report fails it), or a script
# tests/integ/NAME.sh run with sh.  Exit status 0 passes, 77
# skips (with the reason on stdout or stderr), anything else fails.  Tests
# run from the top of the tree with BUILD (the build directory), RIP (the
# rip command), RIP_ASAN (rip built with AddressSanitizer), a private
# RIP_DIR and TEST_TMP, and a RIP_DEBUG_CACHE of the run's own in the
# environment (and python3 the interpreter itself where it is pyenv's
# shim).  The longest tests (LONG) start first, the others in name order.
# Each test's line (PASS, FAIL or SKIP, and its time) is
# printed when it ends, with the end of a failing test's output.
#
#   tests/run.sh              all tests
#   tests/run.sh NAME...      only these (NAME, or unit/NAME, tsan/NAME, integ/NAME)
#   tests/run.sh -j N ...     N tests at once (default: JOBS, else the number of CPUs)
#   TIMEOUT=120 tests/run.sh  per-test limit in seconds (default 180); a script may ask
#                             for more with a line "# Timeout: SECONDS" in its header
#   VERBOSE=1                 show the output of passing tests too
#   RIP_CHECK_START=NS        (make check) when make started, in ns since the epoch:
#                             the total time then counts the build too
set -u
cd "$(dirname "$0")/.." || exit 1

usage() {
	echo "usage: tests/run.sh [-j N] [NAME...]" >&2
	exit 2
}

JOBS=${JOBS:-}
while [ $# -gt 0 ]; do
	case $1 in
	-j)
		[ $# -ge 2 ] || usage
		JOBS=$2
		shift 2
		;;
	-j*)
		JOBS=${1#-j}
		shift
		;;
	--)
		shift
		break
		;;
	-*) usage ;;
	*) break ;;
	esac
done
[ -n "$JOBS" ] || JOBS=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
case $JOBS in
'' | *[!0-9]* | 0)
	echo "tests/run.sh: -j (or JOBS) wants a number of tests at once, not '$JOBS'" >&2
	exit 2
	;;
esac

# Tests that run alone, after the others, with nothing beside them: one line each, with the
# reason.  None today: each test has its own RIP_DIR and TEST_TMP, names its shared-memory
# objects after its pid, opens no port, and checks what the clock decides against the trace's
# own times or generous deadlines.  A test that cannot share the machine goes here rather
# than be weakened.
SERIAL=""

# The tests that take longest (20 s or more on a 2-CPU VM beside another test), longest first:
# they start before all others, so that none is left running alone at the end of the run.
# The others follow in name order.  (Only the order: a test missing here runs all the same.)
LONG="integ/fuzz integ/pack-corrupt integ/corrupt integ/dump-corrupt integ/shellcheck
integ/leaks-corrupt integ/func-toggle integ/module-hostile integ/sym-files integ/leaks-through
integ/report-corrupt integ/ring-compressed integ/headers integ/func-toggle-deep integ/threads-many
integ/func-jumped integ/pagemap-corrupt integ/func-patch integ/export-pprof integ/sample-threads
integ/real-bash integ/hostile-ub integ/real-make integ/ring-bombs integ/leaks-basic
integ/record-rotate-live"

BUILD=${BUILD:-build}
export BUILD
RIP=$PWD/$BUILD/rip
RIP_ASAN=$PWD/$BUILD/asan/rip
export RIP RIP_ASAN
TIMEOUT=${TIMEOUT:-180}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rip-tests.XXXXXX") || exit 1
# ThreadSanitizer: stop at the first report, with a status of its own (and any report fails
# the test, whatever its status).  gcc 12's runtime cannot place its shadow memory under a
# kernel that randomizes mmap more (vm.mmap_rnd_bits 32): those tests run without address
# space randomization where setarch may turn it off.
TSAN_OPTIONS="halt_on_error=1 exitcode=66${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
export TSAN_OPTIONS
norand=""
setarch "$(uname -m)" -R true 2>/dev/null && norand="setarch $(uname -m) -R"
# python3 as pyenv's shim (a bash script that looks the version up at each call) took 0.8 s of
# CPU a call where its interpreter took 0.1 (a loaded 2-CPU VM), and the tests call python3
# hundreds of times: they get the interpreter the shim runs, asked once, as python3.
if py=$(command -v python3) && [ "$(head -c 2 "$py")" = "#!" ]; then
	pyexe=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
	if [ -x "$pyexe" ] && mkdir "$tmp/bin" && ln -s "$pyexe" "$tmp/bin/python3"; then
		PATH=$tmp/bin:$PATH
		export PATH
	fi
fi
# inflated debug files go to this run's own cache, not the user's
RIP_DEBUG_CACHE=$tmp/debug-cache
export RIP_DEBUG_CACHE

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# 83.4s, or 2m03.4s
fmt_ms() {
	s=$(($1 / 1000))
	d=$(($1 % 1000 / 100))
	if [ "$s" -ge 60 ]; then
		printf '%dm%02d.%ds' $((s / 60)) $((s % 60)) "$d"
	else
		printf '%d.%ds' "$s" "$d"
	fi
}

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
together="" alone=""
for t in $LONG $tests; do
	case " $tests " in *" $t "*) ;; *) continue ;; esac        # a LONG one not asked for
	case " $together $alone " in *" $t "*) continue ;; esac # (LONG ones come twice)
	case " $SERIAL " in
	*" $t "*) alone="$alone $t" ;;
	*) together="$together $t" ;;
	esac
done

# A finished test writes its name to this FIFO; the loop below reads them one by one.
mkfifo "$tmp/done" || exit 1
exec 3<>"$tmp/done"

# Stop: the running tests' timeout processes pass the signal on to their tests.
stop() {
	for p in "$tmp"/*.pid; do
		[ -f "$p" ] && kill -TERM "$(cat "$p")" 2>/dev/null
	done
	wait
	exit 130
}
trap 'rm -rf "$tmp"' EXIT
trap stop INT TERM HUP

# start TEST: run it in the background; it reports "STATUS MS" in $tmp/NAME.rc, then its name.
running=0
start() {
	st=$1
	sname=${st%%/*}-${st#*/}
	sdir="$tmp/$sname.dir"
	mkdir -p "$sdir"
	(
		out="$tmp/$sname.out"
		t0=$(now_ms)
		case $st in
		unit/*) RIP_DIR=$sdir TEST_TMP=$sdir timeout -k 10 "$TIMEOUT" "$BUILD/tests/$st" \
			>"$out" 2>&1 3>&- &
			;;
		integ/*)
			# a script that does much may ask for more time: "# Timeout: SECONDS"
			limit=$(sed -n 's/^# Timeout: \([0-9][0-9]*\)$/\1/p' "tests/$st.sh" | head -n 1)
			[ -n "$limit" ] && [ "$limit" -gt "$TIMEOUT" ] || limit=$TIMEOUT
			RIP_DIR=$sdir TEST_TMP=$sdir timeout -k 10 "$limit" sh "tests/$st.sh" \
				>"$out" 2>&1 3>&- &
			;;
		tsan/*)
			# shellcheck disable=SC2086
			RIP_DIR=$sdir TEST_TMP=$sdir timeout -k 10 "$TIMEOUT" $norand \
				"$BUILD/tsan/tests/unit/${st#*/}" >"$out" 2>&1 3>&- &
			;;
		esac
		echo $! >"$tmp/$sname.pid"
		wait $!
		rc=$?
		rm -f "$tmp/$sname.pid"
		if [ "${st%%/*}" = tsan ] && grep -q 'WARNING: ThreadSanitizer' "$out"; then
			case $rc in 0 | 77) rc=66 ;; esac
		fi
		echo "$rc $(($(now_ms) - t0))" >"$tmp/$sname.rc"
		echo "$st" >&3
	) &
	running=$((running + 1))
}

# finish: wait for the next test to end and print its line.
pass=0 fail=0 skip=0 failed="" skipped=""
finish() {
	read -r ft <&3 || exit 1
	running=$((running - 1))
	fname=${ft%%/*}-${ft#*/}
	fout="$tmp/$fname.out"
	read -r rc ms <"$tmp/$fname.rc" || rc=255 ms=0 # cannot be: its shell died; still a failure
	rm -rf "$tmp/$fname.dir" # traces can be large: free the space while the others run
	took=$(fmt_ms "$ms")
	case $rc:${ft%%/*} in
	0:*)
		pass=$((pass + 1))
		printf 'PASS  %-32s %7s\n' "$ft" "$took"
		[ -n "${VERBOSE:-}" ] && sed 's/^/      /' "$fout"
		;;
	77:*)
		skip=$((skip + 1))
		skipped="$skipped $ft"
		printf 'SKIP  %-32s %7s  %s\n' "$ft" "$took" "$(tail -n 1 "$fout")"
		;;
	66:tsan)
		fail=$((fail + 1))
		failed="$failed $ft"
		printf 'FAIL  %-32s %7s  exit 66, ThreadSanitizer report\n' "$ft" "$took"
		sed -n '/ThreadSanitizer/,$p' "$fout" | head -n 40 | sed 's/^/      /'
		;;
	124:* | 137:*)
		fail=$((fail + 1))
		failed="$failed $ft"
		printf 'FAIL  %-32s %7s  timed out\n' "$ft" "$took"
		tail -n 30 "$fout" | sed 's/^/      /'
		;;
	*)
		fail=$((fail + 1))
		failed="$failed $ft"
		printf 'FAIL  %-32s %7s  exit %d\n' "$ft" "$took" "$rc"
		tail -n 30 "$fout" | sed 's/^/      /'
		;;
	esac
	return 0
}

t0=$(now_ms)
for next in $together; do
	[ "$running" -lt "$JOBS" ] || finish
	start "$next"
done
while [ "$running" -gt 0 ]; do
	finish
done
for next in $alone; do
	start "$next"
	finish
done
wait
t1=$(now_ms)

n=$((pass + fail + skip))
[ -n "$failed" ] && echo "failed:$failed"
case ${RIP_CHECK_START:-} in
'' | *[!0-9]*) echo "time: $(fmt_ms $((t1 - t0))) for $n tests, $JOBS at once" ;;
*)
	b=$((t0 - RIP_CHECK_START / 1000000))
	echo "time: make check took $(fmt_ms $((t1 - RIP_CHECK_START / 1000000))):" \
		"$(fmt_ms "$b") to build, $(fmt_ms $((t1 - t0))) for $n tests, $JOBS at once"
	;;
esac
# The last line: a skipped test is a check that did not run, so it is named there.
if [ "$skip" -gt 0 ]; then
	# shellcheck disable=SC2086 # one name per word
	names=$(printf '%s\n' $skipped | sort | sed ':a;N;$!ba;s/\n/, /g')
	echo "$pass passed, $fail failed, $skip skipped ($names)"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ] && [ "$((pass + skip))" -gt 0 ]
