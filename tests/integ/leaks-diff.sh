#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip leaks --diff OLD NEW on two runs of leakprog2 diff N
# with different leak counts and different backtrace ids for the same
# stacks: groups are matched by symbolized stack (two ids with one stack
# merge), and exactly the new and grown ones are reported, with their
# count and bytes deltas, by growth in bytes; the other way round reports
# the gone and shrunk ones; a trace against itself reports nothing.  The
# text report, --top, the totals, and usage errors.
. tests/data/common.sh
prog=$BUILD/tests/integ/leakprog2
need_bin "$prog" "$RIP" "$RIP_ASAN"
need_cmd python3

old=$("$prog" diff 2) || die "leakprog2 diff 2 failed"
new=$("$prog" diff 5) || die "leakprog2 diff 5 failed"
[ -s "$old" ] && [ -s "$new" ] || die "leakprog2 made no ring files"

# check WHAT WANT FILE: "function:status:count_delta:bytes_delta ..." of a --diff --json
check() {
	got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); \
assert r["diff"] is True and r["version"] == 1, r; \
print(" ".join("%s:%s:%d:%d" % (g["stack"][0]["function"], g["status"], g["count_delta"], \
g["bytes_delta"]) for g in r["groups"]))' "$3") || { fail "$1: bad JSON"; return; }
	[ "$got" = "$2" ] || fail "$1: got '$got', want '$2'"
}

expect_status 0 "--diff --json OLD NEW" "$RIP" leaks --diff --json "$old" "$new"
check "old -> new" \
	"site_new:new:1:500 site_grow:grown:3:192 site_bigger:grown:0:90 site_fd:grown:1:0" \
	"$TEST_TMP/out"
python3 - "$TEST_TMP/out" <<'EOF2' || fail "old -> new: details"
import json, sys
r = json.load(open(sys.argv[1]))
g = {x["stack"][0]["function"]: x for x in r["groups"]}
x = g["site_grow"]
assert (x["resource"], x["count"], x["bytes"], x["old_count"], x["old_bytes"]) == \
    ("mem", 5, 320, 2, 128), x
assert x["key"].startswith("site_grow:") and ";site_caller:" in x["key"], x
assert x["stack"][1]["function"] == "site_caller", x
x = g["site_new"]
assert (x["count"], x["bytes"], x["old_count"], x["old_bytes"]) == (1, 500, 0, 0), x
x = g["site_fd"]
assert (x["resource"], x["count"], x["old_count"], x["sample"]) == \
    ("fd", 2, 1, "/etc/leak-d"), x
assert (r["new_groups"], r["grown_groups"]) == (1, 3), r
t = r["totals"]["mem"]
assert (t["old_count"], t["old_bytes"], t["count"], t["bytes"], t["count_delta"],
        t["bytes_delta"]) == (10, 228, 10, 950, 0, 722), t
assert r["totals"]["fd"]["count_delta"] == 1, r["totals"]
assert r["old"]["complete"] and r["new"]["complete"], r
EOF2

asan_run leaks --diff --json "$old" "$new"
[ "$asan_rc" = 0 ] || fail "asan --diff: exit $asan_rc"
cmp -s "$TEST_TMP/asan.out" "$TEST_TMP/out" || fail "asan --diff output differs"

expect_status 0 "--diff NEW OLD" "$RIP" leaks --diff --json "$new" "$old"
check "new -> old" "site_shrink:grown:3:30 site_gone:new:1:30" "$TEST_TMP/out"
expect_status 0 "--diff X X" "$RIP" leaks --diff --json "$new" "$new"
check "same" "" "$TEST_TMP/out"
expect_status 0 "--diff --top=2" "$RIP" leaks --diff --json --top=2 "$old" "$new"
check "--top=2" "site_new:new:1:500 site_grow:grown:3:192" "$TEST_TMP/out"
expect_status 0 "--diff --resource=fd" "$RIP" leaks --diff --json --resource=fd "$old" "$new"
check "--resource=fd" "site_fd:grown:1:0" "$TEST_TMP/out"

# text
expect_status 0 "--diff OLD NEW" "$RIP" leaks --diff "$old" "$new"
grep -q '^+1 blocks, +500 bytes (mem, new: 1 block, 500 bytes)$' "$TEST_TMP/out" ||
	fail "text: site_new"
grep -q '^+3 blocks, +192 bytes (mem, grown: 5 blocks, 320 bytes; was 2 blocks, 128 bytes)$' \
	"$TEST_TMP/out" || fail "text: site_grow"
grep -q '^      site_grow (.*leakprog2.c:[0-9]*)$' "$TEST_TMP/out" || fail "text: site_grow frame"
grep -q '^1 groups new, 3 grown; total: mem +0 (+722 bytes), fd +1, shm +0 (+0 bytes)' "$TEST_TMP/out" ||
	fail "text: total line"
grep -q 'site_same\|site_shrink\|site_gone' "$TEST_TMP/out" && fail "text: unchanged groups"

# usage errors
expect_status 2 "--diff one trace" "$RIP" leaks --diff "$old"
expect_status 2 "two traces without --diff" "$RIP" leaks "$old" "$new"
expect_status 1 "--diff no such trace" "$RIP" leaks --diff "$TEST_TMP/nothing" "$new"

t_done
