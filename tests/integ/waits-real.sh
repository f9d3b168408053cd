#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: real programs that know nothing of librip, under plain rip
# run, seen by rip ps PID: python3 with a 64-thread ThreadPoolExecutor
# whose workers wait on a queue (64 threads in sem_wait called from
# PyThread_acquire_lock_timed, live, and after kill -9 from the file it
# left); sqlite3 waiting for a lock another sqlite3 holds (its busy
# handler's sleep, in libsqlite3); coreutils sleep (in sleep); a bash
# pipeline (bash in waitpid for its children, and with --follow-fork
# --follow-exec, cat in read of fd 0).
# Timeout: 180
. tests/data/common.sh
need_bin "$RIP"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
need_cmd python3 sqlite3
preload=$PWD/$BUILD/librip-preload.so
cd "$TEST_TMP" || die "no $TEST_TMP"

# waits JSON KIND MIN [FUNCTION]: at least MIN threads wait in KIND (called from FUNCTION).
waits() {
	python3 - "$@" <<'PY'
import json, sys
doc, kind, least = sys.argv[1], sys.argv[2], int(sys.argv[3])
fn = sys.argv[4] if len(sys.argv) > 4 else None
d = json.load(open(doc))
n = sum(g["count"] for g in d.get("waits", []) if g["wait"]["in"] == kind and
        (fn is None or g["wait"]["caller"]["function"] == fn))
sys.exit(0 if n >= least else 1)
PY
}
# ps_waits PID JSON KIND MIN [FUNCTION]: rip ps PID --json into JSON, then waits.
ps_waits() {
	p=$1 j=$2
	shift 2
	"$RIP" ps --json "$p" >"$j" 2>/dev/null && waits "$j" "$@"
}
# child_of PID: the program rip run started; fails while there is none.
child_of() {
	pgrep -P "$1" | head -n 1 | grep .
}

# 1. python3: 64 workers waiting on a queue.
py=/usr/bin/python3
[ -x "$py" ] || die "$py is missing: make check installs python3"
cat >pool.py <<'PY'
import concurrent.futures, os, queue, sys, threading
q = queue.Queue()
ex = concurrent.futures.ThreadPoolExecutor(64)
futs = [ex.submit(q.get) for _ in range(64)]
open(sys.argv[1], "w").write(str(os.getpid()))
threading.Event().wait()
PY
nosym=${RIP_TEST_NOSYM:-0}
fn=PyThread_acquire_lock_timed
[ "$nosym" = 1 ] && fn=""
"$RIP" run -q -o tr-py -- "$py" pool.py "$TEST_TMP/py.ready" >/dev/null 2>py.err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file py.ready 60 || die "python3 did not start its pool: $(cat py.err)"
pid=$(cat py.ready)
wait_until 30 ps_waits "$pid" py.json sem_wait 64 $fn ||
	fail "python3: rip ps does not show 64 threads in sem_wait from $fn: $("$RIP" ps "$pid" 2>&1 | head -n 12)"
kill -9 "$pid"
wait "$run"

rm -f py.ready
t_bg env RIP_RING="$TEST_TMP/py.ring" LD_PRELOAD="$preload" "$py" pool.py "$TEST_TMP/py.ready"
wait_file py.ready 60 || die "python3 (second run) did not start"
pid=$T_LAST
wait_until 30 ps_waits "$pid" py2.json sem_wait 64 $fn || fail "python3 (second run): no 64 waits"
t_kill "$pid"
"$RIP" ps --json py.ring >py-dead.json 2>ps.err || fail "rip ps on python's dead file: $(cat ps.err)"
waits py-dead.json sem_wait 64 $fn ||
	fail "python3 after kill -9: $("$RIP" ps py.ring 2>&1 | head -n 12)"

# 2. sqlite3 waiting for a lock another sqlite3 holds.
sqlite3 db 'create table t(x); insert into t values(1);' || die "sqlite3 cannot make a database"
mkfifo fifo || die "mkfifo"
sqlite3 db <fifo >/dev/null 2>&1 &
holder=$!
T_PIDS="$T_PIDS $holder"
exec 7>fifo
# a busy timeout: a reader of locked() below may hold the shared lock just when the holder asks
# for its exclusive one, which without it fails at once, and the holder then never takes the lock
echo ".timeout 20000" >&7
echo "BEGIN EXCLUSIVE; insert into t values(2);" >&7
# the holder has the lock once a plain reader is refused
locked() { ! sqlite3 db 'select count(*) from t' >/dev/null 2>&1 7>&-; }
wait_until 20 locked || die "the first sqlite3 did not take the lock"
"$RIP" run -q -o tr-sq -- sqlite3 -cmd '.timeout 120000' db 'select count(*) from t' \
	>sq.out 2>sq.err 7>&- &
run=$!
T_PIDS="$T_PIDS $run"
wait_until 20 child_of "$run" >/dev/null || die "rip run did not start sqlite3"
pid=$(child_of "$run")
wait_until 30 ps_waits "$pid" sq.json sleep 1 ||
	fail "sqlite3 waiting for a lock: $("$RIP" ps --threads "$pid" 2>&1 | head -n 8)"
# (the caller's address in a mapping of libsqlite3, whether it has symbols or not)
python3 - sq.json "/proc/$pid/maps" <<'PY' || fail "sqlite3: the sleep is not called from libsqlite3"
import json, sys
d = json.load(open(sys.argv[1]))
lib = []
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) > 5 and "/libsqlite3" in f[5]:
        lo, hi = f[0].split("-")
        lib.append((int(lo, 16), int(hi, 16)))
ok = any(g["wait"]["in"] == "sleep" and
         any(lo <= int(g["wait"]["caller"]["address"], 16) < hi for lo, hi in lib)
         for g in d["waits"])
if not ok:
    print("waits:", d["waits"], "libsqlite3 at", lib, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
exec 7>&-
wait "$holder"
wait "$run"

# 3. coreutils sleep.
"$RIP" run -q -o tr-sl -- sleep 600 &
run=$!
T_PIDS="$T_PIDS $run"
wait_until 20 child_of "$run" >/dev/null || die "rip run did not start sleep"
pid=$(child_of "$run")
wait_until 30 ps_waits "$pid" sl.json sleep 1 || fail "sleep 600: $("$RIP" ps "$pid" 2>&1 | head -n 8)"
kill "$pid"
wait "$run"

# 4. A bash pipeline: bash waits for its children; cat reads its stdin.
"$RIP" run -q --follow-fork --follow-exec -o tr-sh -- bash -c 'sleep 600 | cat; true' &
run=$!
T_PIDS="$T_PIDS $run"
wait_until 20 child_of "$run" >/dev/null || die "rip run did not start bash"
sh_pid=$(child_of "$run")
wait_until 30 ps_waits "$sh_pid" sh.json waitpid 1 || fail "bash: $("$RIP" ps "$sh_pid" 2>&1 | head -n 8)"
cat_pid=$(pgrep -P "$sh_pid" -x cat)
[ -n "$cat_pid" ] || fail "no cat in the pipeline"
[ -n "$cat_pid" ] && { wait_until 30 ps_waits "$cat_pid" cat.json read 1 ||
	fail "cat: $("$RIP" ps "$cat_pid" 2>&1 | head -n 8)"; }
python3 - cat.json <<'PY' || fail "cat does not read fd 0"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if any(g["wait"]["in"] == "read" and g["wait"]["arg"] == 0 for g in d["waits"]) else 1)
PY
pkill -P "$sh_pid" -x sleep
wait "$run"
t_done
