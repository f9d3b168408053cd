/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/patch.c - function tracing of code built with
 * -fpatchable-function-entry=5 (or more): the nops at a function's entry
 * turned into a call of librip, and back, while the program runs; the
 * return-address trampoline that sees the function leave.
 *
 * Patching (__rip_fn_patch, run by the watcher thread of
 * librip-preload.so on a request of rip enable): every byte is written on
 * its own (a 1-byte store through /proc/self/mem, which writes the
 * read-only text without making it writable), in an order where every
 * state the bytes pass through decodes, from any instruction boundary a
 * thread may stand on, into instructions that do nothing but fall through
 * to the end of the nops or call librip:
 *
 *   gcc's nops, 90 90 90 90 90 (five 1-byte instructions: a thread may be
 *   between any two): bytes 1-4 become the displacement of a call, each
 *   one of 90 (nop), f8 (clc), f9 (stc) or f5 (cmc), 1-byte instructions
 *   that touch only the flags, dead at a function's entry; then byte 0
 *   becomes e8 (call rel32).  A thread past byte 0 runs harmless 1-byte
 *   instructions to the end; one at byte 0 runs the nop or the call.
 *
 *   clang's nop, 0f 1f 44 00 08 (one instruction, nopl disp8(base,index)):
 *   its ModRM reg field, SIB and disp8 can take any value and stay the same
 *   5-byte nop; they become the displacement's bytes, then byte 0 becomes
 *   e8.  (The displacement's low byte is 1f, its second ModRM 44..7c.)
 *
 * Unpatching writes byte 0 back, then the others.  The call's target,
 * site + 5 + displacement, is a pad in a region mapped for the module: a
 * copy of the module's address range shifted by the displacement, which is
 * chosen among the values the bytes allow so that the region is free
 * address space.  A pad is "jmp stub"; the stub, in the region's first
 * page, jumps to __rip_fn_pentry.  Pads are written before any call can
 * reach them, then membarrier (SYNC_CORE) before the byte 0 writes.
 *
 * The entry (__rip_fn_pentry, then __rip_fn_penter_fast of func.c, or
 * when that declines __rip_fn_penter): the function's arguments are saved
 * (general registers; vector registers as wide as the CPU has them only
 * around the slow path: the fast one, built with -mgeneral-regs-only,
 * leaves them alone); the return address pushed by the patched call says
 * which function (site + 5), the one above it is the function's own: it is
 * replaced by __rip_fn_pexit, and the real one kept on the return stack of
 * the slot the thread runs (a coroutine's follows the coroutine), with the
 * function's cfa and whether the entry's record was written (the func
 * category on).  The exit (__rip_fn_pexit) finds its entry by that cfa,
 * pops it and the entries above it (their frames are gone: a longjmp went
 * past them), writes its record iff the entry's was (a call under way when
 * rip enable or rip disable toggles the category and the patches has both
 * records or neither), and returns where the function would have.  Entries are
 * dropped nowhere else, except at an entry, where an entry whose cfa is at
 * or below the new one and whose stack slot no longer holds
 * __rip_fn_pexit is provably gone, and at a longjmp that stays on the
 * thread's own stack, where those at or below where it lands are
 * (__rip_fn_rets_jumped).  Before an exception unwinds the stack,
 * the preload library's hooks of _Unwind_* put every real return address
 * of the thread's slot back (__rip_fn_unwinding): the unwinder never sees
 * the trampoline.  At the catch (its hook of __cxa_begin_catch), the
 * entries of the frames unwound go, and the frames that live on get the
 * trampoline again (__rip_fn_rets_caught), so that their exits are seen.
 * The program's own backtrace(3) and _Unwind_Backtrace (the preload
 * library's hooks of them) walk with the real return addresses lent back
 * for the time of the walk (__rip_fn_rets_lend, __rip_fn_rets_back): the
 * frames are the program's.
 * The preload library's own walker, which must not write the program's
 * stack, takes a return address that is __rip_fn_pexit (__rip_fn_pexit_at)
 * from the return stack instead (__rip_fn_ret_at, by the frame's cfa).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#if defined(__x86_64__)

#define RIP_FN_SITES_MIN 4096u /* the patched sites' table, entries at first */

/* What the CPU saves for a vector argument: 0 xmm, 1 ymm, 2 zmm (set before any patch). */
int __rip_fn_vsave __attribute__((visibility("hidden")));

/* ---- the trampolines ---------------------------------------------------------------- */

/*
 * __rip_fn_pentry: [rsp] is the patched site + 5, [rsp + 8] the function's
 * return address.  rsp may be 8 off the ABI's 16-byte alignment: gcc calls
 * a function it knows needs no aligned stack with whatever rsp it has, so
 * both trampolines align their own frame (rbp keeps the way back).  Saved:
 * the argument registers, rax (variadic calls), r10 (static chain), r11.
 * Then the fast path, __rip_fn_penter_fast (lib/func.c, built with
 * -mgeneral-regs-only: it touches no vector or x87 register), does the
 * common case; only when it declines (before changing anything) are
 * xmm/ymm/zmm 0-7 saved too, around the slow path, __rip_fn_penter.
 * Saving the vector registers at every call cost 1.5-2 ns a call (zmm).
 *
 * __rip_fn_pexit: reached by the function's ret, rsp at its cfa; the
 * return value is in rax, rdx, xmm/ymm/zmm 0-1 (and st0-1, which the C code
 * leaves alone): rax and rdx saved, then the real return address from
 * __rip_fn_pexit_fast, or when it declines (0), with xmm/ymm/zmm 0-1 saved
 * too, from __rip_fn_pexit_c, is where it jumps (through r11, which no
 * return value uses), with rsp at the cfa.  A jump, not a ret: the function's own ret
 * came here against the CPU's return-stack prediction and took the
 * caller's entry off it; a second ret would take the entry of the caller's
 * caller, mispredicting that return and every one above it in the chain
 * (measured: 5 ns a call of a 9-deep chain), where the indirect jump leaves
 * the stack of predictions as the program's own calls and returns expect.
 *
 * A hijacked return address is exactly __rip_fn_pexit, and unwinders (libgcc,
 * libunwind, gdb, preload/unwind.c) look up the unwind rule of return
 * address - 1, the call's last byte.  So the pexit FDE starts one byte
 * before the label, an int3 no one runs (glibc does the same before
 * __start_context): the rule found there is pexit's own, "the return
 * address is undefined", and a walk through a patched frame stops cleanly
 * there instead of taking __rip_fn_pentry's rule, whose CFA comes from an
 * rbp that is not its own, and going on with garbage.  The 15 bytes before
 * it keep the label 16-byte aligned.
 */
__asm__(".text\n"
	".p2align 4\n"
	".globl __rip_fn_pentry\n"
	".hidden __rip_fn_pentry\n"
	".type __rip_fn_pentry,@function\n"
	"__rip_fn_pentry:\n"
	".cfi_startproc\n"
	"endbr64\n"
	"push %rbp\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_rel_offset rbp, 0\n"
	"mov %rsp, %rbp\n"
	".cfi_def_cfa_register rbp\n"
	"and $-64, %rsp\n"
	"sub $0x280, %rsp\n"
	"mov %rdi, 0x200(%rsp)\n"
	"mov %rsi, 0x208(%rsp)\n"
	"mov %rdx, 0x210(%rsp)\n"
	"mov %rcx, 0x218(%rsp)\n"
	"mov %r8, 0x220(%rsp)\n"
	"mov %r9, 0x228(%rsp)\n"
	"mov %rax, 0x230(%rsp)\n"
	"mov %r10, 0x238(%rsp)\n"
	"mov %r11, 0x240(%rsp)\n"
	"lea 8(%rbp), %rdi\n"
	"call __rip_fn_penter_fast\n"
	"test %eax, %eax\n"
	"jz 4f\n"
	"cmpl $1, __rip_fn_vsave(%rip)\n"
	"ja 2f\n"
	"je 1f\n"
	"movdqu %xmm0, 0x000(%rsp)\n"
	"movdqu %xmm1, 0x040(%rsp)\n"
	"movdqu %xmm2, 0x080(%rsp)\n"
	"movdqu %xmm3, 0x0c0(%rsp)\n"
	"movdqu %xmm4, 0x100(%rsp)\n"
	"movdqu %xmm5, 0x140(%rsp)\n"
	"movdqu %xmm6, 0x180(%rsp)\n"
	"movdqu %xmm7, 0x1c0(%rsp)\n"
	"jmp 3f\n"
	"1:\n"
	"vmovdqu %ymm0, 0x000(%rsp)\n"
	"vmovdqu %ymm1, 0x040(%rsp)\n"
	"vmovdqu %ymm2, 0x080(%rsp)\n"
	"vmovdqu %ymm3, 0x0c0(%rsp)\n"
	"vmovdqu %ymm4, 0x100(%rsp)\n"
	"vmovdqu %ymm5, 0x140(%rsp)\n"
	"vmovdqu %ymm6, 0x180(%rsp)\n"
	"vmovdqu %ymm7, 0x1c0(%rsp)\n"
	"jmp 3f\n"
	"2:\n"
	"vmovdqu64 %zmm0, 0x000(%rsp)\n"
	"vmovdqu64 %zmm1, 0x040(%rsp)\n"
	"vmovdqu64 %zmm2, 0x080(%rsp)\n"
	"vmovdqu64 %zmm3, 0x0c0(%rsp)\n"
	"vmovdqu64 %zmm4, 0x100(%rsp)\n"
	"vmovdqu64 %zmm5, 0x140(%rsp)\n"
	"vmovdqu64 %zmm6, 0x180(%rsp)\n"
	"vmovdqu64 %zmm7, 0x1c0(%rsp)\n"
	"3:\n"
	"lea 8(%rbp), %rdi\n"
	"call __rip_fn_penter\n"
	"cmpl $1, __rip_fn_vsave(%rip)\n"
	"ja 2f\n"
	"je 1f\n"
	"movdqu 0x000(%rsp), %xmm0\n"
	"movdqu 0x040(%rsp), %xmm1\n"
	"movdqu 0x080(%rsp), %xmm2\n"
	"movdqu 0x0c0(%rsp), %xmm3\n"
	"movdqu 0x100(%rsp), %xmm4\n"
	"movdqu 0x140(%rsp), %xmm5\n"
	"movdqu 0x180(%rsp), %xmm6\n"
	"movdqu 0x1c0(%rsp), %xmm7\n"
	"jmp 3f\n"
	"1:\n"
	"vmovdqu 0x000(%rsp), %ymm0\n"
	"vmovdqu 0x040(%rsp), %ymm1\n"
	"vmovdqu 0x080(%rsp), %ymm2\n"
	"vmovdqu 0x0c0(%rsp), %ymm3\n"
	"vmovdqu 0x100(%rsp), %ymm4\n"
	"vmovdqu 0x140(%rsp), %ymm5\n"
	"vmovdqu 0x180(%rsp), %ymm6\n"
	"vmovdqu 0x1c0(%rsp), %ymm7\n"
	"jmp 3f\n"
	"2:\n"
	"vmovdqu64 0x000(%rsp), %zmm0\n"
	"vmovdqu64 0x040(%rsp), %zmm1\n"
	"vmovdqu64 0x080(%rsp), %zmm2\n"
	"vmovdqu64 0x0c0(%rsp), %zmm3\n"
	"vmovdqu64 0x100(%rsp), %zmm4\n"
	"vmovdqu64 0x140(%rsp), %zmm5\n"
	"vmovdqu64 0x180(%rsp), %zmm6\n"
	"vmovdqu64 0x1c0(%rsp), %zmm7\n"
	"3:\n"
	"4:\n"
	"mov 0x200(%rsp), %rdi\n"
	"mov 0x208(%rsp), %rsi\n"
	"mov 0x210(%rsp), %rdx\n"
	"mov 0x218(%rsp), %rcx\n"
	"mov 0x220(%rsp), %r8\n"
	"mov 0x228(%rsp), %r9\n"
	"mov 0x230(%rsp), %rax\n"
	"mov 0x238(%rsp), %r10\n"
	"mov 0x240(%rsp), %r11\n"
	"mov %rbp, %rsp\n"
	"pop %rbp\n"
	".cfi_def_cfa rsp, 8\n"
	".cfi_restore rbp\n"
	"ret\n"
	".cfi_endproc\n"
	".size __rip_fn_pentry, .-__rip_fn_pentry\n"
	"\n"
	".p2align 4\n"
	".skip 15, 0xcc\n"
	".globl __rip_fn_pexit\n"
	".hidden __rip_fn_pexit\n"
	".type __rip_fn_pexit,@function\n"
	".cfi_startproc\n"
	".cfi_undefined rip\n"
	"int3\n"
	"__rip_fn_pexit:\n"
	"sub $8, %rsp\n"
	"push %rbp\n"
	"mov %rsp, %rbp\n"
	"and $-64, %rsp\n"
	"sub $0xc0, %rsp\n"
	"mov %rax, 0x80(%rsp)\n"
	"mov %rdx, 0x88(%rsp)\n"
	"lea 16(%rbp), %rdi\n"
	"call __rip_fn_pexit_fast\n"
	"test %rax, %rax\n"
	"jnz 4f\n"
	"cmpl $1, __rip_fn_vsave(%rip)\n"
	"ja 2f\n"
	"je 1f\n"
	"movdqu %xmm0, 0x000(%rsp)\n"
	"movdqu %xmm1, 0x040(%rsp)\n"
	"jmp 3f\n"
	"1:\n"
	"vmovdqu %ymm0, 0x000(%rsp)\n"
	"vmovdqu %ymm1, 0x040(%rsp)\n"
	"jmp 3f\n"
	"2:\n"
	"vmovdqu64 %zmm0, 0x000(%rsp)\n"
	"vmovdqu64 %zmm1, 0x040(%rsp)\n"
	"3:\n"
	"lea 16(%rbp), %rdi\n"
	"call __rip_fn_pexit_c\n"
	"mov %rax, 0x90(%rsp)\n"
	"cmpl $1, __rip_fn_vsave(%rip)\n"
	"ja 2f\n"
	"je 1f\n"
	"movdqu 0x000(%rsp), %xmm0\n"
	"movdqu 0x040(%rsp), %xmm1\n"
	"jmp 3f\n"
	"1:\n"
	"vmovdqu 0x000(%rsp), %ymm0\n"
	"vmovdqu 0x040(%rsp), %ymm1\n"
	"jmp 3f\n"
	"2:\n"
	"vmovdqu64 0x000(%rsp), %zmm0\n"
	"vmovdqu64 0x040(%rsp), %zmm1\n"
	"3:\n"
	"mov 0x90(%rsp), %rax\n"
	"4:\n"
	"mov %rax, 8(%rbp)\n"
	"mov 0x80(%rsp), %rax\n"
	"mov 0x88(%rsp), %rdx\n"
	"mov 8(%rbp), %r11\n"
	"mov %rbp, %rsp\n"
	"pop %rbp\n"
	"lea 8(%rsp), %rsp\n"
	"jmp *%r11\n"
	".cfi_endproc\n"
	".size __rip_fn_pexit, .-__rip_fn_pexit\n");

extern char __rip_fn_pentry[] __hidden;

/* ---- return stacks, one per slot ------------------------------------------------------ */

struct rip_fn_rets *__rip_fn_rets;
uint32_t __rip_fn_nrets;
__thread int __rip_fn_busy __attribute__((tls_model("initial-exec")));

/* The return stack of slot index (of the file h), started afresh for a new owner. */
static struct rip_fn_rets *rip_fn_rets_of(struct rip_file_hdr *h, uint32_t index)
{
	struct rip_fn_rets *r;
	uint32_t owner;

	/* Acquire: pairs with the release store of the pointer once it is mapped. */
	r = __atomic_load_n(&__rip_fn_rets, __ATOMIC_ACQUIRE);
	if (!r || index >= __rip_fn_nrets || index >= h->slot_count)
		return NULL;
	r += index;
	owner = (uint32_t)rip_slot_at(h, index)->attach_ts;
	if (r->owner != owner) {
		r->n = 0;
		r->owner = owner;
	}
	return r;
}

void __rip_fn_penter(uintptr_t *slot)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	uintptr_t fn = slot[0] - 5, *ra = &slot[1], cfa = (uintptr_t)&slot[2];
	struct rip_fn_stack *st;
	struct rip_fn_rets *r;
	uint32_t index = 0, n;
	bool rec;

	/*
	 * errno is the program's: nothing here sets it, and what may (the
	 * slot worked out, a page of stacks backed, a record's slow path)
	 * keeps it itself, as for the -finstrument-functions hooks.
	 */
	if (__rip_fn_busy)
		return; /* a signal handler inside a patched entry or exit: not seen */
	__rip_fn_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	st = __rip_fn_stack_now(&index);
	rec = __rip_fn_enter_at(st, fn, cfa);
	if (!h || !st || !(r = rip_fn_rets_of(h, index)))
		goto out;
	/* Entries at or below this cfa whose return address is ours no more are gone. */
	n = r->n;
	while (n && r->e[n - 1].cfa <= cfa &&
	       *(const uintptr_t *)(r->e[n - 1].cfa - 8) != (uintptr_t)__rip_fn_pexit)
		n--;
	if (n == RIP_FN_RETS) {
		r->n = n;
		goto out; /* full: this call's exit goes unseen */
	}
	/* The count first: a signal handler's entries go above this one. */
	r->n = n + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->e[n].ra = *ra;
	r->e[n].cfa = cfa;
	r->e[n].fn = fn | (rec ? RIP_FN_RET_REC : 0); /* the exit's record iff this entry's */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*ra = (uintptr_t)__rip_fn_pexit;
out:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_fn_busy = 0;
}

/*
 * Entry k of r's n goes, and with it the entries above it that are gone:
 * frames a longjmp passed, whose slots hold something else by now (or will
 * when the stack is used again, and penter drops them then).  The others
 * above stay: frames of a stack the program switched away from by hand (a
 * coroutine of its own: libcoro's assembly switch, boost.context), which
 * still return through the trampoline when it switches back.  Taken for
 * gone with the rest, their returns found no entry and the program was
 * aborted (tests/integ/func-gen).  Busy meanwhile: a signal handler that
 * comes in between pushes nothing onto the entries being moved.
 */
static void rip_fn_rets_drop(struct rip_fn_rets *r, uint32_t k, uint32_t n)
{
	uint32_t m = k;

	__rip_fn_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (uint32_t j = k + 1; j < n && j < RIP_FN_RETS; j++)
		if (*(const uintptr_t *)(r->e[j].cfa - 8) == (uintptr_t)__rip_fn_pexit)
			r->e[m++] = r->e[j];
	r->n = m;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_fn_busy = 0;
}

/*
 * The entry of cfa in r: its real return address (and the entry popped, *fn, *rec), or 0.
 * Called with __rip_fn_busy down (__rip_fn_pexit_c): a signal handler's
 * patched entries may push onto r at any instruction here, at r->n, so the
 * entry is read whole before the count that frees it drops.  Read after
 * (as it was), a handler that came between the two overwrote it, and the
 * function returned to the handler's caller's return address, on its own
 * stack (fntail: vec_top's, in on_timer, from level 109 of deep).
 */
static uintptr_t rip_fn_ret_take(struct rip_fn_rets *r, uintptr_t cfa, uintptr_t *fn, bool *rec)
{
	const uint32_t n = r->n;

	for (uint32_t k = n; k-- > 0;) {
		uintptr_t ra;

		if (r->e[k].cfa != cfa)
			continue;
		ra = r->e[k].ra;
		*fn = r->e[k].fn & ~RIP_FN_RET_REC;
		*rec = r->e[k].fn & RIP_FN_RET_REC;
		/* The entry read before it is freed: pairs with a handler's push (__rip_fn_penter). */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (RIP_UNLIKELY(k + 1 < n)) {
			rip_fn_rets_drop(r, k, n);
			return ra;
		}
		r->n = k;
		return ra;
	}
	return 0;
}

__attribute__((noreturn)) static void rip_fn_lost(void)
{
	static const char msg[] = "librip: a patched function returned through a return "
				  "address librip does not know: aborting\n";

	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to say */
	}
	abort();
}

