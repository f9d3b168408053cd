#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: every public header (include/*.h, include/rip/*.h) compiles
# on its own and all of them together, warnings as errors: as C (gnu11, and
# c11 with -pedantic) with cc and clang, and as C++11, C++17 and C++20 with
# g++ and clang++ (make check installs them all).  A user's program may
# include them in any of these; none may need another header first.  Then
# the same for what the headers' macros and inline functions expand to:
# two programs that use every one of them (tests/data/headers-api.c for
# rip.h's API, headers-legacy.c for librip.h's) compile as C11 and as
# C++11/17/20, -pedantic, warnings as errors, with each compiler, link with
# librip and run.
. tests/data/common.sh

cflags="-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror"
cxxflags="-Wall -Wextra -Wshadow -pedantic -Werror"
ccs=${CC:-cc}
case " $ccs " in
*" clang "*) ;;
*) ccs="$ccs clang" ;;
esac
cxxs=" g++ clang++"
# shellcheck disable=SC2086 # one compiler a word
need_cmd $ccs $cxxs

headers=""
for h in include/*.h include/rip/*.h; do
	headers="$headers ${h#include/}"
done
[ -n "$headers" ] || die "no header in include/"

# unit NAME HEADER...: a translation unit that includes the headers, as NAME.c and NAME.cc
unit() {
	name=$1
	shift
	: >"$TEST_TMP/$name.c"
	for h in "$@"; do
		echo "#include <$h>" >>"$TEST_TMP/$name.c"
	done
	echo "int headers_$name;" >>"$TEST_TMP/$name.c"
	cp "$TEST_TMP/$name.c" "$TEST_TMP/$name.cc"
}

# try WHAT COMPILER FLAGS... SOURCE: compile SOURCE, fail with the first errors if it does not
try() {
	what=$1
	shift
	if ! "$@" -Iinclude -O2 -c -o "$TEST_TMP/out.o" >"$TEST_TMP/cc.err" 2>&1; then
		fail "$what: $*"
		head -n 8 "$TEST_TMP/cc.err" | sed 's/^/    /' >&2
	fi
	n=$((n + 1))
}

n=0
i=0
for h in $headers all; do
	i=$((i + 1))
	name=h$i
	if [ "$h" = all ]; then
		# shellcheck disable=SC2086
		unit "$name" $headers
	else
		unit "$name" "$h"
	fi
	for cc in $ccs; do
		# shellcheck disable=SC2086
		try "$h as gnu11 ($cc)" "$cc" -std=gnu11 $cflags "$TEST_TMP/$name.c"
		# shellcheck disable=SC2086
		try "$h as c11 -pedantic ($cc)" "$cc" -std=c11 -pedantic $cflags "$TEST_TMP/$name.c"
	done
	for cxx in $cxxs; do
		for std in c++11 c++17 c++20; do
			# shellcheck disable=SC2086
			try "$h as $std ($cxx)" "$cxx" -std=$std $cxxflags "$TEST_TMP/$name.cc"
		done
	done
done

# use WHAT PROGRAM COMPILER FLAGS... SOURCE: compile, link with librip and run PROGRAM
need_bin "$BUILD/librip.so"
use() {
	what=$1
	prog=$2
	shift 2
	n=$((n + 1))
	if ! "$@" -x none -Iinclude -O2 -o "$TEST_TMP/$prog" -L"$BUILD" -lrip \
		-Wl,-rpath,"$PWD/$BUILD" >"$TEST_TMP/cc.err" 2>&1; then
		fail "$what: $*"
		head -n 8 "$TEST_TMP/cc.err" | sed 's/^/    /' >&2
		return
	fi
	rm -f "$TEST_TMP/legacy.ring"
	if ! "$TEST_TMP/$prog" "$TEST_TMP/legacy.ring" >"$TEST_TMP/run.out" 2>&1; then
		fail "$what: the program failed: $(head -n 4 "$TEST_TMP/run.out")"
	fi
}

for prog in headers-api headers-legacy; do
	src=tests/data/$prog.c
	for cc in $ccs; do
		# shellcheck disable=SC2086
		use "$prog as c11 -pedantic ($cc)" "$prog" "$cc" -std=c11 -pedantic $cflags -x c "$src"
	done
	for cxx in $cxxs; do
		for std in c++11 c++17 c++20; do
			# shellcheck disable=SC2086
			use "$prog as $std ($cxx)" "$prog" "$cxx" -std=$std $cxxflags -x c++ "$src"
		done
	done
done

echo "$n compilations: headers$headers, alone and together, and the programs that use them;" \
	"C with $ccs; C++ with$cxxs"
t_done
