#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the preload library's own walk of the unwind tables gives
# exactly libunwind's stacks.  A program built -O2 -fomit-frame-pointer
# with varied frames (recursion of every depth past RIP_DEPTH, a 5000-byte
# frame, alloca (an rbp-based CFA), calls with stack arguments from 16
# sites of one function (a CFA program long enough to be kept in rows),
# callbacks through a shared library of ours and through libc's qsort, a
# signal handler, four threads alive at once that run the same code in
# turn, so that the same stacks are at the same depths in four stacks: the
# stack cache shares their entries, and must still tell top_a from top_b
# and one alloca's size from another; two paths to one call at one depth
# whose frames differ in size, so that the return addresses of one are
# not where the other's are) is
# recorded three times (the first two again with RIP_DEPTH=64), address
# space layout randomisation off:
# RIP_UNWIND=libunwind (every stack from libunwind), the default (the
# tables' walk, libunwind where it declines) and RIP_UNWIND=tables (the
# walk alone: no stack where it declines).  Event by event (per thread, in
# order: type, size, frames), the default must equal libunwind exactly; the
# walk alone must equal it wherever it gave a stack, and give one for
# every event: every frame here has unwind tables, and the walk steps
# through the signal handler's frame itself.
# x86-64 only (elsewhere the walk always declines).
. tests/data/common.sh
lib=$PWD/$BUILD/librip-preload.so
CC=${CC:-cc}
need_bin "$RIP"
[ -f "$lib" ] || die "$lib is missing: run make"
[ "$(uname -m)" = x86_64 ] || skip "the unwind-table walk is x86-64 only"
need_libunwind
need_cmd "$CC"
setarch "$(uname -m)" -R true 2>/dev/null ||
	skip "setarch -R (no address space randomisation) is not permitted here"

cat >"$TEST_TMP/step.c" <<'EOF'
/* a shared library without frame pointers that calls back */
#include <stdlib.h>
__attribute__((noinline)) long step_through(long (*cb)(long), long n)
{
	long r = 0;
	for (long i = 0; i < n; i++)
		r += cb(i) * 3;
	return r + 1;
}
EOF
cat >"$TEST_TMP/prog.c" <<'EOF'
#include <alloca.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long step_through(long (*cb)(long), long n);
static volatile long sink;

__attribute__((noinline)) static void *leaf(size_t n)
{
	char *p = malloc(n);

	if (p)
		p[0] = (char)n;
	sink += (long)n;
	return p;
}

/* alloca: the frame's size is known at run time only; its CFA is rbp-based */
__attribute__((noinline)) static void *dyn(size_t n)
{
	char *a = alloca(n + 16);
	void *p;

	memset(a, (int)n, n + 16);
	p = leaf(n + (size_t)(a[n / 2] & 1));
	sink += a[n + 3];
	return p;
}

__attribute__((noinline)) static void *big(size_t n)
{
	volatile char buf[5000];

	buf[n % sizeof(buf)] = 1;
	buf[0] = 0;
	return (char *)dyn(n) + buf[0];
}

__attribute__((noinline)) static void *rec(int d, size_t n)
{
	void *p;

	if (d <= 0)
		return (d & 1) ? leaf(n) : big(n);
	p = rec(d - 1, n + 1);
	sink += d;
	return p;
}

/*
 * Five frames alike, and above them one of two callers with frames of one
 * size: the same first frames from the same stack pointer, two stacks (a
 * cache of stacks must read past the frames it is keyed by).
 */
__attribute__((noinline)) static void *c1(size_t n)
{
	void *p = malloc(n);

	sink += 1;
	return p;
}
__attribute__((noinline)) static void *c2(size_t n) { void *p = c1(n); sink += 2; return p; }
__attribute__((noinline)) static void *c3(size_t n) { void *p = c2(n); sink += 3; return p; }
__attribute__((noinline)) static void *c4(size_t n) { void *p = c3(n); sink += 4; return p; }
__attribute__((noinline)) static void *c5(size_t n) { void *p = c4(n); sink += 5; return p; }
__attribute__((noinline)) static void *top_a(size_t n) { void *p = c5(n); sink += 6; return p; }
__attribute__((noinline)) static void *top_b(size_t n) { void *p = c5(n); sink += 7; return p; }

/*
 * Two paths to one malloc call at one depth through frames of other
 * sizes (the big frame below on one path, above on the other): their
 * return addresses at other offsets from the same stack pointer, so that
 * one shape (backtrace.c) fits one of them only.
 */
__attribute__((noinline)) static void *sh_leaf(size_t n)
{
	void *p = malloc(n);

	sink += 1;
	return p;
}
__attribute__((noinline)) static void *sh_a1(size_t n)
{
	volatile char pad[96];

	pad[n % 96] = 1;
	return (char *)sh_leaf(n) + pad[0] * 0;
}
__attribute__((noinline)) static void *sh_b1(size_t n) { void *p = sh_leaf(n); sink += 3; return p; }
__attribute__((noinline)) static void *sh_a2(size_t n) { void *p = sh_a1(n); sink += 4; return p; }
__attribute__((noinline)) static void *sh_b2(size_t n)
{
	volatile char pad[96];

	pad[n % 96] = 1;
	return (char *)sh_b1(n) + pad[0] * 0;
}

