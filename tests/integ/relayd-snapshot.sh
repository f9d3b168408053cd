#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: `rip snapshot --relayd` sends a flight recorder's contents
# to lttng-relayd: babeltrace2 and `rip dump` give the same on relayd's
# copy as on the local snapshot, for a ring that kept everything and for
# one that overwrote (the discarded events travel too); with -o - only
# relayd gets it.  A copy whose metadata-carried index is damaged (cut,
# wrong size, bad base64, gone) is refused with exit 1 and a reason.
# Timeout: 60
. tests/data/common.sh
. tests/data/relayd-lib.sh
relayd_need
prog=$PWD/$BUILD/tests/integ/relaydprog
need_bin "$prog"
relayd_start rd

check() { # NAME: compare the local snapshot NAME with relayd's copy of session NAME
	copy=$(relayd_copy hostf "$1")
	[ -n "$copy" ] || { fail "$1: no copy on relayd"; return; }
	babeltrace2 "$TEST_TMP/$1" >"$TEST_TMP/$1.a" 2>/dev/null
	babeltrace2 "$copy" >"$TEST_TMP/$1.b" 2>/dev/null || fail "$1: babeltrace2 on relayd's copy failed"
	[ -s "$TEST_TMP/$1.a" ] || fail "$1: empty snapshot"
	cmp -s "$TEST_TMP/$1.a" "$TEST_TMP/$1.b" || fail "$1: babeltrace2 differs on relayd's copy"
	"$RIP" dump "$TEST_TMP/$1" >"$TEST_TMP/$1.da" 2>&1
	"$RIP" dump "$copy" >"$TEST_TMP/$1.db" 2>&1 || fail "$1: rip dump on relayd's copy failed"
	cmp -s "$TEST_TMP/$1.da" "$TEST_TMP/$1.db" || fail "$1: rip dump differs on relayd's copy"
}

env RIP_RING=1 "$prog" --events 2000 --gap-us 0 >/dev/null
ring=$(ls -t "$RIP_DIR"/rip-*.ring | head -n 1)
"$RIP" snapshot --relayd="$RD_URL" --session=whole --hostname=hostf -o "$TEST_TMP/whole" "$ring" \
	>"$TEST_TMP/out" 2>"$TEST_TMP/err" || { cat "$TEST_TMP/err" >&2; fail "rip snapshot --relayd failed"; }
grep -q 'hostf/whole-' "$TEST_TMP/out" || fail "the summary does not say where relayd filed it"
check whole

env RIP_RING=1 RIP_MODE=overwrite RIP_EVENT_RING_SIZE=32768 "$prog" --events 20000 --gap-us 0 >/dev/null
ring=$(ls -t "$RIP_DIR"/rip-*.ring | head -n 1)
"$RIP" snapshot --relayd="$RD_URL" --session=wrapped --hostname=hostf -o "$TEST_TMP/wrapped" "$ring" \
	>"$TEST_TMP/out" 2>"$TEST_TMP/err" || { cat "$TEST_TMP/err" >&2; fail "rip snapshot --relayd (wrapped) failed"; }
grep -q ' 0 events lost' "$TEST_TMP/out" && fail "the wrapped ring lost nothing: nothing proven"
check wrapped

"$RIP" snapshot --relayd="$RD_URL" --session=only --hostname=hostf -o - "$ring" >"$TEST_TMP/out" 2>&1 ||
	fail "rip snapshot --relayd -o - failed: $(cat "$TEST_TMP/out")"
copy=$(relayd_copy hostf only)
[ -n "$copy" ] && "$RIP" dump "$copy" >"$TEST_TMP/only.d" 2>&1 || fail "-o -: no readable copy on relayd"
cmp -s "$TEST_TMP/only.d" "$TEST_TMP/wrapped.da" || fail "-o -: relayd's copy differs from the same snapshot's"
ls -d rip-*-snapshot >/dev/null 2>&1 && fail "-o - left a local trace"
# Damaged index in the metadata: refused, never misread.
whole=$(relayd_copy hostf whole)
bad() { # WHAT SED-SCRIPT WANT
	rm -rf "$TEST_TMP/bad"
	cp -r "$whole" "$TEST_TMP/bad"
	sed -i "$2" "$TEST_TMP/bad/metadata"
	expect_status 1 "$1" "$RIP" dump "$TEST_TMP/bad"
	grep -q "$3" "$TEST_TMP/err" || fail "$1: the message does not say '$3': $(head -n 1 "$TEST_TMP/err")"
}
bad "chunk cut" 's/^\(\trip_index_0 = "[A-Za-z0-9+\/]\{40\}\).*/\1";/' 'corrupt rip index'
bad "size changed" 's/^\trip_index_bytes = \([0-9]*\);/\trip_index_bytes = 1\1;/' 'rip_index'
bad "bad base64" 's/^\(\trip_index_0 = "\)..../\1!!!!/' 'corrupt rip index'
bad "no index" '/rip_index/d' 'not a rip trace'
relayd_stop
t_done
