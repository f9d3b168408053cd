#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip top says how many threads block the sampling signal
# (never sampled: the timer's signal stays pending on them).  The program,
# run with rip run --sample, has five threads that burn a little CPU now
# and then: two that inherit a mask blocking every signal from main (which
# then unblocks its own), two that block every signal themselves, and one
# that blocks nothing.  rip top --json counts 4 (sampling.signal_blocked)
# and flags exactly those four threads; the text view says "4 threads block
# the sampling signal: never sampled".
# Timeout: 60
. tests/data/common.sh
need_bin "$RIP"
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || skip "no C compiler ($CC)"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON output"
cd "$TEST_TMP" || die "no $TEST_TMP"

cat >prog.c <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static volatile int started;

/* 2 ms of CPU every 50 ms */
static void *worker(void *arg)
{
	const char *name = arg;
	struct timespec nap = { 0, 50000000 };

	if (name[0] == 's') { /* self1, self2: block every signal themselves */
		sigset_t all;

		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, NULL);
	}
	pthread_setname_np(pthread_self(), name);
	__atomic_fetch_add(&started, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		struct timespec t0, t;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		do
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 2000000);
		nanosleep(&nap, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static char *names[] = { "inherit1", "inherit2", "self1", "self2", "free" };
	sigset_t all, old;
	pthread_t t;
	FILE *f;

	if (argc != 2)
		return 2;
	alarm(120); /* never outlives the test by long */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (int i = 0; i < 2; i++) /* they inherit the mask */
		pthread_create(&t, NULL, worker, names[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (int i = 2; i < 5; i++)
		pthread_create(&t, NULL, worker, names[i]);
	while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < 5)
		usleep(1000);
	f = fopen(argv[1], "w");
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (;;)
		pause();
}
EOF
"$CC" -O1 -g -pthread -o prog prog.c || die "cannot build the program"

t_bg "$RIP" run -q --sample -o tr -- ./prog "$TEST_TMP/ready"
wait_file ready 30 || die "the program did not start"
pid=$(cat ready)
T_PIDS="$T_PIDS $pid"

"$RIP" top --json -d 100ms "$pid" >top.json 2>err || die "rip top --json: $(cat err)"
python3 - top.json <<'PY' || fail "rip top --json: wrong count of threads that block the signal"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
n = d["sampling"].get("signal_blocked")
if n != 4:
    bad.append("sampling.signal_blocked: %r, want 4" % n)
flagged = sorted(t["name"] for t in d["threads"] if t.get("signal_blocked"))
if flagged != ["inherit1", "inherit2", "self1", "self2"]:
    bad.append("threads flagged: %r" % flagged)
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
"$RIP" top --once -d 100ms "$pid" >top.txt 2>err || die "rip top --once: $(cat err)"
grep -q "^4 threads block the sampling signal: never sampled$" top.txt ||
	fail "rip top --once does not say that 4 threads block the sampling signal: $(head -n 4 top.txt)"
t_done
