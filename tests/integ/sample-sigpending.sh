#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program that blocks every signal and asks which are
# pending (python3: signal.sigpending(), and syscall(SYS_rt_sigpending)
# through ctypes) gets the same answer under rip run --sample as untraced:
# none.  It burns CPU until its status shows a signal pending (the
# sampler's timer, blocked; at most 5 s of CPU), then asks.  The answer
# held the sampler's signal (pending: [64]), which the program never
# raised and which nothing would ever deliver to it.  A signal it raises
# itself (SIGUSR1) is still in the answer.
. tests/data/common.sh
need_cmd python3

cat >"$TEST_TMP/pend.py" <<'PY'
import ctypes, signal, sys, time
traced = sys.argv[1] == "traced"
signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
def status_pending():
    for l in open("/proc/self/status"):
        if l.startswith(("SigPnd:", "ShdPnd:")) and int(l.split()[1], 16):
            return True
    return False
t = time.process_time()
while traced and not status_pending() and time.process_time() - t < 5:
    pass
if traced and not status_pending():
    print("no timer signal came")
    sys.exit(3)
libc = ctypes.CDLL(None, use_errno=True)
def raw():
    s = ctypes.c_uint64(0)
    if libc.syscall(127, ctypes.byref(s), 8):  # SYS_rt_sigpending on x86-64
        return "error %d" % ctypes.get_errno()
    return sorted(i + 1 for i in range(64) if s.value >> i & 1)
print("pending:", sorted(int(s) for s in signal.sigpending()), "raw:", raw())
signal.raise_signal(signal.SIGUSR1)
print("after SIGUSR1:", sorted(int(s) for s in signal.sigpending()), "raw:", raw())
PY
[ "$(uname -m)" = x86_64 ] || skip "the raw call's number is x86-64's"
# The interpreter itself, not a shim script that would exec it untraced.
py=$(python3 -c 'import sys; print(sys.executable)')
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
"$py" "$TEST_TMP/pend.py" plain >"$TEST_TMP/plain" 2>&1 ||
	die "untraced: $(cat "$TEST_TMP/plain")"
"$RIP" run -q --sample -o "$TEST_TMP/t" -- "$py" "$TEST_TMP/pend.py" traced \
	>"$TEST_TMP/traced" 2>"$TEST_TMP/err"
rc=$?
if [ $rc = 3 ]; then
	skip_part "no timer signal became pending in 5 s of CPU"
else
	[ $rc = 0 ] || fail "rip run --sample: exit $rc: $(cat "$TEST_TMP/traced" "$TEST_TMP/err")"
	same_as_plain traced "sigpending answered otherwise than untraced"
fi
t_done
