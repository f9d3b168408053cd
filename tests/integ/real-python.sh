#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: python3 (Debian's when installed) runs under rip run as it
# runs plain: a concurrent.futures pool of 64 threads building dicts and
# strings (rip run --mem --fd --shm), and a multiprocessing pool of 4
# forked workers talking over pipes (rip run --mem --fd --shm --follow-fork
# --follow-exec): the same output and exit status, no hang, 0 events lost
# in the program and in every followed child, every trace read by rip leaks
# and rip report.
# Timeout: 150
. tests/data/real.sh
real_need python3
py=$(real_python) || die "python3 does not run"

cat >"$W/pool.py" <<'PY'
import concurrent.futures
import threading

# the first 64 tasks wait for each other: the executor must start all 64 threads
start = threading.Barrier(64)

def work(k):
    if k < 64:
        start.wait(timeout=30)
    d = {}
    for i in range(3000):
        d[i] = str(i * k) * (1 + i % 4)
        if i % 3 == 0:
            del d[i]
    return sum(len(v) for v in d.values())

with concurrent.futures.ThreadPoolExecutor(max_workers=64) as ex:
    res = list(ex.map(work, range(256)))
print(len(res), sum(res))
PY
real_run "python3 64-thread pool" "$REAL_OPTS" : "$py" "$W/pool.py"
grep -q '^256 [0-9][0-9]*$' "$TEST_TMP/plain.out" ||
	fail "python3 pool: unexpected output: $(cat "$TEST_TMP/plain.out")"
k=$("$RIP" report --json "$real_trace" | grep -o '"tid":' | wc -l)
[ "$k" -ge 65 ] || fail "python3 pool: $k threads with allocations in the report, want 64 and main"

cat >"$W/mp.py" <<'PY'
import multiprocessing as mp

def work(k):
    return sum(len(str(i * k)) for i in range(20000))

if __name__ == "__main__":
    ctx = mp.get_context("fork")
    with ctx.Pool(4) as p:
        res = p.map(work, range(16))
    print(len(res), sum(res))
PY
real_run "python3 multiprocessing" "$REAL_FOLLOW" : "$py" "$W/mp.py"
grep -q '^16 [0-9][0-9]*$' "$TEST_TMP/plain.out" ||
	fail "python3 multiprocessing: unexpected output: $(cat "$TEST_TMP/plain.out")"
# the pool's 4 workers were followed (and maybe a resource tracker)
[ "$real_traces" -ge 5 ] || fail "python3 multiprocessing: $real_traces traces, want the parent's and 4 workers'"
t_done
