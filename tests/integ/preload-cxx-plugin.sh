#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a C program (no C++ runtime at start) dlopens a C++ library,
# RTLD_LOCAL, which throws through frames with destructors and catches
# (a Python extension module written in C++ is that), and catches the
# std::bad_alloc of an allocation too big: under librip-preload
# (rip run --mem, and LD_PRELOAD alone) it runs as alone, same output and
# exit status.  The C++ runtime comes after the preload library resolved
# its hooks' real functions: the hooks of the catch (__cxa_begin_catch)
# and of operator new[] (whose real one throws when malloc fails) must find
# the runtime's own, not abort the program.
. tests/data/common.sh
need_bin "$RIP"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
CC=${CC:-cc}
CXX=${CXX:-c++}
need_cmd "$CXX"
cat >"$TEST_TMP/plug.cc" <<'C'
#include <cstdio>
#include <new>
#include <stdexcept>
struct Noisy {
	int n;
	~Noisy() { printf("dtor %d\n", n); }
};
__attribute__((noinline)) static void plug_throw(int d)
{
	Noisy g{ d };
	if (d == 0)
		throw std::runtime_error("deep");
	plug_throw(d - 1);
}
extern "C" int plug_run(void)
{
	int caught = 0;
	for (int i = 0; i < 3; i++) {
		try {
			plug_throw(2);
		} catch (const std::exception &e) {
			printf("caught %s\n", e.what());
			caught++;
		}
	}
	try {
		try {
			throw 7;
		} catch (...) {
			throw;
		}
	} catch (int v) {
		printf("rethrown %d\n", v);
		caught++;
	}
	try {
		volatile size_t big = (size_t)1 << 62; /* more than malloc gives */
		char *p = new char[big];

		printf("allocated %p\n", (void *)p);
	} catch (const std::bad_alloc &) {
		printf("bad_alloc\n");
		caught++;
	}
	return caught;
}
C
cat >"$TEST_TMP/app.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	int (*f)(void) = h ? (int (*)(void))dlsym(h, "plug_run") : NULL;
	int n;

	if (!f)
		return 2;
	n = f();
	printf("plug_run %d\n", n);
	return n == 5 ? 0 : 1;
}
C
"$CXX" -g -O1 -fPIC -shared -o "$TEST_TMP/libplug.so" "$TEST_TMP/plug.cc" ||
	die "cannot build the plugin"
"$CC" -g -O1 -o "$TEST_TMP/app" "$TEST_TMP/app.c" -ldl || die "cannot build the program"
# the point: the program itself brings no C++ runtime
ldd "$TEST_TMP/app" | grep -q 'libstdc++' && die "the program links libstdc++: not the case tested"
"$TEST_TMP/app" "$TEST_TMP/libplug.so" >"$TEST_TMP/alone" 2>&1 ||
	die "the program alone failed (exit $?): $(cat "$TEST_TMP/alone")"
grep -qx 'plug_run 5' "$TEST_TMP/alone" || die "the program alone printed $(cat "$TEST_TMP/alone")"

timeout -k 5 60 "$RIP" run -q --mem -o "$TEST_TMP/t" -- "$TEST_TMP/app" "$TEST_TMP/libplug.so" \
	>"$TEST_TMP/out" 2>"$TEST_TMP/err"
rc=$?
[ $rc -eq 0 ] || fail "rip run --mem: exit $rc: $(tail -n 3 "$TEST_TMP/err")"
cmp -s "$TEST_TMP/alone" "$TEST_TMP/out" ||
	fail "rip run --mem: the output differs from the program's alone: $(cat "$TEST_TMP/out")"

LD_PRELOAD=$PWD/$BUILD/librip-preload.so timeout -k 5 60 "$TEST_TMP/app" "$TEST_TMP/libplug.so" \
	>"$TEST_TMP/pre" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "LD_PRELOAD alone: exit $rc: $(tail -n 3 "$TEST_TMP/pre")"
cmp -s "$TEST_TMP/alone" "$TEST_TMP/pre" ||
	fail "LD_PRELOAD alone: the output differs from the program's alone: $(cat "$TEST_TMP/pre")"
t_done
