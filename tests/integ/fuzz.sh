#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a short run of every libFuzzer harness of tests/fuzz/ (ring
# file, trace directory, .rip-index, legacy raw file, a ring file that changes
# while it is read, a compressed ring file, the answers of relayd and of a
# Pyroscope server, a packed block of a trace, a chunk file of a packed trace read
# alone), FUZZ_CHECK_TIME seconds each (default 8), on seeds made
# from real runs, replaying tests/fuzz/regress/ too.  Any crash, hang, leak or
# sanitizer report fails it, whatever the harness's exit status
# (tests/fuzz/run.sh reads the output).  make fuzz runs them for longer.
# It takes about 110 s on an idle machine (9 harnesses of 8 s, the seeds,
# inputs of seconds each under the sanitizers), and went past 240 s on one
# loaded by other jobs (with 12 s each): the bound leaves room for that.
# Timeout: 420
. tests/data/common.sh
for n in ring trace index legacy live unpack reply pack chunk; do
	need_bin "$BUILD/fuzz/fuzz-$n"
done
command -v python3 >/dev/null || die "python3 is needed to make the seeds"
sh tests/fuzz/run.sh -t "${FUZZ_CHECK_TIME:-8}" "$TEST_TMP/fuzz" || fail "a harness found a problem"
t_done
