# SPDX-License-Identifier: Apache-2.0
#
# Description: shell helpers of tests/integ/ctf-*.sh and snapshot-*.sh
# (sourced after tests/data/common.sh, not a test itself): run the evprog
# helper, take a snapshot with `rip snapshot --json`, read it back with
# babeltrace2 and check the result with tests/data/ctf-check.py.

EVPROG=$BUILD/tests/integ/evprog
CTF_CHECK=tests/data/ctf-check.py

# ctf_need: the tools these tests drive (babeltrace2 is Debian's babeltrace2).
ctf_need() {
	need_bin "$EVPROG" "$RIP"
	need_cmd python3 babeltrace2
}

# evprog_run NAME ARGS...: run evprog to the end; sets EV_PID and EV_EMITTED.
evprog_run() {
	name=$1
	shift
	"$EVPROG" "$@" >"$TEST_TMP/$name.evprog" 2>&1 ||
		die "evprog $*: exit $?: $(tail -n 3 "$TEST_TMP/$name.evprog")"
	EV_PID=$(sed -n 's/^pid //p' "$TEST_TMP/$name.evprog")
	EV_EMITTED=$(sed -n 's/^emitted //p' "$TEST_TMP/$name.evprog")
	[ -n "$EV_PID" ] && [ -n "$EV_EMITTED" ] || die "evprog $*: no pid or count"
}

# snap_check NAME TARGET CHECK-OPTIONS...: snapshot TARGET into $TEST_TMP/NAME,
# read it with babeltrace2 and check it.  Failures are noted with fail.
snap_check() {
	name=$1 target=$2
	shift 2
	dir=$TEST_TMP/$name
	if ! "$RIP" snapshot --json -o "$dir" "$target" >"$dir.json" 2>"$dir.snaperr"; then
		fail "$name: rip snapshot $target: $(head -n 3 "$dir.snaperr")"
		return 0
	fi
	grep -v '^rip: warning: .* packets were reused' "$dir.snaperr" | grep . &&
		fail "$name: rip snapshot wrote to stderr"
	babeltrace2 --clock-cycles --no-delta "$dir" >"$dir.out" 2>"$dir.err"
	rc=$?
	[ "$rc" = 0 ] || fail "$name: babeltrace2 exit $rc: $(grep -v WARNING "$dir.err" | head -n 5)"
	python3 "$CTF_CHECK" "$dir" "$dir.out" "$dir.err" "$dir.json" "$@" ||
		fail "$name: babeltrace2 does not see what evprog emitted"
	return 0
}
