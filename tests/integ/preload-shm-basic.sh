#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the shared-memory hooks of librip-preload.so record exactly
# the shm:* (and fd:*) events of shmprog's known sites, in order: shm_open
# (with its fd:open) + ftruncate + mmap MAP_SHARED + munmap of a part and
# then of the rest + shm_unlink; anonymous and file-backed shared mappings
# in whole pages, one partly replaced by MAP_FIXED; private mappings, which
# are not shared memory (their munmap is a mem:unmap, never also a
# shm:detach, nor a shm:detach a mem:unmap); shmget (new and existing key, kind
# shmget_existing) + shmat + shmdt +
# IPC_RMID, with the segment's size; memfd_create (fd:open and shm:create).
# Failed calls record nothing, every event has a defined backtrace, errno
# survives the hooks (shmprog checks) and the output is the same with and
# without the preload library.
. tests/data/common.sh
prog=$BUILD/tests/integ/shmprog
pre=$PWD/$BUILD/librip-preload.so
need_bin "$prog" "$RIP" "$pre"
need_cmd python3

mkdir -p "$TEST_TMP/plain" "$TEST_TMP/work" "$TEST_TMP/ring"
"$prog" "$TEST_TMP/plain" >"$TEST_TMP/plain.out" 2>"$TEST_TMP/plain.err" ||
	die "shmprog fails without the preload library: $(cat "$TEST_TMP/plain.err")"

LD_PRELOAD=$pre RIP_RING=$TEST_TMP/ring/ "$prog" "$TEST_TMP/work" \
	>"$TEST_TMP/traced.out" 2>"$TEST_TMP/traced.err" 9>"$TEST_TMP/want" 8>"$TEST_TMP/want-mem"
rc=$?
[ "$rc" = 0 ] || fail "shmprog traced: exit $rc: $(head -n 5 "$TEST_TMP/traced.err")"
cmp -s "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" ||
	fail "output differs with the preload library:" \
		"$(diff "$TEST_TMP/plain.out" "$TEST_TMP/traced.out")"
[ "$(wc -l <"$TEST_TMP/want")" -gt 20 ] || fail "shmprog wrote too few expected events"
[ "$(wc -l <"$TEST_TMP/want-mem")" = 2 ] || fail "shmprog did not write its 2 private munmaps"

set -- "$TEST_TMP"/ring/*.ring
[ $# = 1 ] && [ -f "$1" ] || die "want one ring file in $TEST_TMP/ring, got: $*"
expect_status 0 "rip dump" "$RIP" dump "$1"
cp "$TEST_TMP/out" "$TEST_TMP/dump"

grep -E '^[^ ]+ [^ ]+ (shm|fd):' "$TEST_TMP/dump" | sed -E 's/^[^ ]+ [^ ]+ //' >"$TEST_TMP/events"
sed -E 's/ bt=[0-9]+/ bt=*/' "$TEST_TMP/events" >"$TEST_TMP/got"
if ! cmp -s "$TEST_TMP/want" "$TEST_TMP/got"; then
	fail "shm events differ from shmprog's sites (want < > got)"
	diff "$TEST_TMP/want" "$TEST_TMP/got" | head -n 30 >&2
fi

if grep -q ' bt=0 ' "$TEST_TMP/events"; then
	fail "events without a backtrace: $(grep -c ' bt=0 ' "$TEST_TMP/events")"
fi
sed -nE 's/.* rip:bt id=([0-9]+) .*/\1/p' "$TEST_TMP/dump" | sort -u >"$TEST_TMP/bt-defined"
sed -nE 's/.* bt=([0-9]+) .*/\1/p' "$TEST_TMP/events" | sort -u >"$TEST_TMP/bt-used"
missing=$(comm -13 "$TEST_TMP/bt-defined" "$TEST_TMP/bt-used" | head -n 5 | tr '\n' ' ')
[ -z "$missing" ] || fail "backtrace ids used but never defined: $missing"

# the munmaps of the private mappings are mem:unmap events (mem tracing is on: no
# RIP_DISABLE), so that the check below has both kinds of munmap to tell apart
sed -nE 's/^[^ ]+ [^ ]+ (mem:unmap .* kind=munmap)$/\1/p' "$TEST_TMP/dump" |
	sed -E 's/ bt=[0-9]+/ bt=*/' >"$TEST_TMP/got-mem"
while read -r line; do
	grep -qxF "$line" "$TEST_TMP/got-mem" || fail "no event '$line' (a private munmap)"
done <"$TEST_TMP/want-mem"
# a munmap of just a shared mapping is not also a mem:unmap (same call: same backtrace, same
# range; a munmap over a shared mapping and something else, a hole or private pages, is both)
sed -nE 's/^shm:detach addr=([^ ]+) size=([0-9]+) bt=([0-9]+) kind=munmap$/\3 \1 \2/p' \
	"$TEST_TMP/events" | sort -u >"$TEST_TMP/bt-shm-unmap"
sed -nE 's/.* mem:unmap addr=([^ ]+) size=([0-9]+) bt=([0-9]+) kind=munmap$/\3 \1 \2/p' \
	"$TEST_TMP/dump" | sort -u >"$TEST_TMP/bt-mem-unmap"
both=$(comm -12 "$TEST_TMP/bt-shm-unmap" "$TEST_TMP/bt-mem-unmap" | tr '\n' ' ')
[ -z "$both" ] || fail "munmap recorded as both shm:detach and mem:unmap (bt addr size: $both)"

# mappings detached piece by piece (a hole, then the rest in two): rip report and rip
# leaks keep attachments as ranges, so every piece is seen and every mapping detached once
expect_status 0 "rip report --json" "$RIP" report --json "$1"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip report: shared mappings not followed piece by piece"
import json, sys
m = json.load(open(sys.argv[1]))["shm"]["mappings"]
assert m["detached_unseen"] == 0 and m["detached"] == m["attached"] and m["live"] == 0, m
PY
expect_status 0 "rip leaks --json" "$RIP" leaks --json "$1"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip leaks: shared mappings not followed piece by piece"
import json, sys
t = json.load(open(sys.argv[1]))["totals"]["shm-map"]
assert t["released_unseen"] == 0 and t["count"] == 0, t
PY
grep -Eq '^[0-9]+ events, [0-9]+ streams?, 0 discarded/overwritten, 0 packets lost$' \
	"$TEST_TMP/dump" || fail "events lost: $(tail -n 1 "$TEST_TMP/dump")"
t_done
