#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/waits.sh - the cost of the wait wrappers on calls that do
# not wait: build/bench/waits under librip-preload.so as plain `rip run`
# loads it (resource hooks forwarding), an uncontended mutex lock + unlock and
# a 1-byte read of /dev/zero, each through the wrapper and through libc's
# own function in the same run (ratios per repetition, median).
#
#   sh bench/waits.sh DIR          (from the top of a built tree; DIR: scratch)
#   WAITS_N=2000000 WAITS_REPS=9   (defaults)
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
N=${WAITS_N:-2000000}
REPS=${WAITS_REPS:-9}
dir=${1:?usage: waits.sh DIR}
prog=$BUILD/bench/waits
pre=$PWD/$BUILD/librip-preload.so
[ -x "$prog" ] && [ -f "$pre" ] || { echo; echo "waits: $prog or $pre not built, skipped"; exit 0; }
out=$dir/waits.txt
run() {
	env RIP_RING="$dir/waits-$$.ring" RIP_RESOURCES=0 LD_PRELOAD="$pre" "$@"
	rc=$?
	rm -f "$dir"/waits-$$.ring*
	return $rc
}
run "$prog" "$N" "$REPS" >"$out" || { echo "waits: $prog failed"; exit 1; }
fig() { awk -v k="$1" '$1 == k { print $2 }' "$out"; }
echo
echo "wait wrappers (librip-preload.so as plain rip run loads it; ns per call, median of $REPS):"
printf '  %-34s %10s %10s %8s\n' "call" "libc" "wrapped" "ratio"
printf '  %-34s %10s %10s %8s\n' "mutex lock + unlock, uncontended" "$(fig waits.mutex_plain)" \
	"$(fig waits.mutex_wrapped)" "$(fig waits.mutex_ratio)"
printf '  %-34s %10s %10s %8s\n' "read of 1 byte, /dev/zero" "$(fig waits.read_plain)" \
	"$(fig waits.read_wrapped)" "$(fig waits.read_ratio)"
[ "$(fig waits.wrapped)" = yes ] || echo "  (the preload library did not load: both columns are libc's)"
