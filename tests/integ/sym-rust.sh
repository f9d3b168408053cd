#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: Rust names in rip's output.  (1) The demangler's unit test
# (tests/unit/demangle.c: known pairs, then truncated, changed and spliced
# names, deep nesting, exponential back-references) built with
# AddressSanitizer and UBSan: no report.  (2) A program whose functions
# carry a Rust v0 name and a legacy one (_ZN...17h<hash>E), built without
# debug information so that the symbol table names them, leaks through
# each under rip run --mem: rip leaks shows mycrate::alloc::leak::<u8> and
# mycrate::alloc::legacy (no hash), as text and JSON.
. tests/data/common.sh
need_bin "$RIP"
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || skip "no C compiler ($CC)"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON output"

# 1. the unit test under the sanitizers
"$CC" -std=gnu11 -D_GNU_SOURCE -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
	-I. -Iinclude -Itests -o "$TEST_TMP/demangle-asan" tests/unit/demangle.c read/demangle.c ||
	die "cannot build tests/unit/demangle.c with -fsanitize=address,undefined"
ASAN_OPTIONS=detect_leaks=1 "$TEST_TMP/demangle-asan" >"$TEST_TMP/asan.out" 2>&1 ||
	fail "the demangler under AddressSanitizer: $(head -n 20 "$TEST_TMP/asan.out")"

# 2. Rust names through the symbolizer
cat >"$TEST_TMP/prog.c" <<'EOF'
#include <stdlib.h>

void *v0_leak(size_t n) __asm__("_RINvNtCs1234_7mycrate5alloc4leakhE");
void *legacy_leak(size_t n) __asm__("_ZN7mycrate5alloc6legacy17h0123456789abcdefE");
void *volatile keep[2];

__attribute__((noinline)) void *v0_leak(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void *legacy_leak(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(void)
{
	keep[0] = v0_leak(4101);
	keep[1] = legacy_leak(4102);
	return 0;
}
EOF
"$CC" -O1 -fno-omit-frame-pointer -o "$TEST_TMP/prog" "$TEST_TMP/prog.c" || die "cannot build the program"
"$RIP" run -q --mem -o "$TEST_TMP/tr" -- "$TEST_TMP/prog" >"$TEST_TMP/run.out" 2>&1 ||
	die "rip run: $(head -n 5 "$TEST_TMP/run.out")"
"$RIP" leaks "$TEST_TMP/tr" >"$TEST_TMP/leaks.txt" 2>"$TEST_TMP/leaks.err" ||
	die "rip leaks: $(head -n 5 "$TEST_TMP/leaks.err")"
"$RIP" leaks --json "$TEST_TMP/tr" >"$TEST_TMP/leaks.json" 2>"$TEST_TMP/leaks.err" ||
	die "rip leaks --json: $(head -n 5 "$TEST_TMP/leaks.err")"
# each leak's first frame: its function, demangled, with no hash
for want in "4101 mycrate::alloc::leak::<u8>" "4102 mycrate::alloc::legacy"; do
	size=${want%% *}
	fn=${want#* }
	awk -v size="$size" '$1 == size && $2 == "bytes" { getline; print; exit }' \
		"$TEST_TMP/leaks.txt" | grep -q "^ *$fn+0x[0-9a-f]* (prog)\$" ||
		fail "the leak of $size bytes is not in $fn: $(grep -A 2 "^$size bytes" "$TEST_TMP/leaks.txt")"
done
python3 - "$TEST_TMP/leaks.json" <<'PY' || fail "rip leaks --json: the functions are not demangled"
import json, sys
d = json.load(open(sys.argv[1]))
names = json.dumps(d)
ok = "mycrate::alloc::leak::<u8>" in names and "mycrate::alloc::legacy\"" in names
ok = ok and "_RINv" not in names and "h0123456789abcdef" not in names
sys.exit(0 if ok else 1)
PY
t_done
