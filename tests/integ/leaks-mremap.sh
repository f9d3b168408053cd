#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip leaks and rip report follow mappings through mremap,
# MAP_FIXED and partial munmaps.  --mem records anonymous private mappings
# only, but an mremap of any other mapping was a mem:unmap of its old range
# (a free never seen made) and a mem:alloc of its new one: a private file
# mapping moved or resized, or shared memory with --shm off, became a
# memory leak when the program kept it.  A munmap over a shared and a
# private mapping recorded only the shared one (the private pages stayed
# live), an mremap to a fixed address did not unmap what it replaced, and
# MREMAP_DONTUNMAP of a shared mapping detached the old range, which stays
# mapped.  tests/integ/mapsprog.c runs one case per process; each must show
# the live memory and attachments it really leaves (the *-leak cases leave
# some: a wrong answer either way fails) and no unseen free, with --mem
# alone and with --mem --shm.
. tests/data/common.sh
prog=$BUILD/tests/integ/mapsprog
need_bin "$RIP" "$prog" "$BUILD/librip-preload.so"
need_cmd python3
head -c 65536 /dev/zero >"$TEST_TMP/file"

# case, bytes of memory left mapped, bytes of shared attachments left (with --shm), whether
# to run it with --mem alone too (shared memory is then not recorded at all)
: >"$TEST_TMP/list"
while read -r c mem shm alone; do
	for flags in "--mem --shm" ${alone:+"--mem"}; do
		tag=mem_shm
		[ "$flags" = "--mem" ] && shm=0 tag=mem
		t=$TEST_TMP/trace-$c-$tag
		# shellcheck disable=SC2086 # flags are words
		"$RIP" run $flags -q -o "$t" -- "$prog" "$c" "$TEST_TMP/file" </dev/null \
			>"$TEST_TMP/out" 2>&1
		rc=$?
		if [ "$rc" = 77 ]; then
			skip_part "$c: the kernel refuses its call"
			continue
		fi
		[ "$rc" = 0 ] && grep -q '^done$' "$TEST_TMP/out" ||
			{ fail "$c ($flags): exit $rc: $(head -n 3 "$TEST_TMP/out")"; continue; }
		"$RIP" leaks --json "$t" >"$t.leaks" 2>"$TEST_TMP/err" ||
			{ fail "$c ($flags): rip leaks: $(cat "$TEST_TMP/err")"; continue; }
		"$RIP" report --json "$t" >"$t.report" 2>"$TEST_TMP/err" ||
			{ fail "$c ($flags): rip report: $(cat "$TEST_TMP/err")"; continue; }
		echo "$t $c/$tag $mem $shm" >>"$TEST_TMP/list"
	done
done <<'CASES'
file-grow 0 0 alone
file-move 0 0 alone
file-keep 0 0 alone
shared-anon 0 0 alone
shared-file 0 0 alone
fail 0 0
partial 0 0
partial-leak 4096 0
anon-grow-move 0 0
anon-partial-remap 0 0
dontunmap 0 0
dontunmap-leak 8192 0
dontunmap-shared 0 0 alone
dontunmap-shared-leak 0 8192 alone
fixed-over 0 0 alone
fixed-anon-over-shared 0 0 alone
shared-over-anon-remap 0 0 alone
anon-over-shared-remap 0 0 alone
shmat 0 0
CASES
python3 - "$TEST_TMP/list" <<'PY' || fail "wrong answers above"
import json, sys
bad = 0
for line in open(sys.argv[1]):
    t, name, mem, shm = line.split()
    lk = json.load(open(t + ".leaks"))
    rp = json.load(open(t + ".report"))["memory"]
    tot = lk["totals"]
    got = (tot["mem"]["bytes"], tot["shm-map"].get("bytes", 0), tot["mem"]["released_unseen"],
           rp["frees_unseen"], rp["live_bytes"], lk["complete"])
    want = (int(mem), int(shm), 0, 0, int(mem), True)
    if got != want:
        print("FAIL: %s: leaked memory, attachments, unseen frees (leaks, report), report's"
              " live bytes, complete: %s, want %s" % (name, got, want))
        bad += 1
sys.exit(bad > 0)
PY
t_done