uintptr_t __rip_fn_pexit_c(uintptr_t cfa)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	struct rip_fn_rets *r = __atomic_load_n(&__rip_fn_rets, __ATOMIC_ACQUIRE);
	struct rip_fn_stack *st = NULL;
	uintptr_t ra = 0, fn = 0;
	uint32_t index = 0;
	bool rec = false;

	/* errno: as in __rip_fn_penter.  The slot the thread runs, then its own, then any (a switch inside the function). */
	if (h && (st = __rip_fn_stack_now(&index)) && (r = rip_fn_rets_of(h, index)))
		ra = rip_fn_ret_take(r, cfa, &fn, &rec);
	if (!ra && h && __rip_self.thread) {
		index = (uint32_t)(((char *)__rip_self.thread - ((char *)h + h->slot_off)) >>
				   RIP_SLOT_SHIFT);
		if ((r = rip_fn_rets_of(h, index)))
			ra = rip_fn_ret_take(r, cfa, &fn, &rec);
	}
	for (uint32_t i = 0; !ra && h && __rip_fn_rets && i < __rip_fn_nrets && i < h->fresh; i++)
		if (__rip_fn_rets[i].n)
			ra = rip_fn_ret_take(&__rip_fn_rets[i], cfa, &fn, &rec);
	if (!ra)
		rip_fn_lost();
	if (!__rip_fn_busy) {
		__rip_fn_busy = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		__rip_fn_exit_at(st, fn, cfa, rec);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		__rip_fn_busy = 0;
	}
	return ra;
}

