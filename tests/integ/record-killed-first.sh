#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --mem whose recorder is killed (SIGKILL) before it
# closes its first chunk: the trace is read up to the chunk's last whole
# record.  A program of 4 threads leaks 250 blocks of 100 bytes each from
# leak_once (with malloc/free churn around them), then waits; once rip
# leaks of the trace being written finds the 1,000 blocks, rip run is
# killed, then the program.  rip leaks --json then gives exactly 1,000
# blocks of 100,000 bytes at leak_once, and says the recording went on or
# its recorder was killed.  (Such a trace had no index and was refused.)
# Timeout: 90
. tests/data/common.sh
cd "$TEST_TMP" || die "no TEST_TMP"
need_cmd python3

cat >killedprog.c <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *volatile keep[1000];

__attribute__((noinline)) static void *leak_once(void)
{
	return malloc(100);
}

static void *worker(void *arg)
{
	long t = (long)arg;

	for (int i = 0; i < 250; i++) {
		for (int j = 0; j < 40; j++)
			free(malloc(32 + (size_t)(i + j) % 64));
		keep[t * 250 + i] = leak_once();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[4];
	FILE *f;

	for (long t = 0; t < 4; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)t))
			return 1;
	for (int t = 0; t < 4; t++)
		pthread_join(th[t], NULL);
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
		return 1;
	for (;;)
		pause();
}
EOF
"${CC:-cc}" -O1 -g -pthread -o killedprog killedprog.c || die "cannot build killedprog.c"

t_bg "$RIP" run --mem -o T -- ./killedprog ready
run=$T_LAST
t_ready_pid ready

# the 1,000 blocks on disk: rip leaks of the trace being written finds them (or 20 s)
leaked() {
	"$RIP" leaks --json T >now.json 2>now.err || return 1
	python3 - now.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
n = sum(g.get("count", 0) for g in d.get("groups", d.get("leaks", []))
        if any("leak_once" in str(f) for f in g.get("stack", g.get("frames", []))))
sys.exit(0 if n >= 1000 else 1)
EOF
}
wait_until 20 leaked || fail "rip leaks of the trace being written never found the 1,000 blocks: $(cat now.err)"
[ -e T/chunk-000000.rpk ] && [ ! -e T/chunk-000001.rpk ] ||
	die "not one chunk being written: $(ls -a T)"
t_kill "$run"
kill -9 "$pid" 2>/dev/null
wait_until 10 sh -c "! kill -0 $pid 2>/dev/null" || die "the program did not die"

expect_status 0 "rip leaks --json T" "$RIP" leaks --json T
grep -q 'T was read while its recording went on (or its recorder was killed' "$TEST_TMP/err" ||
	fail "rip leaks T does not say its recorder may have been killed: $(cat "$TEST_TMP/err")"
python3 - "$TEST_TMP/out" <<'EOF' || fail "rip leaks T, its recorder killed: not the 1,000 blocks at leak_once"
import json, sys
d = json.load(open(sys.argv[1]))
groups = d.get("groups", d.get("leaks", []))
at = [g for g in groups if any("leak_once" in str(f) for f in g.get("stack", g.get("frames", [])))]
n = sum(g.get("count", 0) for g in at)
b = sum(g.get("bytes", 0) for g in at)
print("leak_once: %d blocks, %d bytes" % (n, b))
sys.exit(0 if n == 1000 and b == 100000 else 1)
EOF
asan_run leaks T
[ "$asan_rc" = 0 ] || fail "rip leaks (asan) of T, its recorder killed: exit $asan_rc"
t_done
