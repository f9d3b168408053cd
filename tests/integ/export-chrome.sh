#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip export --format=chrome writes Chrome trace JSON that
# python's json module parses: {"traceEvents": [...], "displayTimeUnit":
# "ns"}, one instant event per event with its fields as args, a
# thread_name metadata event per thread, and coroutine runs as B/E slices
# named after the coroutine, balanced on every thread.  --format=text is
# byte for byte what rip dump prints.  OUT is never overwritten without
# --force (a device, /dev/null, is written to without); an unknown format
# exits 2 and lists the formats.
. tests/data/common.sh
prog=$BUILD/tests/integ/dumpprog
need_bin "$prog" "$RIP" "$RIP_ASAN"
need_cmd python3

ring=$("$prog" exit) || die "dumpprog exit failed"
[ -s "$ring" ] || die "dumpprog made no ring file ($ring)"

check_chrome() {
	python3 - "$1" <<'PY' || fail "$2: chrome JSON is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["displayTimeUnit"] == "ns"
ev = d["traceEvents"]
inst = [e for e in ev if e["ph"] == "i"]
assert len(inst) == 17, len(inst)
assert all(e["s"] == "t" and isinstance(e["ts"], (int, float)) for e in inst)
names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert names == {"main", "helper"}, names
start = [e for e in inst if e["name"] == "test:start"][0]
assert start["args"] == {"n": 1, "delta": -5, "addr": "0xdeadbeef", "big": -1234567890123}
open_ = {}
slices = []
for e in ev:
    if e["ph"] == "B":
        assert e["tid"] not in open_, "nested B"
        open_[e["tid"]] = e
    elif e["ph"] == "E":
        b = open_.pop(e["tid"])
        assert b["name"] == e["name"] and b["ts"] <= e["ts"]
        slices.append(e["name"])
assert not open_, "unbalanced B/E"
assert slices == ["worker-a", "worker-b", "worker-a"], slices
ts = [e["ts"] for e in ev if "ts" in e]
assert ts == sorted(ts)
PY
}

expect_status 0 "export chrome" "$RIP" export --format=chrome "$ring" -o "$TEST_TMP/c.json"
check_chrome "$TEST_TMP/c.json" "ring file"
asan_run export --format=chrome -o - "$ring"
[ "$asan_rc" = 0 ] || fail "asan export: exit $asan_rc"
cmp -s "$TEST_TMP/asan.out" "$TEST_TMP/c.json" || fail "export -o - differs from -o FILE"

# text is exactly rip dump
"$RIP" dump "$ring" >"$TEST_TMP/dump.txt" || fail "rip dump failed"
expect_status 0 "export text" "$RIP" export --format=text "$ring" -o "$TEST_TMP/t.txt"
cmp -s "$TEST_TMP/dump.txt" "$TEST_TMP/t.txt" || fail "export --format=text differs from rip dump"

# never overwrite without --force
echo keep >"$TEST_TMP/exists"
expect_status 1 "existing OUT" "$RIP" export --format=text "$ring" -o "$TEST_TMP/exists"
grep -q -- --force "$TEST_TMP/err" || fail "existing OUT: message does not mention --force"
[ "$(cat "$TEST_TMP/exists")" = keep ] || fail "existing OUT was overwritten"
expect_status 0 "existing OUT --force" "$RIP" export --force --format=text "$ring" -o "$TEST_TMP/exists"
cmp -s "$TEST_TMP/dump.txt" "$TEST_TMP/exists" || fail "--force did not write OUT"

# usage
expect_status 2 "unknown format" "$RIP" export --format=svg "$ring" -o "$TEST_TMP/x"
grep -q 'chrome' "$TEST_TMP/err" && grep -q 'text' "$TEST_TMP/err" ||
	fail "unknown format: formats not listed: $(cat "$TEST_TMP/err")"
[ -e "$TEST_TMP/x" ] && fail "unknown format: OUT created"
expect_status 2 "no format" "$RIP" export "$ring" -o "$TEST_TMP/x"
expect_status 2 "no -o" "$RIP" export --format=chrome "$ring"
expect_status 0 "--help" "$RIP" export --help
expect_status 1 "corrupt target" "$RIP" export --format=chrome /dev/null -o "$TEST_TMP/y"
[ -e "$TEST_TMP/y" ] && fail "failed export left OUT behind"

# through a trace directory written by rip snapshot
expect_status 0 "rip snapshot" "$RIP" snapshot -o "$TEST_TMP/trace" "$ring"
expect_status 0 "export chrome TRACE" "$RIP" export --format=chrome "$TEST_TMP/trace" \
	-o "$TEST_TMP/tc.json"
check_chrome "$TEST_TMP/tc.json" "trace directory"
# a device is written to without --force (it said "/dev/null exists; use --force")
expect_status 0 "export chrome -o /dev/null" "$RIP" export --format=chrome "$TEST_TMP/trace" \
	-o /dev/null
t_done
