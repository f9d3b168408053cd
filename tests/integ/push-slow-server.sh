#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip push --timeout=SECONDS bounds each step in all, not each
# read: a server that sends its answer a byte at a time, each byte well
# within the timeout, and never the whole status line, is given up on after
# the timeout (exit 1, "timed out"), not waited for as long as it trickles
# (up to the 64 KiB rip reads: hours).  A server that takes the request
# and never answers is given up on the same way.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/tests/integ/pprofprog"
need_cmd python3

cat >"$TEST_TMP/slow.py" <<'PY'
import socket, sys, time
portfile, mode = sys.argv[1], sys.argv[2]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
open(portfile + ".tmp", "w").write(str(s.getsockname()[1]))
import os
os.rename(portfile + ".tmp", portfile)
c, _ = s.accept()
c.settimeout(0.3)
try:
    while c.recv(65536):
        pass
except OSError:
    pass
t0 = time.time()
if mode == "trickle":
    for ch in b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 200:
        if time.time() - t0 > 60:
            break
        c.send(bytes([ch]))
        time.sleep(0.5)
else:
    time.sleep(60)
c.close()
PY

"$RIP" run -o "$TEST_TMP/heap" -- "$BUILD/tests/integ/pprofprog" heap 100 >/dev/null 2>&1 ||
	die "rip run pprofprog heap 100"

for mode in trickle mute; do
	rm -f "$TEST_TMP/$mode.port"
	t_bg python3 "$TEST_TMP/slow.py" "$TEST_TMP/$mode.port" "$mode"
	srv=$T_LAST
	wait_file "$TEST_TMP/$mode.port" 20 || die "the $mode server did not start"
	port=$(cat "$TEST_TMP/$mode.port")
	t0=$(date +%s)
	expect_status 1 "$mode" "$RIP" push --timeout=2 --pyroscope="http://127.0.0.1:$port" \
		"$TEST_TMP/heap"
	took=$(($(date +%s) - t0))
	[ "$took" -le 10 ] || fail "$mode: rip push --timeout=2 took $took s"
	grep -q "timed out" "$TEST_TMP/err" || fail "$mode: not a timeout: $(cat "$TEST_TMP/err")"
	t_kill "$srv"
done
t_done
