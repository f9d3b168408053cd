// SPDX-License-Identifier: Apache-2.0
/*
 * Description: the foreign catch of tests/integ/func-unwind.sh, built with
 * -fpatchable-function-entry=5 (fnfore-patch; x86-64: elsewhere it exits
 * 77).  An exception of a runtime that is not C++'s (as Rust's panics
 * are), raised by
 * _Unwind_RaiseException through patched frames, is caught where no
 * __cxa_begin_catch is called: fnfore_catch (x86-64 assembly below) has a
 * personality of its own, fnfore_pers, which lands in it.  main >
 * fnfore_top > fnfore_catch > fnfore_mid > fnfore_throw, twice; then
 * fnfore_top returns, and its exit must be seen as any other: the catch
 * must give the patched frames above it their trampoline back.  Prints
 * "landed N" per exception that landed, then "done".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

void fnfore_throw(void);
void fnfore_mid(void);
int fnfore_catch(void (*fn)(void)); /* 1 if an exception landed in it, else 0 */
void fnfore_top(void);
extern char fnfore_landed[];
_Unwind_Reason_Code fnfore_pers(int version, _Unwind_Action actions, _Unwind_Exception_Class cls,
				struct _Unwind_Exception *e, struct _Unwind_Context *ctx);

static volatile int sink;
static struct _Unwind_Exception fnfore_exc;

/* A personality that catches every exception in the one function that names it. */
_Unwind_Reason_Code fnfore_pers(int version, _Unwind_Action actions, _Unwind_Exception_Class cls,
				struct _Unwind_Exception *e, struct _Unwind_Context *ctx)
{
	if (actions & _UA_SEARCH_PHASE)
		return _URC_HANDLER_FOUND;
	if (actions & _UA_HANDLER_FRAME) {
		_Unwind_SetIP(ctx, (uintptr_t)fnfore_landed);
		return _URC_INSTALL_CONTEXT;
	}
	return _URC_CONTINUE_UNWIND;
}

#if defined(__x86_64__)
/*
 * fnfore_catch(fn): calls fn; an exception lands at fnfore_landed, in the
 * same frame (rbp and rsp as at the call, restored by the unwinder).
 */
__asm__(".text\n"
	".globl fnfore_catch\n"
	".type fnfore_catch, @function\n"
	"fnfore_catch:\n"
	".cfi_startproc\n"
	".cfi_personality 0x9b, .Lfnfore_pers\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"mov %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"call *%rdi\n"
	"xor %eax, %eax\n"
	"jmp 1f\n"
	".globl fnfore_landed\n"
	"fnfore_landed:\n"
	"mov $1, %eax\n"
	"1:\n"
	"pop %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size fnfore_catch, .-fnfore_catch\n"
	".section .data.rel.ro, \"aw\"\n"
	".balign 8\n"
	".Lfnfore_pers:\n"
	".quad fnfore_pers\n"
	".text\n");
#else
char fnfore_landed[1];

int fnfore_catch(void (*fn)(void))
{
	fn();
	return 0;
}
#endif

__attribute__((noinline)) void fnfore_throw(void)
{
	memcpy(&fnfore_exc.exception_class, "RIPfore", 8);
	_Unwind_RaiseException(&fnfore_exc);
	abort(); /* no handler found */
}

__attribute__((noinline)) void fnfore_mid(void)
{
	fnfore_throw();
	sink++;
}

__attribute__((noinline)) void fnfore_top(void)
{
	for (int i = 0; i < 2; i++)
		printf("landed %d\n", fnfore_catch(fnfore_mid));
	sink++;
}

int main(void)
{
#if !defined(__x86_64__)
	puts("x86-64 only");
	return 77;
#endif
	fnfore_top();
	puts("done");
	return 0;
}
