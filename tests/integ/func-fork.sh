#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a process that forks from inside traced calls (funcfork,
# under rip run --follow-fork --functions).  The child inherits its
# parent's open calls (main > fork_run > fork_mid > fork_at): its trace
# starts with a rip:fn_open of each, and rip report --functions of the
# child shows them as calls that began before its trace, with their exits
# (no exit without its entry), and fork_leaf's N calls; the parent's
# report is complete too, and a function the parent named before the fork
# is named in the child's report.  The same from a thread (fork_thread > fork_mid
# > fork_at), through vfork (no child trace, a clean parent's) and
# posix_spawn (the new image starts with nothing open).  rip export draws
# the inherited calls as spans marked "before".  A child parked in
# fork_park shows the inherited path in rip ps --stacks.
. tests/data/common.sh
. tests/data/fn-lib.sh
prog=$PWD/$BUILD/tests/integ/funcfork
before=$PWD/tests/data/fn-before.py
need_bin "$prog" "$RIP"
need_cmd python3
cd "$TEST_TMP" || die "no TEST_TMP"
n=300

# run TRACE MODE: funcfork MODE N under rip run, the child's trace (if any) into $child
run() {
	"$RIP" run --follow-fork --functions -o "$1" -- "$prog" "$2" $n >"$1.out" 2>"$1.err" ||
		die "$2: rip run: $(cat "$1.err")"
	grep -q ", 0 lost\$" "$1.err" || fail "$2: rip run lost records: $(cat "$1.err")"
	child=$(cd "$1" && ls -d [0-9]* 2>/dev/null | head -n 1)
}

# counts TRACE NAME: rip report --functions of TRACE is want.txt (fn-before.py's lines)
counts() {
	"$RIP" report --functions --json "$1" >"$1.json" 2>"$1.rerr" ||
		{ fail "$2: rip report $1: $(cat "$1.rerr")"; return; }
	python3 "$before" <"$1.json" >"$1.txt" || { fail "$2: not JSON: $(head -c 300 "$1.json")"; return; }
	diff want.txt "$1.txt" >"$1.diff" || fail "$2: rip report --functions $1 (want, got): $(cat "$1.diff")"
}

# totals ENTRIES EXITS BEFORE: the totals of a trace where everything pairs
totals() {
	printf 'entries %s\nexits %s\nno_entry 0\nno_exit 0\nrunning 0\nbefore %s\nids_unknown 0\nid0 0\n' \
		"$1" "$2" "$3"
}

# fork from main: the child's calls open at the fork began before its trace
run t fork
[ -n "$child" ] || die "fork: no child trace in t: $(ls t)"
printf 'fork_at 1 0 0\nfork_leaf 1 0 0\nfork_mid 1 0 0\nfork_run 1 0 0\nfork_wait 1 0 0\nmain 1 0 0\n' >want.txt
totals 6 6 0 >>want.txt
counts t "fork (parent)"
printf 'fork_at 1 1 0\nfork_leaf %s 0 0\nfork_mid 1 1 0\nfork_run 1 1 0\nmain 1 1 0\n' $n >want.txt
totals $n $((n + 4)) 4 >>want.txt
counts "t/$child" "fork (child)"
"$RIP" report --functions "t/$child" >c.txt 2>c.err || fail "fork: rip report (text): $(cat c.err)"
grep -Eq "  fork_mid  \(funcfork.c:[0-9]+\)  \[1 began before the trace\]\$" c.txt ||
	fail "fork: text report: fork_mid not shown as begun before: $(cat c.txt)"
"$RIP" export --format=chrome "t/$child" -o c.json 2>exp.err || fail "fork: rip export: $(cat exp.err)"
python3 -c '
import json, sys
d = json.load(open("c.json"))
x = [e for e in d["traceEvents"] if e.get("ph") == "X"]
print(" ".join(sorted("%s%s" % (e["name"], "+" if e["args"].get("before") else "") for e in x
                      if e["name"] != "fork_leaf")))
' >chrome.txt || fail "fork: chrome: $(head -c 300 c.json)"
[ "$(cat chrome.txt)" = "fork_at+ fork_mid+ fork_run+ main+" ] || fail "fork: chrome spans: $(cat chrome.txt)"

# a function the parent named before the fork: the child's trace names it
# too (from the copy of its ring file, whose table the fork copied), and
# rip ps reads the child's trace directory
run tn named
[ -n "$child" ] || die "named: no child trace in tn: $(ls tn)"
printf 'fork_at 1 1 0\nfork_leaf %s 0 0\nfork_mid 1 1 0\nfork_run 1 1 0\nmain 1 1 0\n' $n >want.txt
totals $n $((n + 4)) 4 >>want.txt
counts "tn/$child" "named (child)"
"$RIP" ps "tn/$child" >nps.txt 2>nps.err || fail "named: rip ps of the child's trace: $(cat nps.err)"
grep -q "(pid $child)" nps.txt || fail "named: rip ps of the child's trace: $(cat nps.txt)"

# fork from a thread: the child has that thread's calls
run tt thread
[ -n "$child" ] || die "thread: no child trace in tt: $(ls tt)"
printf 'fork_at 1 1 0\nfork_leaf %s 0 0\nfork_mid 1 1 0\nfork_thread 1 1 0\n' $n >want.txt
totals $n $((n + 3)) 3 >>want.txt
counts "tt/$child" "thread (child)"

# vfork: the child runs no traced call and _exits; the parent's trace is whole
run tv vfork
printf 'fork_at 1 0 0\nfork_leaf 1 0 0\nfork_mid 1 0 0\nfork_run 1 0 0\nfork_wait 1 0 0\nmain 1 0 0\n' >want.txt
totals 6 6 0 >>want.txt
counts tv vfork

# posix_spawn: the new image opens nothing it did not enter
run ts spawn
[ -n "$child" ] || die "spawn: no child trace in ts: $(ls ts)"
printf 'fork_leaf %s 0 0\nmain 1 0 0\n' $n >want.txt
totals $((n + 1)) $((n + 1)) 0 >>want.txt
counts "ts/$child" "spawn (child)"

# a child parked: rip ps --stacks shows the path it inherited, and fork_park
rm -f ready
"$RIP" run --follow-fork --no-waits -o tp -- "$prog" park $n "$TEST_TMP/ready" >tp.out 2>tp.err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file "$TEST_TMP/ready" 60 || die "park: the child never got ready: $(cat tp.err)"
parent=$(ps -o pid= --ppid "$run" | tr -d ' ')
cpid=$(ps -o pid= --ppid "$parent" | tr -d ' ')
[ -n "$cpid" ] || die "park: no child of $parent"
fn_paths_has "$cpid" "funcfork thread running: main>fork_run>fork_mid>fork_at>fork_park"
kill -9 "$cpid" "$parent"
wait "$run"
t_done
