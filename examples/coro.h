/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/coro.h - a tiny stackful coroutine scheduler for x86-64 Linux,
 * shared by the examples, and the reference for wiring a scheduler to librip.
 *
 * One scheduler per thread, single-threaded: every call below is made on the
 * thread that runs coro_sched_run().  Stacks are carved from one big
 * MAP_NORESERVE mapping, CORO_STACK bytes each; a coroutine only costs the
 * pages its stack really touches (one, for the examples), so 100,000 of them
 * fit in a few hundred MiB.  There are no guard pages: one mprotect'ed page
 * per stack would be one mapping per coroutine, far beyond vm.max_map_count;
 * keep coroutine frames small.
 *
 * The context switch saves the callee-saved registers and the stack pointer
 * on the stack being left, and restores them from the one being entered:
 *
 *	saved sp -> | r15 | r14 | r13 | r12 | rbx | rbp | return address |
 *
 * A new coroutine's stack is prepared to look like one that was switched out
 * right before coro_start(), with rbp = 0 and a zero return address above it
 * so that frame-pointer walks end there.  The MXCSR and x87 control words are
 * not switched: nothing here changes rounding modes.  Nor is the CET shadow
 * stack: do not run this with user shadow stacks enabled.
 *
 * librip: each coroutine owns a slot (rip_coro_create/rip_coro_destroy); the
 * scheduler calls rip_coro_switch_in() right before it jumps into a coroutine
 * and rip_coro_switch_out() right after it comes back, so rip_snap() inside a
 * coroutine records into the coroutine's own history and readers see which
 * coroutines run, which wait, and since when.
 */
#ifndef RIP_EXAMPLES_CORO_H
#define RIP_EXAMPLES_CORO_H

#if !defined(__x86_64__) || !defined(__linux__)
#error "coro.h supports x86-64 Linux only"
#endif

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include <rip.h>

#define CORO_STACK (16u * 1024u)

enum coro_state {
	CORO_READY,   /* on the run queue */
	CORO_RUNNING, /* the one the scheduler jumped into */
	CORO_PARKED,  /* waits for coro_wake() */
	CORO_DONE,    /* returned; reaped by the scheduler */
};

struct coro_sched;

struct coro {
	void *sp;	   /* saved stack pointer while switched out */
	struct coro *next; /* run queue, wait queue or free list link */
	struct coro_sched *sched;
	struct rip_coro *rip; /* its librip slot; NULL if the ring had none */
	void (*fn)(void *arg);
	void *arg;
	char *stack; /* lowest address of its stack */
	enum coro_state state;
};

/* A FIFO of coroutines: the run queue, or anything coroutines wait on. */
struct coro_queue {
	struct coro *head, *tail;
	size_t len;
};

struct coro_sched {
	void *sp;	  /* the scheduler's context while a coroutine runs */
	struct coro *cur; /* running coroutine, NULL in the scheduler */
	struct coro_queue runq;
	struct coro *free;  /* finished coroutines: descriptor and stack to reuse */
	struct coro *coros; /* descriptors [cap] */
	char *stacks;	    /* cap * CORO_STACK bytes */
	uint32_t cap;
	uint32_t used;	  /* descriptors handed out at least once */
	uint32_t live;	  /* coroutines not finished yet */
	uint32_t no_slot; /* coroutines the ring had no slot for */
};

/*
 * coro_switch(save, to): store the current context's stack pointer in *save
 * and continue the context whose saved stack pointer is to.  An ordinary
 * call for the compiler, so it assumes every caller-saved register and all
 * memory changed.  Weak and hidden, so that several files may include this.
 */
__asm__(".pushsection .text\n"
	".weak coro_switch\n"
	".hidden coro_switch\n"
	".type coro_switch, @function\n"
	"coro_switch:\n"
	"\tpushq %rbp\n"
	"\tpushq %rbx\n"
	"\tpushq %r12\n"
	"\tpushq %r13\n"
	"\tpushq %r14\n"
	"\tpushq %r15\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	"\tpopq %r15\n"
	"\tpopq %r14\n"
	"\tpopq %r13\n"
	"\tpopq %r12\n"
	"\tpopq %rbx\n"
	"\tpopq %rbp\n"
	"\tret\n"
	".size coro_switch, .-coro_switch\n"
	".popsection\n");
void coro_switch(void **save, void *to);

/* The scheduler running on this thread. */
static __thread struct coro_sched *coro_tls;

static inline void coro_queue_push(struct coro_queue *q, struct coro *co)
{
	co->next = NULL;
	if (q->tail)
		q->tail->next = co;
	else
		q->head = co;
	q->tail = co;
	q->len++;
}

static inline struct coro *coro_queue_pop(struct coro_queue *q)
{
	struct coro *co = q->head;

	if (!co)
		return NULL;
	q->head = co->next;
	if (!q->head)
		q->tail = NULL;
	co->next = NULL;
	q->len--;
	return co;
}