void __rip_fn_unwinding(void)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	struct rip_fn_rets *r;
	uint32_t index;

	if (!h || !__atomic_load_n(&__rip_fn_rets, __ATOMIC_ACQUIRE) || __rip_fn_busy ||
	    !__rip_fn_stack_now(&index) || !(r = rip_fn_rets_of(h, index)))
		return;
	__rip_fn_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/*
	 * Every return address still ours goes back: the unwinder must see the
	 * real ones.  The entries stay, for __rip_fn_rets_caught to sort out
	 * (an entry whose slot holds no __rip_fn_pexit is dropped at any entry
	 * above its frame, or at the catch).
	 */
	for (uint32_t k = r->n; k-- > 0;) {
		uintptr_t *slot = (uintptr_t *)(r->e[k].cfa - 8);

		if (*slot == (uintptr_t)__rip_fn_pexit)
			*slot = r->e[k].ra;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_fn_busy = 0;
}

/*
 * The entries of frames above sp whose slot holds the trampoline: their real
 * return addresses back, and which ones they were in lent (bit k: entry k),
 * for __rip_fn_rets_back.  Only those: a slot that held its real return
 * address already (an exception's unwinding under way, which a destructor's
 * backtrace(3) may call in) stays as it is.
 */
void __rip_fn_rets_lend(uintptr_t sp, uint64_t lent[2])
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	struct rip_fn_rets *r;
	uint32_t index;

	_Static_assert(RIP_FN_RETS <= 128, "a return stack's entries fit the two words of lent");
	lent[0] = lent[1] = 0;
	if (!h || !__atomic_load_n(&__rip_fn_rets, __ATOMIC_ACQUIRE) || __rip_fn_busy ||
	    !__rip_fn_stack_now(&index) || !(r = rip_fn_rets_of(h, index)))
		return;
	__rip_fn_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (uint32_t k = 0; k < r->n && k < RIP_FN_RETS; k++) {
		uintptr_t *slot = (uintptr_t *)(r->e[k].cfa - 8);

		if (r->e[k].cfa > sp && *slot == (uintptr_t)__rip_fn_pexit) {
			*slot = r->e[k].ra;
			lent[k / 64] |= 1ull << (k % 64);
		}
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_fn_busy = 0;
}

