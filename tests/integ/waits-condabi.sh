#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: both pthread_cond_wait ABIs under the wait wrappers: a
# program bound to pthread_cond_wait@GLIBC_2.2.5 (and _timedwait) and one
# bound to the current version, each run by plain rip run.  rip ps shows the
# waiter in cond_wait, called from waiter(); each wrapper forwards to its own
# version (the old one leaves its allocated condition's address in the
# condition's first word, the new one a small counter); the timed wait times
# out.  x86-64 only (other targets have one version).
# Timeout: 90
. tests/data/common.sh
need_bin "$RIP"
[ "$(uname -m)" = x86_64 ] || skip "two pthread_cond_wait versions exist on x86-64 only"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
need_cmd python3
CC=${CC:-cc}
cp tests/integ/waits_condabi.c "$TEST_TMP/" || die "no tests/integ/waits_condabi.c"
cd "$TEST_TMP" || die "no $TEST_TMP"
"$CC" -O1 -g -pthread -DOLD_ABI -o old waits_condabi.c || die "cannot build the old-ABI program"
"$CC" -O1 -g -pthread -o new waits_condabi.c || die "cannot build the new-ABI program"
objdump -T old 2>/dev/null | grep -q 'GLIBC_2.2.5.*pthread_cond_wait' ||
	die "the old-ABI program is not bound to pthread_cond_wait@GLIBC_2.2.5"

for abi in old new; do
	rm -f ready go
	"$RIP" run -q -o "tr-$abi" -- "./$abi" ready go >"$abi.out" 2>"$abi.err" &
	run=$!
	T_PIDS="$T_PIDS $run"
	wait_file ready 30 || die "$abi: the program did not start: $(cat "$abi.err")"
	pid=$(cat ready)
	waiting() {
		"$RIP" ps --threads --json "$pid" >"$abi.json" 2>/dev/null && python3 - "$abi.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["slots"]:
    w = s.get("wait")
    if s["name"] == "waiter" and w and w["in"] == "cond_wait" and w["caller"]["function"] == "waiter":
        sys.exit(0)
sys.exit(1)
PY
	}
	wait_until 20 waiting || fail "$abi: rip ps did not show waiter in cond_wait: $(head -c 400 "$abi.json")"
	touch go
	wait "$run"
	rc=$?
	[ "$rc" = 0 ] || fail "$abi: exit $rc: $(cat "$abi.err")"
	grep -qx "$abi layout" "$abi.out" || fail "$abi: the wrapper forwarded to the wrong version: $(cat "$abi.out")"
	grep -qx timedout "$abi.out" || fail "$abi: the timed wait: $(cat "$abi.out")"
done
t_done
