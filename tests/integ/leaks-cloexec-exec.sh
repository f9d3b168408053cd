#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: descriptors opened with O_CLOEXEC are closed by the execve
# that replaces the program, not left open.  A program opens a socket
# (SOCK_CLOEXEC), a pipe (pipe2 O_CLOEXEC), /etc/hostname without the flag
# and /etc/passwd with it, then dup2s the hostname onto the passwd number
# (a copy without the flag), then execs /bin/true.  rip leaks of the image
# before the exec, with and without --follow-exec, listed all of them: now
# the two descriptors without the flag are left open, and the three with it
# are counted as closed by the execve (exec_closed 3).
. tests/data/common.sh
need_bin "$RIP"
need_cmd python3
[ -x /bin/true ] || skip "no /bin/true to exec"
CC=${CC:-cc}
cd "$TEST_TMP" || die "no TEST_TMP"

cat >ex.c <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	int p[2], h, w;

	if (socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) < 0 || pipe2(p, O_CLOEXEC))
		return 2;
	h = open("/etc/hostname", O_RDONLY);
	w = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	if (h < 0 || w < 0 || dup2(h, w) != w)
		return 2;
	execl("/bin/true", "true", (char *)0);
	return 1;
}
C
"$CC" -O1 -g -o ex ex.c || die "cannot build the test program"
for v in plain follow; do
	o=
	[ $v = follow ] && o=--follow-exec
	# shellcheck disable=SC2086 # $o: an option or none
	"$RIP" run -q --fd $o -o t.$v -- ./ex 2>run.err || fail "$v: rip run: $(cat run.err)"
	"$RIP" leaks --json t.$v >l.$v.json 2>l.err || fail "$v: rip leaks: $(cat l.err)"
	python3 - l.$v.json <<'PY' || fail "$v: rip leaks counts descriptors the execve closed"
import json, sys
d = json.load(open(sys.argv[1]))
fd = d["totals"]["fd"]["count"]
if fd != 2 or d.get("exec_closed") != 3:
    print("left open %s, exec_closed %s: want 2 and 3" % (fd, d.get("exec_closed")), file=sys.stderr)
    sys.exit(1)
PY
done
# rip report: the same three closed by the execve (and the one dup2 closed), two open at the end
"$RIP" report --json t.plain >r.json 2>r.err || fail "rip report: $(cat r.err)"
python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["fd"]
sys.exit(0 if (f["open_at_end"], f["exec_closed"], f["closed"]) == (2, 3, 4) else print(f) or 1)
' r.json || fail "rip report counts descriptors the execve closed as open at the end"
"$RIP" leaks t.plain >l.txt 2>&1 || fail "rip leaks (text)"
grep -q '^closed by the execve that replaced the program (opened with O_CLOEXEC): 3 file descriptors$' l.txt ||
	fail "rip leaks: no line on the descriptors the execve closed: $(tail -n 3 l.txt)"
t_done
