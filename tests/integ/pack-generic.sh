#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the decoder of packed blocks reads the same on the paths of
# a baseline x86-64 (RIP_PACK_GENERIC=1: the checksum by zlib, the loop
# built without AVX2) and of one with AVX2 but no fast pext
# (RIP_PACK_GENERIC=avx2) as on those it picks where the CPU allows: the
# round trips of tests/unit/pack and the checksums of tests/unit/pkcrc
# each way, and rip leaks and rip dump of a trace of several blocks give
# the same bytes.  On a CPU without those, every way is the generic paths.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/bench/malloc" "$BUILD/tests/unit/pack" "$BUILD/tests/unit/pkcrc"
mal=$PWD/$BUILD/bench/malloc
unit=$PWD/$BUILD/tests/unit
cd "$TEST_TMP" || die "no TEST_TMP"

for g in 1 avx2; do
	for t in pack pkcrc; do
		RIP_PACK_GENERIC=$g "$unit/$t" >"$t.out" 2>&1 ||
			fail "unit/$t, RIP_PACK_GENERIC=$g: $(tail -5 "$t.out")"
	done
done
"$RIP" run --mem -q -o tr -- "$mal" 1 200000 >/dev/null 2>run.err || die "rip run: $(cat run.err)"
blocks=$(cat tr/chunk-*.rpk | grep -a -o RIPB | wc -l)
[ "$blocks" -ge 2 ] || die "the trace has $blocks blocks, want 2 or more"
for cmd in leaks dump; do
	"$RIP" $cmd tr >fast.txt 2>fast.err || die "rip $cmd: $(cat fast.err)"
	[ -s fast.txt ] || fail "rip $cmd: no output"
	for g in 1 avx2; do
		RIP_PACK_GENERIC=$g "$RIP" $cmd tr >gen.txt 2>gen.err ||
			die "rip $cmd, RIP_PACK_GENERIC=$g: $(cat gen.err)"
		cmp -s fast.txt gen.txt ||
			fail "rip $cmd: RIP_PACK_GENERIC=$g and the fast paths differ"
	done
done
t_done
