#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: allocations made by other libraries' constructors, which run
# before the preload library's, are recorded.  A shared library whose
# constructor leaks 777 bytes (malloc), linked to a program: rip leaks
# --json shows exactly 777 bytes in 1 block from that constructor, as
# valgrind does, with its stack up to the loader's _dl_init (built without
# frame pointers, it was ctor_leak alone: before our constructor loads
# libunwind, a walk of the unwind tables that stopped at the loader's
# entry code, which has none, was dropped for the frame pointers').  A C++ program: the
# allocation count and bytes match valgrind's exactly, libstdc++'s emergency
# exception pool (allocated by its constructor) included.  Before the fix
# rip saw nothing of the 777 bytes, and one allocation less in C++.
. tests/data/common.sh
CC=${CC:-cc}
CXX=${CXX:-c++}
need_bin "$RIP"
need_cmd "$CC" "$CXX" valgrind python3
cd "$TEST_TMP" || exit 1

cat >ctorlib.c <<'SRC'
#include <stdlib.h>
__attribute__((constructor)) static void ctor_leak(void)
{
	char *p = malloc(777);

	p[0] = 1;
	__asm__ __volatile__("" : : "r"(p) : "memory"); /* leaked, and not optimised away */
}
int ctorlib_dummy(void) { return 1; }
SRC
cat >ctormain.c <<'SRC'
int ctorlib_dummy(void);
int main(void) { return ctorlib_dummy() - 1; }
SRC
$CC -O2 -g -fPIC -shared -o libctorleak.so ctorlib.c || die "cannot build the library"
$CC -O2 -g -o ctormain ctormain.c -L. -lctorleak -Wl,-rpath,"$TEST_TMP" || die "cannot build the program"

"$RIP" run --mem -q -o t1 -- ./ctormain >out 2>err || fail "rip run: $(cat err)"
"$RIP" leaks --json t1 >leaks.json 2>err || fail "rip leaks: $(cat err)"
grep -q '"totals":{"mem":{"count":1,"bytes":777,' leaks.json ||
	fail "leaked memory is not exactly 1 block of 777 bytes: $(grep -o '"totals":{"mem":{[^}]*}' leaks.json)"
grep -q '"function":"ctor_leak"' leaks.json || fail "the leak is not from ctor_leak: $(head -c 600 leaks.json)"
# the whole stack, up to the loader's _dl_init: the unwind tables, where frame pointers stop
python3 - leaks.json <<'PY' || fail "the stack of ctor_leak's block is cut short"
import json, sys
g = json.load(open(sys.argv[1]))["leaks"][0]
fns = [f["function"] for f in g["stack"]]
assert fns[0] == "ctor_leak" and "_dl_init" in fns, fns
PY

valgrind --leak-check=full ./ctormain >/dev/null 2>vg.err
grep -q "definitely lost: 777 bytes in 1 blocks" vg.err ||
	fail "valgrind disagrees: $(grep -E 'lost|heap usage' vg.err)"

cat >cxx.cc <<'SRC'
#include <string>
#include <vector>
int main()
{
	std::vector<std::string> v;
	for (int i = 0; i < 10; i++)
		v.push_back(std::string(40, 'x'));
	return v.size() == 10 ? 0 : 1;
}
SRC
$CXX -O2 -g -o cxx cxx.cc || die "cannot build the C++ program"
valgrind ./cxx >/dev/null 2>vg2.err
want=$(sed -n 's/.*total heap usage: \([0-9,]*\) allocs, [0-9,]* frees, \([0-9,]*\) bytes allocated.*/\1 \2/p' vg2.err | tr -d ,)
"$RIP" run --mem -q -o t2 -- ./cxx >out 2>err || fail "rip run (C++): $(cat err)"
"$RIP" report --json t2 >rep.json 2>err || fail "rip report (C++): $(cat err)"
got=$(sed -n 's/.*"memory":{"allocations":\([0-9]*\),"bytes":\([0-9]*\),.*/\1 \2/p' rep.json)
[ -n "$want" ] && [ "$got" = "$want" ] ||
	fail "C++: rip counts '$got' (allocations bytes), valgrind '$want'"
# libstdc++'s emergency pool: its constructor's block, never freed by the program
"$RIP" leaks --json t2 >leaks2.json 2>err || fail "rip leaks (C++): $(cat err)"
grep -q '"kinds":\["malloc"\]' leaks2.json && grep -q 'libstdc++' leaks2.json ||
	fail "C++: no block from libstdc++'s initialisation: $(head -c 400 leaks2.json)"
t_done
