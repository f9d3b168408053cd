#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a relayd that answers a byte at a time, each byte well
# within rip's 10 s timeout, is given up on after that timeout for the
# whole answer, as record/relayd.h promises ("every send and reply wait
# gives up after timeout_ms"), not waited for as long as it trickles: rip
# run --relayd against a stand-in (a python server on two ports that
# trickles every answer, one byte each 3 s) fails in the handshake (exit 1,
# "no answer in time") within 25 s, and the program never runs.
# Timeout: 120
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/relaydprog
need_bin "$RIP" "$prog"
need_cmd python3
cd "$TEST_TMP" || die "no TEST_TMP"

cat >slow.py <<'PY'
import os, socket, struct, sys, threading, time
portfile = sys.argv[1]
ctrl, data = socket.socket(), socket.socket()
for s in (ctrl, data):
    s.bind(("127.0.0.1", 0))
    s.listen(4)
with open(portfile + ".tmp", "w") as f:
    f.write("%d %d\n" % (ctrl.getsockname()[1], data.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
threading.Thread(target=lambda: data.accept() and time.sleep(600), daemon=True).start()
c, _ = ctrl.accept()
def recv(n):
    b = b""
    while len(b) < n:
        k = c.recv(n - len(b))
        if not k:
            sys.exit(0)
        b += k
    return b
t0 = time.time()
while time.time() - t0 < 300:
    h = recv(24)
    size, cmd = struct.unpack(">QI", h[8:20])
    recv(size)
    rep = {5: struct.pack(">II", 2, 13), 2: struct.pack(">QI", 1, 10),
           1: struct.pack(">QI", 7, 10)}.get(cmd, struct.pack(">I", 10))
    for i in range(len(rep)):
        c.send(rep[i:i + 1])
        time.sleep(3)
PY

t_bg python3 slow.py port
srv=$T_LAST
wait_file port 20 || die "the stand-in relayd did not start"
read -r ctl data <port
t0=$(date +%s)
expect_status 1 "a trickling relayd" "$RIP" run --relayd="net://127.0.0.1:$ctl:$data" -o t -- \
	"$prog" --events 1
took=$(($(date +%s) - t0))
[ "$took" -le 25 ] || fail "rip run --relayd took $took s against a trickling relayd"
grep -q "no answer in time" "$TEST_TMP/err" ||
	fail "not a timeout: $(head -n 3 "$TEST_TMP/err")"
grep -q 'emitted' "$TEST_TMP/out" && fail "the program ran anyway"
[ ! -e t ] || fail "a trace was left behind: $(ls t)"
t_kill "$srv"
t_done
