#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the sampler's signal (SIGRTMAX) sent by someone else does to
# a program under rip run --sample what it does untraced.  Three programs
# (python3) send it to themselves: one that leaves it at its default is
# killed by it (the sampler's handler dropped it, and the program ran on),
# one that ignores it runs on, and one whose handler was set with
# SA_RESETHAND (libc's sigaction through ctypes; the handler is libc's
# getpid) survives the first and is killed by the second.
. tests/data/common.sh
need_cmd python3

cat >"$TEST_TMP/foreign.py" <<'PY'
import ctypes, os, signal, sys, time
mode = sys.argv[1]
if mode == "ign":
    signal.signal(signal.SIGRTMAX, signal.SIG_IGN)
elif mode == "reset":
    class SA(ctypes.Structure):
        _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_uint64 * 16),
                    ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p)]
    libc = ctypes.CDLL(None, use_errno=True)
    sa = SA()
    sa.handler = ctypes.cast(libc.getpid, ctypes.c_void_p).value
    sa.flags = 0x80000000  # SA_RESETHAND
    if libc.sigaction(int(signal.SIGRTMAX), ctypes.byref(sa), None):
        print("sigaction failed", ctypes.get_errno())
        sys.exit(3)
    os.kill(os.getpid(), signal.SIGRTMAX)
    time.sleep(0.1)
    print("once", flush=True)
os.kill(os.getpid(), signal.SIGRTMAX)
time.sleep(0.2)
print("alive", flush=True)
PY
py=$(python3 -c 'import sys; print(sys.executable)')
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
for mode in dfl ign reset; do
	"$py" "$TEST_TMP/foreign.py" $mode >"$TEST_TMP/plain" 2>"$TEST_TMP/err-plain"
	want=$?
	"$RIP" run -q --sample -o "$TEST_TMP/t-$mode" -- "$py" "$TEST_TMP/foreign.py" $mode \
		>"$TEST_TMP/$mode" 2>"$TEST_TMP/err-$mode"
	got=$?
	[ "$got" = "$want" ] ||
		fail "$mode: exit $got under rip run --sample, $want untraced: $(cat "$TEST_TMP/$mode")"
	same_as_plain "$mode" "output differs from the untraced run's"
done
# The sampler did run: its signal is the one sent (rip top says which).
"$RIP" top --json "$TEST_TMP/t-ign" >"$TEST_TMP/top.json" 2>"$TEST_TMP/err" ||
	die "rip top on the trace failed: $(cat "$TEST_TMP/err")"
python3 - "$TEST_TMP/top.json" <<'PY' || fail "the sampler did not take SIGRTMAX"
import json, signal, sys
s = json.load(open(sys.argv[1]))["sampling"]
sys.exit(0 if s["signal"] == signal.SIGRTMAX and s["foreign"] == 1 else 1)
PY
t_done
