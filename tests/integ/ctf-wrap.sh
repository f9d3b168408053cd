#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a flight recorder that wrapped.  With 8 KiB rings of 1 KiB
# packets, 2 threads emit far more than the rings hold; the snapshot keeps
# the newest packets.  babeltrace2 must print its own "discarded N events"
# warning (nothing else), the N must add up to what rip snapshot reports
# lost, written + lost must be what was emitted, and each thread's oldest
# event kept must be the one right after the last one lost.  Also in
# discard mode, where nobody consumes and the ring overwrites all the same.
. tests/data/common.sh
. tests/data/ctf-lib.sh
ctf_need

RIP_EVENT_RING_SIZE=8192 RIP_EVENT_PACKET_SIZE=1024 evprog_run wrap 20000 --threads 2 --types 3
snap_check wrap "$EV_PID" --emitted "$EV_EMITTED" --threads 2 --want-lost
grep -q 'WARNING: Tracer discarded [0-9]* events' "$TEST_TMP/wrap.err" ||
	fail "babeltrace2 did not warn about the discarded events"

# bigger packets, more threads, strings in every other event
RIP_EVENT_RING_SIZE=65536 RIP_EVENT_PACKET_SIZE=4096 evprog_run wrap4 30000 --threads 4
snap_check wrap4 "$EV_PID" --emitted "$EV_EMITTED" --threads 4 --want-lost

RIP_MODE=discard RIP_EVENT_RING_SIZE=8192 RIP_EVENT_PACKET_SIZE=2048 \
	evprog_run disc 5000 --threads 2
snap_check disc "$EV_PID" --emitted "$EV_EMITTED" --threads 2 --want-lost
t_done
