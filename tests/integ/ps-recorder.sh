#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip ps given the pid of rip run itself (the recorder, not
# the program it traces) says so and names the pid it traces, with the
# command to use, instead of "no ring file for pid N", and still exits 1.
# The program waits (a file of the test says when it may end) so that
# rip run consumes its ring file meanwhile; rip ps of the program's pid
# works; rip ps of a process that is neither keeps its "no ring file".
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
CC=${CC:-cc}

cat >"$TEST_TMP/waiter.c" <<'C'
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* Write our pid to argv[1], then wait for argv[2] to exist (60 s at most). */
int main(int argc, char **argv)
{
	struct timespec ts = { 0, 20000000 };
	FILE *f;

	if (argc != 3 || !(f = fopen(argv[1], "w")))
		return 2;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (int i = 0; i < 3000 && access(argv[2], F_OK); i++)
		nanosleep(&ts, NULL);
	return 0;
}
C
"$CC" -O1 -g -o "$TEST_TMP/waiter" "$TEST_TMP/waiter.c" || die "cannot build the test program"

t_bg "$RIP" run -q -o "$TEST_TMP/trace" -- "$TEST_TMP/waiter" "$TEST_TMP/pid" "$TEST_TMP/stop"
rpid=$T_LAST
wait_file "$TEST_TMP/pid" 30 || die "the program did not start under rip run in 30 s"
pid=$(cat "$TEST_TMP/pid")
# rip run maps the program's ring file once it is made: rip ps of the program works then
wait_until 30 "$RIP" ps "$pid" >/dev/null 2>&1 || die "rip ps $pid never worked"

expect_status 1 "rip ps RECORDER" "$RIP" ps "$rpid"
want="rip: pid $rpid is \`rip run\`, a recorder, not a traced program; it traces $pid (waiter): rip ps $pid"
[ "$(cat "$TEST_TMP/err")" = "$want" ] ||
	fail "rip ps of rip run's pid: got '$(cat "$TEST_TMP/err")', want '$want'"
[ -s "$TEST_TMP/out" ] && fail "rip ps RECORDER printed on stdout: $(head -c 200 "$TEST_TMP/out")"

# a process that is no recorder and has no ring file: the message as it was
expect_status 1 "rip ps SHELL" "$RIP" ps $$
grep -q "^rip: no ring file for pid $$ " "$TEST_TMP/err" ||
	fail "rip ps of this shell: $(cat "$TEST_TMP/err")"

: >"$TEST_TMP/stop"
wait "$rpid" || fail "rip run: exit $?"
T_PIDS=
t_done
