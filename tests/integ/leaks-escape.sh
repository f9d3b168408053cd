#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: what a traced program names is printed escaped.  A program
# leaks a descriptor of a file whose name holds an OSC title sequence, a
# colour and a newline; rip leaks printed the name raw (the terminal took
# a new title and went red, and the line broke).  The text must hold no
# control byte and show the name C-escaped; --json escapes it as JSON.
. tests/data/common.sh
need_bin "$RIP"
need_cmd python3
CC=${CC:-cc}
cd "$TEST_TMP" || die "no TEST_TMP"

cat >esc.c <<'C'
#include <fcntl.h>

int main(void)
{
	return open("f-\033]0;pwned\007\033[31mRED\nx", O_CREAT | O_WRONLY, 0600) < 0;
}
C
"$CC" -O1 -g -o esc esc.c || die "cannot build the test program"
"$RIP" run -q --fd -o t -- ./esc 2>run.err || fail "rip run: $(cat run.err)"
"$RIP" leaks t >l.txt 2>&1 || fail "rip leaks: $(cat l.txt)"
LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" l.txt &&
	fail "rip leaks printed control bytes: $(cat -v l.txt | head -n 5)"
grep -qF 'f-\x1b]0;pwned\x07\x1b[31mRED\nx)' l.txt ||
	fail "rip leaks: the name is not shown escaped: $(cat -v l.txt | head -n 5)"
"$RIP" leaks --json t >l.json 2>&1 || fail "rip leaks --json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = [g.get("sample") for g in d["leaks"] if g.get("sample")]
sys.exit(0 if any(x.endswith("f-\x1b]0;pwned\x07\x1b[31mRED\nx") for x in s) else 1)
' l.json || fail "rip leaks --json: the name does not round-trip: $(head -c 400 l.json)"
t_done
