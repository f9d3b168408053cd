#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip dump prints exactly the events dumpprog emitted: every
# field type (signed, hex, escaped strings), the thread names, coroutine
# switches with the running coroutine in brackets, the helper thread's
# events in time order, and a summary with no loss.  The same output from
# the ring file of the dead process, from its pid while it lives, and from
# a trace directory written by rip snapshot; --json gives one valid JSON
# object per line; usage errors exit 2.  Times and tids are normalised.
. tests/data/common.sh
prog=$BUILD/tests/integ/dumpprog
need_bin "$prog" "$RIP" "$RIP_ASAN"

norm() {
	sed -E -e 's/^-?[0-9]+\.[0-9]{9} /T /' -e 's#^T ([^ ]*)/[0-9]+ #T \1/TID #'
}

cat >"$TEST_TMP/want" <<'GOLD'
T main/TID test:start n=1 delta=-5 addr=0xdeadbeef big=-1234567890123
T main/TID test:small u8=255 s8=-128 u16=65535 s16=-32768
T main/TID test:msg id=1 text="hello \"world\"\n\ttab\\"
T main/TID test:none
T main/TID rip:coro_switch to=2 from=0 to_name="worker-a"
T main/TID [worker-a] test:tick i=1
T main/TID [worker-a] rip:coro_switch to=0 from=2 from_name="worker-a"
T main/TID rip:coro_switch to=3 from=0 to_name="worker-b"
T main/TID [worker-b] test:tick i=2
T main/TID [worker-b] test:msg id=2 text="from b"
T main/TID [worker-b] rip:coro_switch to=0 from=3 from_name="worker-b"
T main/TID rip:coro_switch to=2 from=0 to_name="worker-a"
T main/TID [worker-a] test:tick i=3
T main/TID [worker-a] rip:coro_switch to=0 from=2 from_name="worker-a"
T helper/TID test:tick i=100
T helper/TID test:msg id=3 text="helper"
T main/TID test:none
17 events, 2 streams, 0 discarded/overwritten, 0 packets lost
GOLD

# check_golden WHAT FILE: FILE (rip dump output) matches the golden lines.
check_golden() {
	norm <"$2" >"$TEST_TMP/got"
	if ! cmp -s "$TEST_TMP/want" "$TEST_TMP/got"; then
		fail "$1: output differs from the golden lines"
		diff "$TEST_TMP/want" "$TEST_TMP/got" | head -n 20 >&2
	fi
	head -n 1 "$2" | grep -q '^0\.000000000 ' || fail "$1: the first event is not at 0.000000000"
	# -s: events in the same nanosecond are in order whatever follows the time
	sort -c -s -n "$2" 2>/dev/null || fail "$1: times not in order"
}

ring=$("$prog" exit) || die "dumpprog exit failed"
[ -s "$ring" ] || die "dumpprog made no ring file ($ring)"

# the dead process's file, through the normal and the ASan build
expect_status 0 "rip dump RING" "$RIP" dump "$ring"
check_golden "dump of the dead ring" "$TEST_TMP/out"
cp "$TEST_TMP/out" "$TEST_TMP/dead.txt"
asan_run dump "$ring"
[ "$asan_rc" = 0 ] || fail "asan dump: exit $asan_rc"
cmp -s "$TEST_TMP/asan.out" "$TEST_TMP/dead.txt" || fail "asan dump output differs"

# -v adds the wall clock as a date and time
expect_status 0 "rip dump -v" "$RIP" dump -v "$ring"
grep -Eq '^0\.000000000 [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}\.[0-9]{9} main/' "$TEST_TMP/out" ||
	fail "dump -v: no wall-clock column: $(head -n 1 "$TEST_TMP/out")"

# --json: JSON Lines with the same events, then the summary object
expect_status 0 "rip dump --json" "$RIP" dump --json "$ring"
python3 - "$TEST_TMP/out" <<'PY' || fail "dump --json: bad JSON Lines"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ev, summ = lines[:-1], lines[-1]["summary"]
assert len(ev) == 17 and summ["events"] == 17 and summ["streams"] == 2, summ
assert summ["discarded"] == 0 and summ["lost_packets"] == 0, summ
assert ev[0]["event"] == "test:start" and ev[0]["fields"]["big"] == -1234567890123
assert ev[0]["fields"]["addr"] == "0xdeadbeef"
assert ev[2]["fields"]["text"] == 'hello "world"\n\ttab\\'
assert [e["coro"] for e in ev if e["event"] == "test:tick"] == ["worker-a", "worker-b", "worker-a", None]
assert ev[14]["thread"] == "helper" and ev[14]["tid"] != ev[0]["tid"]
assert all(a["ns"] <= b["ns"] for a, b in zip(ev, ev[1:]))
PY

# a live process, by pid
fifo=$TEST_TMP/live.out
t_bg sh -c "exec \"$prog\" wait >\"$fifo\""
pid=$T_LAST
wait_until 60 grep -qs ready "$fifo" || die "dumpprog wait did not get ready"
expect_status 0 "rip dump PID (live)" "$RIP" dump "$pid"
check_golden "dump of the live pid" "$TEST_TMP/out"
t_kill "$pid"

# a trace directory written by rip snapshot
expect_status 0 "rip snapshot" "$RIP" snapshot -o "$TEST_TMP/trace" "$ring"
expect_status 0 "rip dump TRACE" "$RIP" dump "$TEST_TMP/trace"
check_golden "dump of the trace directory" "$TEST_TMP/out"
cmp -s "$TEST_TMP/out" "$TEST_TMP/dead.txt" || fail "trace and ring file dumps differ"
asan_run dump "$TEST_TMP/trace"
[ "$asan_rc" = 0 ] || fail "asan dump of the trace: exit $asan_rc"

# usage and failures
expect_status 2 "no target" "$RIP" dump
expect_status 2 "two targets" "$RIP" dump "$ring" "$ring"
expect_status 2 "bad option" "$RIP" dump --bogus "$ring"
expect_status 0 "--help" "$RIP" dump --help
grep -q '^usage: rip dump' "$TEST_TMP/out" || fail "--help prints no usage"
expect_status 1 "missing file" "$RIP" dump "$TEST_TMP/nonexistent"
grep -q nonexistent "$TEST_TMP/err" || fail "missing file: message does not name it"
t_done
