#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip leaks on the events leakprog emits itself (those of
# rip/resource.h, with backtraces made of its own functions' addresses):
# --json reports exactly the expected groups (resource, count, bytes, the
# function of the first frame, the fd's path), the totals and the
# releases never seen made; the same from the ring file and from a trace
# directory written by rip snapshot; the text report names the functions;
# --resource, --min-size, --top and --sort filter and order; a backtrace
# defined by another thread after its use still resolves.  Corrupt input
# (bad rip:bt definitions, undefined ids, a damaged array count) gives a
# clear message and never a sanitizer report.
. tests/data/common.sh
prog=$BUILD/tests/integ/leakprog
need_bin "$prog" "$RIP" "$RIP_ASAN"
need_cmd python3

ring=$("$prog" exit) || die "leakprog exit failed"
[ -s "$ring" ] || die "leakprog made no ring file ($ring)"

# check_json WHAT FILE: the --json report of leakprog's known sequence.
check_json() {
	python3 - "$2" <<'EOF' || fail "$1: JSON report differs"
import json, sys
r = json.load(open(sys.argv[1]))
want = [
    # resource, count, bytes, function of frame 0, sample
    ("shm", 1, 65536, "site_shmget", None),
    ("mem", 1, 4096, "site_calloc", None),
    ("shm-map", 1, 4096, "site_shmmap", None),
    ("mem", 1, 777, "site_thread", None),
    ("mem", 3, 300, "site_malloc", None),
    ("mem", 1, 70, "site_realloc2", None),
    ("mem", 1, 8, "site_realloc", None),
    ("fd", 1, 0, "site_open", "/etc/leak-a"),
    ("fd", 1, 0, "site_pipe", None),
]
got = []
for g in r["leaks"]:
    f0 = g["stack"][0]["function"] if g["stack"] else None
    got.append((g["resource"], g["count"], g["bytes"], f0, g["sample"]))
    assert g["stack"][1]["function"] == "site_caller", g
    assert g["stack"][0]["file"].endswith("leakprog.c"), g
    assert g["stack"][0]["line"] > 0, g
    assert g["first"] <= g["last"], g
if got != want:
    print("got: ", got, file=sys.stderr)
    print("want:", want, file=sys.stderr)
    sys.exit(1)
t = r["totals"]
assert (t["mem"]["count"], t["mem"]["bytes"], t["mem"]["sites"]) == (7, 5251, 5), t
assert (t["fd"]["count"], t["fd"]["sites"]) == (2, 2), t
assert (t["shm"]["count"], t["shm"]["bytes"]) == (1, 65536), t
assert (t["shm-map"]["count"], t["shm-map"]["bytes"]) == (1, 4096), t
assert t["mem"]["released_unseen"] == 1 and t["fd"]["released_unseen"] == 1, t
assert r["failed_allocs"] == 1, r
assert r["complete"] is True and r["discarded"] == 0, r
assert r["backtraces"]["bad"] == 0 and r["backtraces"]["undefined"] == 0, r
g = [x for x in r["leaks"] if x["stack"][0]["function"] == "site_malloc"][0]
assert g["kinds"] == ["malloc"], g
g = [x for x in r["leaks"] if x["stack"][0]["function"] == "site_realloc2"][0]
assert g["kinds"] == ["realloc"], g
EOF
}

expect_status 0 "rip leaks --json RING" "$RIP" leaks --json "$ring"
check_json "ring file" "$TEST_TMP/out"

asan_run leaks --json "$ring"
[ "$asan_rc" = 0 ] || fail "asan leaks: exit $asan_rc"
cmp -s "$TEST_TMP/asan.out" "$TEST_TMP/out" || fail "asan leaks output differs"

# the same from a trace directory
expect_status 0 "rip snapshot" "$RIP" snapshot -o "$TEST_TMP/trace" "$ring"
expect_status 0 "rip leaks --json TRACE" "$RIP" leaks --json "$TEST_TMP/trace"
check_json "trace directory" "$TEST_TMP/out"

# text: the functions, with file:line, and the total line
expect_status 0 "rip leaks RING" "$RIP" leaks "$ring"
for f in site_malloc site_calloc site_realloc2 site_thread site_open site_shmget; do
	grep -q "^      $f (.*leakprog.c:[0-9]*)$" "$TEST_TMP/out" || fail "text: no frame $f"
done
grep -q '^300 bytes in 3 blocks never freed (malloc)' "$TEST_TMP/out" ||
	fail "text: no group of 3 blocks"