/*
 * The trampoline again in the slots __rip_fn_rets_lend gave back (lent),
 * where each still holds its entry's real return address: the frames
 * live on, their exits are to be seen.  A signal handler that ran in
 * between pushed and popped its own entries above the lent ones (or
 * dropped gone ones at its own depth, below sp): the lent keep their
 * index.
 */
void __rip_fn_rets_back(uintptr_t sp, const uint64_t lent[2])
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	struct rip_fn_rets *r;
	uint32_t index;

	if (!(lent[0] | lent[1]) || !h || !__atomic_load_n(&__rip_fn_rets, __ATOMIC_ACQUIRE) ||
	    __rip_fn_busy || !__rip_fn_stack_now(&index) || !(r = rip_fn_rets_of(h, index)))
		return;
	__rip_fn_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (uint32_t k = 0; k < r->n && k < RIP_FN_RETS; k++) {
		uintptr_t *slot = (uintptr_t *)(r->e[k].cfa - 8);

		if ((lent[k / 64] >> (k % 64) & 1) && r->e[k].cfa > sp && *slot == r->e[k].ra)
			*slot = (uintptr_t)__rip_fn_pexit;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_fn_busy = 0;
}

/* The entry of cfa on the return stack of slot s, read only: its real return address, or 0. */
static uintptr_t rip_fn_ret_peek(const struct rip_file_hdr *h, const struct rip_fn_rets *rets,
				 const struct rip_slot *s, uintptr_t cfa)
{
	const struct rip_fn_rets *r;
	uint32_t n;
	size_t i;

	if (!s || (const char *)s < (const char *)h + h->slot_off)
		return 0; /* none, or a dummy slot (a coroutine of a closed file) */
	i = (size_t)((const char *)s - ((const char *)h + h->slot_off)) >> RIP_SLOT_SHIFT;
	if (i >= __rip_fn_nrets || i >= h->slot_count)
		return 0;
	r = &rets[i];
	if (r->owner != (uint32_t)s->attach_ts)
		return 0; /* another owner's entries, or none yet */
	n = r->n < RIP_FN_RETS ? r->n : RIP_FN_RETS;
	for (uint32_t k = n; k-- > 0;)
		if (r->e[k].cfa == cfa)
			return r->e[k].ra;
	return 0;
}

