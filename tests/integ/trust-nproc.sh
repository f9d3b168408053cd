#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the watcher's thread does not take a thread from a program
# at its RLIMIT_NPROC.  A program started as root (python3) sets the limit
# to 12, drops to an unused uid and starts threads until the kernel says
# EAGAIN: under rip run it makes as many as untraced (the watcher counted
# against the program's uid, and it made one fewer).  The same for
# children made by fork (one thread first, so that the watcher runs).  rip
# ps then says why the watcher stopped.
. tests/data/common.sh
need_cmd python3
[ "$(id -u)" = 0 ] || skip "needs root, to drop to a uid of its own"

uid=62519
if [ -n "$(ps -o pid= -u $uid 2>/dev/null)" ]; then
	skip "uid $uid has processes: its count of threads is not the test's own"
fi
cat >"$TEST_TMP/nproc.py" <<'PY'
import os, resource, sys, threading
resource.setrlimit(resource.RLIMIT_NPROC, (12, 12))
uid = int(sys.argv[1])
os.setgroups([])
os.setresgid(uid, uid, uid)
os.setresuid(uid, uid, uid)
ev = threading.Event()
ts = []
if sys.argv[2] == "fork":
    # one thread, so that the watcher runs; then children until the limit
    t = threading.Thread(target=ev.wait)
    t.start()
    ts.append(t)
    r, w = os.pipe()
    kids = []
    try:
        while len(kids) < 100:
            pid = os.fork()
            if pid == 0:
                os.close(w)
                os.read(r, 1)
                os._exit(0)
            kids.append(pid)
    except OSError:
        pass
    print("children", len(kids))
    os.close(w)
    for pid in kids:
        os.waitpid(pid, 0)
else:
    try:
        while len(ts) < 100:
            t = threading.Thread(target=ev.wait)
            t.start()
            ts.append(t)
    except RuntimeError:
        pass
    print("threads", len(ts))
ev.set()
for t in ts:
    t.join()
PY
py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3)
for what in threads fork; do
	"$py" "$TEST_TMP/nproc.py" $uid $what >"$TEST_TMP/plain" 2>"$TEST_TMP/err-plain" ||
		die "untraced, $what: $(cat "$TEST_TMP/plain" "$TEST_TMP/err-plain")"
	grep -q "^[a-z]* [1-9]" "$TEST_TMP/plain" || die "untraced, $what: none made: $(cat "$TEST_TMP/plain")"
	"$RIP" run -q -o "$TEST_TMP/t-$what" -- "$py" "$TEST_TMP/nproc.py" $uid $what \
		>"$TEST_TMP/$what" 2>"$TEST_TMP/err" ||
		fail "$what under rip run: $(cat "$TEST_TMP/$what" "$TEST_TMP/err")"
	same_as_plain $what "$what: a different count under rip run"
done
"$RIP" ps "$TEST_TMP/t-threads" >"$TEST_TMP/ps" 2>&1 ||
	fail "rip ps on the trace failed: $(cat "$TEST_TMP/ps")"
grep -q "RLIMIT_NPROC" "$TEST_TMP/ps" || fail "rip ps does not say why the watcher stopped: $(cat "$TEST_TMP/ps")"
t_done
