#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the CPU sampler never breaks the snap ring's one-writer rule.
# Threads take snaps as fast as they can (rip_snap(), two sites in turn)
# while sampled at 1,000 Hz of CPU time: each thread's snap sequence moves
# by exactly its number of snaps, and its ring holds only its sites.  The
# sampler used to write its samples into the snap ring and its sequence: a
# signal between rip_snap()'s load and store of the sequence moved it back.
# The samples are stored all the same (in the slots' sample rings).
. tests/data/common.sh
prog=$BUILD/tests/integ/snaprace
need_bin "$prog" "$RIP"
need_cmd python3
ring=$TEST_TMP/race.ring

env RIP_RING="$ring" RIP_SAMPLE=1000 RIP_DISABLE=1,2,3 LD_PRELOAD="$PWD/$BUILD/librip-preload.so" \
	"$prog" 2 20000000 >"$TEST_TMP/out" 2>&1 || fail "snaps went wrong: $(cat "$TEST_TMP/out")"
[ "$(grep -c ': ok$' "$TEST_TMP/out")" = 2 ] || fail "not every thread checked: $(cat "$TEST_TMP/out")"
samples_stored "$ring" "the snapping threads"
t_done
