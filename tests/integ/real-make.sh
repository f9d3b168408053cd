#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: make -j2 driving gcc over a small project generated here (6
# C files, a header, a static library built with ar, a program linked
# against it) runs under rip run --mem --fd --shm --follow-fork
# --follow-exec as it runs plain: the same output and exit status, no
# hang, 0 events lost in make and in every followed child (the shells,
# gcc, cc1, as, collect2, ld, ar), every trace read by rip leaks and rip
# report; the program built traced works and is the same as the one built
# plain.  A failing build (a syntax error) fails the same way traced.
# Timeout: 180
. tests/data/real.sh
real_need make gcc ar
# The makes here are our own: not children of an outer `make -jN check`,
# whose jobserver descriptors one run may see and the other not.
unset MAKEFLAGS MFLAGS MAKELEVEL
m=$W/proj
mkdir -p "$m"
for i in 1 2 3 4 5; do
	cat >"$m/f$i.c" <<C
#include "proj.h"
int f$i(int x)
{
	int s = 0;
	for (int i = 0; i < x; i++)
		s += (i * $i) % 7;
	return s;
}
C
done
cat >"$m/proj.h" <<'C'
int f1(int x);
int f2(int x);
int f3(int x);
int f4(int x);
int f5(int x);
C
cat >"$m/main.c" <<'C'
#include <stdio.h>
#include "proj.h"
int main(void)
{
	printf("%d %d %d %d %d\n", f1(10), f2(20), f3(30), f4(40), f5(50));
	return 0;
}
C
# shellcheck disable=SC2016 # make's variables
printf '%s\n' 'OBJ = f1.o f2.o f3.o f4.o f5.o' \
	'prog: main.o libproj.a' '	$(CC) -o $@ main.o -L. -lproj' \
	'libproj.a: $(OBJ)' '	ar rcs $@ $(OBJ)' \
	'%.o: %.c proj.h' '	$(CC) -O1 -c -o $@ $<' \
	'clean:' '	rm -f *.o libproj.a prog' >"$m/Makefile"
# make's own messages name no directory when it runs in it (no -C)
real_run "make -j2 + gcc" "$REAL_FOLLOW" "rm -f \"\$m\"/*.o \"\$m/libproj.a\" \"\$m/prog\"" \
	make -s -j2 -C "$m" CC=gcc
[ "$real_traces" -ge 15 ] || fail "make: $real_traces traces, want make's and gcc's, cc1's, as's... (15 or more)"
[ -x "$m/prog" ] || fail "make under rip run built no program"
out=$("$m/prog")
[ "$out" = "24 58 87 117 147" ] || fail "the program built under rip run prints '$out'"
cp "$m/prog" "$W/prog.traced"
rm -f "$m"/*.o "$m/libproj.a" "$m/prog"
make -s -j2 -C "$m" CC=gcc >/dev/null 2>&1 || die "make failed plain"
cmp -s "$m/prog" "$W/prog.traced" || fail "the program built traced differs from the one built plain"
real_run "built program" "$REAL_OPTS" : "$m/prog"

# a compile error: make fails (exit 2) with gcc's message, traced as plain
echo 'int broken(void) { return }' >"$m/f6.c"
real_run "make, a compile error" "$REAL_FOLLOW" "rm -f \"\$m/f6.o\"" make -s -C "$m" CC=gcc f6.o
[ "$real_prc" = 2 ] || fail "make of a broken file: exit $real_prc, want 2"
t_done
