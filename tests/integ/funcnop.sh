#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: with function tracing off (RIP_FUNCTIONS=0), librip turns the
# hook calls of -finstrument-functions into nops before main (lib/nop.c), in
# the program and in a library loaded at start (funcnop and funcnop-clang,
# with tests/data/funcnop-lib.c by the same compiler): every hook call left
# in their text is one of the three hand-written ones, which stay calls:
# two whose rdi is no function's address, and the bytes of one inside the
# immediate of another instruction; the program computes what it
# computed with the calls (a chain, recursion, calls through pointers, a
# function whose address is taken, the library's chain, on 5 threads), with
# a ring file or without, the PLT slots of the hooks bound lazily or at
# start, and under librip-preload.so (its hooks of glibc's version, which
# the slots do not ask for, change nothing); RIP_FUNCTIONS_NOP=0, and
# function tracing on, leave every call in place, and so does a program
# with hooks of its own (funcnop-own: the library's calls bind to them
# too), whose hooks see the calls.
. tests/data/common.sh
cd "$TEST_TMP" || die "no TEST_TMP"

n=2000
for v in gcc clang; do
	prog=$OLDPWD/$BUILD/tests/integ/funcnop
	[ $v = clang ] && prog=$prog-clang
	need_bin "$prog"

	# the calls kept: how many there are
	RIP_FUNCTIONS=0 RIP_FUNCTIONS_NOP=0 "$prog" $n >keep.$v.out 2>keep.$v.err ||
		fail "$v: RIP_FUNCTIONS_NOP=0: exit $?: $(cat keep.$v.err)"
	# shellcheck disable=SC2046 # split on purpose: the four counts become $1 .. $4
	set -- $(sed -n 's/^left //p' keep.$v.out)
	exe=${1:-0} lib=${3:-0}
	[ "$exe" -gt 2 ] && [ "$lib" -gt 2 ] && [ "${2:-}" = 3 ] && [ "${4:-}" = 3 ] ||
		fail "$v: RIP_FUNCTIONS_NOP=0: want every call kept, got: $(cat keep.$v.out)"
	grep -q '^sum ' keep.$v.out || fail "$v: RIP_FUNCTIONS_NOP=0: no sum"

	# off: only the two hand-written calls of each object are left
	RIP_FUNCTIONS=0 "$prog" $n >off.$v.out 2>off.$v.err ||
		fail "$v: RIP_FUNCTIONS=0: exit $?: $(cat off.$v.err)"
	grep -qx 'left 3 3 3 3' off.$v.out ||
		fail "$v: RIP_FUNCTIONS=0: want 'left 3 3 3 3' (of $exe and $lib), got: $(head -n 1 off.$v.out)"
	got=$(grep '^sum ' off.$v.out) want=$(grep '^sum ' keep.$v.out)
	[ "$got" = "$want" ] || fail "$v: RIP_FUNCTIONS=0: computed '$got', with the calls '$want'"

	# the PLT slots bound at start (they were not: lazy binding): the same
	LD_BIND_NOW=1 RIP_FUNCTIONS=0 "$prog" $n >now.$v.out 2>now.$v.err ||
		fail "$v: LD_BIND_NOW=1 RIP_FUNCTIONS=0: exit $?: $(cat now.$v.err)"
	cmp -s off.$v.out now.$v.out || fail "$v: LD_BIND_NOW=1: $(cat now.$v.out)"

	# under librip-preload.so, which defines the hooks at glibc's GLIBC_2.2.5 too
	# (preload/cyg.c: a version the program's slots do not ask for), slots lazily bound: the same
	LD_PRELOAD=$OLDPWD/$BUILD/librip-preload.so RIP_FUNCTIONS=0 "$prog" $n >pre.$v.out \
		2>pre.$v.err || fail "$v: librip-preload.so RIP_FUNCTIONS=0: exit $?: $(cat pre.$v.err)"
	cmp -s off.$v.out pre.$v.out || fail "$v: under librip-preload.so: $(head -n 1 pre.$v.out)"

	# off with a ring file (the file has no stacks): the same
	RIP_RING=$TEST_TMP/ RIP_FUNCTIONS=0 "$prog" $n >ring.$v.out 2>ring.$v.err ||
		fail "$v: RIP_RING RIP_FUNCTIONS=0: exit $?: $(cat ring.$v.err)"
	cmp -s off.$v.out ring.$v.out || fail "$v: with a ring file: $(cat ring.$v.out)"
	ls "$TEST_TMP"/rip-*.ring >/dev/null 2>&1 || fail "$v: RIP_RING: no ring file"
	rm -f "$TEST_TMP"/rip-*.ring

	# function tracing on (no ring file): nothing changed
	env -u RIP_FUNCTIONS "$prog" $n >on.$v.out 2>on.$v.err ||
		fail "$v: RIP_FUNCTIONS unset: exit $?: $(cat on.$v.err)"
	cmp -s keep.$v.out on.$v.out || fail "$v: RIP_FUNCTIONS unset: $(cat on.$v.out)"
done

# a program with hooks of its own, which the library's calls bind to as well: nothing changed
prog=$OLDPWD/$BUILD/tests/integ/funcnop-own
need_bin "$prog"
RIP_FUNCTIONS=0 RIP_FUNCTIONS_NOP=0 "$prog" $n >keep.own.out 2>keep.own.err ||
	fail "own hooks, RIP_FUNCTIONS_NOP=0: exit $?: $(cat keep.own.err)"
RIP_FUNCTIONS=0 "$prog" $n >off.own.out 2>off.own.err ||
	fail "own hooks, RIP_FUNCTIONS=0: exit $?: $(cat off.own.err)"
cmp -s keep.own.out off.own.out || fail "own hooks, RIP_FUNCTIONS=0: $(cat off.own.out)
want: $(cat keep.own.out)"
[ "$(sed -n 's/^own //p' off.own.out)" -gt 0 ] 2>/dev/null ||
	fail "own hooks: no call seen: $(cat off.own.out)"
t_done
