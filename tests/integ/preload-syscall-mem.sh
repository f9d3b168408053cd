#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Timeout: 120
#
# Description: mappings made and released through glibc's syscall(2).
# tests/integ/syscall_res.c (mem) maps anonymous private memory with
# syscall(SYS_mmap) and keeps it, maps and unmaps with syscall(SYS_mmap)
# and syscall(SYS_munmap), unmaps with syscall(SYS_munmap) what the mmap
# wrapper mapped, unmaps half of a mapping with it, and grows a mapping
# with syscall(SYS_mremap); a munmap and an mremap the kernel refuses
# change nothing.  rip leaks --json must list exactly the mappings it says
# it left, by kind, the function that made each and their bytes; rip
# report must count no free of memory never seen allocated, and nothing
# allocated again while live.
. tests/data/common.sh
prog=$BUILD/tests/integ/syscall_res
need_bin "$RIP" "$prog" "$BUILD/librip-preload.so"
need_cmd python3

"$prog" mem >"$TEST_TMP/plain.out" 2>&1 ||
	die "the program fails untraced: $(tail -n 3 "$TEST_TMP/plain.out")"

expect_status 0 "rip run --mem" "$RIP" run --mem -q -o "$TEST_TMP/trace" -- "$prog" mem
cp "$TEST_TMP/out" "$TEST_TMP/prog.out"
grep -q '^done$' "$TEST_TMP/prog.out" || fail "the program did not run to its end"
leaks_report_json "$TEST_TMP/trace"

python3 - "$TEST_TMP/prog.out" "$TEST_TMP/leaks.json" "$TEST_TMP/report.json" <<'PY' ||
import collections, json, sys
want = collections.Counter()
for line in open(sys.argv[1]).read().splitlines():
    w = line.split()
    if w[0] == "want":
        want[(w[1], w[2], int(w[3]))] += 1
assert want, "the program wants nothing"

lk = json.load(open(sys.argv[2]))
got = collections.Counter()
for g in lk["leaks"]:
    # the C library's own blocks (stdout's buffer) are malloc's: mappings only here
    if g["resource"] != "mem" or not set(g["kinds"]) & {"mmap", "mremap"}:
        continue
    assert len(g["kinds"]) == 1, ("one kind per group", g["kinds"])
    fn = g["stack"][0]["function"].split(".")[0] if g["stack"] else None
    for _ in range(g["count"]):
        got[(g["kinds"][0], fn, g["bytes"] // g["count"])] += 1
if got != want:
    print("rip leaks:", sorted(got.items()), file=sys.stderr)
    print("wanted:   ", sorted(want.items()), file=sys.stderr)
    sys.exit(1)

mem = json.load(open(sys.argv[3]))["memory"]
assert mem["frees_unseen"] == 0, ("frees of memory never seen allocated", mem)
assert mem["allocated_again"] == 0, ("allocated again while live", mem)
PY
	fail "rip leaks or report do not match the mappings the program left"
t_done
