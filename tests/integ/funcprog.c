// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the program of the function-tracing tests, built with
 * -finstrument-functions (and, as funcprog-patch, with
 * -fpatchable-function-entry) and linked with librip.
 *
 *   funcprog park READY [GO]
 *	threads and a coroutine park at known depths, then READY is
 *	written and the program waits to be killed (with GO, the program
 *	first starts a thread, writes READY.gate and waits for the file GO:
 *	time to patch its functions, which needs a thread of librip's, and
 *	librip-preload.so starts that one with the program's first thread):
 *	  chain    chain_thread > chain_01 > ... > chain_20 > chain_park
 *	  reader   reader_thread > reader_wait (blocked in read of a pipe)
 *	  jumper   jump_thread > jump_base > jump_park, after a longjmp from
 *	           jump_10 (jump_base > jump_01 > ... > jump_10) to jump_base
 *	  main     main > sched_run > main_park, after it ran the coroutine
 *	  co-mid   co_entry > co_a > co_b > co_c > co_pause: the coroutine,
 *	           switched out mid-chain (rip_coro_switch_out)
 *	  hopper   hop_thread > hop_park, after it ran the coroutine co-hop
 *	           a second time: co-hop started on main (co_hop_entry >
 *	           co_hop_a > co_pause), parked, and went on on hopper, where
 *	           it parked again one call deeper (co_hop_a > co_hop_b >
 *	           co_pause)
 *   funcprog count N
 *	known counts: count_outer N times, count_inner 2N times through
 *	count_outer, count_leaf 3N times (2N through count_inner, N
 *	directly from main), count_rec N times as 10-deep recursions
 *	(10N calls); exits 0
 *   funcprog spin SECONDS THREADS [READY]
 *	THREADS threads call spin_a > spin_b > spin_c in a loop for SECONDS
 *	(or until SIGINT) and check every result (a patched program that
 *	misbehaves fails), and every 16th time spin_jump > spin_down x 5, the
 *	last of which longjmps back to spin_jump over the 5; READY is written
 *	once all of them run.  Prints the calls of spin_a made.
 *   funcprog spindeep SECONDS THREADS DEPTH [READY]
 *	the same, each turn a recursion of spin_dive DEPTH levels deep (one
 *	call of spin_c beside each level's call of itself) instead of spin_a
 *	and spin_jump, whose bottom runs 16 recursions of spin_deep 40 levels
 *	further (the same, with spin_a > spin_b > spin_c at the bottom): the
 *	threads go up and down across depth 63 and spend most of their time
 *	between DEPTH and DEPTH + 44
 *   funcprog inline N [READY]
 *	functions the compiler inlined, whose hooks it calls from the frame
 *	they went into: inl_outer > inl_mid > inl_leaf (both inlined) >
 *	inl_real, N times (N calls of each); with READY, then main parks in
 *	inl_park_outer > inl_park_mid > inl_park_leaf (inlined) > inl_park,
 *	writes READY and waits to be killed
 *   funcprog ptrinl N [READY]
 *	functions inlined into functions called through a pointer, whose
 *	hooks run after the stack pointer moved from where their frame's
 *	entry had it: ptrinl_run calls pinl_args > pinl_eight, pinl_err
 *	(inlined; gcc still has 2 of pinl_eight's arguments pushed) and
 *	pinl_vla > pinl_fill, pinl_twice (inlined, below a VLA), N times
 *	each; with READY, then pinl_then calls pinl_jump > pinl_deep, which
 *	longjmps back to pinl_then, and pinl_job from the same frame (both
 *	through pointers): pinl_job (a VLA, then pinl_fill, pinl_eight,
 *	pinl_twice and pinl_err) parks in pinl_park, writes READY and waits
 *	to be killed
 *   funcprog stale N
 *	copies of a function's return address left in the stack where its
 *	locals will be (as an earlier call's hooks may leave them): stale_run
 *	calls stale_plant (untraced: it fills its frame with the return
 *	address stale_victim had the last time) then stale_victim, N times;
 *	built without frame pointers (funcprog-nofp), the hooks must not take
 *	a copy for the return address
 *   funcprog deep N [READY]
 *	a longjmp from past the frames a shadow stack keeps to a frame it
 *	keeps: deep_run > deep_rec x 50 > deep_catch (depth 53, setjmp) >
 *	deep_dive x 40 (depths 54 to 93, the last longjmps to deep_catch), N
 *	times; with READY, then once more, and deep_catch parks in deep_park
 *	(depth 54), writes READY and waits to be killed
 *   funcprog deepinl PAD N
 *	a recursion past the frames a shadow stack keeps whose levels have
 *	functions inlined into them: deepinl_run > dinl_pad x PAD (0 to 2) >
 *	dinl_rec > dinl_a > dinl_b > dinl_rec ... (dinl_a and dinl_b inlined
 *	into dinl_rec: three levels a frame), 41 levels of dinl_rec, N times;
 *	PAD puts each of the three at the 63rd level, the deepest kept
 *   funcprog deepslow N
 *	deep, but deep_catch waits 20 ms (untraced) after each jump before it
 *	returns: a reader that pairs the exits written at the jump with the
 *	wrong calls ends calls of deep_dive at deep_catch's exit, 20 ms later
 *   funcprog jumped READY
 *	three threads each jump out of a chain with no traced call after the
 *	jump: jumped_thread > jumped_base (setjmp) > jumped_01 > ... >
 *	jumped_10, which jumps back to jumped_base, by longjmp (thread
 *	jmp-long), siglongjmp (jmp-sig) and __longjmp_chk (jmp-chk, what
 *	_FORTIFY_SOURCE builds call); then they park in jumped_base, READY is
 *	written and the program waits to be killed
 *   funcprog jumpfill READY
 *	a longjmp out of 100 levels, then a chain of 41 levels whose
 *	innermost calls a leaf and parks after it returns: jf_run > jf_catch
 *	(setjmp) > jf_dive x 101 (the last longjmps to jf_catch), then jf_run
 *	> jf_chain x 41 > jf_leaf; READY is written once jf_leaf has returned,
 *	and the program waits to be killed in jf_chain
 *   funcprog split N
 *	a function gcc splits (partial inlining): split_work's first test
 *	goes into its caller, split_run, with its entry's hook, and the rest
 *	into split_work.part.0, which jumps to the exit's hook at its end
 *	(from a frame the entry did not see); split_run calls split_work
 *	(1 to 4) N times, which calls split_leaf 0 to 3 times: 3 N / 2
 *	calls of split_leaf for N a multiple of 4
 *   funcprog sib N
 *	sibling calls (built as funcprog-sib, with patched entries and
 *	sibling calls on): sib_run calls sib_1 N times, sib_1 jumps to sib_2,
 *	which jumps to sib_leaf: one return for three patched entries
 *   funcprog big N
 *	a function with a frame bigger than the hooks' first look, and a
 *	function inlined into it: big_run calls big_plant (untraced: it fills
 *	its frame with the return address big_host had the last time) then
 *	big_host > big_inl (inlined) > big_leaf, N times; big_host zeroes its
 *	locals before big_inl's hooks run.  Built with frame pointers, the
 *	hooks must take big_host's frame pointer, not a copy, for where its
 *	return address is
 *   funcprog bigrec N
 *	big frames again, through a recursion from one call site: rec_run
 *	calls rec_plant (untraced: it fills 4 KiB of stack with the address
 *	of big_rec's call of itself) then big_rec, N times; big_rec (48 words
 *	of locals) calls big_inl (inlined) > big_leaf, then itself, 5 levels
 *	deep: each level's return address but the first's is that address,
 *	and copies of it lie below each of them
 *   funcprog moved N
 *	a function inlined after an alloca, whose hooks' distance to the
 *	return address changes from one pass to the next: moved_run calls
 *	moved_call (untraced: it allocas the words just above moved_host's
 *	return address) > moved_host, which allocas 2 or 6 words
 *	(alternately), fills those words with copies of its return address
 *	and calls moved_inl (inlined) > moved_leaf, N times.  The 6 words'
 *	pass puts moved_inl's hooks 4 words lower: at a 2 words' pass after
 *	it, a copy lies where the 6 words' pass had the return address, and
 *	the hooks must not take it
 *   funcprog movedkeep N
 *	the same, the copies left until moved_host has returned: its exit
 *	hook, which the alloca moved off its entry's distance, has copies of
 *	its return address above the real one
 *   funcprog many THREADS N
 *	THREADS threads, all alive at once (a barrier), each many_thread >
 *	spin_a > spin_b > spin_c x 2, N times: 4 N + 1 calls a thread; the
 *	main thread's functions are not traced.
 *
 * Threads name their slots (rip_thread_set_name), so that the tests find
 * them by name.  The coroutines are named co-mid and co-hop, and switched
 * with the rip_coro API around swapcontext, unless librip-preload.so is
 * loaded: its hooks of swapcontext make and switch the coroutines' slots
 * then (named ucontext).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <rip.h>

#define N __attribute__((noinline))

static volatile int sink;
static pthread_barrier_t parked;

__attribute__((no_instrument_function)) static void write_file(const char *path, const char *what)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, what, strlen(what)) != (ssize_t)strlen(what)) {
		perror(path);
		exit(3);
	}
	close(fd);
}

/* ---- park ---------------------------------------------------------------------------------- */

N static void park_here(void)
{
	pthread_barrier_wait(&parked);
	for (;;)
		pause();
}

/* One line each, so that the chains read as chains. */
/* clang-format off */
N static void chain_park(void) { park_here(); }
N static void chain_20(void) { chain_park(); sink++; }
N static void chain_19(void) { chain_20(); sink++; }
N static void chain_18(void) { chain_19(); sink++; }
N static void chain_17(void) { chain_18(); sink++; }
N static void chain_16(void) { chain_17(); sink++; }
N static void chain_15(void) { chain_16(); sink++; }
N static void chain_14(void) { chain_15(); sink++; }
N static void chain_13(void) { chain_14(); sink++; }
N static void chain_12(void) { chain_13(); sink++; }
N static void chain_11(void) { chain_12(); sink++; }
N static void chain_10(void) { chain_11(); sink++; }
N static void chain_09(void) { chain_10(); sink++; }
N static void chain_08(void) { chain_09(); sink++; }
N static void chain_07(void) { chain_08(); sink++; }
N static void chain_06(void) { chain_07(); sink++; }
N static void chain_05(void) { chain_06(); sink++; }
N static void chain_04(void) { chain_05(); sink++; }
N static void chain_03(void) { chain_04(); sink++; }
N static void chain_02(void) { chain_03(); sink++; }
N static void chain_01(void) { chain_02(); sink++; }

N static void *chain_thread(void *arg)
{
	rip_thread_set_name("chain");
	chain_01();
	return arg;
}

static int pipefd[2];

N static void reader_wait(void)
{
	char buf[4096]; /* a big frame: its return address is past the hooks' scan */
	ssize_t n;

	pthread_barrier_wait(&parked);
	n = read(pipefd[0], buf, sizeof(buf));
	sink += (int)n + buf[0];
	for (;;)
		pause();
}

N static void *reader_thread(void *arg)
{
	rip_thread_set_name("reader");
	reader_wait();
	return arg;
}

static jmp_buf jump_env;

N static void jump_10(void) { longjmp(jump_env, 1); }
N static void jump_09(void) { jump_10(); sink++; }
N static void jump_08(void) { jump_09(); sink++; }
N static void jump_07(void) { jump_08(); sink++; }
N static void jump_06(void) { jump_07(); sink++; }
N static void jump_05(void) { jump_06(); sink++; }
N static void jump_04(void) { jump_05(); sink++; }
N static void jump_03(void) { jump_04(); sink++; }
N static void jump_02(void) { jump_03(); sink++; }
N static void jump_01(void) { jump_02(); sink++; }
N static void jump_park(void) { park_here(); }
/* clang-format on */

N static void jump_base(void)
{
	if (!setjmp(jump_env))
		jump_01();
	jump_park();
}

N static void *jump_thread(void *arg)
{
	rip_thread_set_name("jumper");
	jump_base();
	return arg;
}

/* The coroutines: ucontext stacks, switched with the rip_coro API around swapcontext. */
struct co {
	ucontext_t ctx, *back;
	struct rip_coro *rc;
	char stack[256 << 10];
};

static struct co co_mid, co_hop;

N static void co_pause(struct co *c)
{
	if (c->rc)
		rip_coro_switch_out();
	swapcontext(&c->ctx, c->back);
}

N static void co_resume(struct co *c)
{
	ucontext_t here;

	c->back = &here;
	if (c->rc)
		rip_coro_switch_in(c->rc);
	swapcontext(&here, &c->ctx);
}

/* clang-format off */
N static void co_c(void) { co_pause(&co_mid); }
N static void co_b(void) { co_c(); sink++; }
N static void co_a(void) { co_b(); sink++; }
/* clang-format on */
N static void co_entry(void)
{
	co_a();
	for (;;)
		co_pause(&co_mid);
}

N static void co_hop_b(void)
{
	co_pause(&co_hop);
}
N static void co_hop_a(void)
{
	co_pause(&co_hop); /* first park, on main */
	co_hop_b();	   /* the second, on hopper */
	sink++;
}

N static void co_hop_entry(void)
{
	co_hop_a();
	for (;;)
		co_pause(&co_hop);
}

static void co_make(struct co *c, const char *name, void (*fn)(void))
{
	const char *pre = getenv("LD_PRELOAD");

	if (pre && strstr(pre, "librip-preload"))
		c->rc = NULL; /* its swapcontext hooks switch the coroutines */
	else if (rip_coro_create(name, &c->rc)) {
		fprintf(stderr, "funcprog: rip_coro_create failed (no ring open?)\n");
		exit(3);
	}
	getcontext(&c->ctx);
	c->ctx.uc_stack.ss_sp = c->stack;
	c->ctx.uc_stack.ss_size = sizeof(c->stack);
	c->ctx.uc_link = NULL;
	makecontext(&c->ctx, fn, 0);
}

N static void hop_park(void)
{
	park_here();
}

N static void *hop_thread(void *arg)
{
	rip_thread_set_name("hopper");
	co_resume(&co_hop); /* on to its second park */
	hop_park();
	return arg;
}

/* Every thread is parked (the barrier), then READY says so. */
N static void main_park(const char *ready)
{
	pthread_barrier_wait(&parked);
	write_file(ready, "ready\n");
	for (;;)
		pause();
}

static const char *gate_go;

/* Wait for the file GO (no traced call: it stands at no depth of any path). */
__attribute__((no_instrument_function, patchable_function_entry(0, 0))) static void
gate_wait(void)
{
	while (gate_go && access(gate_go, F_OK))
		usleep(1000);
}

__attribute__((no_instrument_function, patchable_function_entry(0, 0))) static void *
gate_thread(void *arg)
{
	gate_wait();
	return arg;
}

N static void sched_run(const char *ready)
{
	pthread_t t[4];

	co_make(&co_mid, "co-mid", co_entry);
	co_make(&co_hop, "co-hop", co_hop_entry);
	co_resume(&co_mid);
	co_resume(&co_hop);
	if (pthread_create(&t[0], NULL, chain_thread, NULL) ||
	    pthread_create(&t[1], NULL, reader_thread, NULL) ||
	    pthread_create(&t[2], NULL, jump_thread, NULL) ||
	    pthread_create(&t[3], NULL, hop_thread, NULL)) {
		fprintf(stderr, "funcprog: pthread_create failed\n");
		exit(3);
	}
	main_park(ready);
}

/* ---- count --------------------------------------------------------------------------------- */

N static int count_leaf(int x)
{
	sink += x;
	return x + 1;
}
N static int count_inner(int x)
{
	return count_leaf(x) + 1;
}
N static int count_outer(int x)
{
	return count_inner(x) + count_inner(x + 1);
}
N static int count_rec(int d)
{
	return d ? count_rec(d - 1) + 1 : 0;
}

N static int count_run(long n)
{
	int x = 0;

	for (long i = 0; i < n; i++) {
		x += count_outer((int)i);
		x += count_leaf((int)i);
		x += count_rec(9);
	}
	return x;
}

/* ---- inline -------------------------------------------------------------------------------- */

/* Inlined wherever they are called: the hooks come from the frame of the function they went in. */
#define INL static inline __attribute__((always_inline))

N static int inl_real(int x)
{
	sink += x;
	return x + 1;
}
INL int inl_leaf(int x)
{
	return inl_real(x) + 1;
}
INL int inl_mid(int x)
{
	int y = inl_leaf(x);

	sink++;
	return y + 1;
}
N static int inl_outer(int x)
{
	return inl_mid(x) + 1;
}

N static void inl_park(const char *ready)
{
	write_file(ready, "ready\n");
	for (;;)
		pause();
}
INL void inl_park_leaf(const char *ready)
{
	inl_park(ready);
	sink++;
}
INL void inl_park_mid(const char *ready)
{
	inl_park_leaf(ready);
	sink++;
}
N static void inl_park_outer(const char *ready)
{
	inl_park_mid(ready);
	sink++;
}

N static int inline_run(long n, const char *ready)
{
	int x = 0;

	for (long i = 0; i < n; i++)
		x += inl_outer((int)i);
	if (ready)
		inl_park_outer(ready);
	return x;
}

/* ---- ptrinl -------------------------------------------------------------------------------- */

/* Eight arguments: gcc pushes the last two, and pops them after the next inlined hooks ran. */
N static size_t pinl_eight(volatile int *a, void *b, size_t c, int d, int e, void *f,
			   volatile int *g, unsigned long long h)
{
	return (size_t)a + (size_t)b + c + (size_t)d + (size_t)e + (size_t)f + (size_t)g + h;
}
INL int pinl_err(size_t c)
{
	return c > (size_t)-120;
}
N static void pinl_fill(volatile char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (char)i;
}
INL int pinl_twice(int x)
{
	return 2 * x;
}

/* Called through a pointer: pinl_err's hooks run with pinl_eight's last arguments pushed (gcc). */
N static int pinl_args(long i)
{
	size_t r = pinl_eight(&sink, NULL, (size_t)i, 1, 2, NULL, &sink, 7);

	if (pinl_err(r))
		abort();
	return (int)(r & 1);
}

/* Called through a pointer: pinl_twice's hooks run below its VLA. */
N static int pinl_vla(long i)
{
	volatile char v[16 + (i & 7) * 8];

	pinl_fill(v, sizeof(v));
	return pinl_twice(v[1]);
}

N static void pinl_park(const char *ready)
{
	write_file(ready, "ready\n");
	for (;;)
		pause();
}

/* Called through a pointer: parks after both kinds of inlined hooks ran in its moved frame. */
N static void pinl_job(const char *ready)
{
	volatile char v[16 + strlen(ready) % 8];
	size_t r;

	pinl_fill(v, sizeof(v));
	r = pinl_eight(&sink, NULL, strlen(ready), 1, 2, NULL, &sink, 7);
	if (pinl_err(r + (size_t)pinl_twice(v[1])))
		abort();
	pinl_park(ready);
	sink++;
}

static jmp_buf pinl_jb;

N static void pinl_deep(void)
{
	sink++;
	longjmp(pinl_jb, 1);
}

/*
 * Called through a pointer and jumped out of: its frame has the cfa
 * pinl_job's will have, and is smaller (pinl_job's hooks are further from
 * that cfa, as an inlined function's with the stack moved would be).
 */
N static void pinl_jump(long n)
{
	sink += (int)n;
	pinl_deep();
	sink++;
}

static int (*volatile pinl_fns[])(long) = { pinl_args, pinl_vla };
static void (*volatile pinl_jump_fn)(long) = pinl_jump;
static void (*volatile pinl_job_fn)(const char *) = pinl_job;

/* pinl_jump, jumped out of, then pinl_job from the same frame: a new call, not an inlined one. */
N static void pinl_then(const char *ready)
{
	if (!setjmp(pinl_jb))
		pinl_jump_fn((long)strlen(ready));
	pinl_job_fn(ready);
}

N static int ptrinl_run(long n, const char *ready)
{
	int x = 0;

	for (long i = 0; i < n; i++)
		x += pinl_fns[0](i) + pinl_fns[1](i);
	if (ready)
		pinl_then(ready);
	return x;
}

/* ---- stale --------------------------------------------------------------------------------- */

static uintptr_t stale_ra; /* stale_victim's return address, as it saw it */

N static void stale_victim(void)
{
	volatile uintptr_t loc[6];

	loc[0] = (uintptr_t)__builtin_return_address(0);
	stale_ra = loc[0];
}

/* Untraced, called from where stale_victim is: its frame is where stale_victim's will be. */
__attribute__((no_instrument_function, noinline)) static void stale_plant(void)
{
	volatile uintptr_t v[32];

	for (int i = 0; i < 32; i++)
		v[i] = stale_ra;
	sink += (int)v[31];
}

N static void stale_run(long n)
{
	for (long i = 0; i < n; i++) {
		stale_plant();
		stale_victim();
	}
}

/* ---- deep --------------------------------------------------------------------------------- */

static jmp_buf deep_env;
static int deep_slow; /* deepslow: deep_catch waits this many ms after the jump */

N static void deep_park(const char *ready)
{
	write_file(ready, "ready\n");
	for (;;)
		pause();
}

N static void deep_dive(int n)
{
	if (!n)
		longjmp(deep_env, 1);
	if (n > 0)
		deep_dive(n - 1);
	sink++;
}

N static void deep_catch(const char *ready)
{
	if (!setjmp(deep_env))
		deep_dive(39);
	if (deep_slow) {
		struct timespec ts = { 0, deep_slow * 1000000L };

		nanosleep(&ts, NULL);
	}
	if (ready)
		deep_park(ready);
	sink++;
}

N static void deep_rec(int n, const char *ready)
{
	if (n)
		deep_rec(n - 1, ready);
	else
		deep_catch(ready);
	sink++;
}

N static void deep_run(long n, const char *ready)
{
	for (long i = 0; i < n; i++)
		deep_rec(49, NULL);
	if (ready)
		deep_rec(49, ready);
}

/* ---- deepinl ------------------------------------------------------------------------------ */

N static void dinl_rec(int n);

INL void dinl_b(int n)
{
	if (n)
		dinl_rec(n - 1);
	sink++;
}

INL void dinl_a(int n)
{
	sink++;
	dinl_b(n);
	sink++;
}

N static void dinl_rec(int n)
{
	dinl_a(n);
	sink++;
}

N static void dinl_pad1(int n)
{
	dinl_rec(n);
	sink++;
}

N static void dinl_pad2(int n)
{
	dinl_pad1(n);
	sink++;
}

N static void deepinl_run(long pad, long n)
{
	for (long i = 0; i < n; i++) {
		if (pad == 2)
			dinl_pad2(40);
		else if (pad == 1)
			dinl_pad1(40);
		else
			dinl_rec(40);
	}
}

/* ---- jumpfill ------------------------------------------------------------------------------ */

static jmp_buf jf_env;

N static void jf_dive(int n)
{
	if (!n)
		longjmp(jf_env, 1);
	if (n > 0)
		jf_dive(n - 1);
	sink++;
}

N static void jf_catch(void)
{
	if (!setjmp(jf_env))
		jf_dive(100);
	sink++;
}

N static void jf_leaf(void)
{
	sink++;
}

static volatile int jf_stop; /* never set: jf_park waits to be killed */

/* Neither patched nor hooked: not on the stacks. */
__attribute__((no_instrument_function, patchable_function_entry(0, 0))) static void
jf_park(const char *ready)
{
	write_file(ready, "ready\n");
	while (!jf_stop)
		pause();
}

/* The innermost level parks after jf_leaf has returned: no traced call after it. */
N static void jf_chain(int n, const char *ready)
{
	if (n > 0)
		jf_chain(n - 1, ready);
	else {
		jf_leaf();
		jf_park(ready);
	}
	sink++;
}

N static void jf_run(const char *ready)
{
	jf_catch();
	jf_chain(40, ready);
}

/* ---- jumped -------------------------------------------------------------------------------- */

void __longjmp_chk(struct __jmp_buf_tag env[1], int val) __attribute__((noreturn));

static __thread sigjmp_buf jumped_env;
static __thread int jumped_how; /* 0: longjmp, 1: siglongjmp, 2: __longjmp_chk */

N static void jumped_10(void)
{
	if (jumped_how == 0)
		longjmp(jumped_env, 1);
	if (jumped_how == 1)
		siglongjmp(jumped_env, 1);
	__longjmp_chk(jumped_env, 1);
}

/* clang-format off */
N static void jumped_09(void) { jumped_10(); sink++; }
N static void jumped_08(void) { jumped_09(); sink++; }
N static void jumped_07(void) { jumped_08(); sink++; }
N static void jumped_06(void) { jumped_07(); sink++; }
N static void jumped_05(void) { jumped_06(); sink++; }
N static void jumped_04(void) { jumped_05(); sink++; }
N static void jumped_03(void) { jumped_04(); sink++; }
N static void jumped_02(void) { jumped_03(); sink++; }
N static void jumped_01(void) { jumped_02(); sink++; }
/* clang-format on */

/* After the jump, no traced call: nothing but the jump can tell the shadow stack. */
N static void jumped_base(void)
{
	if (!sigsetjmp(jumped_env, jumped_how == 1))
		jumped_01();
	pthread_barrier_wait(&parked);
	for (;;)
		pause();
}

N static void *jumped_thread(void *arg)
{
	static const char *const names[] = { "jmp-long", "jmp-sig", "jmp-chk" };

	jumped_how = (int)(intptr_t)arg;
	rip_thread_set_name(names[jumped_how]);
	jumped_base();
	return arg;
}

static int jumped(const char *ready)
{
	pthread_t t;

	if (pthread_barrier_init(&parked, NULL, 4))
		return 3;
	for (intptr_t i = 0; i < 3; i++)
		if (pthread_create(&t, NULL, jumped_thread, (void *)i))
			return 3;
	pthread_barrier_wait(&parked);
	write_file(ready, "ready\n");
	for (;;)
		pause();
}

/* ---- split -------------------------------------------------------------------------------- */

struct split_buf {
	char *p;
	size_t n, cap;
};

N static int split_leaf(int x)
{
	sink += x;
	return x ^ 3;
}

/*
 * Not noinline: gcc splits it (ipa-split), its first test into the caller
 * with the entry's hook, the loop (big enough to stay out of line) into
 * split_work.part.0, which jumps to the exit's hook.
 */
static void split_work(struct split_buf *b, int n)
{
	if (__builtin_expect(n == 1, 1))
		return;
	do {
		size_t need = b->n + (size_t)n * 8;

		if (need > b->cap) {
			b->cap = need * 2;
			b->p = realloc(b->p, b->cap);
			if (!b->p)
				abort();
		}
		for (int i = 0; i < n; i++) {
			memcpy(b->p + b->n, &i, sizeof(i));
			b->n += sizeof(i);
		}
		b->n -= (size_t)n * 2;
		switch ((n + (int)b->n) % 5) {
		case 0:
			memset(b->p, n, b->n / 2);
			break;
		case 1:
			memmove(b->p + 1, b->p, b->n / 3);
			break;
		case 2:
			for (size_t j = 0; j < b->n; j += 7)
				b->p[j] ^= (char)j;
			break;
		case 3:
			sink += (int)strnlen(b->p, b->n);
			break;
		default:
			for (size_t j = 1; j < b->n; j++)
				b->p[j] += b->p[j - 1];
			break;
		}
		sink += split_leaf(n);
		n--;
	} while (n > 1);
}

N static long split_run(long n)
{
	struct split_buf b = { 0 };

	for (long i = 0; i < n; i++) {
		split_work(&b, (int)(i % 4) + 1);
		if (b.n > 4096)
			b.n = 0;
	}
	free(b.p);
	return n;
}

/* ---- sib ----------------------------------------------------------------------------------- */

/* Not static: each a function of its own, called by a jump (gcc would clone a static one). */
int sib_leaf(int x);
int sib_2(int x);
int sib_1(int x);

N int sib_leaf(int x)
{
	sink++;
	return x + 1;
}

N int sib_2(int x)
{
	return sib_leaf(x * 2);
}

N int sib_1(int x)
{
	return sib_2(x + 3);
}

N static long sib_run(long n)
{
	long t = 0;

	for (long i = 0; i < n; i++)
		t += sib_1((int)i);
	return t;
}

/* ---- big ----------------------------------------------------------------------------------- */

static uintptr_t big_ra; /* big_host's return address, as it saw it */
/* Levels of big_rec a call of rec_run makes. */
#define BIG_REC_DEPTH 5

N static int big_leaf(int x)
{
	sink += x;
	return x + 1;
}
INL int big_inl(int x)
{
	return big_leaf(x) + 1;
}

/* More locals than the hooks' first look covers: its frame pointer says where its frame is. */
N static int big_host(int x)
{
	volatile uintptr_t buf[48];

	for (int i = 0; i < 48; i++)
		buf[i] = 0;
	big_ra = (uintptr_t)__builtin_return_address(0);
	return big_inl(x + (int)buf[x & 31]);
}

/* Untraced, called from where big_host is: its frame is where big_host's will be. */
__attribute__((no_instrument_function, noinline)) static void big_plant(void)
{
	volatile uintptr_t v[64];

	for (int i = 0; i < 64; i++)
		v[i] = big_ra;
	sink += (int)v[63];
}

N static int big_run(long n)
{
	int x = 0;

	for (long i = 0; i < n; i++) {
		big_plant();
		x += big_host((int)i);
	}
	return x;
}

/* big_rec's return address as its deepest level saw it: the call of itself. */
static uintptr_t rec_ra;

/* Recursion from one call site through a frame bigger than the first look, and an inlined call. */
N static int big_rec(int n)
{
	volatile uintptr_t buf[48];
	int r;

	for (int i = 0; i < 48; i++)
		buf[i] = 0;
	rec_ra = (uintptr_t)__builtin_return_address(0);
	r = big_inl(n);
	if (n > 0)
		r += big_rec(n - 1);
	return r + (int)buf[n & 31];
}

/* Untraced: fills where the levels of big_rec will be with the address of its recursive call. */
__attribute__((no_instrument_function, noinline)) static void rec_plant(void)
{
	volatile uintptr_t v[512];

	for (int i = 0; i < 512; i++)
		v[i] = rec_ra;
	sink += (int)v[511];
}

N static int rec_run(long n)
{
	int x = 0;

	for (long i = 0; i < n; i++) {
		rec_plant();
		x += big_rec(BIG_REC_DEPTH - 1);
	}
	return x;
}

/* ---- moved -------------------------------------------------------------------------------- */

#define MOVED_PLANT 32 /* words of moved_call's alloca, just above moved_host's return address */

N static int moved_leaf(int x)
{
	sink += x;
	return x + 1;
}
INL int moved_inl(int x)
{
	return moved_leaf(x) + 1;
}

/*
 * n words of alloca, then an inlined call: its hooks run n words lower,
 * where the frame ends.  Around the call, the words above its return
 * address (its caller's, plant) hold copies of it: the first that a pass
 * with more words had its hooks' distance to the real one lands on.
 * Cleared before its own exit unless keep: that exit's hook, its frame
 * moved, looks for its return address, and copies lie above it.
 */
N static int moved_host(int n, volatile uintptr_t *plant, int keep)
{
	volatile uintptr_t *v = __builtin_alloca((size_t)n * sizeof(*v));
	uintptr_t ra = (uintptr_t)__builtin_return_address(0);
	int r;

	for (int i = 0; i < n; i++)
		v[i] = 0;
	for (int i = 0; i < MOVED_PLANT; i++)
		plant[i] = ra;
	r = moved_inl(n + (int)v[n - 1]);
	for (int i = 0; i < MOVED_PLANT && !keep; i++)
		plant[i] = 0;
	return r;
}

/* Untraced: its alloca'd words, at the bottom of its frame, lie just above moved_host's. */
__attribute__((no_instrument_function, noinline)) static int moved_call(int n, int keep)
{
	volatile uintptr_t *v = __builtin_alloca(MOVED_PLANT * sizeof(*v));
	int r;

	for (int i = 0; i < MOVED_PLANT; i++)
		v[i] = 0;
	r = moved_host(n, v, keep);
	return r + (int)(v[MOVED_PLANT - 1] & 1);
}

N static int moved_run(long n, int keep)
{
	int x = 0;

	for (long i = 0; i < n; i++)
		x += moved_call(i & 1 ? 6 : 2, keep);
	return x;
}

/* ---- spin ---------------------------------------------------------------------------------- */

static volatile int spin_stop;
static int spin_ready;
static pthread_mutex_t spin_lock = PTHREAD_MUTEX_INITIALIZER;

N static uint64_t spin_c(uint64_t x)
{
	return x * 3 + 1;
}
N static uint64_t spin_b(uint64_t x)
{
	return spin_c(x) + spin_c(x + 1);
}
N static uint64_t spin_a(uint64_t x)
{
	return spin_b(x) ^ 5;
}

static __thread jmp_buf spin_env;
static int spin_depth; /* spindeep: the recursion's levels; 0: spin */

N static uint64_t spin_deep(int n, uint64_t x)
{
	if (!n)
		return spin_a(x);
	return spin_c(x) + spin_deep(n - 1, x + 1) * 7;
}

N static uint64_t spin_dive(int n, uint64_t x)
{
	uint64_t r = 0;

	if (n)
		return spin_c(x) + spin_dive(n - 1, x + 1) * 7;
	for (int i = 0; i < 16; i++)
		r += spin_deep(40, x + i);
	return r;
}

/* What spin_deep(n, x) returns, untraced. */
__attribute__((no_instrument_function)) static uint64_t spin_deep_want(int n, uint64_t x)
{
	uint64_t r = ((x + n) * 3 + 1 + (x + n + 1) * 3 + 1) ^ 5;

	while (n--)
		r = (x + n) * 3 + 1 + r * 7;
	return r;
}

/* What spin_dive(n, x) returns, untraced. */
__attribute__((no_instrument_function)) static uint64_t spin_dive_want(int n, uint64_t x)
{
	uint64_t r = 0;

	for (int i = 0; i < 16; i++)
		r += spin_deep_want(40, x + n + i);
	while (n--)
		r = (x + n) * 3 + 1 + r * 7;
	return r;
}

N static void spin_down(int d)
{
	if (!d)
		longjmp(spin_env, 1);
	if (d > 0)
		spin_down(d - 1);
	sink++;
}
N static int spin_jump(void)
{
	if (!setjmp(spin_env))
		spin_down(4);
	return 1;
}

N static void *spin_thread(void *arg)
{
	uint64_t calls = 0;

	rip_thread_set_name("spinner");
	pthread_mutex_lock(&spin_lock);
	spin_ready++;
	pthread_mutex_unlock(&spin_lock);
	while (!spin_stop && spin_depth) {
		if (spin_dive(spin_depth, calls) != spin_dive_want(spin_depth, calls)) {
			fprintf(stderr, "funcprog: spin_dive(%llu) is wrong\n",
				(unsigned long long)calls);
			exit(4);
		}
		calls++;
	}
	while (!spin_stop) {
		uint64_t x = calls;

		if (spin_a(x) != ((x * 3 + 1 + (x + 1) * 3 + 1) ^ 5)) {
			fprintf(stderr, "funcprog: spin_a(%llu) is wrong\n", (unsigned long long)x);
			exit(4);
		}
		if (!(calls % 16) && spin_jump() != 1)
			exit(4);
		calls++;
	}
	return (void *)(uintptr_t)calls;
}

static pthread_barrier_t many_all;

N static void *many_thread(void *arg)
{
	uint64_t n = (uint64_t)(uintptr_t)arg, bad = 0;

	pthread_barrier_wait(&many_all);
	for (uint64_t x = 0; x < n; x++)
		bad += spin_a(x) != ((x * 3 + 1 + (x + 1) * 3 + 1) ^ 5);
	pthread_barrier_wait(&many_all);
	return (void *)(uintptr_t)bad;
}

__attribute__((no_instrument_function)) static int many(int nthreads, long n)
{
	pthread_t *t = calloc((size_t)(nthreads > 0 ? nthreads : 1), sizeof(*t));
	pthread_attr_t attr;
	int bad = 0;

	if (!t || nthreads < 1 || n < 0 || pthread_barrier_init(&many_all, NULL, (unsigned)nthreads))
		return 2;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], &attr, many_thread, (void *)(uintptr_t)n)) {
			fprintf(stderr, "funcprog: pthread_create failed at thread %d\n", i);
			return 3;
		}
	for (int i = 0; i < nthreads; i++) {
		void *r;

		pthread_join(t[i], &r);
		bad += r != NULL;
	}
	free(t);
	printf("calls %llu\n", (unsigned long long)nthreads * (4 * (unsigned long long)n + 1));
	return bad ? 4 : 0;
}

