#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the `rip snapshot` command: --help, exit status 2 on usage
# errors and 1 on failures (no such process or file, an output directory
# that exists: never overwritten), the default directory
# rip-COMM-PID-snapshot in the current directory, the one-line and --json
# summaries, and snapshots of live processes: one idle after emitting
# (exact counts, not marked dead) and one writing on 2 threads while it is
# copied (babeltrace2 still reads it; packets reused under the copy may be
# dropped, and then reported).
. tests/data/common.sh
. tests/data/ctf-lib.sh
ctf_need

expect_status 0 "--help" "$RIP" snapshot --help
grep -q '^usage: rip snapshot' "$TEST_TMP/out" || fail "--help prints no usage"
expect_status 0 "rip help snapshot" "$RIP" help snapshot
expect_status 2 "no target" "$RIP" snapshot
expect_status 2 "two targets" "$RIP" snapshot 1 2
expect_status 2 "unknown option" "$RIP" snapshot --frobnicate 1
expect_status 2 "-o without a directory" "$RIP" snapshot -o
expect_status 2 "bad pid" "$RIP" snapshot 99999999999
expect_status 1 "no such file" "$RIP" snapshot "$TEST_TMP/nonexistent.ring"
expect_status 1 "pid with no ring file" "$RIP" snapshot -o "$TEST_TMP/none" 4000000
[ -e "$TEST_TMP/none" ] && fail "a failed snapshot left $TEST_TMP/none behind"

# A finished process, into the default directory, twice.
evprog_run dead 200 --threads 1
mkdir -p "$TEST_TMP/cwd"
(cd "$TEST_TMP/cwd" && "$RIP" snapshot "$EV_PID") >"$TEST_TMP/line" 2>"$TEST_TMP/err" ||
	fail "rip snapshot PID into the current directory: $(cat "$TEST_TMP/err")"
d=$TEST_TMP/cwd/rip-evprog-$EV_PID-snapshot
[ -f "$d/metadata" ] && [ -f "$d/stream_0" ] || fail "no trace in $d"
want="rip-evprog-$EV_PID-snapshot: 200 events, 1 packets, 1 streams; 0 events lost"
want="$want (discarded or overwritten), 0 torn packets dropped (process dead)"
[ "$(cat "$TEST_TMP/line")" = "$want" ] ||
	fail "summary line: $(cat "$TEST_TMP/line")"
ls -l "$d" >"$TEST_TMP/before"
(cd "$TEST_TMP/cwd" && "$RIP" snapshot "$EV_PID") >"$TEST_TMP/out" 2>"$TEST_TMP/err"
rc=$?
[ "$rc" = 1 ] || fail "a second snapshot into the same directory: exit $rc, want 1"
grep -q 'exists' "$TEST_TMP/err" || fail "no 'exists' in the error: $(cat "$TEST_TMP/err")"
ls -l "$d" | cmp -s - "$TEST_TMP/before" || fail "the existing trace was touched"
# by ring file path, too
ring=$(ls "$RIP_DIR"/rip-"$EV_PID"-*.ring | head -n 1)
snap_check byfile "$ring" --emitted 200 --threads 1

# A live process, idle after emitting: exact, and not marked dead.
fifo=$TEST_TMP/fifo
mkfifo "$fifo" || die "mkfifo"
t_bg sh -c 'exec "$1" 3000 --threads 3 --types 30 --wait <"$2" >"$3"' sh "$EVPROG" "$fifo" \
	"$TEST_TMP/live.evprog"
idle=$T_LAST
exec 3>"$fifo"
wait_until 60 grep -qs '^emitted' "$TEST_TMP/live.evprog" ||
	die "evprog did not finish emitting in 60s"
snap_check live "$idle" --emitted 9000 --threads 3 --want-ext-ids
grep -q '"alive": true' "$TEST_TMP/live.json" || fail "live process reported dead"
grep -q 'process_dead = 0;' "$TEST_TMP/live/metadata" || fail "live process marked dead"
exec 3>&-
wait "$idle"

# A live process writing as fast as it can on 2 threads, snapshot twice
# once both are writing.
t_bg "$EVPROG" 0 --threads 2 --types 30 >"$TEST_TMP/busy.evprog"
busy=$T_LAST
wait_until 60 grep -q '^writing$' "$TEST_TMP/busy.evprog" ||
	die "evprog's threads did not start writing: $(cat "$TEST_TMP/busy.evprog")"
snap_check busy1 "$busy" --threads 2 --allow-gaps --allow-packet-loss
snap_check busy2 "$busy" --threads 2 --allow-gaps --allow-packet-loss
t_kill "$busy"
t_done
