#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a process made with a raw clone never writes into its
# parent's trace.  trust_prog leaks one 64 KiB block, then makes a child
# with syscall(SYS_clone, SIGCHLD), syscall(SYS_clone3) or glibc's
# clone(CLONE_VM | SIGCHLD); child and parent each make 2,000 malloc/free
# pairs.  Under rip run --mem, rip leaks on the parent's trace finds
# exactly the 64 KiB block (the child's events, written into the parent's
# ring as the parent's thread, used to cancel it: 0 bytes in 6 of 6 runs).
# With --follow-fork the fork-like children get a trace of their own with
# their 2,000 pairs; without, none.  The CLONE_VM child shares its parent's
# TLS: its calls are not recorded, and are counted lost, so the report
# says it is incomplete.
. tests/data/common.sh
prog=$BUILD/tests/integ/trust_prog
need_bin "$prog" "$RIP"
need_cmd python3

# check_leaks TRACE WHAT COMPLETE: exactly one leak, of 65536 bytes
check_leaks() {
	"$RIP" leaks --json "$1" >"$TEST_TMP/leaks.json" 2>"$TEST_TMP/leaks.err" ||
		{ fail "$2: rip leaks failed: $(cat "$TEST_TMP/leaks.err")"; return; }
	python3 - "$TEST_TMP/leaks.json" "$3" <<'PY' || fail "$2: wrong leaks: $(head -c 600 "$TEST_TMP/leaks.json")"
import json, sys
r = json.load(open(sys.argv[1]))
t = r["totals"]["mem"]
assert (t["count"], t["bytes"]) == (1, 65536), t
assert t["released_unseen"] == 0, t
if sys.argv[2] == "complete":
    assert r["complete"] is True and r["discarded"] == 0, r
else:
    assert r["complete"] is False and r["discarded"] >= 4000, r
PY
}

# pairs TRACE: "allocations frees" of rip report --json
pairs() {
	"$RIP" report --json "$1" 2>/dev/null | python3 -c '
import json, sys
m = json.load(sys.stdin)["memory"]
print(m["allocations"], m["frees"])'
}

for mode in clone-fork clone3; do
	for follow in "" --follow-fork; do
		t=$TEST_TMP/$mode$follow
		"$RIP" run --mem $follow -o "$t" -- "$prog" "$mode" >"$TEST_TMP/run.out" 2>&1 ||
			{ fail "$mode $follow: rip run: $(cat "$TEST_TMP/run.out")"; continue; }
		check_leaks "$t" "$mode $follow" complete
		children=$(ls -d "$t"/[0-9]* 2>/dev/null | wc -l)
		if [ -n "$follow" ]; then
			[ "$children" = 1 ] || { fail "$mode $follow: $children child traces, want 1"; continue; }
			got=$(pairs "$t"/[0-9]*)
			[ "$got" = "2000 2000" ] || fail "$mode $follow: the child's trace has '$got', want 2000 2000"
		else
			[ "$children" = 0 ] || fail "$mode: a child trace without --follow-fork"
		fi
	done
done

t=$TEST_TMP/vm
"$RIP" run --mem -o "$t" -- "$prog" clone-vm >"$TEST_TMP/run.out" 2>&1 ||
	fail "clone-vm: rip run: $(cat "$TEST_TMP/run.out")"
check_leaks "$t" clone-vm incomplete
t_done
