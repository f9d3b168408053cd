#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run without --follow-exec of a shell that execs a
# program linked with librip, which opens a ring of its own and emits
# 2,000,000 events.  The shell (preloaded: rip run's wait wrappers) had
# a file, which the new image finds marked with its pid: it is an image
# rip run does not follow, so its librip opens no file from RIP_RING.
# The program then opens one itself (rip_ring_open), and before, that
# file named rip run as its consumer (the pid is rip run's root): in
# block mode its writers waited for rip run, which never reads it, for
# as long as rip run lived, and rip run waited for them.  The program
# must finish as it does untraced, with a file of its own in the default
# place, and rip run must say it exec'd an image it did not follow.
# Timeout: 120
. tests/data/common.sh
prog=$PWD/$BUILD/examples/events
need_bin "$RIP" "$prog"
export RIP_DIR="$TEST_TMP/rings"
mkdir -p "$RIP_DIR"
cd "$TEST_TMP" || die "no TEST_TMP"

t_bg sh -c "'$RIP' run -o T -- sh -c \"exec '$prog' 2000000 --threads 2 >ev.out\" \
	>run.out 2>run.err; echo \$? >run.rc"
wait_until 60 test -s run.rc || {
	pkill -9 -f "$prog 2000000" 2>/dev/null
	fail "the image rip run does not follow did not finish in 60 s (waiting for rip run?)"
	t_done
}
[ "$(cat run.rc)" = 0 ] || fail "rip run: exit $(cat run.rc): $(cat run.err)"
grep -q "exec'd .*events (not followed" run.err || fail "rip run did not say the image was not followed: $(cat run.err)"
f=$(ls "$RIP_DIR"/rip-*.ring 2>/dev/null | head -n 1)
[ -n "$f" ] || fail "the image opened no ring file of its own: $(ls -R "$RIP_DIR")"
[ -z "$f" ] || "$RIP" ls --dir "$RIP_DIR" --json >ls.json 2>ls.err || fail "rip ls: $(cat ls.err)"
[ -z "$f" ] || grep -q '"comm":"events".*"exited_cleanly":true' ls.json ||
	fail "the image's file is not that of a clean exit: $(cat ls.json)"
t_done