grep -q '^total: 5251 bytes in 7 blocks never freed (5 sites), 2 file descriptors' \
	"$TEST_TMP/out" || fail "text: total line"
grep -q '/etc/leak-a' "$TEST_TMP/out" || fail "text: the fd's path"
grep -q WARNING "$TEST_TMP/out" && fail "text: a lossless trace called lossy"

# filters
"$RIP" leaks --json --resource=fd "$ring" >"$TEST_TMP/fd.json" || fail "--resource=fd"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); \
assert [g["resource"] for g in r["leaks"]] == ["fd", "fd"], r["leaks"]' "$TEST_TMP/fd.json" ||
	fail "--resource=fd: other groups"
"$RIP" leaks --json --min-size=100 --resource=mem "$ring" >"$TEST_TMP/min.json" ||
	fail "--min-size"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); \
assert [g["bytes"] for g in r["leaks"]] == [4096, 777, 300], r["leaks"]' "$TEST_TMP/min.json" ||
	fail "--min-size=100: wrong groups"
"$RIP" leaks --json --sort=count --top=1 "$ring" >"$TEST_TMP/top.json" || fail "--top"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); \
assert [(g["count"], g["bytes"]) for g in r["leaks"]] == [(3, 300)], r["leaks"]; \
assert r["totals"]["mem"]["count"] == 7' "$TEST_TMP/top.json" || fail "--sort=count --top=1"

# usage errors
expect_status 2 "no target" "$RIP" leaks
expect_status 2 "bad sort" "$RIP" leaks --sort=time "$ring"
expect_status 2 "bad resource" "$RIP" leaks --resource=disk "$ring"
expect_status 2 "bad size" "$RIP" leaks --min-size=lots "$ring"
# a size past 2^64 is refused, not wrapped into a small one that filters nothing
expect_status 2 "size past 2^64" "$RIP" leaks --min-size=99999999999999G "$ring"
expect_status 0 "a size with its unit's B" "$RIP" leaks --min-size=1MiB "$ring"
expect_status 0 "--help" "$RIP" leaks --help
grep -q -- '--min-size' "$TEST_TMP/out" || fail "--help does not list --min-size"
expect_status 1 "no such trace" "$RIP" leaks "$TEST_TMP/nothing-here"

# ---- corrupt input ----
cring=$("$prog" corrupt) || die "leakprog corrupt failed"
asan_run leaks "$cring"
[ "$asan_rc" = 0 ] || fail "corrupt backtraces: exit $asan_rc, want 0 (warnings)"
grep -q 'bad backtrace definitions' "$TEST_TMP/asan.err" || fail "no warning on bad rip:bt"
grep -q 'never defines' "$TEST_TMP/asan.err" || fail "no warning on an undefined bt id"
grep -q 'backtrace 12345 is not defined' "$TEST_TMP/asan.out" || fail "undefined id not shown"
asan_run leaks --json "$cring"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); b=r["backtraces"]; \
assert b["bad"] == 2 and b["undefined"] == 1, b' "$TEST_TMP/asan.out" ||
	fail "corrupt: backtrace counts"

# damage FILE: set the count before bt 22's frames (0x5151...) to 0x7fffffff
damage() {
	python3 - "$1" <<'EOF' || die "cannot damage $1"
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
i = b.find(bytes([0x51]) * 24)
assert i > 4
b[i - 4:i] = (0x7fffffff).to_bytes(4, "little")
open(p, "wb").write(b)
EOF
}
# in a ring file, a packet that does not decode is dropped and counted: the report says so
cp "$cring" "$TEST_TMP/damaged.ring"
damage "$TEST_TMP/damaged.ring"
asan_run leaks "$TEST_TMP/damaged.ring"
[ "$asan_rc" = 0 ] || fail "damaged ring: exit $asan_rc, want 0"
head -n 1 "$TEST_TMP/asan.out" | grep -q '^WARNING: this trace is incomplete' ||
	fail "damaged ring: no warning at the top"
# in a trace directory it is corruption: exit 1, the file, the offset, the reason
expect_status 0 "rip snapshot (corrupt)" "$RIP" snapshot -o "$TEST_TMP/ctrace" "$cring"
damage "$TEST_TMP/ctrace/stream_0"
asan_run leaks "$TEST_TMP/ctrace"
[ "$asan_rc" = 1 ] || fail "damaged trace: exit $asan_rc, want 1"
grep -q 'stream_0: offset [0-9]*: bad array in rip:bt' "$TEST_TMP/asan.err" || {
	fail "damaged trace: no clear message"
	cat "$TEST_TMP/asan.err" >&2
}

t_done
