# SPDX-License-Identifier: Apache-2.0
#
# Description: shell helpers sourced by tests/integ/*.sh (not a test itself):
# fail/skip with the exit codes tests/run.sh understands, waiting for a
# condition or a file with a deadline, killing what a test started, and
# running the AddressSanitizer build of rip with its reports checked.
#
# The environment comes from tests/run.sh: BUILD, RIP, RIP_ASAN, RIP_DIR,
# TEST_TMP.  Set RIP_TEST_NOSYM=1 to check addresses only (a rip built with
# a stub symbolizer).

: "${BUILD:=build}" "${RIP:=$PWD/$BUILD/rip}" "${RIP_ASAN:=$PWD/$BUILD/asan/rip}"
: "${TEST_TMP:=$(mktemp -d)}" "${RIP_DIR:=$TEST_TMP}"
export RIP_DIR
T_TOP=$PWD # the tree's top: tests start there
T_PIDS=""
T_FAILED=0
T_SKIP=""

t_cleanup() {
	for p in $T_PIDS; do
		kill -9 "$p" 2>/dev/null
	done
	for p in $T_PIDS; do
		wait "$p" 2>/dev/null
	done
	T_PIDS=""
}
trap 't_cleanup' EXIT
trap 't_cleanup; exit 1' INT TERM HUP

# fail MESSAGE: note a failure and go on (the test exits 1 at t_done).
fail() {
	echo "FAIL: $*" >&2
	T_FAILED=$((T_FAILED + 1))
}

# die MESSAGE: fail now.
die() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "skip: $*"
	exit 77
}

# skip_part REASON: a part of the test cannot run here, for REASON (never for a tool
# make check installs, nor for a helper that failed: those fail).  The test goes on with
# its other checks; at t_done it skips with the reason, unless one of them failed.
skip_part() {
	echo "not checked: $*"
	T_SKIP="${T_SKIP:+$T_SKIP; }$*"
}

t_done() {
	[ "$T_FAILED" -eq 0 ] || die "$T_FAILED check(s) failed"
	[ -z "$T_SKIP" ] || skip "$T_SKIP (the rest passed)"
	echo "ok"
	exit 0
}

# need_bin FILE...: the helpers this test runs must have been built.
need_bin() {
	for b in "$@"; do
		[ -x "$b" ] || die "$b is missing: run make tests"
	done
}

# need_cmd CMD...: the tools this test drives.  make check installs each of them
# (mk/deps.sh check), so a missing one fails the test rather than skip it:
# a test that skipped would hide that nothing was checked.
need_cmd() {
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 ||
			die "$c is not installed: make check installs it (or run sh mk/deps.sh check)"
	done
}

# need_libunwind: libunwind.so.8, which the preload library opens, is installed
# (make installs libunwind-dev, which brings it).
need_libunwind() {
	[ -e /usr/lib/x86_64-linux-gnu/libunwind.so.8 ] || [ -e /usr/lib/libunwind.so.8 ] ||
		ldconfig -p 2>/dev/null | grep -q 'libunwind\.so\.8 ' ||
		die "libunwind.so.8 is not installed: make installs libunwind-dev (mk/deps.sh)"
}

# wait_until SECONDS CMD...: run CMD every 50 ms until it succeeds; return 1
# if it still fails after SECONDS of wall time.  Wait for something the
# program under test makes true, never for a fixed time: the deadline only
# bounds a hang, so make it generous (a loaded machine is slow).
wait_until() {
	wu_end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -gt "$wu_end" ] && return 1
		sleep 0.05
	done
	return 0
}

# wait_file FILE SECONDS: wait until FILE exists and is not empty.
wait_file() {
	wait_until "$2" test -s "$1"
}

# t_bg CMD...: start CMD in the background and remember it for the cleanup.
t_bg() {
	"$@" &
	T_LAST=$!
	T_PIDS="$T_PIDS $T_LAST"
}

# t_cc_rip NAME [CC OPTIONS...]: build NAME.c of the current directory into
# NAME, with librip's headers and library (-lrip, found at run time) and
# tests/helpers.h (t_ready: the pid into a file), or die.
t_cc_rip() {
	tcr_name=$1
	shift
	"${CC:-cc}" -O1 -g -pthread -I"$T_TOP/include" -I"$T_TOP/tests" "$@" -o "$tcr_name" \
		"$tcr_name.c" -L"$T_TOP/$BUILD" -lrip -Wl,-rpath,"$T_TOP/$BUILD" ||
		die "cannot build $tcr_name.c"
}

# t_ready_pid FILE: wait (30 s) for FILE, where a program t_bg started wrote
# its pid (t_ready), or die; the pid into $pid.
t_ready_pid() {
	wait_file "$1" 30 || die "the program did not get ready ($1)"
	# shellcheck disable=SC2034 # the caller's
	pid=$(cat "$1")
}

# t_kill PID: SIGKILL and reap one process started with t_bg.
t_kill() {
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	rest=""
	for p in $T_PIDS; do
		[ "$p" = "$1" ] || rest="$rest $p"
	done
	T_PIDS=$rest
}

