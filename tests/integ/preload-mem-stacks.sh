#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Timeout: 180
#
# Description: tens of thousands of distinct stacks each get an id, once.
# The preload library interns stacks in a small table first and a big one
# once the small one is full (preload/backtrace.c): a program that
# allocates from 2^15 distinct stacks (one thread), then from 2^14 stacks
# on four threads at once, then forks a child that allocates through them
# again, is traced under rip run --mem --follow-fork: no allocation lacks a
# stack, every stack id is defined once, no two ids have the same frames
# on one thread, every id used is defined in the same trace (the child's
# ids are its own), and rip report names the program's leaf function.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3
CC=${CC:-cc}

cat >"$TEST_TMP/stacks.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* 2^depth distinct stacks: each level calls the next through one of two call sites */
__attribute__((noinline)) static void lvl(unsigned bits, int d);

__attribute__((noinline)) void stk_leaf(void)
{
	void *volatile p = malloc(24);

	free(p);
}

__attribute__((noinline)) static void one(unsigned bits, int d)
{
	lvl(bits, d);
	__asm__ volatile("");
}

__attribute__((noinline)) static void two(unsigned bits, int d)
{
	lvl(bits, d);
	__asm__ volatile("");
}

__attribute__((noinline)) static void lvl(unsigned bits, int d)
{
	if (!d)
		stk_leaf();
	else if (bits & 1)
		one(bits >> 1, d - 1);
	else
		two(bits >> 1, d - 1);
	__asm__ volatile("");
}

static void all(int depth)
{
	for (unsigned i = 0; i < (1u << depth); i++)
		lvl(i, depth);
}

static void *thr(void *a)
{
	all(14);
	return a;
}

int main(void)
{
	pthread_t t[4];
	pid_t pid;
	int st;

	all(15);
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, thr, NULL))
			return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		all(12);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	puts("done");
	return 0;
}
C
"$CC" -O1 -g -fno-omit-frame-pointer -pthread -o "$TEST_TMP/stacks" "$TEST_TMP/stacks.c" ||
	die "cc failed"

tr=$TEST_TMP/tr
"$RIP" run -q --mem --depth=32 --follow-fork -o "$tr" -- "$TEST_TMP/stacks" >"$TEST_TMP/out" \
	2>"$TEST_TMP/err" || die "rip run failed: $(tail -n 3 "$TEST_TMP/err")"
[ "$(cat "$TEST_TMP/out")" = "done" ] || fail "the program's output: $(cat "$TEST_TMP/out")"
child=$(ls "$tr" | grep -E '^[0-9]+$' | head -n 1)
[ -n "$child" ] || die "no child trace in $tr: $(ls "$tr")"

# check TRACE MIN_LEAF_ALLOCS: the leaf's allocations and the stacks they name
check() {
	"$RIP" dump "$1" >"$TEST_TMP/dump" 2>"$TEST_TMP/dump.err" ||
		{ fail "rip dump $1: $(tail -n 2 "$TEST_TMP/dump.err")"; return; }
	python3 - "$TEST_TMP/dump" "$2" <<'EOF' || fail "$1: the stacks are not right (above)"
import re, sys
defs, frames_of, bad = {}, {}, 0
allocs = nobt = 0
for line in open(sys.argv[1]):
    m = re.search(r' (\S+)/\d+ rip:bt id=(\d+) frames=\[([^\]]*)\]', line)
    if m:
        i = int(m.group(2))
        if i in defs:
            print("stack id %d defined twice" % i, file=sys.stderr); bad = 1
        defs[i] = m.group(3)
        continue
    m = re.search(r'mem:alloc .* bt=(\d+)', line)
    if m:
        allocs += 1
        b = int(m.group(1))
        if b == 0:
            nobt += 1
        elif b not in frames_of:
            frames_of[b] = 0
if nobt:
    print("%d allocations without a stack" % nobt, file=sys.stderr); bad = 1
undef = [b for b in frames_of if b not in defs]
if undef:
    print("%d stack ids used but not defined here, e.g. %s" % (len(undef), undef[:3]), file=sys.stderr); bad = 1
seen = {}
dup = 0
for i, f in defs.items():
    dup += f in seen
    seen[f] = i
# the threads' stacks differ from main's at their bottom frames; the same
# stack twice on one thread would show here (two threads racing for the last
# room of the small table may, once each: allow the four threads that much)
if dup > 4:
    print("%d stacks defined under two ids" % dup, file=sys.stderr); bad = 1
if allocs < int(sys.argv[2]):
    print("only %d allocations (want %s)" % (allocs, sys.argv[2]), file=sys.stderr); bad = 1
if len(defs) < int(sys.argv[2]) // 2:
    print("only %d stacks defined" % len(defs), file=sys.stderr); bad = 1
sys.exit(bad)
EOF
}

