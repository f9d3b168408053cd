#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run of a shell that runs a program linked with librip,
# which opens a ring of its own and emits 2,000,000 events, where rip run
# does not follow it, twice: a forked child (no --follow-fork), and an
# image the shell execs (no --follow-exec; the shell, preloaded with rip
# run's wait wrappers, had a file, which the new image finds marked with
# its pid).  rip run never reads the program's file, so rip run must not
# be its consumer: before, the child took rip run (named by RIP_CONSUMER,
# alive and busy) for its recorder, and so did the exec'd image (its pid
# is rip run's root); in block mode (RIP_MODE, rip run's default) their
# writers waited for rip run as long as it lived, and rip run waited for
# them: both hung for ever.  The program must finish as it does
# untraced, with a ring file of its own in the default place.
# Timeout: 180
. tests/data/common.sh
prog=$PWD/$BUILD/examples/events
need_bin "$RIP" "$prog"
cd "$TEST_TMP" || die "no TEST_TMP"

# run_case NAME SHELL-COMMAND: rip run -- sh -c SHELL-COMMAND in NAME/, rings in NAME/rings
run_case() {
	mkdir -p "$1/rings"
	(
		cd "$1" || exit 1
		RIP_DIR=$PWD/rings "$RIP" run -o T -- sh -c "$2" >run.out 2>run.err
		echo $? >run.rc
	) &
	T_PIDS="$T_PIDS $!"
	wait_until 60 test -s "$1/run.rc" || {
		pkill -9 -f "$prog 2000000" 2>/dev/null
		fail "$1: the program rip run does not follow did not finish in 60 s (waiting for rip run?)"
		return
	}
	[ "$(cat "$1/run.rc")" = 0 ] || fail "$1: rip run: exit $(cat "$1/run.rc"): $(cat "$1/run.err")"
	f=$(ls "$1"/rings/rip-*.ring 2>/dev/null | head -n 1)
	if [ -z "$f" ]; then
		fail "$1: the program opened no ring file of its own: $(ls -R "$1/rings")"
		return
	fi
	"$RIP" ls --dir "$1/rings" --json >"$1/ls.json" 2>"$1/ls.err" || fail "$1: rip ls: $(cat "$1/ls.err")"
	grep -q '"comm":"events".*"exited_cleanly":true' "$1/ls.json" ||
		fail "$1: the program's file is not that of a clean exit: $(cat "$1/ls.json")"
}

run_case fork "'$prog' 2000000 --threads 2 >ev.out; echo \$? >ev.rc"
[ "$(cat fork/ev.rc 2>/dev/null)" = 0 ] || fail "fork: the program exited $(cat fork/ev.rc 2>/dev/null): $(cat fork/ev.out)"
run_case exec "exec '$prog' 2000000 --threads 2 >ev.out"
grep -q "exec'd .*events (not followed" exec/run.err ||
	fail "exec: rip run did not say the image was not followed: $(cat exec/run.err)"
t_done
