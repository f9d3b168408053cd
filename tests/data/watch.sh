# SPDX-License-Identifier: Apache-2.0
#
# Description: helpers of the watcher tests (tests/integ/watch-*.sh), not a
# test itself: start tests/integ/watchprog under librip-preload.so with its
# ring file in a directory of its own, and wait for rip ps to show something.

W_PROG=$BUILD/tests/integ/watchprog
W_PRELOAD=$PWD/$BUILD/librip-preload.so
need_bin "$W_PROG" "$RIP"
[ -f "$W_PRELOAD" ] || die "$W_PRELOAD is missing: run make"

# w_start DIR ARGS...: watchprog with its ring file in DIR (made here); W_PID, W_OUT.
w_start() {
	w_dir=$1
	shift
	mkdir -p "$w_dir"
	W_OUT=$w_dir/out
	t_bg env RIP_RING="$w_dir/" LD_PRELOAD="$W_PRELOAD" RIP_DISABLE=1,2,3 \
		"$W_PROG" "$w_dir/ready" "$@" >"$W_OUT" 2>&1
	# shellcheck disable=SC2034 # for the tests that source this file
	W_PID=$T_LAST
	wait_file "$w_dir/ready" 30 || die "watchprog did not start: $(cat "$W_OUT")"
}

# w_ring DIR: the ring file of the process that made DIR (the parent's: oldest pid first).
w_ring() {
	ls "$1"/rip-*.ring 2>/dev/null | head -n 1
}

# w_ps_has FILE PATTERN...: rip ps FILE > $TEST_TMP/ps.out has every PATTERN (grep -E).
w_ps_has() {
	f=$1
	shift
	"$RIP" ps "$f" >"$TEST_TMP/ps.out" 2>"$TEST_TMP/ps.err" || return 1
	for p in "$@"; do
		grep -Eq -- "$p" "$TEST_TMP/ps.out" || return 1
	done
	return 0
}
