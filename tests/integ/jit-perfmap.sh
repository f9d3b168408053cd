#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: code a JIT compiled is named from its perf map.  jitprog.c
# writes a function's machine code into a mapping of its own, names it
# jit_spin in /tmp/perf-PID.map (as node --perf-basic-prof, Java's
# perf-map agent and Erlang's +JPperf do for perf) and spins in it;
# under rip run --sample, rip top of the trace must name jit_spin (it
# showed a bare address, in no module).  /tmp is everyone's: the map is
# read only when it is a regular file of the process's owner or the
# caller, no older than the process: a map made older, one owned by
# another user, and a FIFO in its place are not read (and do not hang).
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/jitprog
need_bin "$prog" "$RIP"
case $(uname -m) in x86_64) ;; *) skip "jitprog's code is x86-64" ;; esac
cpu_timers || skip "CPU-time timers deliver no signal here"
cd "$TEST_TMP" || die "no $TEST_TMP"

"$RIP" run -q --sample=200 -o T -- "$prog" >prog.out 2>run.err || die "rip run: $(cat run.err)"
map=$(cat prog.out)
case $map in /tmp/perf-[0-9]*.map) ;; *) die "jitprog printed '$map'" ;; esac
top() { timeout 20 "$RIP" top T >top.out 2>top.err; }
top || fail "rip top T: exit $?: $(cat top.err)"
awk '$NF == "jit_spin" { found = 1 } END { exit !found }' top.out ||
	fail "rip top T does not name the JIT's function: $(cat top.out)"

# made older than the process: another process's of the same pid
touch -d '2000-01-01' "$map"
top || fail "rip top T (a stale map): exit $?: $(cat top.err)"
grep -q jit_spin top.out && fail "a map older than the process was read: $(cat top.out)"
touch "$map"
if [ "$(id -u)" = 0 ]; then
	chown 62519 "$map"
	top || fail "rip top T (another user's map): exit $?: $(cat top.err)"
	grep -q jit_spin top.out && fail "another user's map was read: $(cat top.out)"
fi
rm -f "$map"
mkfifo "$map" || die "mkfifo $map"
top || fail "rip top T (a FIFO for the map): exit $?: $(cat top.err)"
rm -f "$map"
t_done
