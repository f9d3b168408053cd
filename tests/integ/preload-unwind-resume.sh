#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the unwinding that goes on after a cleanup (the C++
# runtime's _Unwind_Resume, which librip-preload hooks) walks the
# program's frames only, as without the hook: a forced unwinding's stop
# function (what glibc's thread cancellation uses, and the program's own
# here) sees no frame of librip, under LD_PRELOAD alone and rip run --mem,
# and the destructors of the frames it unwinds run.  The hook must jump to
# the real _Unwind_Resume, which starts from its caller's frame.
. tests/data/common.sh
need_bin "$RIP"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
CXX=${CXX:-c++}
need_cmd "$CXX"
cat >"$TEST_TMP/fu.cc" <<'C'
#include <dlfcn.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

static jmp_buf jb;
static uintptr_t top;
static int dtors, frames, foreign;
static struct _Unwind_Exception ex;

/* Every frame the forced unwinding walks: the program's own, or its libraries' (not librip's). */
static _Unwind_Reason_Code stop(int, _Unwind_Action, _Unwind_Exception_Class, struct _Unwind_Exception *,
				struct _Unwind_Context *ctx, void *)
{
	uintptr_t ip = _Unwind_GetIP(ctx);
	Dl_info di;

	if (_Unwind_GetCFA(ctx) > top)
		longjmp(jb, 1);
	frames++;
	if (ip && dladdr((void *)(ip - 1), &di) && di.dli_fname && strstr(di.dli_fname, "librip")) {
		printf("a frame of %s\n", strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1 : di.dli_fname);
		foreign++;
	}
	return _URC_NO_REASON;
}

struct D {
	~D() { dtors++; }
};

__attribute__((noinline)) static void f(int n)
{
	D d;

	if (n == 0) {
		ex.exception_class = 0x5249505446554e00ull; /* "RIPTFUN" */
		_Unwind_ForcedUnwind(&ex, stop, nullptr);
		abort();
	}
	f(n - 1);
	__asm__ volatile("");
}

int main()
{
	top = (uintptr_t)__builtin_frame_address(0);
	if (!setjmp(jb))
		f(3);
	printf("dtors %d, walked %d\n", dtors, frames > 0);
	return foreign ? 1 : 0;
}
C
"$CXX" -O1 -g -fno-omit-frame-pointer -o "$TEST_TMP/fu" "$TEST_TMP/fu.cc" -ldl ||
	die "cannot build the program"
"$TEST_TMP/fu" >"$TEST_TMP/alone" 2>&1 || die "the program alone failed (exit $?): $(cat "$TEST_TMP/alone")"
grep -qx 'dtors 4, walked 1' "$TEST_TMP/alone" || die "the program alone printed $(cat "$TEST_TMP/alone")"

LD_PRELOAD=$PWD/$BUILD/librip-preload.so timeout -k 5 60 "$TEST_TMP/fu" >"$TEST_TMP/pre" 2>&1 ||
	fail "LD_PRELOAD alone: exit $?: $(cat "$TEST_TMP/pre")"
cmp -s "$TEST_TMP/alone" "$TEST_TMP/pre" || fail "LD_PRELOAD alone: not as alone: $(cat "$TEST_TMP/pre")"

timeout -k 5 60 "$RIP" run -q --mem -o "$TEST_TMP/t" -- "$TEST_TMP/fu" >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
	fail "rip run --mem: exit $?: $(cat "$TEST_TMP/out") $(tail -n 3 "$TEST_TMP/err")"
cmp -s "$TEST_TMP/alone" "$TEST_TMP/out" || fail "rip run --mem: not as alone: $(cat "$TEST_TMP/out")"
t_done
