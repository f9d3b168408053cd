# SPDX-License-Identifier: Apache-2.0
#
# bench/lib.sh - what the benchmark scripts share (sourced from the top of the
# tree): the clock, the median and the scratch directory.

# nanoseconds of the wall clock
now_ns() { date +%s%N; }

# median of the numbers on stdin ("-" when there are none)
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (!NR) print "-"
		else if (NR % 2) print v[(NR + 1) / 2]
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench_work DIR: make DIR afresh as the scratch directory of the script ($work),
# removed at exit and on a signal; librip's ring files go there (RIP_DIR).
bench_work() {
	work=$1
	rm -rf "$work"
	mkdir -p "$work" || exit 1
	trap 'rm -rf "$work"' EXIT
	trap 'exit 130' INT TERM HUP
	RIP_DIR=$work
	export RIP_DIR
}
