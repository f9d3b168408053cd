#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a program that makes a page of its own stack unreadable
# above its frames, and allocates from code without unwind information
# whose rbp points into that page, is not killed by our stack walks.
# stackhole makes the hole with mprotect, syscall(SYS_mprotect),
# pkey_mprotect, munmap and mmap MAP_FIXED PROT_NONE in turn, allocates
# 200 times and burns 100 ms of CPU there, then makes the page readable
# again and leaks 10 blocks of 77 bytes from stackhole_after().  Under rip
# run --mem with each way of walking stacks (the unwind tables, the
# default; frame pointers; libunwind), and rip run --sample --mem, each
# must end well, and rip leaks must find the 10 blocks with stacks that
# reach main again once the page is back; the 10 blocks of 55 bytes that
# stackhole_during() leaks while the page is unreadable, stacks through main
# that go as far (the frame-pointer walk took the frame under the hole for
# the outermost one: stacks that ended at main).  The frame-pointer walk
# read the page and killed the program, and so did the search for a signal
# frame before a thread's first call of libunwind (it read every word up to
# the top of the stack).  stackhole sig: a handler's hole under its signal
# frame, and that search did not see the frame: the thread's first call of
# libunwind, which mallocs, was made in the handler.
. tests/data/common.sh
prog=$BUILD/tests/integ/stackhole
need_bin "$prog" "$RIP"

# run MODE WHAT ENV... -- OPTIONS...: stackhole MODE under rip run
run() {
	mode=$1 what=$2
	shift 2
	rm -rf "$TEST_TMP/t"
	# sig: every malloc of the handler changes the heap's count (no thread cache)
	[ "$mode" = sig ] && set -- GLIBC_TUNABLES=glibc.malloc.tcache_count=0 "$@"
	env "$@" -o "$TEST_TMP/t" -- "$prog" "$mode" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
	rc=$?
	[ "$rc" = 3 ] && {
		skip_part "$mode: pkey_mprotect refused here"
		return 0
	}
	if [ "$rc" != 0 ] || ! grep -q "stackhole $mode ok" "$TEST_TMP/out"; then
		fail "$mode, $what: exit $rc: $(cat "$TEST_TMP/out" "$TEST_TMP/err")"
		return 0
	fi
	"$RIP" leaks --json "$TEST_TMP/t" >"$TEST_TMP/leaks.json" 2>"$TEST_TMP/err" || {
		fail "$mode, $what: rip leaks: $(cat "$TEST_TMP/err")"
		return 0
	}
	python3 - "$TEST_TMP/leaks.json" "$mode" <<'PY' || fail "$mode, $what: the leaks' stacks"
import json, sys
r = json.load(open(sys.argv[1]))
got = [g for g in r["leaks"] if g["bytes"] == 770 and g["count"] == 10]
fns = [f.get("function") for f in got[0]["stack"]] if got else []
if not got or fns[:2] != ["stackhole_after", "main"]:
    print("leaks:", [(g["count"], g["bytes"]) for g in r["leaks"]], "stack:", fns)
    sys.exit(1)
if sys.argv[2] == "sig":
    sys.exit(0)
during = [g for g in r["leaks"] if g["bytes"] == 550 and g["count"] == 10]
dfns = [f.get("function") for f in during[0]["stack"]] if during else []
if not during or dfns[:2] != ["stackhole_during", "main"] or len(dfns) < len(fns):
    print("stackhole_during's stack:", dfns, "stackhole_after's:", fns)
    sys.exit(1)
PY
}

for mode in mprotect sys pkey munmap fixed sig; do
	run "$mode" "rip run --mem" "$RIP" run -q --mem
	run "$mode" "RIP_UNWIND=fp" RIP_UNWIND=fp "$RIP" run -q --mem
	run "$mode" "RIP_UNWIND=libunwind" RIP_UNWIND=libunwind "$RIP" run -q --mem
	run "$mode" "rip run --sample --mem" "$RIP" run -q --sample --mem
done
# An mprotect the kernel refuses (EINVAL: an address inside a page) makes no
# hole: the tables' walk alone still gives whole stacks (it lowered the top
# of the stack for good, and the walk declined every stack after it).
run failed "RIP_UNWIND=tables" RIP_UNWIND=tables "$RIP" run -q --mem
t_done
