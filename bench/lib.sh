# SPDX-License-Identifier: Apache-2.0
#
# bench/lib.sh - what the benchmark scripts share (sourced from the top of the
# tree): the clock, the median and the scratch directory.

# nanoseconds of the wall clock
now_ns() { date +%s%N; }

# disk_bytes PATH...: the bytes the files under PATH take on disk: each file's size, or what
# it has allocated when that is less (a sparse file, like a trace's copy of the ring file,
# .rip-ring, counts for the pages it holds, not its length).  du -sb counts sparse files
# at their length; du -sk rounds every file up to whole blocks.
disk_bytes() {
	find "$@" -type f -printf '%s %b\n' 2>/dev/null |
		awk '{ a = $2 * 512; s += $1 < a ? $1 : a } END { printf "%d\n", s }'
}

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

# An awk function med(S): the median of the numbers in the blank-separated string S, "-"
# for none.  Put in front of an awk program: awk -v ... "$AWK_MED"'PROGRAM'
# shellcheck disable=SC2034 # used by the scripts that source this file
AWK_MED='function med(s,   v, k, i, j, x) {
	k = split(s, v, " ")
	for (i = 2; i <= k; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
			x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
		}
	if (!k)
		return "-"
	return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
}
'
