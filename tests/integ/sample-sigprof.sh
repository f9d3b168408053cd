#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: CPU sampling next to a program that owns SIGPROF: it counts
# its own ITIMER_PROF signals to 50, installs a handler for SIGRTMAX (the
# signal the sampler takes) and raises it 3 times.  With RIP_SAMPLE on, the
# program gets exactly its own signals (3, with si_code SI_TKILL: none of
# the sampler's timers reach its handler), the file says the signal is
# shared and that 3 foreign signals were passed on, and it holds samples.
# Timeout: 180
. tests/data/common.sh
prog=$BUILD/tests/integ/topprog
need_bin "$prog" "$RIP"
need_cmd python3
ring=$TEST_TMP/sigprof.ring

RIP_RING=$ring RIP_DISABLE=1,2,3 RIP_SAMPLE=100 LD_PRELOAD=$BUILD/librip-preload.so \
	"$prog" sigprof 50 >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
	fail "the program failed under sampling: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
grep -q "rtmax 3 wrong 0" "$TEST_TMP/out" || fail "wrong signals: $(cat "$TEST_TMP/out")"

"$RIP" top --json "$ring" >"$TEST_TMP/top.json" || die "rip top on the file failed"
python3 - "$TEST_TMP/top.json" <<'PY' || fail "the sampling status is wrong"
import json, signal, sys
s = json.load(open(sys.argv[1]))["sampling"]
ok = (s["hz"] == 100 and s["signal"] == signal.SIGRTMAX and s["signal_shared"]
      and s["foreign"] == 3)
if not ok:
    print("sampling:", s, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
samples_stored "$ring" sigprof
t_done
