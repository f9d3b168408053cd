#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the files rip writes for the user (rip export -o, rip
# calltree -o, rip report --html, rip run's trace: directory 0700, files
# 0600) are created for their owner only and never through a symbolic link: a link at the output path is refused (exit 1) and what it
# points to is left as it was, with --force too; rip export without --force
# refuses an existing file.
. tests/data/common.sh
prog=$BUILD/tests/integ/exportprog
need_bin "$prog" "$RIP"
prog=$(readlink -f "$prog")

ring=$("$prog" exit) || die "exportprog exit failed"
[ -s "$ring" ] || die "exportprog made no ring file ($ring)"
cd "$TEST_TMP" || die "no test directory"
umask 022

mode() { stat -c %a "$1"; }

expect_status 0 "rip export -o" "$RIP" export --format=folded "$ring" -o out.folded
[ "$(mode out.folded)" = 600 ] || fail "rip export -o: mode $(mode out.folded), want 600"
expect_status 1 "rip export -o an existing file" "$RIP" export --format=folded "$ring" -o out.folded
grep -q 'exists' "$TEST_TMP/err" || fail "rip export: no word that the file exists: $(cat "$TEST_TMP/err")"

expect_status 0 "rip calltree -o" "$RIP" calltree "$ring" -o out.dot
[ "$(mode out.dot)" = 600 ] || fail "rip calltree -o: mode $(mode out.dot), want 600"

expect_status 0 "rip report --html" "$RIP" report --html=out.html "$ring"
[ "$(mode out.html)" = 600 ] || fail "rip report --html: mode $(mode out.html), want 600"

expect_status 0 "rip run" "$RIP" run --mem -q -o tr -- /bin/true
[ "$(mode tr)" = 700 ] || fail "rip run: the trace directory is mode $(mode tr), want 700"
for f in tr/* tr/.rip-index; do
	[ "$(mode "$f")" = 600 ] || fail "rip run: $f is mode $(mode "$f"), want 600"
done

echo precious >target
for c in "export --format=folded --force $ring -o link" "calltree $ring -o link" \
	"report --html=link $ring"; do
	rm -f link
	ln -s target link
	# shellcheck disable=SC2086
	expect_status 1 "rip $c through a symbolic link" "$RIP" $c
	[ "$(cat target)" = precious ] || fail "rip $c wrote through the link"
done
t_done
