#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: lib/ and the public headers build for aarch64 (make
# cross-aarch64: Debian's cross compiler, warnings as errors), so that their
# __aarch64__ branches (rip/snap.h's RIP_HERE, internal/relax.h, the clock
# without a TSC) compile at all: librip.so and librip.a, and the two
# programs of tests/integ/headers.sh that use every public macro, linked
# with it.  The library is an aarch64 one and exports the same symbols at
# the same versions as the native one, but for the hooks of
# -finstrument-functions at glibc's version of its own no-op ones, which
# is aarch64's libc's there (GLIBC_2.17, lib/func.c).  Nothing runs on
# aarch64 here.
. tests/data/common.sh

need_cmd aarch64-linux-gnu-gcc make readelf
need_bin "$BUILD/librip.so"

# a make of our own, not a part of the one that may have started the tests
unset MAKEFLAGS MFLAGS MAKELEVEL
make --no-print-directory -s BUILD="$BUILD" cross-aarch64 >"$TEST_TMP/make.out" 2>&1 ||
	die "make cross-aarch64 failed: $(tail -n 20 "$TEST_TMP/make.out")"

a64=$BUILD/aarch64
for f in librip.so librip.a headers-api headers-legacy; do
	[ -s "$a64/$f" ] || fail "make cross-aarch64 made no $a64/$f"
done
for f in librip.so headers-api headers-legacy; do
	readelf -h "$a64/$f" 2>/dev/null | grep -q 'Machine:.*AArch64' ||
		fail "$a64/$f is not an aarch64 ELF file"
done

# exports: the defined, non-local symbols with their versions, sorted
exports() {
	readelf -W --dyn-syms "$1" |
		awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $7 != "ABS" && $5 != "LOCAL" { print $8 }' |
		sort
}
# the hooks at a glibc version, as NAME@GLIBC (exports on stdin)
glibc_any() {
	sed 's/^\(__cyg_profile_func_[a-z]*\)@GLIBC_[0-9.]*$/\1@GLIBC/'
}
exports "$BUILD/librip.so" | glibc_any >"$TEST_TMP/native"
exports "$a64/librip.so" >"$TEST_TMP/aarch64.v"
glibc_any <"$TEST_TMP/aarch64.v" >"$TEST_TMP/aarch64"

# aarch64's hooks at the version its libc defines glibc's at
libc=$(aarch64-linux-gnu-gcc -print-file-name=libc.so.6)
[ -r "$libc" ] || die "aarch64-linux-gnu-gcc finds no libc.so.6"
readelf -W --dyn-syms "$libc" |
	awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $8 ~ /^__cyg_profile_func_(enter|exit)@/ { print $8 }' |
	sed 's/@@/@/' | sort >"$TEST_TMP/libc"
grep '^__cyg_profile_func_[a-z]*@GLIBC_' "$TEST_TMP/aarch64.v" >"$TEST_TMP/hooks"
[ -s "$TEST_TMP/libc" ] && cmp -s "$TEST_TMP/libc" "$TEST_TMP/hooks" ||
	fail "aarch64's librip.so defines the hooks at $(tr '\n' ' ' <"$TEST_TMP/hooks"), its libc at $(tr '\n' ' ' <"$TEST_TMP/libc")"
[ -s "$TEST_TMP/native" ] || die "no export found in $BUILD/librip.so"
cmp -s "$TEST_TMP/native" "$TEST_TMP/aarch64" ||
	fail "aarch64's librip.so exports other symbols: $(diff "$TEST_TMP/native" "$TEST_TMP/aarch64" | grep '^[<>]' | tr '\n' ' ')"

echo "aarch64: librip.so with $(wc -l <"$TEST_TMP/aarch64") exports, as native; headers' programs linked"
t_done