/* Set up a scheduler for at most cap coroutines alive at once.  0 or -errno. */
static inline int coro_sched_init(struct coro_sched *s, uint32_t cap)
{
	const int prot = PROT_READ | PROT_WRITE;
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

	*s = (struct coro_sched){ .cap = cap };
	if (!cap)
		return -EINVAL;
	s->stacks = mmap(NULL, (size_t)cap * CORO_STACK, prot, flags, -1, 0);
	if (s->stacks == MAP_FAILED)
		return -errno;
	s->coros = mmap(NULL, (size_t)cap * sizeof(struct coro), prot, flags, -1, 0);
	if (s->coros == MAP_FAILED) {
		munmap(s->stacks, (size_t)cap * CORO_STACK);
		return -errno;
	}
	return 0;
}

/* Unmap the stacks; only when no coroutine is left that could be resumed. */
static inline void coro_sched_fini(struct coro_sched *s)
{
	munmap(s->stacks, (size_t)s->cap * CORO_STACK);
	munmap(s->coros, (size_t)s->cap * sizeof(struct coro));
	*s = (struct coro_sched){ 0 };
}

/* The running coroutine, NULL outside coroutines. */
static inline struct coro *coro_self(void)
{
	return coro_tls ? coro_tls->cur : NULL;
}

/* Where every coroutine starts: coro_switch "returns" here the first time. */
__attribute__((noinline, unused)) static void coro_start(void)
{
	struct coro_sched *s = coro_tls;
	struct coro *co = s->cur;

	co->fn(co->arg);
	co->state = CORO_DONE;
	coro_switch(&co->sp, s->sp);
	__builtin_unreachable();
}

/*
 * Create a coroutine that runs fn(arg) under name (as rip ps shows it) and
 * queue it to run.  NULL with errno = EAGAIN when cap coroutines are alive.
 * A coroutine the ring has no slot for still runs, untraced.
 */
static inline struct coro *coro_spawn(struct coro_sched *s, const char *name, void (*fn)(void *arg),
				      void *arg)
{
	struct coro *co = s->free;
	uint64_t *top;

	if (co) {
		s->free = co->next;
	} else if (s->used < s->cap) {
		co = &s->coros[s->used];
		co->stack = s->stacks + (size_t)s->used * CORO_STACK;
		s->used++;
	} else {
		errno = EAGAIN;
		return NULL;
	}
	co->sched = s;
	co->fn = fn;
	co->arg = arg;
	if (rip_coro_create(name, &co->rip) < 0) {
		co->rip = NULL;
		s->no_slot++;
	}
	/* The frame coro_switch pops: six registers (rbp = 0), then coro_start. */
	top = (uint64_t *)(co->stack + CORO_STACK);
	top[-1] = 0;			 /* coro_start's return address: none */
	top[-2] = (uintptr_t)coro_start; /* where coro_switch returns to */
	for (int i = 3; i <= 8; i++)
		top[-i] = 0; /* rbp, rbx, r12, r13, r14, r15 */
	co->sp = &top[-8];
	co->state = CORO_READY;
	coro_queue_push(&s->runq, co);
	s->live++;
	return co;
}

/* Jump into co until it yields, parks or returns. */
static inline void coro_resume(struct coro_sched *s, struct coro *co)
{
	s->cur = co;
	co->state = CORO_RUNNING;
	if (co->rip)
		rip_coro_switch_in(co->rip);
	coro_switch(&s->sp, co->sp);
	if (co->rip)
		rip_coro_switch_out();
	s->cur = NULL;
	if (co->state == CORO_DONE) {
		if (co->rip)
			rip_coro_destroy(co->rip);
		co->rip = NULL;
		co->next = s->free;
		s->free = co;
		s->live--;
	}
}

/*
 * Run coroutines until the run queue is empty (everything parked or done).
 * Returns how many times a coroutine was resumed.
 */
static inline unsigned long coro_sched_run(struct coro_sched *s)
{
	unsigned long n = 0;
	struct coro *co;

	coro_tls = s;
	while ((co = coro_queue_pop(&s->runq))) {
		coro_resume(s, co);
		n++;
	}
	return n;
}

/* Leave the CPU to the other ready coroutines; come back after them. */
static inline void coro_yield(void)
{
	struct coro_sched *s = coro_tls;
	struct coro *co = s->cur;

	co->state = CORO_READY;
	coro_queue_push(&s->runq, co);
	coro_switch(&co->sp, s->sp);
}

/* Switch out until someone calls coro_wake() on this coroutine. */
static inline void coro_park(void)
{
	struct coro_sched *s = coro_tls;
	struct coro *co = s->cur;

	co->state = CORO_PARKED;
	coro_switch(&co->sp, s->sp);
}

/* Make a parked coroutine ready again; false if it was not parked. */
static inline int coro_wake(struct coro *co)
{
	if (co->state != CORO_PARKED)
		return 0;
	co->state = CORO_READY;
	coro_queue_push(&co->sched->runq, co);
	return 1;
}

/* Park the running coroutine at the end of q. */
static inline void coro_wait(struct coro_queue *q)
{
	coro_queue_push(q, coro_self());
	coro_park();
}

/* Wake the coroutine that has waited longest on q; false if q is empty. */
static inline int coro_wake_one(struct coro_queue *q)
{
	struct coro *co = coro_queue_pop(q);

	return co ? coro_wake(co) : 0;
}

#endif /* RIP_EXAMPLES_CORO_H */