uintptr_t __rip_fn_ret_at(uintptr_t cfa)
{
	const struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	/* Acquire: pairs with the release store of the pointer once it is mapped. */
	const struct rip_fn_rets *rets = __atomic_load_n(&__rip_fn_rets, __ATOMIC_ACQUIRE);
	uintptr_t ra;

	/*
	 * The slot the thread runs, then its own (a coroutine switched inside
	 * the function), as the exit looks.  Nothing written, nothing attached:
	 * a walker in a hook may call it, a signal handler too (the entries of
	 * live frames below the count are whole: an entry or exit interrupted
	 * changes only the top one, whose slot does not hold the trampoline
	 * yet, or no longer lies in a live frame).
	 */
	if (!h || !rets)
		return 0;
	ra = rip_fn_ret_peek(h, rets, __rip_self.cur, cfa);
	if (!ra && __rip_self.thread != __rip_self.cur)
		ra = rip_fn_ret_peek(h, rets, __rip_self.thread, cfa);
	return ra;
}

uintptr_t __rip_fn_pexit_at(void)
{
	return (uintptr_t)__rip_fn_pexit;
}

void __rip_fn_rets_caught(uintptr_t cfa)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	struct rip_fn_rets *r;
	uint32_t index, n;

	if (!h || !__atomic_load_n(&__rip_fn_rets, __ATOMIC_ACQUIRE) || __rip_fn_busy ||
	    !__rip_fn_stack_now(&index) || !(r = rip_fn_rets_of(h, index)))
		return;
	__rip_fn_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/*
	 * The frames the exception unwound, at or below the catching frame's sp
	 * (cfa), go; an entry whose slot holds __rip_fn_pexit is never dropped
	 * (it was made after the unwinding restored the others: it is live).
	 */
	n = r->n;
	while (n && r->e[n - 1].cfa <= cfa &&
	       *(const uintptr_t *)(r->e[n - 1].cfa - 8) != (uintptr_t)__rip_fn_pexit)
		n--;
	r->n = n;
	/*
	 * The frames above it live on: their return addresses, which the
	 * unwinding put back, are ours again, so that their exits are seen.
	 * Only where the slot still holds that very address: the frame is there.
	 */
	for (uint32_t k = 0; k < n; k++) {
		uintptr_t *slot = (uintptr_t *)(r->e[k].cfa - 8);

		if (r->e[k].cfa > cfa && *slot == r->e[k].ra)
			*slot = (uintptr_t)__rip_fn_pexit;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_fn_busy = 0;
}