__attribute__((no_instrument_function)) static void spin_int(int sig)
{
	(void)sig;
	spin_stop = 1;
}

static int spin(int seconds, int nthreads, const char *ready)
{
	pthread_t t[64];
	uint64_t total = 0;
	struct timespec ts = { .tv_sec = seconds };

	if (nthreads < 1 || nthreads > 64)
		return 2;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, spin_thread, NULL))
			return 3;
	for (;;) {
		pthread_mutex_lock(&spin_lock);
		int n = spin_ready;

		pthread_mutex_unlock(&spin_lock);
		if (n == nthreads)
			break;
		usleep(1000);
	}
	signal(SIGINT, spin_int);
	if (ready)
		write_file(ready, "ready\n");
	while (!spin_stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
	spin_stop = 1;
	for (int i = 0; i < nthreads; i++) {
		void *r;

		pthread_join(t[i], &r);
		total += (uintptr_t)r;
	}
	printf("calls %llu\n", (unsigned long long)total);
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "park")) {
		if (pipe(pipefd) || pthread_barrier_init(&parked, NULL, 5))
			return 3;
		rip_thread_set_name("main");
		if (argc == 4) {
			pthread_t g;
			char path[4096];

			gate_go = argv[3];
			snprintf(path, sizeof(path), "%s.gate", argv[2]);
			if (pthread_create(&g, NULL, gate_thread, NULL))
				return 3;
			write_file(path, "gate\n");
			pthread_join(g, NULL);
		}
		sched_run(argv[2]);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "count")) {
		long n = strtol(argv[2], NULL, 10);

		printf("%d\n", count_run(n));
		return 0;
	}
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "inline")) {
		rip_thread_set_name("main");
		printf("%d\n", inline_run(strtol(argv[2], NULL, 10), argc == 4 ? argv[3] : NULL));
		return 0;
	}
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "ptrinl")) {
		rip_thread_set_name("main");
		printf("%d\n", ptrinl_run(strtol(argv[2], NULL, 10), argc == 4 ? argv[3] : NULL));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "stale")) {
		stale_run(strtol(argv[2], NULL, 10));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "big")) {
		printf("%d\n", big_run(strtol(argv[2], NULL, 10)));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "bigrec")) {
		printf("%d\n", rec_run(strtol(argv[2], NULL, 10)));
		return 0;
	}
	if (argc == 3 && (!strcmp(argv[1], "moved") || !strcmp(argv[1], "movedkeep"))) {
		printf("%d\n", moved_run(strtol(argv[2], NULL, 10), argv[1][5] == 'k'));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "sib")) {
		long n = strtol(argv[2], NULL, 10);

		/* sum of 2 (i + 3) + 1 */
		return sib_run(n) == n * (n - 1) + 7 * n ? 0 : 1;
	}
	if ((argc == 3 || argc == 4) &&
	    (!strcmp(argv[1], "deep") || (argc == 3 && !strcmp(argv[1], "deepslow")))) {
		rip_thread_set_name("main");
		deep_slow = argv[1][4] ? 20 : 0;
		deep_run(strtol(argv[2], NULL, 10), argc == 4 ? argv[3] : NULL);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "deepinl")) {
		deepinl_run(strtol(argv[2], NULL, 10), strtol(argv[3], NULL, 10));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "split")) {
		printf("%ld\n", split_run(strtol(argv[2], NULL, 10)));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "jumped"))
		return jumped(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "jumpfill")) {
		rip_thread_set_name("main");
		jf_run(argv[2]);
		return 0;
	}
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "spin"))
		return spin(atoi(argv[2]), atoi(argv[3]), argc == 5 ? argv[4] : NULL);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "spindeep")) {
		spin_depth = atoi(argv[4]);
		if (spin_depth < 1 || spin_depth > 100000)
			return 2;
		return spin(atoi(argv[2]), atoi(argv[3]), argc == 6 ? argv[5] : NULL);
	}
	if (argc == 4 && !strcmp(argv[1], "many"))
		return many(atoi(argv[2]), strtol(argv[3], NULL, 10));
	fprintf(stderr,
		"usage: funcprog park READY [GO] | count N | inline N [READY] | ptrinl N [READY] | "
		"stale N | "
		"deep N [READY] | jumped READY | jumpfill READY | split N | sib N | big N | bigrec N | moved N | movedkeep N | spin SECONDS THREADS [READY] | "
		"spindeep SECONDS THREADS DEPTH [READY] | many THREADS N\n");
	return 2;
}