# main: 2^15 + 4 x 2^14 leaf allocations, at least 2^15 + 2^14 distinct stacks
check "$tr" 98304
# the child: 2^12 stacks, under ids it defined itself
check "$tr/$child" 4096

# the stacks are libunwind's, cache grown or not: the same program again with
# RIP_UNWIND=libunwind, address space randomisation off in both runs, gives
# each thread the same stacks in the same order (the four threads share
# stacks their own keys have not cached yet, so the cache grows meanwhile)
# (elsewhere the default unwinder is libunwind itself: nothing to compare)
if [ "$(uname -m)" = x86_64 ] && ! setarch "$(uname -m)" -R true 2>/dev/null; then
	skip_part "setarch -R is not permitted here: the stacks are not compared with libunwind's"
elif [ "$(uname -m)" = x86_64 ]; then
	for mode in default libunwind; do
		unw=
		[ $mode = libunwind ] && unw=libunwind
		RIP_UNWIND=$unw setarch "$(uname -m)" -R "$RIP" run -q --mem --depth=32 \
			-o "$TEST_TMP/$mode" -- "$TEST_TMP/stacks" >/dev/null 2>"$TEST_TMP/err.$mode" ||
			die "rip run ($mode) failed: $(tail -n 2 "$TEST_TMP/err.$mode")"
		"$RIP" dump "$TEST_TMP/$mode" >"$TEST_TMP/dump.$mode" || die "rip dump ($mode)"
	done
	python3 - "$TEST_TMP/dump.default" "$TEST_TMP/dump.libunwind" <<'PY' ||
import re, sys
def seqs(path):
    defs, per, first = {}, {}, []
    # (a thread may use an id another defined a moment before its definition's event)
    for line in open(path):
        m = re.search(r' \S+/(\d+) rip:bt id=(\d+) frames=\[([^\]]*)\]', line)
        if m:
            defs[int(m.group(2))] = m.group(3)
    for line in open(path):
        m = re.search(r' \S+/(\d+) mem:alloc .* size=(\d+) bt=(\d+)', line)
        if m:
            t = int(m.group(1))
            if t not in per:
                per[t] = []
                first.append(t)
            per[t].append((m.group(2), defs.get(int(m.group(3)))))
    # threads by their length and first stack: the four workers may start in any order
    return sorted(per.values(), key=lambda s: (len(s), s[-1][1] or ""))
a, b = seqs(sys.argv[1]), seqs(sys.argv[2])
if len(a) != len(b):
    print("threads: %d against %d" % (len(a), len(b)), file=sys.stderr); sys.exit(1)
bad = 0
for x, y in zip(a, b):
    if len(x) != len(y):
        print("a thread has %d allocations against %d" % (len(x), len(y)), file=sys.stderr)
        bad = 1
        continue
    diff = [i for i in range(len(x)) if x[i] != y[i]]
    if diff:
        i = diff[0]
        print("%d allocations differ, first: %s against %s" % (len(diff), x[i], y[i]),
              file=sys.stderr)
        bad = 1
sys.exit(bad)
PY
		fail "the stacks differ from libunwind's"
fi

# the frames are the program's: rip report names its leaf
"$RIP" report "$tr" >"$TEST_TMP/report" 2>"$TEST_TMP/report.err" ||
	fail "rip report: $(tail -n 2 "$TEST_TMP/report.err")"
grep -q 'stk_leaf' "$TEST_TMP/report" || fail "rip report does not name stk_leaf"
t_done
