#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a path given where a trace, a ring file or a chunk is
# expected that names a device or a FIFO is refused without being opened
# (opening some devices does something: a watchdog starts, a tape
# rewinds): rip dump, rip leaks and rip ps say "not a regular file", and
# strace sees no open of it (but an O_PATH one, which runs no driver's
# open: the check is made on it).  Nor is a device opened that a trace's
# index names as a module (ls's path made /dev/zero): rip leaks
# symbolizes without it.
. tests/data/common.sh
need_cmd strace python3
prog=$(readlink -f "$(command -v ls)") || die "no ls"
cd "$TEST_TMP" || die "no TEST_TMP"
mkfifo fifo || die "mkfifo"
for path in /dev/zero "$TEST_TMP/fifo"; do
	for cmd in dump leaks ps; do
		strace -f -o trace.txt -e trace=open,openat "$RIP" "$cmd" "$path" >out 2>err
		rc=$?
		[ "$rc" = 1 ] || fail "rip $cmd $path: exit $rc, want 1: $(cat err)"
		grep -q "not a regular file" err || fail "rip $cmd $path: $(cat err)"
		grep -F "\"$path\"" trace.txt | grep -v O_PATH && fail "rip $cmd opened $path"
	done
done

# a trace whose index names /dev/zero as the program's module
"$RIP" run --mem -o T -- "$prog" / >run.out 2>&1 || fail "rip run: $(cat run.out)"
python3 - T/.rip-index "$prog" <<'PY' || die "the program's path is not in the index"
import sys
p, old = sys.argv[1], sys.argv[2].encode() + b"\0"
b = bytearray(open(p, "rb").read())
i = b.find(old)
if i < 0:
    sys.exit(1)
while i >= 0:
    b[i:i + len(old)] = b"/dev/zero".ljust(len(old), b"\0")
    i = b.find(old, i + 1)
open(p, "wb").write(b)
PY
strace -f -o trace.txt -e trace=open,openat "$RIP" leaks T >out 2>err || fail "rip leaks T: $(cat err)"
grep -F '"/dev/zero"' trace.txt | grep -v O_PATH &&
	fail "rip leaks opened /dev/zero, named as a module"
t_done