/*
 * A longjmp from the thread's own stack lands on it where the sp is sp (the
 * preload library checked both against the stack's bounds; lo is its
 * lowest address): the entries of every frame between lo and sp go,
 * wherever they are on the return stack.  Their slots still hold
 * __rip_fn_pexit, which the test of __rip_fn_rets_caught takes for live
 * frames (of a stack switched away from by hand), and they stayed: under
 * the entries of the calls made after the jump, which never took them off,
 * until the return stack was full and calls went without an entry (their
 * returns unseen: Lua's error() out of deep pcalls, then a blocking read
 * under a function that had returned).  No other stack lies there: a
 * stack the program switches to by hand is a mapping of its own, or an
 * array in a frame, which is above sp if its frame outlives the jump.
 * Those below deep, the cfa of the deepest frame the shadow stack keeps
 * (0: it keeps them all), are calls past its frames, whose exits no
 * resync writes: theirs are written here, innermost first, for the
 * entries whose record was (before, they were calls without an exit).
 */
void __rip_fn_rets_jumped(uintptr_t lo, uintptr_t sp, uintptr_t deep)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	struct rip_fn_rets *r;
	uint32_t index, n, m = 0;

	if (!h || !__atomic_load_n(&__rip_fn_rets, __ATOMIC_ACQUIRE) || __rip_fn_busy ||
	    !__rip_fn_stack_now(&index) || !(r = rip_fn_rets_of(h, index)))
		return;
	__rip_fn_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	n = r->n < RIP_FN_RETS ? r->n : RIP_FN_RETS;
	for (uint32_t k = n; deep && k-- > 0;)
		if (r->e[k].cfa >= lo && r->e[k].cfa < deep && r->e[k].cfa <= sp &&
		    (r->e[k].fn & RIP_FN_RET_REC))
			__rip_fn_exit_deep(r->e[k].fn & ~RIP_FN_RET_REC);
	for (uint32_t k = 0; k < n; k++)
		if (r->e[k].cfa < lo || r->e[k].cfa > sp)
			r->e[m++] = r->e[k];
	r->n = m;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__rip_fn_busy = 0;
}

/* ---- patching ------------------------------------------------------------------------- */

enum rip_fn_kind {
	RIP_FN_GCC = 1,	  /* 90 90 90 90 90 */
	RIP_FN_CLANG = 2, /* 0f 1f 44 xx xx and the like: one 5-byte nop */
};

/* A region of pads for one module and one kind of nops. */
struct rip_fn_region {
	uint32_t mod; /* index in the module map */
	uint32_t kind;
	int32_t disp;	/* the call's displacement */
	uintptr_t base; /* the mapping: the stub's page, then the module's range shifted */
	size_t len;
};

/* A patched site. */
struct rip_fn_site {
	uintptr_t addr; /* 0: empty */
	uint8_t orig[5];
	uint8_t ready; /* its displacement and pad are in place: byte 0 may become the call */
	uint8_t on;    /* its byte 0 is the call */
};

static struct {
	struct rip_fn_region reg[2 * RIP_MOD_CAP];
	uint32_t nreg;
	struct rip_fn_site *sites; /* open addressing by address, a power of two */
	size_t cap, n;
	int membarrier; /* 1: SYNC_CORE registered, -1: not available */
} rip_fn_p;

static uint64_t rip_fn_site_hash(uintptr_t a)
{
	return (a * 0x9E3779B97F4A7C15ull) >> 20;
}

/* The entry of site a (its slot when absent and add).  NULL: out of memory. */
static struct rip_fn_site *rip_fn_site_get(uintptr_t a, bool add)
{
	if (add && (rip_fn_p.n + 1) * 2 > rip_fn_p.cap) {
		size_t ncap = rip_fn_p.cap ? rip_fn_p.cap * 2 : RIP_FN_SITES_MIN;
		struct rip_fn_site *nv, *old = rip_fn_p.sites;

		nv = (struct rip_fn_site *)syscall(SYS_mmap, NULL, ncap * sizeof(*nv),
						   PROT_READ | PROT_WRITE,
						   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (nv == MAP_FAILED)
			return NULL;
		for (size_t i = 0; i < rip_fn_p.cap; i++) {
			size_t j;

			if (!old[i].addr)
				continue;
			for (j = rip_fn_site_hash(old[i].addr) & (ncap - 1); nv[j].addr;
			     j = (j + 1) & (ncap - 1))
				;
			nv[j] = old[i];
		}
		if (old)
			syscall(SYS_munmap, old, rip_fn_p.cap * sizeof(*old));
		rip_fn_p.sites = nv;
		rip_fn_p.cap = ncap;
	}
	if (!rip_fn_p.cap)
		return NULL;
	for (size_t j = rip_fn_site_hash(a) & (rip_fn_p.cap - 1);;
	     j = (j + 1) & (rip_fn_p.cap - 1)) {
		struct rip_fn_site *s = &rip_fn_p.sites[j];

		if (s->addr == a)
			return s;
		if (!s->addr) {
			if (!add)
				return NULL;
			s->addr = a;
			rip_fn_p.n++;
			return s;
		}
	}
}

/* Write byte b at address a through /proc/self/mem (fd).  0 or -errno. */
static int rip_fn_poke(int fd, uintptr_t a, uint8_t b)
{
	ssize_t n;

	if (*(volatile const uint8_t *)a == b)
		return 0;
	do
		n = pwrite(fd, &b, 1, (off_t)a);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : n < 0 ? -errno : -EIO;
}

static int rip_fn_poke_n(int fd, uintptr_t a, const uint8_t *b, size_t len)
{
	ssize_t n;

	do
		n = pwrite(fd, b, len, (off_t)a);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

/* Every CPU running this process serializes its instruction stream (or nothing, if unknown). */
static void rip_fn_sync(void)
{
	if (!rip_fn_p.membarrier)
		rip_fn_p.membarrier = syscall(SYS_membarrier,
					      MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE,
					      0) == 0 ?
					      1 :
					      -1;
	if (rip_fn_p.membarrier > 0)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0);
}

/* The kind of the nops at a (never patched by us), 0 if unknown. */
static uint32_t rip_fn_kind_of(const uint8_t *b)
{
	if (b[0] == 0x90 && b[1] == 0x90 && b[2] == 0x90 && b[3] == 0x90 && b[4] == 0x90)
		return RIP_FN_GCC;
	/* nopl disp8(base, index, scale): ModRM mod 01, r/m 100 (a SIB, a disp8) */
	if (b[0] == 0x0f && b[1] == 0x1f && (b[2] & 0xc7) == 0x44)
		return RIP_FN_CLANG;
	return 0;
}

/*
 * The next displacement to try for kind, from candidate i (0 first: the
 * bytes as the compiler left them, so that nothing but byte 0 changes).
 * false when there are no more.
 */
static bool rip_fn_disp(uint32_t kind, uint32_t i, int32_t *disp)
{
	static const uint8_t gcc[4] = { 0x90, 0xf8, 0xf9, 0xf5 };

	if (kind == RIP_FN_GCC) {
		if (i >= 256)
			return false;
		*disp = (int32_t)(gcc[i & 3] | (uint32_t)gcc[(i >> 2) & 3] << 8 |
				  (uint32_t)gcc[(i >> 4) & 3] << 16 | (uint32_t)gcc[i >> 6] << 24);
		return true;
	}
	/* clang: 1f, the ModRM 44, then the SIB and the disp8 from 00 08, as clang makes them */
	if (i >= 65536)
		return false;
	*disp = (int32_t)(0x441fu | (i & 0xff) << 16 | ((0x08u + (i >> 8)) & 0xff) << 24);
	return true;
}

/* The region of pads of module m for kind, mapped now if it is not yet.  NULL: none. */
static struct rip_fn_region *rip_fn_region(const struct rip_module *m, uint32_t mi, uint32_t kind)
{
	struct rip_fn_region *g;
	uint8_t stub[14] = { 0xff, 0x25, 0, 0, 0, 0 }; /* jmp *0(%rip) */
	uintptr_t tramp = (uintptr_t)__rip_fn_pentry;
	int32_t disp;

