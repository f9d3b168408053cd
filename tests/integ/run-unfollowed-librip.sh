#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run without --follow-fork of a shell that runs a
# program linked with librip, which opens a ring of its own and emits
# 2,000,000 events.  rip run does not follow it and never reads its file,
# so rip run must not be its consumer: before, the child took rip run
# (named by RIP_CONSUMER, alive and busy) for its recorder, and in block
# mode (RIP_MODE, rip run's default) its writers waited for it as long as
# rip run lived, with the shell waiting for the child: both hung for
# ever.  The child must finish as it does untraced, with a ring file of
# its own in the default place.
# Timeout: 120
. tests/data/common.sh
prog=$PWD/$BUILD/examples/events
need_bin "$RIP" "$prog"
export RIP_DIR="$TEST_TMP/rings"
mkdir -p "$RIP_DIR"
cd "$TEST_TMP" || die "no TEST_TMP"

t_bg "$RIP" run -o T -- sh -c "'$prog' 2000000 --threads 2 >ev.out; echo \$? >ev.rc" >run.out 2>run.err
run=$T_LAST
wait_until 60 test -s ev.rc || {
	kill "$run" 2>/dev/null
	fail "the program rip run does not follow did not finish in 60 s (waiting for rip run?)"
	t_done
}
[ "$(cat ev.rc)" = 0 ] || fail "the program exited $(cat ev.rc): $(cat ev.out)"
wait "$run" || fail "rip run: exit $?: $(cat run.err)"
# the child's own file, in the default place, as when it runs untraced
f=$(ls "$RIP_DIR"/rip-*.ring 2>/dev/null | head -n 1)
[ -n "$f" ] || fail "the child opened no ring file of its own: $(ls -R "$RIP_DIR")"
[ -z "$f" ] || "$RIP" ls --dir "$RIP_DIR" --json >ls.json 2>ls.err || fail "rip ls: $(cat ls.err)"
[ -z "$f" ] || grep -q '"comm":"events".*"exited_cleanly":true' ls.json ||
	fail "the child's file is not that of a clean exit: $(cat ls.json)"
t_done
