#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/fuzz/run.sh [-t SECONDS] DIR [NAME...] - run the libFuzzer harnesses
# ($BUILD/fuzz/fuzz-NAME; all of them without NAMEs) one after the other,
# SECONDS each (default FUZZ_TIME, else 300), on corpora kept in DIR/NAME.
# The first run makes the seeds (tests/fuzz/seeds.sh, into DIR/seeds); every
# run also replays tests/fuzz/regress/NAME/, inputs that once found a bug.
# A crash, a hang (an input that takes over 60 s), a leak or any sanitizer
# report fails the run, whatever libFuzzer's exit status: its output is
# searched for the reports too.  The input that failed is kept as
# DIR/artifacts/NAME-crash-... and the end of the report printed.  One line
# per harness: executions, time, coverage, corpus.  Exit 0, or 1 on a finding.
# make fuzz runs it on $(BUILD)/fuzz/corpus; tests/integ/fuzz.sh briefly.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
export BUILD
secs=${FUZZ_TIME:-300}
if [ "${1:-}" = -t ]; then
	secs=${2:-}
	shift 2
fi
case $secs in '' | *[!0-9]* | 0)
	echo "tests/fuzz/run.sh: -t wants a number of seconds, not '$secs'" >&2
	exit 2
	;;
esac
[ $# -ge 1 ] || {
	echo "usage: tests/fuzz/run.sh [-t SECONDS] DIR [NAME...]" >&2
	exit 2
}
dir=$1
shift
names=$*
[ -n "$names" ] || names="ring trace index legacy live unpack reply pack chunk"
for n in $names; do
	[ -x "$BUILD/fuzz/fuzz-$n" ] || {
		echo "tests/fuzz/run.sh: $BUILD/fuzz/fuzz-$n is missing: run make tests" >&2
		exit 1
	}
done
mkdir -p "$dir/artifacts" || exit 1
if [ ! -e "$dir/seeds/.done" ]; then
	rm -rf "$dir/seeds"
	sh tests/fuzz/seeds.sh "$dir/seeds" || exit 1
	: >"$dir/seeds/.done"
fi

# Stop at the first report, as an abort libFuzzer sees (and keeps the input of).
ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS UBSAN_OPTIONS
bad=0
for n in $names; do
	corpus=$dir/$n
	mkdir -p "$corpus"
	# the seeds that are not there yet (a long-kept corpus keeps what it found)
	for f in "$dir/seeds/$n"/*; do
		[ -f "$f" ] && [ ! -e "$corpus/seed-${f##*/}" ] && cp "$f" "$corpus/seed-${f##*/}"
	done
	regress=""
	[ -d "tests/fuzz/regress/$n" ] && regress="tests/fuzz/regress/$n"
	log=$dir/$n.log
	# A unit slower than -timeout is a finding (a hang); one merely slow is not: the
	# ring harness reads 64 MiB seeds under ASan in 3 s alone, and one took over 10 s
	# (libFuzzer's default -report_slow_units) with another test beside it on 2 CPUs;
	# a seed of the chunk harness that takes 0 s alone went past 20 s once, niced
	# under two other jobs' builds (a wall-clock bound): 60 s still tells a hang.
	# shellcheck disable=SC2086
	nice "$BUILD/fuzz/fuzz-$n" -max_total_time="$secs" -timeout=60 -report_slow_units=20 \
		-rss_limit_mb=2048 -max_len=2097152 -print_final_stats=1 \
		-artifact_prefix="$dir/artifacts/$n-" "$corpus" $regress >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	files=$(find "$corpus" -type f | wc -l)
	if [ "$rc" != 0 ] || grep -Eq 'runtime error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|SUMMARY: |deadly signal|Test unit written' "$log"; then
		bad=$((bad + 1))
		echo "fuzz-$n: FAILED (exit $rc) after ${runs:-?} runs; log: $log"
		grep -E 'runtime error|ERROR:|SUMMARY:|Test unit written|^    #[0-9] ' "$log" | head -n 25 | sed 's/^/    /'
	else
		echo "fuzz-$n: ${runs:-0} runs in ${took:-?} s, ${cov:-cov: ?}, corpus $files files${regress:+ (+ $regress)}: ok"
	fi
done
[ "$bad" = 0 ]