	for (uint32_t i = 0; i < rip_fn_p.nreg; i++)
		if (rip_fn_p.reg[i].mod == mi && rip_fn_p.reg[i].kind == kind)
			return &rip_fn_p.reg[i];
	if (rip_fn_p.nreg == sizeof(rip_fn_p.reg) / sizeof(rip_fn_p.reg[0]))
		return NULL;
	memcpy(stub + 6, &tramp, 8);
	for (uint32_t i = 0; rip_fn_disp(kind, i, &disp); i++) {
		uintptr_t lo, hi;
		size_t len;
		void *p;

		/* The stub's page, then the module's range shifted by disp. */
		if ((intptr_t)disp < 0 && m->lo + 5 < 8192 + (uintptr_t) - (intptr_t)disp)
			continue; /* below 0 */
		lo = (m->lo + 5 + (intptr_t)disp - 4096) & ~(uintptr_t)4095;
		hi = (m->hi + 5 + (intptr_t)disp + 4095) & ~(uintptr_t)4095;
		if (hi <= lo || hi >= (1ull << 47))
			continue;
		len = hi - lo;
		p = (void *)syscall(
			SYS_mmap, lo, len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		if ((uintptr_t)p !=
		    lo) { /* a kernel without MAP_FIXED_NOREPLACE put it elsewhere */
			syscall(SYS_munmap, p, len);
			continue;
		}
		memcpy(p, stub, sizeof(stub));
		if (syscall(SYS_mprotect, p, len, PROT_READ | PROT_EXEC)) {
			syscall(SYS_munmap, p, len);
			return NULL;
		}
		g = &rip_fn_p.reg[rip_fn_p.nreg++];
		g->mod = mi;
		g->kind = kind;
		g->disp = disp;
		g->base = lo;
		g->len = len;
		return g;
	}
	return NULL;
}

/* The module of the file's map that has a in an executable range it loaded, or NULL. */
static const struct rip_module *rip_fn_module(struct rip_file_hdr *h, uintptr_t a, uint32_t *mi)
{
	const struct rip_module *map = (const struct rip_module *)((char *)h + h->mod_off);
	uint32_t n = __atomic_load_n(&h->mod_count, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n && i < h->mod_cap; i++) {
		if (map[i].flags & RIP_MOD_UNLOADED)
			continue;
		if (a >= map[i].lo && a + 5 <= map[i].hi) {
			*mi = i;
			return &map[i];
		}
	}
	return NULL;
}

/* The CPU's widest vector registers the ABI passes arguments in, for the trampolines. */
static void rip_fn_vsave_init(void)
{
	uint32_t a, b, c, d, xlo, xhi;

	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	if (!(c & (1u << 27)) || !(c & (1u << 28)))
		return; /* no OSXSAVE or no AVX: xmm */
	__asm__("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
	if ((xlo & 6) != 6)
		return;
	__rip_fn_vsave = 1;
	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
	if ((b & (1u << 16)) && (xlo & 0xe0) == 0xe0)
		__rip_fn_vsave = 2;
}

/* Is a user shadow stack (CET) on?  Then a hijacked return address would fault. */
static bool rip_fn_shstk(void)
{
	unsigned long features = 0;

	/* ARCH_SHSTK_STATUS (Linux 6.6); an older kernel has no user shadow stacks */
	if (syscall(SYS_arch_prctl, 0x5005, &features))
		return false;
	return features & 1;
}

/*
 * One pass over site a.  Patching, pass 0: its displacement and its pad
 * (a new site is remembered with its bytes); pass 1: byte 0 becomes the
 * call, only for a site pass 0 made ready.  Unpatching, pass 0: byte 0 back;
 * pass 1: the other bytes back.  0, 1 when the site was so already (not
 * counted: a second rip disable said "unpatched 9 functions"), or -errno.
 */
static int rip_fn_site(struct rip_file_hdr *h, int fd, uintptr_t a, bool on, int pass)
{
	const struct rip_module *m;
	struct rip_fn_region *g;
	struct rip_fn_site *s;
	uint8_t b[5], want[5], pad[5];
	uint32_t mi, kind;
	uintptr_t padat;
	int32_t rel;
	int err;

	s = rip_fn_site_get(a, false);
	if (!on) {
		if (!s || !s->ready)
			return s ? 1 : -ENOENT;
		if (!pass)
			return s->on ? rip_fn_poke(fd, a, s->orig[0]) : 0;
		s->on = 0;
		for (int k = 1; k < 5; k++)
			if ((err = rip_fn_poke(fd, a + (uintptr_t)k, s->orig[k])))
				return err;
		s->ready = 0;
		return 0;
	}
	if (pass) {
		if (!s || !s->ready)
			return -EAGAIN; /* pass 0 failed for it: counted there */
		if (s->on)
			return 1;
		if ((err = rip_fn_poke(fd, a, 0xe8)))
			return err;
		s->on = 1;
		return 0;
	}
	if (s && s->ready)
		return 0; /* patched already, or being */
	m = rip_fn_module(h, a, &mi);
	if (!m)
		return -EFAULT;
	memcpy(b, (const void *)a, 5);
	if (s)
		memcpy(b, s->orig, 5); /* patched and unpatched before: its bytes as they were */
	kind = rip_fn_kind_of(b);
	if (!kind || ((const uint8_t *)a)[0] != b[0])
		return -EILSEQ;
	g = rip_fn_region(m, mi, kind);
	if (!g)
		return -ERANGE; /* no free address space a displacement of these bytes reaches */
	padat = a + 5 + (intptr_t)g->disp;
	if (padat < g->base + 4096 || padat + 5 > g->base + g->len)
		return -ERANGE;
	if (!s) {
		s = rip_fn_site_get(a, true);
		if (!s)
			return -ENOMEM;
		memcpy(s->orig, b, 5);
	}
	/* The pad first (nothing calls it yet), then bytes 1-4, one at a time. */
	rel = (int32_t)((intptr_t)g->base - (intptr_t)(padat + 5));
	pad[0] = 0xe9; /* jmp rel32, to the stub */
	memcpy(pad + 1, &rel, 4);
	if (memcmp((const void *)padat, pad, 5) && (err = rip_fn_poke_n(fd, padat, pad, 5)))
		return err;
	memcpy(want + 1, &g->disp, 4);
	for (int k = 1; k < 5; k++)
		if ((err = rip_fn_poke(fd, a + (uintptr_t)k, want[k])))
			return err;
	s->ready = 1;
	return 0;
}

int __rip_fn_patch(const uint64_t *addrs, uint32_t n, bool on, uint32_t *ok, uint32_t *failed)
{
	struct rip_file_hdr *h = __atomic_load_n(&__rip_proc.hdr, __ATOMIC_ACQUIRE);
	int fd, err = 0;

	*ok = *failed = 0;
	if (!h)
		return -ENODEV;
	if (on && rip_fn_shstk())
		return -EPERM;
	if (on && !__rip_fn_rets) {
		size_t len = (size_t)h->slot_count * sizeof(struct rip_fn_rets);
		void *r;

		rip_fn_vsave_init();
		r = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r == MAP_FAILED)
			return -ENOMEM;
		__rip_fn_nrets = h->slot_count;
		/* Release: the memory and the vector mode before any patched call reads them. */
		__atomic_store_n(&__rip_fn_rets, (struct rip_fn_rets *)r, __ATOMIC_RELEASE);
	}
	fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Unpatch everything: the sites the table knows. */
	if (!on && !addrs) {
		for (int pass = 0; pass < 2; pass++) {
			for (size_t i = 0; i < rip_fn_p.cap; i++) {
				struct rip_fn_site *st = &rip_fn_p.sites[i];
				int e;

				if (!st->addr || !st->ready)
					continue;
				e = rip_fn_site(h, fd, st->addr, false, pass);
				if (pass)
					*(e ? failed : ok) += 1;
				if (e)
					err = e;
			}
			if (!pass)
				rip_fn_sync();
		}
		close(fd);
		return *failed ? err : 0;
	}
	/*
	 * Two passes: what comes before byte 0 (pads, displacements) for every
	 * site, a barrier (every CPU sees it before a call can reach it), then
	 * byte 0.  Unpatching: byte 0 back everywhere, the barrier, the rest.
	 */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < n; i++) {
			int e = rip_fn_site(h, fd, (uintptr_t)addrs[i], on, pass);

			if (e == -EAGAIN || e == 1)
				continue; /* failed in pass 0, counted then; or so already */
			if (pass || e)
				*(e ? failed : ok) += 1;
			if (e)
				err = e;
		}
		if (!pass)
			rip_fn_sync();
	}
	close(fd);
	return *ok || !n ? 0 : err;
}