__attribute__((noinline)) static void *ten(long a, long b, long c, long d, long e, long f, long g,
					   long h, long i, long j)
{
	return leaf((size_t)(a + b + c + d + e + f + g + h + i + j) % 64 + 8);
}

/* calls with arguments on the stack from many sites: a long CFA program (kept in rows) */
__attribute__((noinline)) static void *wide(long k)
{
	void *p = NULL;

	switch (k % 16) {
	case 0: p = ten(k, k + 0, 0, k * 2, 0, 5, k - 0, 0, k ^ 0, 11); sink += 1; break;
	case 1: p = ten(k, k + 1, 3, k * 3, 1, 6, k - 1, 7, k ^ 1, 12); sink += 2; break;
	case 2: p = ten(k, k + 2, 6, k * 4, 2, 7, k - 2, 14, k ^ 2, 13); sink += 3; break;
	case 3: p = ten(k, k + 3, 9, k * 5, 3, 8, k - 3, 21, k ^ 3, 14); sink += 4; break;
	case 4: p = ten(k, k + 4, 12, k * 6, 4, 9, k - 4, 28, k ^ 4, 15); sink += 5; break;
	case 5: p = ten(k, k + 5, 15, k * 7, 5, 10, k - 5, 35, k ^ 5, 16); sink += 6; break;
	case 6: p = ten(k, k + 6, 18, k * 8, 6, 11, k - 6, 42, k ^ 6, 17); sink += 7; break;
	case 7: p = ten(k, k + 7, 21, k * 9, 7, 12, k - 7, 49, k ^ 7, 18); sink += 8; break;
	case 8: p = ten(k, k + 8, 24, k * 10, 8, 13, k - 8, 56, k ^ 8, 19); sink += 9; break;
	case 9: p = ten(k, k + 9, 27, k * 11, 9, 14, k - 9, 63, k ^ 9, 20); sink += 10; break;
	case 10: p = ten(k, k + 10, 30, k * 12, 10, 15, k - 10, 70, k ^ 10, 21); sink += 11; break;
	case 11: p = ten(k, k + 11, 33, k * 13, 11, 16, k - 11, 77, k ^ 11, 22); sink += 12; break;
	case 12: p = ten(k, k + 12, 36, k * 14, 12, 17, k - 12, 84, k ^ 12, 23); sink += 13; break;
	case 13: p = ten(k, k + 13, 39, k * 15, 13, 18, k - 13, 91, k ^ 13, 24); sink += 14; break;
	case 14: p = ten(k, k + 14, 42, k * 16, 14, 19, k - 14, 98, k ^ 14, 25); sink += 15; break;
	case 15: p = ten(k, k + 15, 45, k * 17, 15, 20, k - 15, 105, k ^ 15, 26); sink += 16; break;
	}
	sink += k;
	return p;
}

static long cb(long i)
{
	void *p = rec((int)i % 5, 40);

	free(p);
	return i;
}

static int cmp(const void *a, const void *b)
{
	free(leaf(8));
	return *(const int *)a - *(const int *)b;
}

static void handler(int sig)
{
	free(rec(2, 24 + (size_t)sig));
}

#define THREADS 4
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long turn = -1;

/* thread k waits for its turn (the threads' first events come in order), runs, passes it on */
static void *thread(void *arg)
{
	long k = (long)arg;

	pthread_mutex_lock(&mu);
	while (turn != k)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 300; i++)
		free(rec(i % 11, 16 + (size_t)(i + k)));
	for (int i = 0; i < 200; i++)
		free(((i + k) % 3 ? top_a : top_b)(48));
	for (int i = 0; i < 64; i++)
		free(wide(i + k));
	pthread_mutex_lock(&mu);
	turn++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(void)
{
	int v[24];
	pthread_t th[THREADS];
	void *q;

	for (int i = 0; i < 600; i++)
		free(rec(i % 41, 32 + (size_t)(i % 7)));
	for (int i = 0; i < 200; i++)
		free((i % 3 ? top_a : top_b)(48));
	for (int i = 0; i < 200; i++)
		free((i % 3 ? sh_a2 : sh_b2)(56));
	for (int i = 0; i < 100; i++)
		free(wide(i * 7));
	sink += step_through(cb, 20);
	for (int i = 0; i < 24; i++)
		v[i] = (i * 7919) % 24;
	qsort(v, 24, sizeof(v[0]), cmp);
	signal(SIGUSR1, handler);
	for (int i = 0; i < 5; i++)
		raise(SIGUSR1);
	q = calloc(3, 100);
	q = realloc(q, 5000);
	free(q);
	for (long k = 0; k < THREADS; k++)
		if (pthread_create(&th[k], NULL, thread, (void *)k))
			return 1;
	pthread_mutex_lock(&mu);
	turn = 0;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int k = 0; k < THREADS; k++)
		if (pthread_join(th[k], NULL))
			return 1;
	printf("done %d\n", v[0]);
	return 0;
}
EOF
$CC -O2 -g -fomit-frame-pointer -fPIC -shared -o "$TEST_TMP/libstep.so" "$TEST_TMP/step.c" ||
	die "building libstep.so failed"
