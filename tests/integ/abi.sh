#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: librip.so's public version node holds the public API and
# nothing else.  Every symbol it exports in LIBRIP_0.1 is declared by an
# installed header (include/*.h, include/rip/*.h); every other one is in
# LIBRIP_PRIVATE and declared by include/internal/preload.h, which is not
# installed, and by no installed header; none is unversioned.  The two
# hooks of -finstrument-functions are there once more at glibc's version
# of its own no-op hooks (the one libc.so.6 defines them at, not the
# default: for a program linked without librip, lib/func.c), and nothing
# else is at a version of glibc's.  What lib/
# and preload/ share is declared once: no header of lib/ and no file of
# preload/ declares a private symbol again (a line at column 0 naming it),
# no other part of the tree uses one, and librip-preload.so binds its
# references to them at LIBRIP_PRIVATE.
. tests/data/common.sh

need_cmd readelf
need_bin "$BUILD/librip.so" "$BUILD/librip-preload.so"

installed="include/*.h include/rip/*.h"
private_h=include/internal/preload.h

# declared NAME FILE...: a line of the files outside a comment names NAME
declared() {
	name=$1
	shift
	sed -e '/^[[:space:]]*\*/d' -e '/^[[:space:]]*\/\*/d' "$@" | grep -qw -- "$name"
}

# the symbols the file defines and exports, as NAME@@VERSION (or NAME, unversioned)
readelf -W --dyn-syms "$BUILD/librip.so" |
	awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $7 != "ABS" && $5 != "LOCAL" { print $8 }' \
		>"$TEST_TMP/syms"
[ -s "$TEST_TMP/syms" ] || die "readelf found no symbol in $BUILD/librip.so"

# libc's hooks of -finstrument-functions as NAME@VERSION (librip.so's aliases of them, not default)
libc=$(ldd "$BUILD/librip.so" | awk '$1 ~ /^libc\.so/ { print $3 }')
[ -r "$libc" ] || die "ldd names no libc for $BUILD/librip.so"
readelf -W --dyn-syms "$libc" |
	awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $8 ~ /^__cyg_profile_func_(enter|exit)@/ { print $8 }' |
	sed 's/@@/@/' >"$TEST_TMP/libc"

npub=0
npriv=0
nglibc=0
: >"$TEST_TMP/private"
while read -r sym; do
	name=${sym%%@*}
	case $sym in
	*@@LIBRIP_0.1)
		npub=$((npub + 1))
		# shellcheck disable=SC2086 # a list of globs
		declared "$name" $installed ||
			fail "$name is in the public node LIBRIP_0.1 but no installed header declares it"
		;;
	*@@LIBRIP_PRIVATE)
		npriv=$((npriv + 1))
		echo "$name" >>"$TEST_TMP/private"
		declared "$name" "$private_h" || fail "$name (LIBRIP_PRIVATE) is not declared in $private_h"
		# shellcheck disable=SC2086
		! declared "$name" $installed ||
			fail "$name (LIBRIP_PRIVATE) is declared by an installed header"
		;;
	__cyg_profile_func_enter@GLIBC_* | __cyg_profile_func_exit@GLIBC_*)
		nglibc=$((nglibc + 1))
		grep -qx -- "$sym" "$TEST_TMP/libc" ||
			fail "$sym: not the version $libc defines it at ($(tr '\n' ' ' <"$TEST_TMP/libc"))"
		;;
	*@@*) fail "$sym: a version node other than LIBRIP_0.1 and LIBRIP_PRIVATE" ;;
	*) fail "$sym is exported without a version (lib/librip.map lists every export)" ;;
	esac
done <"$TEST_TMP/syms"
[ "$npub" -gt 0 ] || fail "no symbol in LIBRIP_0.1"
# x86-64 (GLIBC_2.2.5) and aarch64 (GLIBC_2.17) have them; other architectures none yet
case $(uname -m) in
x86_64 | aarch64)
	[ "$nglibc" = 2 ] && [ -s "$TEST_TMP/libc" ] ||
		fail "librip.so defines $nglibc hooks at libc's version ($(tr '\n' ' ' <"$TEST_TMP/libc")), not 2"
	;;
esac

# declared once: lib/ defines them (its .c files), preload/ only calls them, nobody else uses them
while read -r name; do
	grep -nE "^[A-Za-z_].*(^|[^A-Za-z0-9_])$name([^A-Za-z0-9_]|\$)" lib/*.h preload/*.[ch] \
		include/*.h include/rip/*.h include/internal/*.h 2>/dev/null |
		grep -v "^$private_h:" >"$TEST_TMP/redecl"
	[ -s "$TEST_TMP/redecl" ] &&
		fail "$name is declared again outside $private_h: $(cat "$TEST_TMP/redecl")"
	grep -rlw -- "$name" read analysis tools tests/unit tests/integ examples bench 2>/dev/null |
		grep -v '^tests/integ/abi\.sh$' >"$TEST_TMP/users"
	[ -s "$TEST_TMP/users" ] &&
		fail "$name is private to librip-preload.so but used by $(tr '\n' ' ' <"$TEST_TMP/users")"
done <"$TEST_TMP/private"

# the preload library binds to the private ones at LIBRIP_PRIVATE, and to nothing unversioned
readelf -W --dyn-syms "$BUILD/librip-preload.so" |
	awk '$1 ~ /^[0-9]+:$/ && $7 == "UND" { print $8 }' | grep '^_*rip_' >"$TEST_TMP/refs"
while read -r ref; do
	name=${ref%%@*}
	if grep -qx -- "$name" "$TEST_TMP/private"; then
		[ "$ref" = "$name@LIBRIP_PRIVATE" ] || fail "librip-preload.so binds $ref, not at LIBRIP_PRIVATE"
	else
		[ "$ref" = "$name@LIBRIP_0.1" ] || fail "librip-preload.so binds $ref, not at LIBRIP_0.1"
	fi
done <"$TEST_TMP/refs"

echo "$npub symbols in LIBRIP_0.1, $npriv in LIBRIP_PRIVATE, $nglibc at libc's version"
t_done
