# SPDX-License-Identifier: Apache-2.0
#
# bench/lib.sh - what the benchmark scripts share (sourced from the top of the
# tree): the clock and the median.

# nanoseconds of the wall clock
now_ns() { date +%s%N; }

# median of the numbers on stdin ("-" when there are none)
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (!NR) print "-"
		else if (NR % 2) print v[(NR + 1) / 2]
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