$CC -O2 -g -fomit-frame-pointer -o "$TEST_TMP/prog" "$TEST_TMP/prog.c" -L"$TEST_TMP" -lstep \
	-Wl,-rpath,"$TEST_TMP" -pthread || die "building the program failed"
"$TEST_TMP/prog" >"$TEST_TMP/plain.out" || die "the program failed untraced"

# stacks MODE [DEPTH]: record with RIP_UNWIND=MODE (and RIP_DEPTH); one line per mem event,
# per thread in order: THREAD# TYPE SIZE FRAMES  (threads numbered by first event; addresses
# of blocks left out), in $TEST_TMP/MODE[DEPTH].stacks
stacks() {
	ring=$TEST_TMP/$1$2.ring
	setarch "$(uname -m)" -R env RIP_UNWIND="$1" RIP_DEPTH="${2:-32}" LD_PRELOAD="$lib" \
		RIP_RING="$ring" RIP_MODE=block "$TEST_TMP/prog" >"$TEST_TMP/$1.out" 2>&1 ||
		fail "RIP_UNWIND=$1: the program failed: $(head -n 3 "$TEST_TMP/$1.out")"
	cmp -s "$TEST_TMP/plain.out" "$TEST_TMP/$1.out" || fail "RIP_UNWIND=$1: output differs"
	"$RIP" dump "$ring" >"$TEST_TMP/$1$2.dump" 2>"$TEST_TMP/$1.err" ||
		die "rip dump ($1) failed: $(head -n 3 "$TEST_TMP/$1.err")"
	grep -q ' 0 discarded/overwritten, 0 packets lost' "$TEST_TMP/$1$2.dump" ||
		fail "RIP_UNWIND=$1: events lost: $(tail -n 1 "$TEST_TMP/$1$2.dump")"
	awk -f tests/data/mem-stacks.awk "$TEST_TMP/$1$2.dump" | sort -s -k1,1n >"$TEST_TMP/$1$2.stacks"
}

stacks libunwind
stacks auto
stacks tables
n=$(wc -l <"$TEST_TMP/libunwind.stacks")
[ "$n" -gt 1500 ] || fail "only $n mem events recorded with libunwind"
# the program's own frames must be there: some stack 30 frames deep or more
awk '{ n = split($4, f, ","); if (n >= 30) deep = 1 } END { exit !deep }' \
	"$TEST_TMP/libunwind.stacks" || fail "no stack 30 frames deep: RIP_DEPTH's cut not exercised"
if ! cmp -s "$TEST_TMP/libunwind.stacks" "$TEST_TMP/auto.stacks"; then
	fail "the default walk's stacks differ from libunwind's:"
	diff "$TEST_TMP/libunwind.stacks" "$TEST_TMP/auto.stacks" | head -n 10 >&2
fi
# deeper than the walk's memo of steps (33): RIP_DEPTH=64
stacks libunwind 64
stacks auto 64
awk '{ n = split($4, f, ","); if (n >= 40) deep = 1 } END { exit !deep }' \
	"$TEST_TMP/libunwind64.stacks" || fail "no stack 40 frames deep with RIP_DEPTH=64"
if ! cmp -s "$TEST_TMP/libunwind64.stacks" "$TEST_TMP/auto64.stacks"; then
	fail "RIP_DEPTH=64: the default walk's stacks differ from libunwind's:"
	diff "$TEST_TMP/libunwind64.stacks" "$TEST_TMP/auto64.stacks" | head -n 10 >&2
fi
# the walk alone: the same stack, or none where it declined; and declining rarely
awk 'NR == FNR { want[FNR] = $0; next }
	{ if ($4 == "none") { none++; next }
	  if ($0 != want[FNR]) {
		bad++
		if (bad < 5) print "line " FNR ": " $0 " / " want[FNR] > "/dev/stderr"
	  }
	  got++ }
	END { printf "%d events: %d stacks from the tables, %d declined, %d different\n",
		FNR, got, none, bad
	      exit (bad > 0 || FNR != NR - FNR) }' \
	"$TEST_TMP/libunwind.stacks" "$TEST_TMP/tables.stacks" >"$TEST_TMP/tables.sum" ||
	fail "the tables' walk alone gave other stacks: $(cat "$TEST_TMP/tables.sum")"
cat "$TEST_TMP/tables.sum"
declined=$(sed -n 's/.* \([0-9]*\) declined.*/\1/p' "$TEST_TMP/tables.sum")
[ "$declined" = 0 ] ||
	fail "the tables' walk declined ${declined:-?} of $n events (every frame here has unwind tables)"
t_done
