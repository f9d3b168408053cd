#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the library's C sources are as clang-format leaves them,
# with the tree's .clang-format: lib/*.[ch], include/*.h, include/rip/*.h and
# include/internal/*.h, the files .clang-format names, checked with
# clang-format-14 (Debian 12's: another version formats differently) in
# dry-run mode, warnings as errors.  Fix with the command it prints.  The
# rest of the tree is not held to it yet (clang-format 14 would change
# about 1,750 of its lines, some of them for the worse; doc/hacking.md).
# A badly indented copy of a file, planted in TEST_TMP, fails the check
# (so the check itself can fail).
. tests/data/common.sh

CF=clang-format-14
need_cmd $CF

files=""
for f in lib/*.c lib/*.h include/*.h include/rip/*.h include/internal/*.h; do
	[ -f "$f" ] && files="$files $f"
done
[ -n "$files" ] || die "no C source in lib/ or include/"

# shellcheck disable=SC2086 # one file a word
if ! $CF --dry-run -Werror $files >"$TEST_TMP/found" 2>&1; then
	fail "not as clang-format leaves them ($(grep -c 'error:' "$TEST_TMP/found") places); run:" \
		"$CF -i lib/*.[ch] include/*.h include/rip/*.h include/internal/*.h"
	head -n 40 "$TEST_TMP/found" | sed 's/^/    /' >&2
fi

# the planted one, with the tree's settings (.clang-format is found from the file up)
mkdir -p "$TEST_TMP/tree/lib"
cp .clang-format "$TEST_TMP/tree/"
sed 's/^\t/  /' lib/clock.c >"$TEST_TMP/tree/lib/clock.c"
$CF --dry-run -Werror "$TEST_TMP/tree/lib/clock.c" >/dev/null 2>&1 &&
	fail "clang-format found nothing wrong in a copy of lib/clock.c indented with spaces"

echo "$(echo "$files" | wc -w) files checked"
t_done
