#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a packed trace read on one thread (RIP_READ_THREADS=0, or a
# machine of one CPU) gives what a read with the decoding worker gives, and
# asks whether to start the worker once, not at every packet: the question
# (sysconf's count of CPUs) opens /sys/devices/system/cpu/online, and was
# asked at each packet read (5,300 opens in a read of 3.6M events).  A
# trace of several blocks (rip run --mem of a program that allocates
# 300,000 times) is read by rip leaks and rip dump both ways under strace.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/bench/malloc"
need_cmd strace
mal=$PWD/$BUILD/bench/malloc
cd "$TEST_TMP" || die "no TEST_TMP"

"$RIP" run --mem -q -o tr -- "$mal" 1 300000 >/dev/null 2>run.err || die "rip run: $(cat run.err)"
blocks=$(cat tr/chunk-*.rpk | grep -a -o RIPB | wc -l)
[ "$blocks" -ge 2 ] || die "the trace has $blocks blocks, want 2 or more"
for cmd in leaks dump; do
	"$RIP" $cmd tr >two.txt 2>two.err || die "rip $cmd: $(cat two.err)"
	RIP_READ_THREADS=0 strace -f -o st.txt -e trace=openat "$RIP" $cmd tr >one.txt 2>one.err ||
		die "rip $cmd on one thread: $(cat one.err)"
	cmp -s one.txt two.txt || fail "rip $cmd: one thread and two differ"
	opens=$(grep -c 'cpu/online' st.txt)
	[ "$opens" -le 2 ] ||
		fail "rip $cmd on one thread: /sys/devices/system/cpu/online opened $opens times"
done
t_done
