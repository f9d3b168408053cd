#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: extended event headers after a gap.  evprog sleeps 150 ms
# (over 2^27 ticks on either clock) every 700 events, so the event after
# the gap carries a full 64-bit time; babeltrace2 must put it (and the
# compact events after it) at the time the program read just before
# emitting, on the TSC and on CLOCK_MONOTONIC_RAW, with packets switched in
# between (small packets) and ids >= 31 mixed in.
. tests/data/common.sh
. tests/data/ctf-lib.sh
ctf_need

RIP_EVENT_PACKET_SIZE=4096 evprog_run gap 2000 --threads 2 --types 40 --sleep-every 700
snap_check gap "$EV_PID" --emitted "$EV_EMITTED" --threads 2 --want-gap --want-ext-ids
RIP_CLOCK=mono RIP_EVENT_PACKET_SIZE=4096 \
	evprog_run gapmono 2000 --threads 2 --types 40 --sleep-every 700
snap_check gapmono "$EV_PID" --emitted "$EV_EMITTED" --threads 2 --want-gap --want-ext-ids
t_done
