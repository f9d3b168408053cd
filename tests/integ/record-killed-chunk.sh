#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the trace of a recorder killed as it made a chunk is read
# with every chunk it closed.  The chunk it had just created, empty or cut
# in its header (a SIGKILL between the file's creation and its header's
# write, or a disk that filled then), made every reader refuse the whole
# trace ("not chunk N of this trace (cut in its header)").  rip run --mem
# --chunk-size=1M of a program that allocates on and on, killed with
# SIGKILL; its last chunk then emptied, then cut to 10 bytes: rip dump,
# rip leaks and rip report read the chunks before it and exit 0.
. tests/data/common.sh
mal=$PWD/$BUILD/bench/malloc
need_bin "$RIP" "$mal"
cd "$TEST_TMP" || die "no TEST_TMP"

t_bg "$RIP" run --mem -q --chunk-size=1M -o K -- "$mal" 2 100000000
run=$T_LAST
wait_until 60 sh -c '[ "$(ls K/chunk-*.rpk 2>/dev/null | wc -l)" -ge 3 ]' ||
	die "no third chunk: $(ls K 2>&1)"
kill -KILL "$run"
wait "$run" 2>/dev/null
pkill -KILL -f "$mal 2 100000000"
last=$(ls K/chunk-*.rpk | tail -n 1)
for cut in 0 10; do
	truncate -s "$cut" "$last" || die "truncate"
	for cmd in dump leaks report; do
		"$RIP" $cmd K >out 2>err ||
			fail "rip $cmd, the last chunk cut to $cut bytes: exit $?: $(head -n 3 err)"
	done
	grep -q 'recording went on (or its recorder was killed' err ||
		fail "rip report does not say the recording did not end: $(cat err)"
done
t_done
