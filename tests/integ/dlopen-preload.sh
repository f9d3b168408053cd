#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program traced through librip-preload.so (not linked with
# librip) dlopens a library after it started, the library leaks a block,
# and the program exits normally: rip leaks names the library's function
# and module in the block's stack.  The preload hooks may not call into the
# loader, so nothing rescans the module map while the program runs; librip
# rescans it at exit (python3's extension modules showed as "in no module").
. tests/data/common.sh
need_bin "$RIP"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
CC=${CC:-cc}
cat >"$TEST_TMP/plug.c" <<'C'
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) void *plug_leak(void)
{
	void *p = malloc(777);

	if (p)
		memset(p, 1, 777);
	return p;
}
C
cat >"$TEST_TMP/app.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	void *(*f)(void) = h ? (void *(*)(void))dlsym(h, "plug_leak") : NULL;

	if (!f)
		return 1;
	printf("%s\n", f() ? "leaked" : "no memory");
	return 0;
}
C
"$CC" -g -O1 -fno-omit-frame-pointer -fPIC -shared -o "$TEST_TMP/libplug.so" "$TEST_TMP/plug.c" ||
	die "cannot build the plugin"
"$CC" -g -O1 -o "$TEST_TMP/app" "$TEST_TMP/app.c" -ldl || die "cannot build the program"
timeout -k 5 60 "$RIP" run -q --mem -o "$TEST_TMP/t" -- "$TEST_TMP/app" "$TEST_TMP/libplug.so" \
	>"$TEST_TMP/out" 2>"$TEST_TMP/err" || die "rip run failed (exit $?): $(tail -n 3 "$TEST_TMP/err")"
grep -qx leaked "$TEST_TMP/out" || die "the program printed $(cat "$TEST_TMP/out")"
"$RIP" leaks "$TEST_TMP/t" >"$TEST_TMP/leaks" 2>&1 || die "rip leaks failed: $(tail -n 3 "$TEST_TMP/leaks")"
grep -A3 '^777 bytes in 1 block' "$TEST_TMP/leaks" >"$TEST_TMP/block" ||
	die "rip leaks shows no block of 777 bytes: $(head -n 20 "$TEST_TMP/leaks")"
grep -q 'plug_leak (.*plug\.c:' "$TEST_TMP/block" ||
	fail "the block's stack does not name plug_leak in libplug.so: $(cat "$TEST_TMP/block")"
grep -q 'in no module' "$TEST_TMP/leaks" && fail "frames in no module: $(grep -m 3 'in no module' "$TEST_TMP/leaks")"
t_done
