#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the timeouts of waits, as rip ps shows them.  waits_tmo
# parks 18 threads, each in one kind of wait of 60 s: absolute deadlines on
# CLOCK_MONOTONIC and CLOCK_REALTIME (clock_nanosleep with TIMER_ABSTIME,
# which Python's time.sleep uses; pthread_cond_timedwait on a default
# condition and on a CLOCK_MONOTONIC one; pthread_cond_clockwait;
# sem_timedwait, sem_clockwait; FUTEX_WAIT_BITSET on both clocks;
# pthread_mutex_timedlock, _clocklock; pthread_rwlock_timedwrlock,
# _clockwrlock; pthread_timedjoin_np) and relative ones (clock_nanosleep,
# nanosleep, FUTEX_WAIT, poll).  Under rip run, rip ps --threads --json PID
# gives each a timeout of about 60 s and as much left (a sleep's argument
# too: not the clock's value of its deadline), the grouped JSON and both
# text outputs say the same; once the program is killed with SIGKILL, rip ps
# on the trace (rip run's copy of the ring file) gives the same timeouts,
# each with the wall-clock time of its deadline 60 s after its wait began;
# and so does the file the program leaves when it runs again under the
# preload library alone with a ring file of its own, killed likewise.
# Timeout: 60
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/waits_tmo
preload=$PWD/$BUILD/librip-preload.so
need_bin "$prog" "$RIP"
[ -f "$preload" ] || die "$preload is missing: run make"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON output"
cd "$TEST_TMP" || die "no $TEST_TMP"

names="abs_mono abs_real rel_sleep nanosleep cond_real cond_mono cond_clock sem_timed sem_clock
futex_mono futex_real futex_rel mutex_timed mutex_clock rw_timed rw_clock join_timed poll"

