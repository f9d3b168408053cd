#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/sample.sh - the cost of CPU sampling: build/bench/sample,
# a CPU-bound program with 2 threads (SAMPLE_ITERS rounds each), under `rip
# run` (which preloads librip-preload.so for slots and wait records) and
# under `rip run --sample` (the same, plus 100 samples per second of each
# thread's CPU time), back to back in each of SAMPLE_REPS repetitions.  Prints the median CPU time the program used (its own
# getrusage: time slices given to other processes do not count) and wall
# time of each, the ratios to rip run, and the samples a sampled run stored
# (from its ring file, kept for that).
#
#   sh bench/sample.sh DIR          (from the top of a built tree; DIR: scratch)
#   SAMPLE_REPS=7 SAMPLE_ITERS=6000000   (defaults)
#
# Exit status 1 when a program failed, 0 otherwise.
set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
BUILD=${BUILD:-build}
RIP=$top/$BUILD/rip
PROG=$top/$BUILD/bench/sample
REPS=${SAMPLE_REPS:-7}
ITERS=${SAMPLE_ITERS:-6000000}
dir=${1:?usage: sample.sh DIR}
. bench/lib.sh # now_ns, median, bench_work
bench_work "$dir/sample"
failed=0

echo ""
echo "sample: rip run --sample (100 Hz) on a CPU-bound program with 2 threads [10]"
if [ ! -x "$RIP" ] || [ ! -x "$PROG" ]; then
	echo "  skipped: $RIP or $PROG is missing (make tests)"
	exit 1
fi

# run NAME CMD...: the program's CPU seconds into $work/c.NAME, wall seconds into $work/w.NAME
run() {
	name=$1
	shift
	rm -rf "$work/tr"
	t0=$(now_ns)
	if "$@" >"$work/out" 2>"$work/err"; then
		t1=$(now_ns)
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }' >>"$work/w.$name"
		awk '$1 == "cpu_ns" { printf "%.4f\n", $2 / 1e9 }' "$work/out" >>"$work/c.$name"
	else
		echo "  failed: $* ($(tail -n 1 "$work/err"))" >&2
		failed=1
	fi
}

for k in plain sample; do
	: >"$work/w.$k"
	: >"$work/c.$k"
done
: >"$work/samples"
for rep in $(seq "$REPS"); do
	echo "  repetition $rep of $REPS ..." >&2
	run plain "$RIP" run -q -o "$work/tr" -- "$PROG" 2 "$ITERS"
	run sample "$RIP" run -q --sample -o "$work/tr" -- "$PROG" 2 "$ITERS"
done
# One more sampled run with its ring file kept: how many samples were stored.
rm -f "$work/kept.ring"
if RIP_RING=$work/kept.ring RIP_DISABLE=1,2,3 RIP_SAMPLE=100 \
	LD_PRELOAD=$top/$BUILD/librip-preload.so "$PROG" 2 "$ITERS" >"$work/out" 2>&1 &&
	"$RIP" top --json "$work/kept.ring" >"$work/top.json" 2>/dev/null; then
	sed -n 's/.*"sampling":{[^}]*"samples":\([0-9]*\).*/\1/p' "$work/top.json" >"$work/samples"
	kcpu=$(awk '$1 == "cpu_ns" { printf "%.2f", $2 / 1e9 }' "$work/out")
fi
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a != "-" && b != "-" && b > 0) printf "%.3fx", a / b; else print "-" }'
}
cp=$(median <"$work/c.plain")
wp=$(median <"$work/w.plain")
printf '  %-34s %9s %9s   %s\n' "run (median of $REPS)" cpu_s wall_s "ratios to rip run: cpu, wall"
printf '  %-34s %9s %9s\n' "rip run" "$cp" "$wp"
c=$(median <"$work/c.sample")
w=$(median <"$work/w.sample")
printf '  %-34s %9s %9s   %s %s\n' "rip run --sample (100 Hz)" "$c" "$w" "$(ratio "$c" "$cp")" \
	"$(ratio "$w" "$wp")"
s=$(cat "$work/samples" 2>/dev/null)
[ -n "$s" ] && echo "  samples stored by one sampled run: $s in ${kcpu:-?} s of CPU" \
	"($(awk -v s="$s" -v c="${kcpu:-0}" 'BEGIN { if (c > 0) printf "%.0f", s / c; else print "-" }') per second of CPU; asked: 100)"
exit $failed
