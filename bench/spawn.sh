#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/spawn.sh - programs that start many short programs: a
# bash loop running /bin/true 100 times, and make -j2 of a small generated
# C project (SPAWN_FILES files), each plain, under `rip run --mem` (the
# children untraced), under `rip run --mem --follow-fork --follow-exec`
# (every child traced) and under heaptrack, back to back in each of
# SPAWN_REPS repetitions.  Prints the median wall times and each one's
# ratio to plain (goal: rip within 1.5x of plain when the children are not
# followed, and below heaptrack everywhere).
#
#   sh bench/spawn.sh DIR          (from the top of a built tree; DIR: scratch)
#   SPAWN_REPS=5 SPAWN_FILES=24    (defaults)
#
# Exit status 1 when a program failed, 0 otherwise (missing heaptrack included).
set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
BUILD=${BUILD:-build}
RIP=$top/$BUILD/rip
REPS=${SPAWN_REPS:-5}
FILES=${SPAWN_FILES:-24}
dir=${1:?usage: spawn.sh DIR}
. bench/lib.sh # now_ns, median, bench_work
bench_work "$dir/spawn"
mkdir -p "$work/proj" || exit 1
failed=0
have_ht=1
command -v heaptrack >/dev/null 2>&1 || have_ht=0


# the project: FILES small translation units and a main, built with make -j2
i=0
while [ $i -lt "$FILES" ]; do
	printf '#include <string.h>\nint f%d(const char *s) { return (int)strlen(s) * %d; }\n' \
		$i $i >"$work/proj/f$i.c"
	i=$((i + 1))
done
{
	i=0
	while [ $i -lt "$FILES" ]; do
		echo "int f$i(const char *s);"
		i=$((i + 1))
	done
	echo 'int main(void) { int s = 0;'
	i=0
	while [ $i -lt "$FILES" ]; do
		echo "s += f$i(\"x\");"
		i=$((i + 1))
	done
	echo 'return s == 0; }'
} >"$work/proj/main.c"
printf 'OBJ := $(patsubst %%.c,%%.o,$(wildcard *.c))\nprog: $(OBJ)\n\t$(CC) -o $@ $(OBJ)\n%%.o: %%.c\n\t$(CC) -O1 -c -o $@ $<\nclean:\n\trm -f prog *.o\n' \
	>"$work/proj/Makefile"

# run NAME CMD...: time CMD (quiet) into $work/t.NAME, "-" on failure
run() {
	name=$1
	shift
	rm -rf "$work/tr" "$work"/ht.*
	t0=$(now_ns)
	if "$@" >/dev/null 2>"$work/err"; then
		t1=$(now_ns)
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }' >>"$work/t.$name"
	else
		echo "  failed: $* ($(tail -n 1 "$work/err"))" >&2
		echo - >>"$work/t.$name"
		failed=1
	fi
}

echo ""
echo "spawn: programs that start short programs, plain / rip run --mem / --follow / heaptrack [12]"
[ $have_ht = 1 ] || echo "  heaptrack: not installed (sh mk/deps-bench.sh heaptrack), its column is -"
if [ ! -x "$RIP" ]; then
	echo "  skipped: $RIP is missing (make)"
	exit 1
fi
loop='for i in $(seq 100); do /bin/true; done'
for w in loop make; do
	for k in plain rip follow ht; do : >"$work/t.$w.$k"; done
done
for rep in $(seq "$REPS"); do
	echo "  repetition $rep of $REPS ..." >&2
	run loop.plain bash -c "$loop"
	run loop.rip "$RIP" run --mem -q -o "$work/tr" -- bash -c "$loop"
	run loop.follow "$RIP" run --mem -q --follow-fork --follow-exec -o "$work/tr" -- bash -c "$loop"
	[ $have_ht = 1 ] && run loop.ht heaptrack -o "$work/ht" bash -c "$loop"
	for k in plain rip follow ht; do
		make -s -C "$work/proj" clean >/dev/null
		case $k in
		plain) run make.plain make -s -j2 -C "$work/proj" ;;
		rip) run make.rip "$RIP" run --mem -q -o "$work/tr" -- make -s -j2 -C "$work/proj" ;;
		follow) run make.follow "$RIP" run --mem -q --follow-fork --follow-exec -o "$work/tr" -- \
			make -s -j2 -C "$work/proj" ;;
		ht) [ $have_ht = 1 ] && run make.ht heaptrack -o "$work/ht" make -s -j2 -C "$work/proj" ;;
		esac
	done
done
printf '  %-28s %9s %9s %9s %9s   %s\n' workload plain_s rip_s follow_s heaptr_s \
	"ratios to plain: rip, follow, heaptrack (goal: rip <= 1.5, all below heaptrack)"
for w in loop make; do
	p=$(grep -v - "$work/t.$w.plain" | median)
	r=$(grep -v - "$work/t.$w.rip" | median)
	f=$(grep -v - "$work/t.$w.follow" | median)
	h=$(grep -v - "$work/t.$w.ht" | median)
	case $w in
	loop) label="bash: 100 x /bin/true" ;;
	make) label="make -j2, $FILES files + gcc" ;;
	esac
	printf '  %-28s %9s %9s %9s %9s   %s %s %s\n' "$label" "$p" "$r" "$f" "$h" \
		"$(awk -v a="$r" -v b="$p" 'BEGIN { if (a != "-" && b > 0) printf "%.2fx", a / b; else print "-" }')" \
		"$(awk -v a="$f" -v b="$p" 'BEGIN { if (a != "-" && b > 0) printf "%.2fx", a / b; else print "-" }')" \
		"$(awk -v a="$h" -v b="$p" 'BEGIN { if (a != "-" && b > 0) printf "%.2fx", a / b; else print "-" }')"
done
exit $failed