# check MODE JSON TEXT GROUPED GROUPED_TEXT: every named thread's wait has a
# timeout of about 60 s (from waiting 18 threads' start to now: at least 30
# s, at most 60 s) in each output; MODE alive or dead.
check() {
	# shellcheck disable=SC2086 # one name a word
	python3 - "$@" $names <<'PY'
import json, re, sys
mode, doc, text, grouped, gtext = sys.argv[1:6]
names = sys.argv[6:]
alive = mode == "alive"
S = 1000000000
bad = []
def near(what, ns, lo=30 * S, hi=60 * S + S // 100):
    if ns is None or not lo <= ns <= hi:
        bad.append("%s: %r ns, want %d s .. 60 s" % (what, ns, lo // S))
def dur(s):
    m = re.fullmatch(r"(\d+)m(\d\d)s", s)
    if m:
        return (int(m.group(1)) * 60 + int(m.group(2))) * S
    m = re.fullmatch(r"(\d+)\.(\d)s", s)
    if m:
        return int(m.group(1)) * S + int(m.group(2)) * S // 10
    return None
d = json.load(open(doc))
slots = {s["name"]: s for s in d["slots"] if s["state"] == "running"}
for n in names:
    w = slots.get(n, {}).get("wait")
    if not w:
        bad.append("%s: no wait" % n)
        continue
    near(n + " timeout_ns", w.get("timeout_ns"))
    if w["in"] == "sleep":
        near(n + " arg (the time to sleep)", w.get("arg"))
    if alive:
        near(n + " left_ns", w.get("left_ns"), 1)
        if w.get("left_ns", 0) > w.get("timeout_ns", 0):
            bad.append("%s: more left than its timeout: %r" % (n, w))
    elif "left_ns" in w:
        bad.append("%s: left_ns in a dead process's file" % n)
    if w.get("deadline_realtime_ns", 0) - w.get("since_realtime_ns", 0) != w.get("timeout_ns"):
        bad.append("%s: deadline is not since + timeout: %r" % (n, w))
# the grouped JSON: each member says the same
g = json.load(open(grouped))
members = {m["name"]: m for grp in g["waits"] for m in grp["members"]}
for n in names:
    m = members.get(n)
    if not m:
        bad.append("grouped: %s is in no group" % n)
        continue
    near("grouped " + n + " timeout_ns", m.get("timeout_ns"))
    if alive:
        near("grouped " + n + " left_ns", m.get("left_ns"), 1)
# text, per thread: "waiting in ... for 1.2s, 58.8s left, called from" (live) or
# "since HH:MM:SS.mmm, timeout 1m00s (until HH:MM:SS.mmm), called from" (dead)
cur = None
seen = set()
pat = (r"waiting in .*, (\S+) left, called from" if alive else
       r"waiting in .* since \S+, timeout (\S+) \(until \d\d:\d\d:\d\d\.\d\d\d\), called from")
for line in open(text):
    m = re.match(r"thread (\S+) ", line)
    if m:
        cur = m.group(1)
        continue
    m = re.search(pat, line)
    if m and cur in names:
        seen.add(cur)
        near("text " + cur, dur(m.group(1)), 1)
for n in set(names) - seen:
    bad.append("text: no timeout on the line of %s" % n)
# the grouped text: the LEFT (TIMEOUT) column of every group but main's
rows = 0
for line in open(gtext):
    m = re.match(r"\s+1\s+.*\s(\S+)$" if alive else
                 r"\s+1\s+.*\s(\S+) \(until \d\d:\d\d:\d\d\.\d\d\d\)$", line)
    if m and "signal(" not in line and " pause " not in line:
        rows += 1
        near("grouped text: " + line.strip(), dur(m.group(1)), 1)
if rows != len(names):
    bad.append("grouped text: %d rows with a timeout, want %d" % (rows, len(names)))
# a sleep's argument, rounded: an absolute deadline is seen a little after it was made
# (59.99 s), and cut it showed as 59.9s
sleeps = [l.strip() for l in open(gtext) if "sleep(" in l]
if not sleeps or any("sleep(1m00s)" not in l for l in sleeps):
    bad.append("grouped text: the sleeps of 60 s are not shown as sleep(1m00s): %r" % sleeps)
for b in bad[:20]:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# 1. live, under rip run
t_bg "$RIP" run -q -o tr -- "$prog" "$TEST_TMP/ready"
run=$T_LAST
wait_file ready 30 || die "the program did not start its threads"
pid=$(cat ready)
T_PIDS="$T_PIDS $pid" # rip run's child: killed too if the test ends early
# every thread in its wait (the main thread too: pause), each of the 18 by
# name: a count of 19 could include another thread before one of them waits
# shellcheck disable=SC2086 # one name a word
all_waiting() {
	"$RIP" ps --json "$pid" >g.json 2>/dev/null &&
		python3 -c 'import json,sys; sys.exit(json.load(open("g.json"))["waiting"] < 19)' &&
		"$RIP" ps --threads --json "$pid" >gt.json 2>/dev/null &&
		python3 -c '
import json, sys
d = json.load(open("gt.json"))
w = {s["name"] for s in d["slots"] if s["state"] == "running" and s.get("wait")}
sys.exit(any(n not in w for n in sys.argv[1:]))' $names
}
wait_until 20 all_waiting || fail "the 18 threads did not all wait in wrapped calls"
"$RIP" ps --threads --json "$pid" >live.json 2>err || die "rip ps --threads --json: $(cat err)"
"$RIP" ps --threads "$pid" >live.txt 2>err || die "rip ps --threads: $(cat err)"
"$RIP" ps --json "$pid" >live-g.json 2>err || die "rip ps --json: $(cat err)"
"$RIP" ps "$pid" >live-g.txt 2>err || die "rip ps: $(cat err)"
check alive live.json live.txt live-g.json live-g.txt ||
	fail "live: wrong timeouts: $(grep -A2 'abs_mono\|cond_mono\|futex_mono' live.txt | head -n 12)"
kill -9 "$pid"
wait "$run"
# rip run's copy of the ring file of its program killed with SIGKILL
"$RIP" ps --threads --json tr >tr.json 2>err || die "rip ps --threads --json tr: $(cat err)"
"$RIP" ps --threads tr >tr.txt 2>err || die "rip ps --threads tr: $(cat err)"
"$RIP" ps --json tr >tr-g.json 2>err || die "rip ps --json tr: $(cat err)"
"$RIP" ps tr >tr-g.txt 2>err || die "rip ps tr: $(cat err)"
check dead tr.json tr.txt tr-g.json tr-g.txt ||
	fail "rip run's trace: wrong timeouts: $(grep -A2 'abs_mono\|cond_mono\|futex_mono' tr.txt | head -n 12)"

# 2. the file of a process killed with SIGKILL
rm -f ready
t_bg env RIP_RING="$TEST_TMP/tmo.ring" LD_PRELOAD="$preload" "$prog" "$TEST_TMP/ready"
pid=$T_LAST
wait_file ready 30 || die "the program did not start (second run)"
ring=$TEST_TMP/tmo.ring
wait_until 20 all_waiting || fail "second run: the threads did not all wait in wrapped calls"
t_kill "$pid"
"$RIP" ps --threads --json "$ring" >dead.json 2>err || die "rip ps --threads --json (dead): $(cat err)"
"$RIP" ps --threads "$ring" >dead.txt 2>err || die "rip ps --threads (dead): $(cat err)"
"$RIP" ps --json "$ring" >dead-g.json 2>err || die "rip ps --json (dead): $(cat err)"
"$RIP" ps "$ring" >dead-g.txt 2>err || die "rip ps (dead): $(cat err)"
check dead dead.json dead.txt dead-g.json dead-g.txt ||
	fail "after SIGKILL: wrong timeouts: $(grep -A2 'abs_mono\|cond_mono\|futex_mono' dead.txt | head -n 12)"
if [ -x "$RIP_ASAN" ]; then
	asan_run ps --threads "$ring"
	asan_run ps --json "$ring"
fi
t_done
