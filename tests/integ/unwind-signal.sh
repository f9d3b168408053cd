#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a thread's first call into libunwind is never made from a
# signal handler.  That call mallocs (__tls_get_addr makes the thread's
# block of libunwind's TLS); a handler that interrupted free got, now and
# then, the very block free was still writing, and crashed in libunwind
# (tests/integ/preload-mem-robust's "signal handler frees", one run in
# fifteen under load).  The program here allocates in a SIGALRM handler
# that interrupted code with no unwind information (a loop in an anonymous
# executable page, as JIT code is), so that the walk of the tables crosses
# the signal frame, then declines: (1) the thread has never called
# libunwind, so the handler's allocation gets the frames the tables gave,
# up to the interrupted page's address and no further, and the program
# runs on; (2) main then allocates through a call from that page (the
# tables decline, libunwind makes the stack, outside any handler); (3) the
# handler again: libunwind is ready, so the stack is libunwind's, with the
# interrupted page's address in it.  Also, with RIP_UNWIND=libunwind,
# (1) holds too.  x86-64 only (the page's code).
. tests/data/common.sh
lib=$PWD/$BUILD/librip-preload.so
CC=${CC:-cc}
need_bin "$RIP"
[ -f "$lib" ] || die "$lib is missing: run make"
[ "$(uname -m)" = x86_64 ] || skip "the test's code page is x86-64"
need_cmd "$CC"
need_libunwind

cat >"$TEST_TMP/prog.c" <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

static sigjmp_buf jb;
static unsigned char *code;
static void *volatile sink;
static volatile int spinning, hits;
static void *(*call_there)(size_t);

static void on_alarm(int sig, siginfo_t *si, void *ucv)
{
	const ucontext_t *uc = ucv;

	if ((uintptr_t)uc->uc_mcontext.gregs[REG_RIP] - (uintptr_t)code >= 16) {
		spinning = 1; /* not in the loop yet: once more */
		return;
	}
	sink = malloc(4242);
	free(sink);
	hits++;
	siglongjmp(jb, 1);
}

/* spin in the code page until SIGALRM's handler jumps out */
static void spin_there(void)
{
	if (!sigsetjmp(jb, 1)) {
		spinning = 1;
		((void (*)(void))code)(); /* jmp . */
	}
}

/* the thread's first traced call is in the handler */
static void *worker(void *arg)
{
	spin_there();		/* (1) */
	free(call_there(4343)); /* (2) */
	spin_there();		/* (3) */
	return arg;
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_alarm, .sa_flags = SA_SIGINFO };
	void *(*m)(size_t) = malloc;
	pthread_t th;
	uint64_t target;

	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (code == MAP_FAILED)
		return 2;
	code[0] = 0xeb; /* jmp . */
	code[1] = 0xfe;
	/* at 16: sub $8,%rsp; movabs $malloc,%rax; call *%rax; add $8,%rsp; ret */
	memcpy(code + 16, "\x48\x83\xec\x08\x48\xb8", 6);
	memcpy(&target, &m, sizeof(target));
	memcpy(code + 22, &target, 8);
	memcpy(code + 30, "\xff\xd0\x48\x83\xc4\x08\xc3", 7);
	memcpy(&call_there, &(void *){ code + 16 }, sizeof(call_there));
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	if (pthread_create(&th, NULL, worker, NULL))
		return 2;
	for (int want = 1; want <= 2; want++) {
		while (hits < want) {
			/* a signal sent before may be handled late: hits, then no more spinning */
			while (!spinning && hits < want)
				usleep(100);
			if (hits >= want)
				break;
			spinning = 0;
			usleep(1000);
			pthread_kill(th, SIGALRM);
			usleep(1000);
		}
	}
	pthread_join(th, NULL);
	printf("page %p\n", (void *)code);
	return 0;
}
EOF
$CC -O1 -g -fno-omit-frame-pointer -pthread -o "$TEST_TMP/prog" "$TEST_TMP/prog.c" ||
	die "building the program failed"

# run MODE: the program traced with RIP_UNWIND=MODE; its dump in $TEST_TMP/MODE.dump
run() {
	ring=$TEST_TMP/$1.ring
	env RIP_UNWIND="$1" LD_PRELOAD="$lib" RIP_RING="$ring" RIP_MODE=block "$TEST_TMP/prog" \
		>"$TEST_TMP/$1.out" 2>&1 ||
		fail "RIP_UNWIND=$1: the program failed: $(head -n 3 "$TEST_TMP/$1.out")"
	"$RIP" dump "$ring" >"$TEST_TMP/$1.dump" 2>"$TEST_TMP/$1.err" ||
		die "rip dump ($1) failed: $(head -n 3 "$TEST_TMP/$1.err")"
}

# stacks MODE SIZE: the frames of each allocation of SIZE, in order ("none": no stack)
stacks() {
	awk -f tests/data/mem-stacks.awk "$TEST_TMP/$1.dump" |
		awk -v size="$2" '$2 == "mem:alloc" && $3 == size { print $4 }'
}

run auto
page=$(sed -n 's/^page 0x\([0-9a-f]*\)$/\1/p' "$TEST_TMP/auto.out")
[ -n "$page" ] || die "the program did not say where its page is"
stacks auto 4242 >"$TEST_TMP/h.stacks"
stacks auto 4343 >"$TEST_TMP/c.stacks"
[ "$(wc -l <"$TEST_TMP/h.stacks")" = 2 ] ||
	die "want 2 allocations of 4242 (from the handler), got $(wc -l <"$TEST_TMP/h.stacks")"
# the handler's frame, the trampoline, the page: libunwind would have gone on past the page
sed -n 1p "$TEST_TMP/h.stacks" | grep -Eq "^\[0x[0-9a-f]+,0x[0-9a-f]+,0x${page}\]\$" ||
	fail "(1) the handler's allocation before the thread called libunwind: want the tables'" \
		"frames up to the page 0x$page, got $(sed -n 1p "$TEST_TMP/h.stacks")"
ret=$(printf '%x' $((0x$page + 32)))
grep -q "0x${ret}[],]" "$TEST_TMP/c.stacks" ||
	fail "(2) the call from the page has no stack through it (libunwind's):" \
		"$(cat "$TEST_TMP/c.stacks")"
sed -n 2p "$TEST_TMP/h.stacks" | grep -q "0x${page}[],]" ||
	fail "(3) the handler's second allocation has no stack with the interrupted page in it:" \
		"$(sed -n 2p "$TEST_TMP/h.stacks")"

run libunwind
stacks libunwind 4242 >"$TEST_TMP/hl.stacks"
[ "$(sed -n 1p "$TEST_TMP/hl.stacks")" = none ] ||
	fail "RIP_UNWIND=libunwind: the thread's first call into libunwind was made from the handler"
[ "$(sed -n 2p "$TEST_TMP/hl.stacks")" != none ] ||
	fail "RIP_UNWIND=libunwind: no stack for the handler's allocation once libunwind was ready"
t_done
