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
import json, sys
sys.path.insert(0, "tests/data")
import wantleaks
# the C library's own blocks (stdout's buffer) are malloc's: mappings only here
wantleaks.check(sys.argv[1], sys.argv[2],
                lambda g: g["resource"] == "mem" and set(g["kinds"]) & {"mmap", "mremap"}, False)

mem = json.load(open(sys.argv[3]))["memory"]
assert mem["frees_unseen"] == 0, ("frees of memory never seen allocated", mem)
assert mem["allocated_again"] == 0, ("allocated again while live", mem)
PY
	fail "rip leaks or report do not match the mappings the program left"
t_done