# leaks_report_json TRACE: rip leaks --json and rip report --json of TRACE, into
# $TEST_TMP/leaks.json and $TEST_TMP/report.json (expect_status: each must exit 0).
leaks_report_json() {
	expect_status 0 "rip leaks --json" "$RIP" leaks --json "$1"
	cp "$TEST_TMP/out" "$TEST_TMP/leaks.json"
	expect_status 0 "rip report --json" "$RIP" report --json "$1"
	cp "$TEST_TMP/out" "$TEST_TMP/report.json"
}

# same_as_plain NAME WHAT: $TEST_TMP/NAME must hold what $TEST_TMP/plain does (a program's
# answers untraced), else a failure saying WHAT, with the difference.
same_as_plain() {
	if ! cmp -s "$TEST_TMP/plain" "$TEST_TMP/$1"; then
		fail "$1: $2"
		diff "$TEST_TMP/plain" "$TEST_TMP/$1" | sed 's/^/    /' >&2
	fi
}

# preloaded NAME CMD...: CMD with RIP_RING=1 (its file in $TEST_TMP/d/) and the preload
# library, its output and errors in $TEST_TMP/NAME; fails when it does.
preloaded() {
	out=$1
	shift
	mkdir -p "$TEST_TMP/d"
	RIP_RING="$TEST_TMP/d/" LD_PRELOAD="$PWD/$BUILD/librip-preload.so" "$@" \
		>"$TEST_TMP/$out" 2>&1 || fail "RIP_RING=1 and the preload: $(cat "$TEST_TMP/$out")"
}

# expect_status WANT DESCRIPTION CMD...: run CMD (output to $TEST_TMP/out,
# $TEST_TMP/err) and check its exit status.
expect_status() {
	want=$1 what=$2
	shift 2
	"$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
	got=$?
	if [ "$got" != "$want" ]; then
		fail "$what: exit $got, want $want: $*"
		sed 's/^/    err: /' "$TEST_TMP/err" | head -n 5 >&2
	fi
	return 0
}

# cpu_timers: does a timer on a thread's CPU-time clock (what rip run --sample arms
# for each thread) deliver its signal on this kernel?  Asked once, of topprog
# cputimer without the preload library.  Returns 1 (after skip_part) if not; a
# helper that fails otherwise fails the test.
cpu_timers() {
	if [ -z "${T_CPUTIMERS:-}" ]; then
		"$BUILD/tests/integ/topprog" cputimer >"$TEST_TMP/cputimer" 2>&1
		T_CPUTIMERS=$?
		case $T_CPUTIMERS in
		0) ;;
		3) skip_part "CPU samples: $(cat "$TEST_TMP/cputimer")" ;;
		*) die "topprog cputimer: exit $T_CPUTIMERS: $(head -n 3 "$TEST_TMP/cputimer")" ;;
		esac
	fi
	[ "$T_CPUTIMERS" = 0 ]
}

# cpu_seconds PID: the CPU time process PID used so far, in whole seconds (/proc/PID/stat).
cpu_seconds() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null |
		awk -v hz="$(getconf CLK_TCK)" '{ print int(($12 + $13) / hz) } END { if (!NR) print 0 }'
}

# samples_stored RING WHAT: the ring file RING of a process sampled by rip run
# --sample (RIP_SAMPLE) holds CPU samples, where timers deliver signals here
# (cpu_timers): samples counted in the header ("sampling" of rip top --json),
# and samples read back from the slots' sample rings (its top-level "samples").
# WHAT names the run in the failure.
samples_stored() {
	cpu_timers || return 0
	"$RIP" top --json "$1" >"$TEST_TMP/samples.json" 2>"$TEST_TMP/samples.err" || {
		fail "$2: rip top --json $1: $(head -n 3 "$TEST_TMP/samples.err")"
		return 0
	}
	ss_counted=$(sed -n 's/.*"sampling":{[^}]*"samples":\([0-9]*\).*/\1/p' "$TEST_TMP/samples.json")
	ss_read=$(sed -n 's/.*"sampling":{[^}]*},"samples":\([0-9]*\).*/\1/p' "$TEST_TMP/samples.json")
	[ "${ss_counted:-0}" -gt 0 ] && [ "${ss_read:-0}" -gt 0 ] ||
		fail "$2: no CPU sample stored: ${ss_counted:-no} counted, ${ss_read:-no} in the" \
			"sample rings: $(head -c 300 "$TEST_TMP/samples.json")"
	return 0
}

# asan_run CMD...: run the ASan rip (as $RIP_ASAN CMD...) and fail on a
# signal or on any sanitizer report; exit status left in $asan_rc.
asan_run() {
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=98 \
		"$RIP_ASAN" "$@" >"$TEST_TMP/asan.out" 2>"$TEST_TMP/asan.err"
	asan_rc=$?
	if [ "$asan_rc" -gt 1 ] || grep -Eq 'Sanitizer|runtime error:' "$TEST_TMP/asan.err"; then
		fail "rip (asan) $*: exit $asan_rc"
		head -n 20 "$TEST_TMP/asan.err" >&2
		asan_rc=99
	fi
	return 0
}
