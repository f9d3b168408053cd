#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: what a Pyroscope server answers reaches rip push's message
# as text: a refusal whose status line and body carry terminal commands
# (ESC sequences that set the window title and clear the screen, BEL,
# backspaces, DEL) is shown with those control characters blanked, in
# the reason as in the body (exit 1, "the server answered 500 ...").
. tests/data/common.sh
need_bin "$RIP" "$BUILD/tests/integ/pprofprog"
need_cmd python3

cat >"$TEST_TMP/esc.py" <<'PY'
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
c, _ = s.accept()
c.settimeout(0.5)
try:
    while c.recv(65536):
        pass
except OSError:
    pass
c.sendall(b"HTTP/1.1 500 \x1b]0;owned\x07\x1b[2Jbad\x08\x08\x7f\r\n"
          b"Content-Length: 13\r\n\r\nbody\x1b[31mred\x07\r\n")
c.close()
PY

"$RIP" run -o "$TEST_TMP/heap" -- "$BUILD/tests/integ/pprofprog" heap 100 >/dev/null 2>&1 ||
	die "rip run pprofprog heap 100"
rm -f "$TEST_TMP/port"
t_bg python3 "$TEST_TMP/esc.py" "$TEST_TMP/port"
wait_file "$TEST_TMP/port" 20 || die "the server did not start"
expect_status 1 "a 500 full of escapes" "$RIP" push --timeout=5 \
	--pyroscope="http://127.0.0.1:$(cat "$TEST_TMP/port")" "$TEST_TMP/heap"
grep -q "the server answered 500 " "$TEST_TMP/err" ||
	fail "not the server's refusal: $(head -n 3 "$TEST_TMP/err")"
if LC_ALL=C tr -d '\n' <"$TEST_TMP/err" | LC_ALL=C grep -q '[[:cntrl:]]'; then
	fail "control characters of the server's reached the terminal:"
	od -c "$TEST_TMP/err" | head -n 8 >&2
fi
t_done
