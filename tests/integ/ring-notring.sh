#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a short file that is no ring file (a line of text) handed to
# rip ps, rip leaks and rip top is named as not a ring file, not as a
# truncated one; a short file that begins with the ring file's magic is
# named truncated, and so is an empty one (cut before its magic ended).
# Each exits 1 with one line on stderr.
. tests/data/common.sh
need_bin "$RIP"

echo "hello" >"$TEST_TMP/text.txt"
printf 'RIPRING\000abc' >"$TEST_TMP/short.ring"
: >"$TEST_TMP/empty.ring"
for cmd in ps leaks top; do
	"$RIP" $cmd "$TEST_TMP/text.txt" >/dev/null 2>"$TEST_TMP/err"
	rc=$?
	[ $rc = 1 ] || fail "rip $cmd of a text file: exit $rc"
	grep -q "text.txt: not a librip ring file" "$TEST_TMP/err" ||
		fail "rip $cmd of a text file: $(cat "$TEST_TMP/err")"
	"$RIP" $cmd "$TEST_TMP/short.ring" >/dev/null 2>"$TEST_TMP/err"
	rc=$?
	[ $rc = 1 ] || fail "rip $cmd of a short ring file: exit $rc"
	grep -q "short.ring: truncated: 11 bytes" "$TEST_TMP/err" ||
		fail "rip $cmd of a short ring file: $(cat "$TEST_TMP/err")"
	[ "$(wc -l <"$TEST_TMP/err")" = 1 ] || fail "rip $cmd: more than one line: $(cat "$TEST_TMP/err")"
	"$RIP" $cmd "$TEST_TMP/empty.ring" >/dev/null 2>"$TEST_TMP/err"
	grep -q "empty.ring: truncated: 0 bytes" "$TEST_TMP/err" ||
		fail "rip $cmd of an empty file: $(cat "$TEST_TMP/err")"
done
t_done
