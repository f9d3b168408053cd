#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a second recorder joins a program under rip run --mem
# after the program defined a stack (rip:bt), and the program allocates
# again from that stack while it records.  The definition went to rip
# run's trace long before; the second trace must name the stack all the
# same (the consumer sends the definitions it kept to a recorder that
# joins), packed and CTF, and rip run's own trace is as before.
# Timeout: 90
. tests/data/common.sh
need_bin "$RIP"
CC=${CC:-cc}
export RIP_DIR="$TEST_TMP/rings"
mkdir -p "$RIP_DIR"
cd "$TEST_TMP" || die "no TEST_TMP"

cat >p.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *keep[3];

__attribute__((noinline)) static void leak_at(int i)
{
	keep[i] = malloc(4000);
}

int main(void)
{
	FILE *f;

	for (int i = 0; i < 3; i++) { /* one call site: one stack */
		char name[16];

		leak_at(i);
		if (i == 2)
			break;
		for (int k = 0; k < 20000; k++)
			free(malloc(16 + k % 500));
		snprintf(name, sizeof(name), "ready.%d", i);
		f = fopen(name, "w");
		fclose(f);
		snprintf(name, sizeof(name), "go.%d", i);
		while (access(name, F_OK)) /* until a rip record joined */
			usleep(10000);
	}
	printf("%p %p %p\n", keep[0], keep[1], keep[2]);
	return 0;
}
C
"$CC" -O0 -g -fno-omit-frame-pointer -o p p.c || die "cannot build the test program"
t_bg "$RIP" run --mem -o prim -- ./p >p.out 2>run.err
run=$T_LAST
wait_until 30 test -e ready.0 || die "the program did not get ready: $(cat run.err)"
pid=$(ls "$RIP_DIR"/rip-run.*/ 2>/dev/null | sed -n 's/^rip-\([0-9]*\)-[0-9]*\.ring$/\1/p' | head -n 1)
[ -n "$pid" ] || die "no ring file of the program under rip run"

# join NAME STEP ARGS...: a rip record that joins, then the program goes on
# past step STEP and allocates from the stack once more
join() {
	name=$1
	step=$2
	shift 2
	t_bg "$RIP" record -o "$name" "$@" "$pid" 2>"$name.err"
	rec=$T_LAST
	wait_until 30 grep -q "alongside the recorder" "$name.err" ||
		die "rip record $name did not join rip run: $(cat "$name.err")"
	: >"go.$step"
	[ "$step" = 1 ] || wait_until 30 test -e "ready.$((step + 1))" ||
		die "the program did not go on: $(cat run.err)"
}
join T 0 -d 3s
wait "$rec" || fail "rip record T: exit $?: $(cat T.err)"
join C 1 --ctf
wait "$run" || fail "rip run: exit $?: $(cat run.err)"
wait "$rec" || fail "rip record C: exit $?: $(cat C.err)"
grep -q '^0x' p.out || fail "the program did not run to its end: $(cat run.err)"

# leaks NAME BLOCKS: the blocks of 4000 bytes at leak_at, the stack named
leaks() {
	"$RIP" leaks "$1" >"$1.l" 2>"$1.lerr" || fail "rip leaks $1: $(cat "$1.lerr")"
	grep -A3 "$(($2 * 4000)) bytes)* in $2 block" "$1.l" | grep -q 'leak_at' ||
		fail "rip leaks $1: the blocks made while it recorded are not at leak_at: $(head -n 20 "$1.l")"
	! grep -q 'is not defined' "$1.l" "$1.lerr" ||
		fail "rip leaks $1: a stack is not defined: $(cat "$1.lerr") $(head -n 20 "$1.l")"
}
leaks T 1
leaks C 1
leaks prim 3
# the copies are events the trace holds: babeltrace2 reads the CTF one through
if command -v babeltrace2 >/dev/null 2>&1; then
	babeltrace2 C >bt.out 2>bt.err || fail "babeltrace2 C: $(head -n 5 bt.err)"
	grep -q 'rip:bt' bt.out || fail "babeltrace2 C: no rip:bt event: $(head -n 5 bt.out)"
fi
t_done
