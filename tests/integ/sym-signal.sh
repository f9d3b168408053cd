#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the signal trampoline (glibc's __restore_rt, which a lookup
# of its address - 1 used to name after the function before it,
# "sigaction+0x3f") is "<signal handler>" in every stack rip prints.  The
# program's main thread spins in interrupted() until another thread sends
# it SIGUSR1; the handler, on_usr1, leaks 4321 bytes and blocks in a raw
# pause system call (no wrapper sees it: the watcher copies its stack).
# Under rip run --mem: rip ps --threads (text and JSON) shows the stack
# on_usr1, <signal handler>, interrupted; after SIGKILL, the trace's leak
# has the same three frames in rip leaks (text, JSON), rip report, rip
# export --format=folded, rip calltree and rip dump -v.  x86-64 only (the
# raw system call is inline assembly).
# Timeout: 60
. tests/data/common.sh
need_bin "$RIP"
CC=${CC:-cc}
[ "$(uname -m)" = x86_64 ] || skip "the program's raw system call is x86-64 assembly"
command -v "$CC" >/dev/null 2>&1 || skip "no C compiler ($CC)"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON output"
cd "$TEST_TMP" || die "no $TEST_TMP"

cat >prog.c <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *volatile keep;
static volatile sig_atomic_t spinning;
static pthread_t main_th;
static const char *ready;

static __attribute__((noinline)) void on_usr1(int sig)
{
	FILE *f;

	keep = malloc(4321);
	f = fopen(ready, "w");
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (;;) /* a raw pause: the watcher copies the stack */
		__asm__ volatile("syscall" : : "a"(SYS_pause) : "rcx", "r11", "memory");
}

static __attribute__((noinline)) void interrupted(void)
{
	spinning = 1;
	for (;;)
		__asm__ volatile("" ::: "memory");
}

static void *sender(void *a)
{
	while (!spinning)
		usleep(100);
	pthread_kill(main_th, SIGUSR1);
	return a;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 2)
		return 2;
	ready = argv[1];
	main_th = pthread_self();
	signal(SIGUSR1, on_usr1);
	pthread_create(&t, NULL, sender, NULL);
	interrupted();
	return 0;
}
EOF
"$CC" -O1 -g -fno-omit-frame-pointer -pthread -o prog prog.c || die "cannot build the program"

# frames FILE: python prints "ok" when some list of frames in the JSON FILE
# has on_usr1, <signal handler>, interrupted one after the other (any key
# naming the function: "function")
seq3='
import json, sys
want = ["on_usr1", "<signal handler>", "interrupted"]
def lists(x):
    if isinstance(x, list):
        yield x
        for v in x:
            yield from lists(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from lists(v)
def names(l):
    return [f.get("function") for f in l if isinstance(f, dict)]
d = json.load(open(sys.argv[1]))
ok = any(" ".join(want) in " ".join(str(n) for n in names(l)) for l in lists(d))
sys.exit(0 if ok else 1)
'

t_bg "$RIP" run -q --mem -o tr -- ./prog "$TEST_TMP/ready"
run=$T_LAST
wait_file ready 30 || die "the handler did not run"
pid=$(cat ready)
T_PIDS="$T_PIDS $pid"
stack_seen() {
	"$RIP" ps --threads --json "$pid" >ps.json 2>/dev/null && python3 -c "$seq3" ps.json
}
wait_until 20 stack_seen ||
	fail "rip ps --threads --json: no on_usr1, <signal handler>, interrupted: $(head -c 1500 ps.json)"
"$RIP" ps --threads "$pid" >ps.txt 2>&1 || fail "rip ps --threads: $(head -n 5 ps.txt)"
grep -A1 '#0  on_usr1 ' ps.txt | grep -q '#1  <signal handler> ' ||
	fail "rip ps --threads: the frame under on_usr1 is not <signal handler>: $(grep -A3 '#0' ps.txt)"
grep -A1 '#1  <signal handler> ' ps.txt | grep -q '#2  interrupted ' ||
	fail "rip ps --threads: the frame under <signal handler> is not interrupted"
kill -9 "$pid"
wait "$run"

"$RIP" leaks tr >leaks.txt 2>err || die "rip leaks: $(cat err)"
awk '/^4321 bytes/ { for (i = 0; i < 3; i++) { getline; print } exit }' leaks.txt >frames.txt
awk 'NR == 1 && /^ +on_usr1 \(.*prog\.c:[0-9]+\)$/ { n++ }
	NR == 2 && /^ +<signal handler>$/ { n++ }
	NR == 3 && /^ +interrupted \(.*prog\.c:[0-9]+\)$/ { n++ }
	END { exit n != 3 }' frames.txt ||
	fail "rip leaks: the leak's frames are not on_usr1, <signal handler>, interrupted:
$(cat frames.txt)"
"$RIP" leaks --json tr >leaks.json 2>err || die "rip leaks --json: $(cat err)"
python3 -c "$seq3" leaks.json || fail "rip leaks --json: no on_usr1, <signal handler>, interrupted"
"$RIP" report tr >report.txt 2>err || die "rip report: $(cat err)"
grep -A1 ' on_usr1 (' report.txt | grep -q 'from <signal handler>$' ||
	fail "rip report: on_usr1 is not called from <signal handler>: $(grep -A1 ' on_usr1 (' report.txt | head -n 2)"
"$RIP" export --format=folded tr -o folded.txt 2>err || die "rip export: $(cat err)"
grep -q ';interrupted;<signal handler>;on_usr1 4321$' folded.txt ||
	fail "rip export --format=folded: $(grep on_usr1 folded.txt)"
"$RIP" calltree tr >tree.dot 2>err || die "rip calltree: $(cat err)"
grep -q 'label="<signal handler>' tree.dot || fail "rip calltree: no <signal handler> node"
"$RIP" dump -v tr >dump.txt 2>err || die "rip dump -v: $(cat err)"
grep -q '<on_usr1+0x[0-9a-f]*>,0x[0-9a-f]*<signal_handler>,0x[0-9a-f]*<interrupted+' dump.txt ||
	fail "rip dump -v: $(grep -o 'frames=.*on_usr1[^]]*' dump.txt | head -n 1)"
t_done
