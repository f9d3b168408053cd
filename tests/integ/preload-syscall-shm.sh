#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Timeout: 120
#
# Description: System V shared memory made, attached, detached and removed
# through glibc's syscall(2).  tests/integ/syscall_res.c (shm) makes a
# segment with syscall(SYS_shmget) and attaches it with syscall(SYS_shmat),
# keeping both; attaches it again with syscall(SYS_shmat) and detaches with
# shmdt(), attaches with shmat() and detaches with syscall(SYS_shmdt), and
# both through syscall(); removes with shmctl(IPC_RMID) a segment
# syscall(SYS_shmget) made and with syscall(SYS_shmctl, IPC_RMID) one
# shmget() made; gets again with syscall(SYS_shmget, KEY, IPC_CREAT) a
# keyed segment shmget() made (it existed: not the program's to remove); a
# shmdt and an IPC_RMID the kernel refuses change nothing.
# rip leaks --json must list exactly the segment and the attachment it
# says it left (resource, kind, the function that made each, bytes); rip
# report must count no detach of an attachment never seen attached and no
# removal of a segment never seen made.
. tests/data/common.sh
prog=$BUILD/tests/integ/syscall_res
need_bin "$RIP" "$prog" "$BUILD/librip-preload.so"
need_cmd python3

# The segments the program leaves (both runs), removed whatever the test's outcome.
rm_segments() {
	ids=$(sed -n 's/^segment //p' "$TEST_TMP/plain.out" "$TEST_TMP/prog.out" 2>/dev/null)
	# shellcheck disable=SC2086 # one id a word
	[ -z "$ids" ] || "$prog" rmid $ids
}
trap 't_cleanup; rm_segments' EXIT

"$prog" shm >"$TEST_TMP/plain.out" 2>&1 ||
	die "the program fails untraced: $(tail -n 3 "$TEST_TMP/plain.out")"

"$RIP" run --shm -q -o "$TEST_TMP/trace" -- "$prog" shm >"$TEST_TMP/prog.out" 2>"$TEST_TMP/err" ||
	fail "rip run --shm failed: $(tail -n 3 "$TEST_TMP/err" "$TEST_TMP/prog.out")"
grep -q '^done$' "$TEST_TMP/prog.out" || fail "the program did not run to its end"
leaks_report_json "$TEST_TMP/trace"

python3 - "$TEST_TMP/prog.out" "$TEST_TMP/leaks.json" "$TEST_TMP/report.json" <<'PY' ||
import json, sys
sys.path.insert(0, "tests/data")
import wantleaks
wantleaks.check(sys.argv[1], sys.argv[2], lambda g: g["resource"] in ("shm", "shm-map"), True)

shm = json.load(open(sys.argv[3]))["shm"]
seg, maps = shm["segments"], shm["mappings"]
assert seg["removed_unseen"] == 0, ("removals of segments never seen made", seg)
assert maps["detached_unseen"] == 0, ("detaches of attachments never seen", maps)
# made: the kept one and four removed; got existing: the keyed one;
# attached: the kept one and four detached
assert (seg["created"], seg["removed"]) == (5, 4), ("segments", seg)
assert seg["opened"] == 1, ("segments that existed", seg)
assert (maps["attached"], maps["detached"]) == (5, 4), ("attachments", maps)
PY
	fail "rip leaks or report do not match the shared memory the program left"
t_done
