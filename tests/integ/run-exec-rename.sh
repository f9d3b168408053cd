#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run tells a program that renamed itself from one that
# exec'd another image, and rip ps of the trace says which.  rip run looks
# for an exec it does not follow by the process's image while it runs and,
# once it has exited, by its name: a program that set its own name
# (PR_SET_NAME, as servers and worker pools do) and exited was said to have
# "exec'd renamed", and a shell that exec'd into an untraced program was
# "dead (killed or crashed)" in rip ps of its trace.  exec_rename.c:
#  - rename (exits 0), rename-kill (SIGKILL), rename-raw (the exit_group
#    system call, no exit mark in its file): no "exec'd" line;
#  - sh -c 'true; exec exec_rename exit3': rip run exits 3, says "sh exec'd",
#    and rip ps of the trace says "replaced by execve";
#  - under --follow-fork, the shell's child that exec's sleep: its trace
#    said "dead (killed or crashed)", and must say "replaced by execve";
#    with --follow-exec too (sleep's image marks the file, often after
#    rip run finished its trace: real-bash's children were "dead").
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/exec_rename
need_bin "$prog" "$RIP"
cd "$TEST_TMP" || die "no $TEST_TMP"

for m in rename rename-kill rename-raw; do
	"$RIP" run -o "T-$m" -- "$prog" "$m" >/dev/null 2>"$m.err"
	grep -q "exec'd" "$m.err" && fail "$m: rip run says it exec'd: $(grep "exec'd" "$m.err")"
	expect_status 0 "rip ps T-$m" "$RIP" ps "T-$m"
	case $m in
	rename) want="exited" ;;
	rename-kill) want="dead (killed or crashed)" ;;
	*) continue ;; # no mark, no signal: gone, not "replaced by execve" (below)
	esac
	head -n 1 "$TEST_TMP/out" | grep -qF ") $want," ||
		fail "rip ps T-$m: $(head -n 1 "$TEST_TMP/out"), want '$want'"
done
head -n 1 "$TEST_TMP/out" | grep -qF "replaced by execve" &&
	fail "rip ps T-rename-raw: $(head -n 1 "$TEST_TMP/out")"

"$RIP" run -o X -- sh -c "true; exec '$prog' exit3" >/dev/null 2>x.err
rc=$?
[ "$rc" = 3 ] || fail "rip run of sh exec'ing exec_rename exit3: exit $rc, want 3: $(cat x.err)"
grep -q "sh exec'd .*exec_rename" x.err || fail "rip run did not say that sh exec'd: $(cat x.err)"
expect_status 0 "rip ps X" "$RIP" ps X
head -n 1 "$TEST_TMP/out" | grep -qF ") replaced by execve," ||
	fail "rip ps X: $(head -n 1 "$TEST_TMP/out"), want 'replaced by execve'"

# A followed child (the shell's fork) that exec's a command not followed, which runs
# for a while (rip run looks every 100 ms): its trace says so too.
"$RIP" run --follow-fork -o F -- sh -c 'sleep 0.6 & wait' 2>f.err || fail "rip run -F: $(cat f.err)"
set -- F/[0-9]*
[ $# = 1 ] && [ -d "$1" ] || fail "want one child trace in F: $*"
grep -q "^rip run:   ${1#F/} (sh): .*; exec'd .*sleep\$" f.err ||
	fail "rip run's line on the child: $(cat f.err)"
expect_status 0 "rip ps $1" "$RIP" ps "$1"
head -n 1 "$TEST_TMP/out" | grep -qF ") replaced by execve," ||
	fail "rip ps $1: $(head -n 1 "$TEST_TMP/out"), want 'replaced by execve'"

# The same with the exec followed: the new image marks the old file, but rip run had
# often finished that trace before it did.
"$RIP" run --follow-fork --follow-exec -o G -- sh -c 'sleep 0.6 & wait' 2>g.err ||
	fail "rip run -F -E: $(cat g.err)"
set -- G/[0-9]*.1
[ $# = 1 ] && [ -d "$1" ] || fail "want one exec'd image's trace in G: $*"
c=${1%.1}
grep -q "^rip run:   ${c#G/} (sh): .*; exec'd .*sleep\$" g.err ||
	fail "rip run's line on the child (exec followed): $(cat g.err)"
expect_status 0 "rip ps $c" "$RIP" ps "$c"
head -n 1 "$TEST_TMP/out" | grep -qF ") replaced by execve," ||
	fail "rip ps $c: $(head -n 1 "$TEST_TMP/out"), want 'replaced by execve'"
t_done
