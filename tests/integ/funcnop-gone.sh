#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: with RIP_FUNCTIONS=0 and lazy binding, lib/nop.c takes a PLT
# slot of a hook not bound yet for librip's only when it knows every object
# before librip in the global scope: a library of hooks of their own
# before librip, whose file is gone when librip looks (removed by a
# constructor that runs first), may define them (it does: ld.so binds the
# calls of an instrumented library there), so those calls stay and the
# hooks see each one, lazily as with LD_BIND_NOW.  With the file there,
# the same.
. tests/data/common.sh

CC=${CC:-cc}
lib=$PWD/$BUILD
cd "$TEST_TMP" || die "no TEST_TMP"

cat >hooks.c <<'C'
unsigned long my_calls;
void __cyg_profile_func_enter(void *f, void *c) { (void)f; (void)c; my_calls++; }
void __cyg_profile_func_exit(void *f, void *c) { (void)f; (void)c; my_calls++; }
C
cat >foo.c <<'C'
__attribute__((noinline)) int foo_leaf(int x) { return x * 3 + 1; }
int foo(int n) { int s = 0; for (int i = 0; i < n; i++) s += foo_leaf(i); return s; }
C
cat >gone.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
/* before librip's constructor (the last DT_NEEDED is initialized first) */
__attribute__((constructor)) static void gone(void)
{
	const char *p = getenv("GONE");

	if (p && unlink(p))
		perror("unlink");
}
C
cat >main.c <<'C'
#include <stdio.h>
extern unsigned long my_calls;
int foo(int);
int main(void)
{
	int s = foo(100);

	printf("sum %d calls %lu\n", s, my_calls);
	return 0;
}
C
$CC -O2 -fPIC -shared -o libmyhooks.so hooks.c || die "cannot build libmyhooks.so"
$CC -O2 -fPIC -finstrument-functions -shared -o libfoo.so foo.c -L"$lib" -lrip ||
	die "cannot build libfoo.so"
$CC -fPIC -shared -o libgone.so gone.c || die "cannot build libgone.so"
# the hooks first in the global scope, then librip
$CC -O2 -o main main.c -Wl,--no-as-needed -L. -lmyhooks -L"$lib" -lrip -lfoo -lgone \
	-Wl,-rpath,"$PWD" -Wl,-rpath,"$lib" || die "cannot build main"
cp libmyhooks.so keep.so

RIP_FUNCTIONS=0 RIP_FUNCTIONS_NOP=0 ./main >keep.out 2>keep.err ||
	fail "RIP_FUNCTIONS_NOP=0: exit $?: $(cat keep.err)"
grep -q '^sum [0-9]* calls [1-9]' keep.out || fail "RIP_FUNCTIONS_NOP=0: no call seen: $(cat keep.out)"
for run in there gone gone-now; do
	cp keep.so libmyhooks.so
	case $run in
	there) RIP_FUNCTIONS=0 ./main ;;
	gone) GONE=$PWD/libmyhooks.so RIP_FUNCTIONS=0 ./main ;;
	gone-now) GONE=$PWD/libmyhooks.so LD_BIND_NOW=1 RIP_FUNCTIONS=0 ./main ;;
	esac >$run.out 2>$run.err || fail "$run: RIP_FUNCTIONS=0: exit $?: $(cat $run.err)"
	[ $run = there ] || [ ! -e libmyhooks.so ] || fail "$run: the file is still there"
	cmp -s keep.out $run.out ||
		fail "$run: RIP_FUNCTIONS=0: want '$(cat keep.out)' (every call seen), got: $(cat $run.out)"
done
t_done
