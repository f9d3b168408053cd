#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: with RIP_FUNCTIONS=0, librip turns into nops only the hook
# calls that bind to its own hooks (lib/nop.c).  A library built with
# -finstrument-functions and linked against a library of hooks of their own
# under a version (MYHOOKS_1) asks for that version: ld.so passes over
# librip's (LIBRIP_0.1), first in the global scope, and binds the program's.
# Its calls stay, whether its PLT slots are bound lazily (not bound yet
# when librip looks) or at start (LD_BIND_NOW), and the hooks see every
# call; the calls of a library linked against librip are nops in both.
. tests/data/common.sh

CC=${CC:-cc}
lib=$PWD/$BUILD
cd "$TEST_TMP" || die "no TEST_TMP"

# left.h: the calls of the entry hook left in section S (e8 to the PLT entry
# that bytes in .rodata, no instruction, name: no function holds them)
cat >left.h <<'C'
#include <stdint.h>
#include <string.h>
#define LEFT(s)                                                                             \
	__asm__(".pushsection .rodata\n" #s "_ref: .byte 0xe8\n"                            \
		".reloc " #s "_ref+1, R_X86_64_PLT32, __cyg_profile_func_enter-4\n"         \
		".long 0\n.popsection\n");                                                  \
	extern const uint8_t s##_ref[], __start_##s[], __stop_##s[];                        \
	__attribute__((no_instrument_function)) static const uint8_t *s##_to(const uint8_t *c) \
	{                                                                                   \
		int32_t rel;                                                                \
		memcpy(&rel, c + 1, 4);                                                     \
		return c + 5 + rel;                                                         \
	}                                                                                   \
	__attribute__((no_instrument_function)) int s##_left(void)                         \
	{                                                                                   \
		int n = 0;                                                                  \
		for (const uint8_t *p = __start_##s; p + 5 <= __stop_##s; p++)              \
			n += p[0] == 0xe8 && s##_to(p) == s##_to(s##_ref);                  \
		return n;                                                                   \
	}
C
cat >hooks.c <<'C'
unsigned long my_calls;
void __cyg_profile_func_enter(void *f, void *c) { (void)f; (void)c; my_calls++; }
void __cyg_profile_func_exit(void *f, void *c) { (void)f; (void)c; my_calls++; }
C
echo 'MYHOOKS_1 { global: __cyg_profile_func_enter; __cyg_profile_func_exit; my_calls; local: *; };' \
	>hooks.map
for s in foo bar; do
	cat >$s.c <<C
#include "left.h"
#define SEC __attribute__((section("${s}sec"), noinline))
LEFT(${s}sec)
SEC int ${s}_leaf(int x) { return x * 3 + 1; }
SEC int ${s}(int n) { int s = 0; for (int i = 0; i < n; i++) s += ${s}_leaf(i); return s; }
C
done
cat >main.c <<'C'
#include <stdio.h>
extern unsigned long my_calls;
int foo(int), bar(int), foosec_left(void), barsec_left(void);
int main(void)
{
	int s = foo(100) + bar(100);

	printf("sum %d calls %lu left %d %d\n", s, my_calls, foosec_left(), barsec_left());
	return 0;
}
C
$CC -O2 -fPIC -shared -Wl,--version-script=hooks.map -o libmyhooks.so hooks.c ||
	die "cannot build libmyhooks.so"
# foo: its calls go to the hooks of MYHOOKS_1; bar: to librip's
$CC -O2 -fPIC -finstrument-functions -shared -o libfoo.so foo.c -L. -lmyhooks ||
	die "cannot build libfoo.so"
$CC -O2 -fPIC -finstrument-functions -shared -o libbar.so bar.c -L"$lib" -lrip ||
	die "cannot build libbar.so"
# librip first in the global scope, before the hooks of MYHOOKS_1
$CC -O2 -o main main.c -Wl,--no-as-needed -L"$lib" -lrip -L. -lfoo -lbar -lmyhooks \
	-Wl,-rpath,"$PWD" -Wl,-rpath,"$lib" || die "cannot build main"

# the calls kept: every call of foo's seen, and the calls of each library in their text
RIP_FUNCTIONS=0 RIP_FUNCTIONS_NOP=0 ./main >keep.out 2>keep.err ||
	fail "RIP_FUNCTIONS_NOP=0: exit $?: $(cat keep.err)"
# shellcheck disable=SC2046 # split on purpose: the words become $1 ...
set -- $(cat keep.out)
[ "${1:-}" = sum ] && [ "${4:-0}" -gt 0 ] && [ "${6:-0}" -gt 0 ] && [ "${7:-0}" -gt 0 ] ||
	fail "RIP_FUNCTIONS_NOP=0: want calls seen and kept, got: $(cat keep.out)"
calls=${4:-} foo=${6:-}
for bind in lazy now; do
	if [ $bind = now ]; then
		LD_BIND_NOW=1 RIP_FUNCTIONS=0 ./main >$bind.out 2>$bind.err
	else
		RIP_FUNCTIONS=0 ./main >$bind.out 2>$bind.err
	fi || fail "$bind: RIP_FUNCTIONS=0: exit $?: $(cat $bind.err)"
	want="$(sed -n 's/^sum \([0-9]*\) .*/sum \1/p' keep.out) calls $calls left $foo 0"
	[ "$(cat $bind.out)" = "$want" ] ||
		fail "$bind binding: RIP_FUNCTIONS=0: want '$want' (foo's calls kept, bar's nops), got: $(cat $bind.out)"
done
t_done