uint32_t __rip_fn_patched(void)
{
	uint32_t n = 0;

	for (size_t i = 0; i < rip_fn_p.cap; i++)
		n += rip_fn_p.sites[i].addr && rip_fn_p.sites[i].on;
	return n;
}

#else /* !__x86_64__ */

int __rip_fn_patch(const uint64_t *addrs, uint32_t n, bool on, uint32_t *ok, uint32_t *failed)
{
	*ok = 0;
	*failed = n;
	return -ENOSYS;
}

uint32_t __rip_fn_patched(void)
{
	return 0;
}

void __rip_fn_unwinding(void)
{
}

void __rip_fn_rets_caught(uintptr_t cfa)
{
}

void __rip_fn_rets_jumped(uintptr_t lo, uintptr_t sp, uintptr_t deep)
{
}

void __rip_fn_rets_lend(uintptr_t sp, uint64_t lent[2])
{
	lent[0] = lent[1] = 0;
}

void __rip_fn_rets_back(uintptr_t sp, const uint64_t lent[2])
{
}

uintptr_t __rip_fn_ret_at(uintptr_t cfa)
{
	return 0;
}

uintptr_t __rip_fn_pexit_at(void)
{
	return UINTPTR_MAX; /* no trampoline: no return address is it */
}

#endif
