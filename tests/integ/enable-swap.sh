#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip enable opens for writing only the ring file it checked,
# never what a name swapped meanwhile reaches.  The traced process owns the
# directory of its ring file, and root runs rip enable on any user's
# process: between the open that checks the file and the one for writing,
# the process swaps the directory for a link to one with a FIFO of the same
# name (a device, on a real attack, say /dev/watchdog, which an open
# arms).  enable_swap does the swap at rip's first open and says whether
# the FIFO was opened; its many mappings make rip's look at /proc/PID/maps
# (the window) long.  rip enable may fail (the file changed) but must not
# open the FIFO.  A few tries: the swap must have happened in one at least.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/enable_swap
need_bin "$prog" "$RIP"

swapped=0
for try in 1 2 3; do
	d=$TEST_TMP/t$try
	mkdir -p "$d/real" || die "mkdir $d/real"
	RIP_RING=$d/real/x.ring "$prog" "$d" 30 >"$d/out" 2>&1 &
	p=$!
	T_PIDS="$T_PIDS $p"
	wait_until 30 grep -q ready "$d/out" || die "enable_swap never got ready: $(cat "$d/out")"
	"$RIP" enable "$d/real/x.ring" coro >"$d/rip.out" 2>&1
	sleep 0.3
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	grep -q '^swapped' "$d/out" && swapped=$((swapped + 1))
	if grep -q '^fifo opened' "$d/out"; then
		fail "try $try: rip enable opened the FIFO swapped in for its ring file: $(cat "$d/rip.out")"
		break
	fi
done
[ "$swapped" -gt 0 ] || die "the name was never swapped under rip enable: $(cat "$TEST_TMP"/t*/out)"
t_done
