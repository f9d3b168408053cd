#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: curl fetching files from a python3 http.server on the
# loopback (127.0.0.1, a free port) runs under rip run --mem --fd --shm as
# it runs plain: one file, three files over one connection, a missing file
# (curl -f exits 22) and a closed port (exit 7); the same output and exit
# status, no hang, 0 events lost, every trace read by rip leaks and rip
# report.
# Timeout: 150
. tests/data/real.sh
real_need curl python3
py=$(real_python) || die "python3 does not run"
mkdir -p "$W/www"
seq 1 50000 >"$W/www/big.txt"
for i in 1 2 3; do
	seq "$i" 7 7000 >"$W/www/f$i.txt"
done
# a free port: bind 0, read it back, close; http.server binds it next
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
	die "no free port"
t_bg "$py" -m http.server --bind 127.0.0.1 --directory "$W/www" "$port" >"$TEST_TMP/server.log" 2>&1
server=$T_LAST
up() { curl -s -o /dev/null "http://127.0.0.1:$port/f1.txt"; }
wait_until 30 up || die "http.server did not answer on port $port: $(tail -n 3 "$TEST_TMP/server.log")"
url=http://127.0.0.1:$port

real_run "curl one file" "$REAL_OPTS" : curl -sS "$url/big.txt"
cmp -s "$TEST_TMP/plain.out" "$W/www/big.txt" || fail "curl: the file fetched differs"
real_run "curl three files" "$REAL_OPTS" : curl -sS "$url/f1.txt" "$url/f2.txt" "$url/f3.txt"
[ "$(wc -l <"$TEST_TMP/plain.out")" = 3000 ] || fail "curl: $(wc -l <"$TEST_TMP/plain.out") lines, want 3000"
real_run "curl a missing file" "$REAL_OPTS" : curl -sSf "$url/missing.txt"
[ "$real_prc" = 22 ] || fail "curl -f of a missing file: exit $real_prc, want 22"
t_kill "$server"
# its message says how many ms the connect took
REAL_STDERR=any real_run "curl a closed port" "$REAL_OPTS" : curl -sS "$url/f1.txt"
grep -q '^curl: (7) ' "$TEST_TMP/traced.err" || fail "curl to a closed port traced: $(cat "$TEST_TMP/traced.err")"
[ "$real_prc" = 7 ] || fail "curl to a closed port: exit $real_prc, want 7"
t_done
