#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: output files that rip replaces (rip report --html, rip
# calltree -o and --svg -o, rip export --force) when another user planted
# the name first, as in /tmp: a symbolic link to a file of ours (which
# calltree --svg handed to dot, which followed it and truncated the file),
# a hard link to a file of ours (truncated through it), a FIFO (rip waited
# for a reader forever) and, as root, a file of another user (nobody; it
# got what rip wrote, readable by them).  Each is refused with an error and
# the file it leads to is left as it was; a file of our own is replaced.
. tests/data/common.sh
prog=$BUILD/tests/integ/calltreeprog
need_bin "$prog" "$RIP"
need_cmd dot

ring=$("$prog") || die "calltreeprog failed"
keep=$TEST_TMP/precious
d=$TEST_TMP/shared
mkdir "$d" || die "mkdir $d"

# check_kept WHAT: precious still holds what it held
check_kept() {
	[ "$(cat "$keep")" = "secret of ours" ] || fail "$1: $keep was written through the link"
}

# run_c COMMAND OUT: one of the commands that replace their output, writing OUT
run_c() {
	case $1 in
	"calltree --svg") timeout 20 "$RIP" calltree --svg "$ring" -o "$2" ;;
	calltree) timeout 20 "$RIP" calltree "$ring" -o "$2" ;;
	"report --html") timeout 20 "$RIP" report --html "$2" "$ring" ;;
	"export --force") timeout 20 "$RIP" export --force --format=folded "$ring" -o "$2" ;;
	esac
}

# each_cmd OUT WHAT [SAYS]: every such command with output OUT (WHAT) fails, precious kept,
# saying SAYS when given
each_cmd() {
	for c in "calltree --svg" calltree "report --html" "export --force"; do
		expect_status 1 "$c to $2" run_c "$c" "$1"
		check_kept "$c to $2"
		[ -z "$3" ] || grep -q "$3" "$TEST_TMP/err" ||
			fail "$c to $2 does not say \"$3\": $(cat "$TEST_TMP/err")"
	done
}

echo "secret of ours" >"$keep"
ln -s "$keep" "$d/sym" || die "ln -s"
each_cmd "$d/sym" "a symbolic link" "a symbolic link: refused"
ln "$keep" "$d/hard" || die "ln"
each_cmd "$d/hard" "a hard link" "not a regular file of yours with one name: refused"
mkfifo "$d/fifo" || die "mkfifo"
each_cmd "$d/fifo" "a FIFO"

if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	echo "nobody's" >"$d/theirs"
	chmod 0666 "$d/theirs"
	chown nobody "$d/theirs" || die "chown nobody"
	for c in "calltree --svg" calltree "report --html" "export --force"; do
		expect_status 1 "$c into nobody's file" run_c "$c" "$d/theirs"
		[ "$(cat "$d/theirs")" = "nobody's" ] || fail "$c wrote into nobody's file"
	done
else
	skip_part "needs root and a user nobody, to plant another user's file"
fi

# our own file is replaced, by each
for c in "calltree --svg" calltree "report --html" "export --force"; do
	echo old >"$d/ours"
	expect_status 0 "$c over our own file" run_c "$c" "$d/ours"
	[ -s "$d/ours" ] && [ "$(cat "$d/ours")" != old ] || fail "$c did not replace our own file"
done
t_done
