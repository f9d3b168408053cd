#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run stops watching its ring directory as soon as the
# program has exited, before it finishes the trace (record/family.c,
# fam_unwatch).  The kernel frees an inotify watch after a grace period
# (5 to 25 ms on the test machine), and a close of the descriptor that
# still holds one, or rip run's exit, waits for it: removed first, the
# period passes while the trace is finished.  strace of rip run, alone and
# with --follow-fork (a child that allocates too): inotify_rm_watch comes
# after the program's exit and before the trace's final index is renamed
# into place (the recorder writes earlier ones as it goes), and the
# descriptor is closed after that; the traces are whole
# (rip leaks finds the program's leak, and the child's in its own trace).
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd strace
CC=${CC:-cc}
cd "$TEST_TMP" || die "no $TEST_TMP"

cat >prog.c <<'EOF'
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void *leak_here(size_t n)
{
	void *p = malloc(n);

	if (p)
		memset(p, 1, n);
	return p;
}

int main(int argc, char **argv)
{
	pid_t pid;

	if (argc > 1) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0)
			_exit(leak_here(123) ? 0 : 1);
		if (waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	return leak_here(4567) ? 0 : 1;
}
EOF
"$CC" -O0 -g -o prog prog.c 2>cc.err || die "cc: $(head -n 2 cc.err)"

# check NAME DIR: strace.NAME holds rip run's calls; the watch goes after the program's
# exit, before DIR's final index is renamed into place, and its descriptor closes after that
check() {
	awk -v dir="$2" '
	NR == 1 { rip = $1 }
	# the program: what exec'"'"'d ./prog (rip run'"'"'s signal witness exits too)
	$1 != rip && /execve\(/ && index($0, "\"./prog\"") { ppid = $1 }
	$1 == ppid && /exit_group\(/ && !prog { prog = NR }
	$1 == rip && /inotify_init1\(/ { split($0, a, "= "); fd = a[2] + 0 }
	$1 == rip && /inotify_rm_watch\(/ { rm = NR }
	$1 == rip && index($0, "\"" dir "/.rip-index\")") { idx = NR } # the last: the final index
	$1 == rip && fd && $0 ~ "close\\(" fd "[ )]" { cl = NR } # (or "<unfinished ...>")
	END {
		if (!rm) { print "no inotify_rm_watch"; exit 1 }
		if (!prog || rm < prog) { print "the watch went before the program exited"; exit 1 }
		if (!idx || rm > idx) { print "the watch went after the index was written"; exit 1 }
		if (!cl || cl < idx) { print "the inotify descriptor closed before the end"; exit 1 }
	}' "strace.$1" >"check.$1" 2>&1 ||
		fail "$1: $(cat "check.$1"); the calls: $(grep -E 'inotify|rip-index|exit_group' \
			"strace.$1" | head -n 12)"
}

# leak_at TRACE BYTES: rip leaks finds one block of BYTES bytes made at leak_here
leak_at() {
	"$RIP" leaks "$1" >"leaks.$2" 2>&1 || fail "rip leaks $1: $(head -n 3 "leaks.$2")"
	grep -q "^$2 bytes in 1 block" "leaks.$2" && grep -q "leak_here" "leaks.$2" ||
		fail "rip leaks $1: no block of $2 bytes at leak_here: $(head -n 8 "leaks.$2")"
}

strace -f -o strace.alone -e trace=inotify_init1,inotify_rm_watch,rename,close,exit_group,execve \
	"$RIP" run --mem -o A -- ./prog >run.alone 2>&1 ||
	fail "rip run: $(head -n 3 run.alone)"
check alone A
leak_at A 4567

strace -f -o strace.fork -e trace=inotify_init1,inotify_rm_watch,rename,close,exit_group,execve \
	"$RIP" run --mem --follow-fork -o F -- ./prog fork >run.fork 2>&1 ||
	fail "rip run --follow-fork: $(head -n 3 run.fork)"
check fork F
leak_at F 4567
child=$(ls -d F/[0-9]* 2>/dev/null | head -n 1)
[ -n "$child" ] || fail "rip run --follow-fork: no trace of the child in F: $(ls F)"
leak_at "$child" 123
t_done
