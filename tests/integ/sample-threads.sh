#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: 10,000 short-lived threads (64 alive at a time) with CPU
# sampling on and RLIMIT_SIGPENDING lowered to 0, so that timer_create
# fails for every one of them (a limit above 0 is charged only for signals
# queued on recent kernels, 6.18 among them: the failures would then depend
# on timing): the program runs to the end, and the failures are counted in
# the file, one per thread and the main thread's, with EAGAIN, and no sample
# is stored.  Then the same without the limit, through rip run --sample: no
# crash, and samples stored (the main thread burns 50 ms at the end).
# Timeout: 300
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"
need_cmd python3
ring=$TEST_TMP/many.ring

python3 -c '
import os, resource, sys
resource.setrlimit(resource.RLIMIT_SIGPENDING, (0, 0))
os.execvp(sys.argv[1], sys.argv[1:])' env RIP_RING="$ring" RIP_DISABLE=1,2,3 RIP_SAMPLE=100 \
	LD_PRELOAD="$BUILD/librip-preload.so" "$prog" many 10000 >"$TEST_TMP/out" 2>"$TEST_TMP/err"
rc=$?
[ $rc = 0 ] || fail "exit $rc under a low RLIMIT_SIGPENDING: $(head -n 5 "$TEST_TMP/err")"
grep -q "threads 10000" "$TEST_TMP/out" || fail "the program did not finish its threads"

"$RIP" top --json "$ring" >"$TEST_TMP/top.json" || die "rip top on the file failed"
python3 - "$TEST_TMP/top.json" <<'PY' || fail "the failures are not counted"
import errno, json, sys
s = json.load(open(sys.argv[1]))["sampling"]
# Each of the 10,000 threads and the main thread was refused a timer.
ok = (s["timer_failures"] == 10001 and s["errno"] == errno.EAGAIN and s["timers"] == 0
      and s["samples"] == 0)
if not ok:
    print("sampling:", s, file=sys.stderr)
sys.exit(0 if ok else 1)
PY

TOPPROG_RING=$TEST_TMP/kept.ring "$RIP" run -q --sample -o "$TEST_TMP/trace" -- \
	"$prog" many 10000 >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
	fail "exit $? under rip run --sample: $(head -n 5 "$TEST_TMP/err")"
grep -q "threads 10000" "$TEST_TMP/out" || fail "the program did not finish under rip run"
samples_stored "$TEST_TMP/kept.ring" "rip run --sample"
t_done
