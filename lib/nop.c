/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/nop.c - with function tracing off for the process (RIP_FUNCTIONS=0),
 * the calls that -finstrument-functions put in every function are turned
 * into 5-byte nops before main, as the kernel's ftrace turns its calls of
 * mcount into nops at boot: the hooks return at once then, but their
 * calls alone cost 3x a plain call of an empty function (bench/funcs.sh).
 *
 * When: librip's constructor, with RIP_FUNCTIONS=0 (read once: the file
 * of a ring opened later has no stacks either, lib/func.c) and
 * RIP_FUNCTIONS_NOP not 0, and only when the process has one thread (read
 * from /proc/self/stat), with every signal blocked.  The sites are written
 * through /proc/self/mem (the read-only text is never made writable: the
 * kernel copies the page on write), a few KiB of them and the bytes
 * between at a time (nop_write): each write finishes before the one thread
 * runs another instruction of the program, and no signal handler runs
 * until the last, so nothing can see a call half rewritten.  Libraries
 * dlopen'ed later keep their calls (the hooks still return at once).
 * doc/design.md, "Hook calls turned into nops", says why not later.
 *
 * What: in the objects loaded at start whose file matches their mapping
 * (the same program headers, and the same bytes in the segments not
 * writable), the `call rel32` (e8) whose target is the
 * hook: librip's own definition when the object has it (librip.a linked
 * in), else the object's PLT stub (.plt, .plt.sec: `[endbr64] [bnd] jmp
 * *slot(%rip)`) whose slot is the R_X86_64_JUMP_SLOT of the hook, bound to
 * librip's (the slot holds it, or is not bound yet, librip's definition
 * comes first in the global scope, the objects before it all known by
 * their files, and the slot asks for no version or for
 * librip's: not glibc's GLIBC_2.2.5).  An object with hooks of its own is
 * left alone.  A call is a site only when (nop_fn_sites):
 *
 *   - it is inside a function symbol (.symtab, else .dynsym: STT_FUNC,
 *     st_size) and the instructions from the function's start, decoded one
 *     after the other (nop_decode: lengths of the whole x86-64 encoding;
 *     a byte it does not know, and the function is left alone), reach it:
 *     the e8 is an instruction, not bytes inside one;
 *   - rdi holds the address of a function (a symbol's start) there, on
 *     every path: the general registers are followed through the
 *     function's jumps to a fixed point (nop_solve), from its start, from
 *     the jumps of its cold parts into it, and from every instruction
 *     nothing reaches (a landing pad) with nothing known; a value is set by
 *     `lea X(%rip)`, `mov $X`, `movabs $X`, `mov G(%rip)` of a word
 *     holding X (a GOT entry), moved by `mov %reg, %rdi`, and lost by any
 *     other write (nop_writes: more than the instruction writes) and, for
 *     the registers a call may change, by every call.  Jumps through a
 *     register or memory go where the function's jump tables lead
 *     (nop_tables), and without a table found the function is left alone.
 *     That is what gcc 12 and clang 14 emit at -O1 to -O3 for entries and
 *     exits, with and without -fPIE, in executables and shared objects:
 *     the function's address loaded into rdi before each call, or once
 *     into a register a call keeps and moved to rdi at each; an inlined
 *     function's calls pass its own address.
 *
 * Anything else, or any error, leaves the calls as they are: they still
 * work.  The cost: the pages of text written become private copies
 * (__rip_fn_nop_pages counts them), their protections unchanged, and the
 * time to decode the functions with sites (about 45 ms for 600 KiB of
 * text with 8,800 sites).  Not on other architectures.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* What lib/func.c refers to, so that a program linked with librip.a gets this file too. */
const char __rip_fn_nop_linked __hidden = 1;

#if defined(__x86_64__)

#define NOP_OBJS 256u	   /* objects looked at, at most */
#define NOP_FN_SITES 1024u /* sites of one function, at most */
#define NOP_TARGETS 8u	   /* the hooks' addresses in one object: stubs, definitions */

/* What librip patched, for a debugger and the tests' curiosity. */
uint32_t __rip_fn_nop_sites __hidden, __rip_fn_nop_pages __hidden;

/* ---- instructions --------------------------------------------------------------------- */

/* One decoded instruction. */
struct nop_ins {
	uint8_t len;
	uint8_t map;   /* 0: one byte; 1: 0f; 2: 0f 38; 3: 0f 3a */
	uint8_t op;    /* the opcode byte */
	uint8_t rex;   /* the REX prefix, 0 if none */
	uint8_t modrm; /* valid when has_modrm */
	uint8_t has_modrm;
	uint8_t vex;	  /* VEX or EVEX */
	uint8_t ripdisp;  /* has a disp32 relative to the next instruction (mod 00, rm 101) */
	uint8_t sibabs;	  /* has a SIB without a base: an absolute disp32 */
	uint8_t disp_off; /* where its disp32 is (ripdisp, sibabs) */
	uint8_t imm_off, imm_len;
};

/* Immediate bytes of one-byte opcode op (z: 2 with 66, 4 otherwise; w: REX.W); -1 invalid. */
static int nop_imm1(uint8_t op, const struct nop_ins *i, bool o16, bool a32)
{
	int z = o16 && !(i->rex & 8) ? 2 : 4; /* REX.W wins over 66 */
	uint8_t reg = (i->modrm >> 3) & 7;

	if (op < 0x40) {
		uint8_t lo = op & 7;

		if ((op & 0xf) == 0x0f || lo == 6 || lo == 7) /* 0f, segments, daa and the like */
			return op == 0x0f ? 0 : -1;
		return lo == 4 ? 1 : lo == 5 ? z : 0;
	}
	switch (op) {
	case 0x60:
	case 0x61:
	case 0x62:
	case 0x82:
	case 0x9a:
	case 0xce:
	case 0xd4:
	case 0xd5:
	case 0xd6:
	case 0xea:
		return -1; /* invalid in 64-bit mode */
	case 0x68:
	case 0x69:
	case 0x81:
	case 0xa9:
	case 0xc7:
	case 0xe8:
	case 0xe9:
		return op >= 0xe8 && z == 2 ? -1 : z; /* rel16 on some CPUs */
	case 0x6a:
	case 0x6b:
	case 0x80:
	case 0x83:
	case 0xa8:
	case 0xc0:
	case 0xc1:
	case 0xc6:
	case 0xcd:
	case 0xe4:
	case 0xe5:
	case 0xe6:
	case 0xe7:
	case 0xeb:
		return 1;
	case 0xc2:
	case 0xca:
		return 2;
	case 0xc8:
		return 3;
	case 0xa0:
	case 0xa1:
	case 0xa2:
	case 0xa3:
		return a32 ? 4 : 8;
	case 0xf6:
		return reg < 2 ? 1 : 0;
	case 0xf7:
		return reg < 2 ? z : 0;
	}
	if (op >= 0x70 && op <= 0x7f)
		return 1;
	if (op >= 0xe0 && op <= 0xe3)
		return 1;
	if (op >= 0xb0 && op <= 0xb7)
		return 1;
	if (op >= 0xb8 && op <= 0xbf)
		return (i->rex & 8) ? 8 : z;
	return 0;
}

static bool nop_modrm1(uint8_t op)
{
	if (op < 0x40)
		return (op & 7) < 4;
	return op == 0x63 || op == 0x69 || op == 0x6b || (op >= 0x80 && op <= 0x8f) || op == 0xc0 ||
	       op == 0xc1 || op == 0xc6 || op == 0xc7 || (op >= 0xd0 && op <= 0xd3) ||
	       (op >= 0xd8 && op <= 0xdf) || op == 0xf6 || op == 0xf7 || op == 0xfe || op == 0xff;
}

/* Two-byte opcodes (0f op): has a ModRM?  Immediate bytes in *imm; false: invalid or unknown. */
static bool nop_op2(uint8_t op, bool *modrm, int *imm)
{
	*imm = 0;
	*modrm = true;
	switch (op) {
	case 0x04:
	case 0x0a:
	case 0x0c:
	case 0x0f:
	case 0x24:
	case 0x25:
	case 0x26:
	case 0x27:
	case 0x36:
	case 0x39:
	case 0x3b:
	case 0x3c:
	case 0x3d:
	case 0x3e:
	case 0x3f:
	case 0x78: /* vmread, or with 66 or f2 extrq, insertq: two immediates */
	case 0x7a:
	case 0x7b:
		return false;
	case 0x05:
	case 0x06:
	case 0x07:
	case 0x08:
	case 0x09:
	case 0x0b:
	case 0x0e:
	case 0x30:
	case 0x31:
	case 0x32:
	case 0x33:
	case 0x34:
	case 0x35:
	case 0x37:
	case 0x77:
	case 0xa0:
	case 0xa1:
	case 0xa2:
	case 0xa8:
	case 0xa9:
	case 0xaa:
		*modrm = false;
		return true;
	case 0x70:
	case 0x71:
	case 0x72:
	case 0x73:
	case 0xa4:
	case 0xac:
	case 0xba:
	case 0xc2:
	case 0xc4:
	case 0xc5:
	case 0xc6:
		*imm = 1;
		return true;
	}
	if (op >= 0x80 && op <= 0x8f) {
		*modrm = false;
		*imm = 4;
		return true;
	}
	if (op >= 0xc8 && op <= 0xcf)
		*modrm = false;
	return true;
}

/*
 * The instruction at p (end: the function's end): its length and parts in
 * *in, or 0 when it is not one nop_decode knows (or runs past end).
 */
static unsigned nop_decode(const uint8_t *p, const uint8_t *end, struct nop_ins *in)
{
	const uint8_t *s = p;
	bool o16 = false, a32 = false, modrm;
	int imm = 0;

	memset(in, 0, sizeof(*in));
	for (;; p++) {
		if (p >= end || p - s > 14)
			return 0;
		if (*p == 0x66)
			o16 = true;
		else if (*p == 0x67)
			a32 = true;
		else if (*p != 0xf0 && *p != 0xf2 && *p != 0xf3 && *p != 0x2e && *p != 0x36 &&
			 *p != 0x3e && *p != 0x26 && *p != 0x64 && *p != 0x65)
			break;
	}
	if ((*p & 0xf0) == 0x40) {
		in->rex = *p++;
		/* a REX not right before the opcode is ignored: not what nop_decode reads */
		if (p >= end || (*p & 0xf0) == 0x40 || *p == 0x66 || *p == 0x67 || *p == 0xf0 ||
		    *p == 0xf2 || *p == 0xf3 || *p == 0x2e || *p == 0x36 || *p == 0x3e ||
		    *p == 0x26 || *p == 0x64 || *p == 0x65)
			return 0;
	}
	if (*p == 0xc4 || *p == 0xc5 || *p == 0x62) {
		/* VEX (3 or 2 bytes), EVEX (4): a ModRM always, but vzeroupper / vzeroall */
		unsigned n = *p == 0xc5 ? 2 : *p == 0xc4 ? 3 : 4;

		if (in->rex || p + n >= end)
			return 0;
		in->vex = 1;
		in->map = *p == 0xc5 ? 1 : *p == 0xc4 ? (p[1] & 0x1f) : (p[1] & 0x07);
		if (in->map < 1 || in->map > (*p == 0x62 ? 6 : 3) || in->map == 4)
			return 0;
		p += n;
		in->op = *p++;
		modrm = !(in->map == 1 && in->op == 0x77);
		if (in->map == 3 ||
		    (in->map == 1 && (in->op == 0xc2 || in->op == 0xc4 || in->op == 0xc5 ||
				      in->op == 0xc6 || (in->op >= 0x70 && in->op <= 0x73))))
			imm = 1;
	} else if (*p == 0x0f) {
		if (++p >= end)
			return 0;
		if (*p == 0x38 || *p == 0x3a) {
			in->map = *p == 0x38 ? 2 : 3;
			if (++p >= end)
				return 0;
			in->op = *p++;
			modrm = true;
			imm = in->map == 3;
		} else {
			in->map = 1;
			in->op = *p++;
			if (!nop_op2(in->op, &modrm, &imm))
				return 0;
		}
	} else {
		in->op = *p++;
		if (in->op == 0x8f && p < end && ((*p >> 3) & 7))
			return 0; /* XOP */
		modrm = nop_modrm1(in->op);
		if (modrm) {
			if (p >= end)
				return 0;
			in->modrm = *p;
		}
		imm = nop_imm1(in->op, in, o16, a32);
		if (imm < 0)
			return 0;
	}
	if (modrm) {
		uint8_t m, mod, rm;

		if (p >= end)
			return 0;
		m = in->modrm = *p++;
		in->has_modrm = 1;
		mod = m >> 6;
		rm = m & 7;
		if (mod != 3 && rm == 4) {
			if (p >= end)
				return 0;
			if (mod == 0 && (*p & 7) == 5) {
				in->sibabs = 1; /* SIB without base: disp32 */
				in->disp_off = (uint8_t)(p + 1 - s);
				mod = 2;
			}
			p++;
		}
		if (mod == 0 && rm == 5) {
			in->ripdisp = 1;
			in->disp_off = (uint8_t)(p - s);
			p += 4;
		} else if (mod == 1) {
			p += 1;
		} else if (mod == 2) {
			p += 4;
		}
	}
	in->imm_off = (uint8_t)(p - s);
	in->imm_len = (uint8_t)imm;
	p += imm;
	if (p > end || p - s > 15)
		return 0;
	in->len = (uint8_t)(p - s);
	return in->len;
}

#define NOP_RAX 0
#define NOP_RCX 1
#define NOP_RDX 2
#define NOP_RBX 3
#define NOP_RBP 5
#define NOP_RSI 6
#define NOP_RDI 7
#define NOP_B(r) (1u << (r))
/* What a call may change: rax, rcx, rdx, rsi, rdi, r8-r11. */
#define NOP_CLOBBER 0x0fc7u

static uint32_t nop_reg(const struct nop_ins *i)
{
	return ((i->modrm >> 3) & 7) | (i->rex & 4 ? 8 : 0);
}

static uint32_t nop_rm(const struct nop_ins *i)
{
	return (i->modrm & 7) | (i->rex & 1 ? 8 : 0);
}

/* Does the instruction leave the straight line (or may it not come back: a call)? */
static bool nop_flow(const struct nop_ins *i)
{
	uint8_t op = i->op, reg = (i->modrm >> 3) & 7;

	if (i->vex)
		return false;
	if (i->map == 1)
		return (op >= 0x80 && op <= 0x8f) || op == 0x05 || op == 0x0b || op == 0x07 ||
		       op == 0x34 || op == 0x35 || op == 0xff || op == 0xb9;
	if (i->map)
		return false;
	return op == 0xe8 || op == 0xe9 || op == 0xeb || (op >= 0x70 && op <= 0x7f) ||
	       (op >= 0xe0 && op <= 0xe3) || op == 0xc2 || op == 0xc3 || op == 0xca || op == 0xcb ||
	       op == 0xcc || op == 0xcd || op == 0xcf || op == 0xf4 || op == 0xf1 ||
	       (op == 0xff && reg >= 2 && reg <= 5);
}

/*
 * The general registers instruction i may write, a bit each (more than it
 * does: anything the encoding names as a register, and the implicit ones).
 */
static uint32_t nop_writes(const struct nop_ins *i)
{
	uint8_t op = i->op, mod = i->modrm >> 6, reg = (i->modrm >> 3) & 7;
	uint32_t r = i->has_modrm ? NOP_B(nop_reg(i)) : 0;
	uint32_t m = i->has_modrm && mod == 3 ? NOP_B(nop_rm(i)) : 0;

	if (i->vex) {
		/* VEX.R and B are inverted and EVEX has more: both banks; BMI writes vvvv too */
		if (i->map == 2 && op >= 0xf0 && op <= 0xf7)
			return 0xffff;
		r = i->has_modrm ? NOP_B(reg) | NOP_B(reg + 8) : 0;
		m = i->has_modrm && mod == 3 ? NOP_B(i->modrm & 7) | NOP_B((i->modrm & 7) + 8) : 0;
		return r | m;
	}
	if (i->map == 1) {
		if ((op >= 0x18 && op <= 0x1f) || (op >= 0x80 && op <= 0x8f) || op == 0xa3 ||
		    op == 0x0b)
			return 0; /* hints, nops, endbr; jumps; bt */
		if (op >= 0xc8 && op <= 0xcf)
			return NOP_B((op & 7) | (i->rex & 1 ? 8 : 0));
		if (op == 0x05 || op == 0x07)
			return NOP_B(NOP_RAX) | NOP_B(NOP_RCX) | NOP_B(11);
		if (op == 0xa2 || op == 0x01 || op == 0xc7 || op == 0x31 || op == 0x32 ||
		    op == 0x33)
			return r | m | 0x000f;
		if (op == 0xb0 || op == 0xb1)
			return m | NOP_B(NOP_RAX);
		if (op == 0x11 || op == 0x29 || op == 0x2b || op == 0x7f || op == 0xe7)
			return m; /* SSE stores: a register form writes an xmm register only */
		return r | m;
	}
	if (i->map)
		return r | m | 0x000f; /* 0f 38, 0f 3a: crc32, movbe, pextr...; some implicit */
	if (op >= 0x50 && op <= 0x57)
		return 0; /* push */
	if (op >= 0x58 && op <= 0x5f)
		return NOP_B((op & 7) | (i->rex & 1 ? 8 : 0));
	if (op >= 0x90 && op <= 0x97)
		return op == 0x90 && !(i->rex & 1) ?
			       0 :
			       NOP_B(NOP_RAX) | NOP_B((op & 7) | (i->rex & 1 ? 8 : 0));
	if (op >= 0xb0 && op <= 0xbf)
		return NOP_B((op & 7) | (i->rex & 1 ? 8 : 0));
	if (op < 0x40) {
		if ((op & 0xf8) == 0x38)
			return 0; /* cmp */
		return (op & 7) < 2 ? m : (op & 7) < 4 ? r : NOP_B(NOP_RAX);
	}
	switch (op) {
	case 0x84:
	case 0x85: /* test */
		return 0;
	case 0x88:
	case 0x89: /* mov to r/m */
		return m;
	case 0x80:
	case 0x81:
	case 0x83:
		return reg == 7 ? 0 : m;
	case 0xc0:
	case 0xc1:
	case 0xc6:
	case 0xc7:
	case 0xd0:
	case 0xd1:
	case 0xd2:
	case 0xd3:
	case 0x8f:
		return m;
	case 0xf6:
	case 0xf7:
		return reg < 2 ? 0 : reg < 4 ? m : NOP_B(NOP_RAX) | NOP_B(NOP_RDX);
	case 0xfe:
	case 0xff:
		if (reg < 2)
			return m;
		return reg == 2 || reg == 3 ? NOP_CLOBBER : 0;
	case 0xe8:
		return NOP_CLOBBER;
	case 0x98:
	case 0x99:
		return NOP_B(NOP_RAX) | NOP_B(NOP_RDX);
	case 0xc8:
	case 0xc9: /* enter, leave */
		return NOP_B(NOP_RBP);
	case 0xa4:
	case 0xa5:
	case 0xa6:
	case 0xa7:
	case 0xaa:
	case 0xab:
	case 0xac:
	case 0xad:
	case 0xae:
	case 0xaf:
	case 0x6c:
	case 0x6d:
	case 0x6e:
	case 0x6f:
		return NOP_B(NOP_RDI) | NOP_B(NOP_RSI) | NOP_B(NOP_RCX) | NOP_B(NOP_RAX);
	case 0x9c:
	case 0x9d:
	case 0x68:
	case 0x6a:
	case 0xc3:
	case 0xc2:
	case 0xe9:
	case 0xeb:
	case 0xcc:
	case 0xf4:
	case 0xf5:
	case 0xf8:
	case 0xf9:
	case 0xfa:
	case 0xfb:
	case 0xfc:
	case 0xfd:
	case 0x9e:
		return 0;
	}
	if (op >= 0x70 && op <= 0x7f)
		return 0;
	return r | m | NOP_B(NOP_RAX) | NOP_B(NOP_RDX) | NOP_B(NOP_RCX);
}

/* ---- objects -------------------------------------------------------------------------- */

struct nop_fn {
	uintptr_t lo, hi; /* run-time addresses */
	bool cold;	  /* a part gcc split off a function (NAME.cold): it jumps back into it */
};

struct nop_obj {
	uintptr_t base, lo, hi; /* load bias; the range its segments take */
	const ElfW(Phdr) * phdr;
	unsigned phnum;
	const char *name;
	const uint8_t *f; /* its file, mapped */
	size_t flen;
	bool defines[2];   /* its .dynsym defines the enter, the exit hook */
	size_t def_sym[2]; /* ... as that symbol of its .dynsym */
	unsigned dyn;	   /* the section of its .dynsym */
};

static const char *const nop_hook_name[2] = { "__cyg_profile_func_enter",
					      "__cyg_profile_func_exit" };

struct nop_ctx {
	struct nop_obj obj[NOP_OBJS];
	unsigned nobj;
	uintptr_t self[2]; /* librip's hooks */
	int first[2]; /* the object whose definition the global scope binds: -1 none, -2 unknown */
	const char *ver[2]; /* the version of librip's definitions ("" none); NULL: unknown */
	int memfd;
	uintptr_t last_page; /* pages made private */
	uintptr_t targets[NOP_TARGETS];
	unsigned ntargets;
	struct nop_fn *fns; /* the function symbols of the object at hand, sorted */
	size_t nfns, fns_len;
	void *scratch; /* a function's instructions and values (nop_fn_sites) */
	size_t scratch_len;
	uintptr_t batch; /* where the bytes of batch_buf go; 0: none */
	size_t batch_len;
	uint8_t batch_buf[8192];  /* the bytes to write */
	uint8_t batch_orig[8192]; /* ... and as they were */
	struct nop_fn *ext; /* where its cold parts jump back into other functions (lo), sorted */
	size_t next, next_cap;
};

static void *nop_map(size_t len)
{
	void *p = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int nop_collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct nop_ctx *c = arg;
	struct nop_obj *o;

	(void)size;
	if (c->nobj == NOP_OBJS)
		return 1;
	o = &c->obj[c->nobj++];
	memset(o, 0, sizeof(*o));
	o->base = info->dlpi_addr;
	o->phdr = info->dlpi_phdr;
	o->phnum = info->dlpi_phnum;
	o->name = info->dlpi_name;
	o->lo = UINTPTR_MAX;
	for (unsigned k = 0; k < o->phnum; k++) {
		const ElfW(Phdr) *ph = &o->phdr[k];

		if (ph->p_type != PT_LOAD)
			continue;
		if (o->base + ph->p_vaddr < o->lo)
			o->lo = o->base + ph->p_vaddr;
		if (o->base + ph->p_vaddr + ph->p_memsz > o->hi)
			o->hi = o->base + ph->p_vaddr + ph->p_memsz;
	}
	return 0;
}

/* Is [a, a + n) inside a segment of o with flag (PF_X, PF_R)? */
static bool nop_in(const struct nop_obj *o, uintptr_t a, size_t n, uint32_t flag)
{
	for (unsigned k = 0; k < o->phnum; k++) {
		const ElfW(Phdr) *ph = &o->phdr[k];
		uintptr_t lo = o->base + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & flag) && a >= lo && n <= ph->p_memsz &&
		    a - lo <= ph->p_filesz - n && n <= ph->p_filesz)
			return true;
	}
	return false;
}

/* The file of o mapped, and its program headers the ones loaded.  false: leave it alone. */
static bool nop_open(struct nop_obj *o)
{
	const char *path = o->name && *o->name ? o->name : "/proc/self/exe";
	const Elf64_Ehdr *e;
	struct stat st;
	void *f;
	long fd;

	fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (syscall(SYS_fstat, fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(*e)) {
		syscall(SYS_close, fd);
		return false;
	}
	f = (void *)syscall(SYS_mmap, NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	syscall(SYS_close, fd);
	if (f == MAP_FAILED)
		return false;
	o->f = f;
	o->flen = (size_t)st.st_size;
	e = f;
	if (memcmp(e->e_ident, ELFMAG, SELFMAG) || e->e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->e_machine != EM_X86_64 || e->e_phentsize != sizeof(Elf64_Phdr) ||
	    e->e_phnum != o->phnum || e->e_phoff > o->flen ||
	    (size_t)e->e_phnum * sizeof(Elf64_Phdr) > o->flen - e->e_phoff ||
	    memcmp((const char *)f + e->e_phoff, o->phdr, o->phnum * sizeof(Elf64_Phdr)) ||
	    e->e_shentsize != sizeof(Elf64_Shdr) || e->e_shoff > o->flen ||
	    (size_t)e->e_shnum * sizeof(Elf64_Shdr) > o->flen - e->e_shoff) {
		syscall(SYS_munmap, f, o->flen);
		o->f = NULL;
		return false;
	}
	return true;
}

static const Elf64_Shdr *nop_shdrs(const struct nop_obj *o, unsigned *n)
{
	const Elf64_Ehdr *e = (const Elf64_Ehdr *)o->f;

	*n = e->e_shnum;
	return (const Elf64_Shdr *)(o->f + e->e_shoff);
}

/* Section i's bytes, when they lie in the file. */
static const void *nop_sec(const struct nop_obj *o, const Elf64_Shdr *s, size_t entsize,
			   size_t *count)
{
	if (s->sh_type == SHT_NOBITS || s->sh_offset > o->flen ||
	    s->sh_size > o->flen - s->sh_offset)
		return NULL;
	if (entsize && s->sh_entsize != entsize)
		return NULL;
	*count = entsize ? s->sh_size / entsize : s->sh_size;
	return o->f + s->sh_offset;
}

/* The symbol table of type (SHT_SYMTAB, SHT_DYNSYM) of o, with its strings; false: none. */
static bool nop_symtab(const struct nop_obj *o, uint32_t type, const Elf64_Sym **sym, size_t *nsym,
		       const char **str, size_t *nstr, unsigned *index)
{
	unsigned n;
	const Elf64_Shdr *sh = nop_shdrs(o, &n);

	for (unsigned k = 0; k < n; k++) {
		if (sh[k].sh_type != type || sh[k].sh_link >= n)
			continue;
		*sym = nop_sec(o, &sh[k], sizeof(Elf64_Sym), nsym);
		*str = nop_sec(o, &sh[sh[k].sh_link], 0, nstr);
		if (!*sym || !*str || !*nstr || (*str)[*nstr - 1])
			return false;
		if (index)
			*index = k;
		return true;
	}
	return false;
}

static const char *nop_name(const Elf64_Sym *s, const char *str, size_t nstr)
{
	return s->st_name < nstr ? str + s->st_name : "";
}

static int nop_hook_of(const char *name)
{
	return !strcmp(name, nop_hook_name[0]) ? 0 : !strcmp(name, nop_hook_name[1]) ? 1 : -1;
}

/*
 * Which hooks o's .dynsym defines (what the global scope may bind to it).
 * A definition of a version that is not the object's default (name@VER,
 * the hidden bit of .gnu.version) binds only the slots that ask for that
 * very version, never one that asks for none or for librip's
 * (librip-preload.so's of glibc's GLIBC_2.2.5, preload/cyg.c, and
 * librip.so's own, lib/func.c): not one.
 */
static void nop_defines(struct nop_obj *o)
{
	const Elf64_Sym *sym;
	const Elf64_Versym *vs = NULL;
	const char *str;
	size_t nsym, nstr, nvs = 0;
	unsigned n;
	const Elf64_Shdr *sh;

	if (!nop_symtab(o, SHT_DYNSYM, &sym, &nsym, &str, &nstr, &o->dyn))
		return;
	sh = nop_shdrs(o, &n);
	for (unsigned k = 0; sh && k < n && !vs; k++)
		if (sh[k].sh_type == SHT_GNU_versym && sh[k].sh_link == o->dyn)
			vs = nop_sec(o, &sh[k], sizeof(*vs), &nvs);
	for (size_t k = 1; k < nsym; k++) {
		int h;

		if (sym[k].st_shndx == SHN_UNDEF || ELF64_ST_BIND(sym[k].st_info) == STB_LOCAL ||
		    ELF64_ST_VISIBILITY(sym[k].st_other) == STV_HIDDEN ||
		    ELF64_ST_VISIBILITY(sym[k].st_other) == STV_INTERNAL ||
		    (vs && k < nvs && (vs[k] & 0x8000u)))
			continue;
		h = nop_hook_of(nop_name(&sym[k], str, nstr));
		if (h >= 0 && !o->defines[h]) {
			o->defines[h] = true;
			o->def_sym[h] = k;
		}
	}
}

/*
 * The name of the version that symbol si of o's .dynsym (section dyn)
 * needs (.gnu.version_r), or defines when def (.gnu.version_d): "" when it
 * has none (no .gnu.version, or index 0 or 1), NULL when the tables do not
 * say (taken as a version no one else has).
 */
static const char *nop_version(const struct nop_obj *o, unsigned dyn, size_t si, bool def)
{
	unsigned n;
	const Elf64_Shdr *sh = nop_shdrs(o, &n);
	const Elf64_Versym *vs = NULL;
	size_t nvs = 0;
	unsigned ndx;

	for (unsigned k = 0; k < n && !vs; k++)
		if (sh[k].sh_type == SHT_GNU_versym && sh[k].sh_link == dyn)
			vs = nop_sec(o, &sh[k], sizeof(*vs), &nvs);
	if (!vs)
		return "";
	if (si >= nvs)
		return NULL;
	ndx = vs[si] & 0x7fffu;
	if (def && (vs[si] & 0x8000u))
		return NULL; /* hidden: not the default, which a slot with no version binds */
	if (ndx <= VER_NDX_GLOBAL)
		return "";
	for (unsigned k = 0; k < n; k++) {
		const uint8_t *p;
		const char *str;
		size_t len = 0, nstr = 0, off = 0;

		if (sh[k].sh_type != (def ? SHT_GNU_verdef : SHT_GNU_verneed) || sh[k].sh_link >= n)
			continue;
		p = nop_sec(o, &sh[k], 0, &len);
		str = nop_sec(o, &sh[sh[k].sh_link], 0, &nstr);
		if (!p || !str || !nstr || str[nstr - 1])
			return NULL;
		/* entries (Verdef, Verneed) chained by their next, each with a chain of aux */
		for (unsigned e = 0; e < 4096 && off <= len; e++) {
			Elf64_Verdef vd;
			Elf64_Verneed vn;
			Elf64_Verdaux da;
			Elf64_Vernaux na;
			size_t a;

			if (len - off < (def ? sizeof(vd) : sizeof(vn)))
				return NULL;
			if (def) {
				memcpy(&vd, p + off, sizeof(vd));
				if (vd.vd_ndx == ndx) {
					if (vd.vd_aux > len - off ||
					    len - off - vd.vd_aux < sizeof(da))
						return NULL;
					memcpy(&da, p + off + vd.vd_aux, sizeof(da));
					return da.vda_name < nstr ? str + da.vda_name : NULL;
				}
				if (!vd.vd_next)
					return NULL;
				off += vd.vd_next;
				continue;
			}
			memcpy(&vn, p + off, sizeof(vn));
			a = off;
			for (unsigned j = 0, next = vn.vn_aux; j < vn.vn_cnt; j++) {
				if (next > len - a || len - a - next < sizeof(na))
					return NULL;
				a += next;
				memcpy(&na, p + a, sizeof(na));
				if (na.vna_other == ndx)
					return na.vna_name < nstr ? str + na.vna_name : NULL;
				next = na.vna_next;
			}
			if (!vn.vn_next)
				return NULL;
			off += vn.vn_next;
		}
		return NULL;
	}
	return NULL;
}

static void nop_target_add(struct nop_ctx *c, uintptr_t t)
{
	for (unsigned k = 0; k < c->ntargets; k++)
		if (c->targets[k] == t)
			return;
	if (c->ntargets < NOP_TARGETS)
		c->targets[c->ntargets++] = t;
}

/* The slot a PLT entry at e jumps through, 0 if it is not one. */
static uintptr_t nop_plt_slot(const struct nop_obj *o, uintptr_t e)
{
	const uint8_t *b = (const uint8_t *)e;
	unsigned k = 0;
	int32_t rel;

	if (!nop_in(o, e, 16, PF_X))
		return 0;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		k = 4; /* endbr64 */
	if (b[k] == 0xf2)
		k++; /* bnd */
	if (b[k] != 0xff || b[k + 1] != 0x25)
		return 0;
	memcpy(&rel, b + k + 2, 4);
	return e + k + 6 + (intptr_t)rel;
}

/*
 * What o's calls of the hooks target: librip's definitions when o has
 * them, the PLT entries whose slots are the hooks' and bound to librip's.
 * false: o defines hooks of its own (or another object's win): none.
 */
static bool nop_targets(struct nop_ctx *c, unsigned oi)
{
	const struct nop_obj *o = &c->obj[oi];
	const Elf64_Sym *sym, *dsym;
	const char *str, *dstr;
	size_t nsym, nstr, ndsym, ndstr;
	uintptr_t slot[2] = { 0, 0 };
	unsigned n, dyn;
	const Elf64_Shdr *sh = nop_shdrs(o, &n);

	c->ntargets = 0;
	/* Definitions of its own, in either table: librip's (linked in), or o is left alone. */
	for (int t = 0; t < 2; t++) {
		if (!(t ? nop_symtab(o, SHT_DYNSYM, &sym, &nsym, &str, &nstr, NULL) :
			  nop_symtab(o, SHT_SYMTAB, &sym, &nsym, &str, &nstr, NULL)))
			continue;
		for (size_t k = 1; k < nsym; k++) {
			int h;

			if (sym[k].st_shndx == SHN_UNDEF)
				continue;
			h = nop_hook_of(nop_name(&sym[k], str, nstr));
			if (h < 0)
				continue;
			if (o->base + sym[k].st_value != c->self[h])
				return false;
			nop_target_add(c, c->self[h]);
		}
	}
	/* The PLT slots of the hooks: R_X86_64_JUMP_SLOT against .dynsym. */
	if (!nop_symtab(o, SHT_DYNSYM, &dsym, &ndsym, &dstr, &ndstr, &dyn))
		return true;
	for (unsigned k = 0; k < n; k++) {
		const Elf64_Rela *r;
		size_t nr;

		if (sh[k].sh_type != SHT_RELA || sh[k].sh_link != dyn)
			continue;
		r = nop_sec(o, &sh[k], sizeof(Elf64_Rela), &nr);
		for (size_t j = 0; r && j < nr; j++) {
			size_t si = ELF64_R_SYM(r[j].r_info);
			uintptr_t a = o->base + r[j].r_offset, v;
			const char *ver;
			int h;

			if (ELF64_R_TYPE(r[j].r_info) != R_X86_64_JUMP_SLOT || !si || si >= ndsym)
				continue;
			h = nop_hook_of(nop_name(&dsym[si], dstr, ndstr));
			if (h < 0 || !nop_in(o, a, 8, PF_R))
				continue;
			/*
			 * Bound to librip's, or not bound yet and librip's is the one it
			 * will be: first in the global scope, and of the version the slot
			 * asks for, if any (ld.so passes over a definition of another:
			 * glibc's of GLIBC_2.2.5, a library's own of its version).
			 */
			v = *(const uintptr_t *)a;
			if (v == c->self[h] ||
			    (v >= o->lo && v < o->hi && c->first[h] >= 0 && c->ver[h] &&
			     (ver = nop_version(o, dyn, si, false)) &&
			     (!*ver || !strcmp(ver, c->ver[h]))))
				slot[h] = a;
		}
	}
	if (!slot[0] && !slot[1])
		return true;
	/* The entries of .plt and .plt.sec that jump through them. */
	{
		unsigned si = ((const Elf64_Ehdr *)o->f)->e_shstrndx;
		const char *names;
		size_t nnames;

		if (si >= n || !(names = nop_sec(o, &sh[si], 0, &nnames)) || !nnames ||
		    names[nnames - 1])
			return true;
		for (unsigned k = 0; k < n; k++) {
			const char *nm = sh[k].sh_name < nnames ? names + sh[k].sh_name : "";

			if (strcmp(nm, ".plt") && strcmp(nm, ".plt.sec"))
				continue;
			for (uint64_t off = 0; off + 16 <= sh[k].sh_size; off += 16) {
				uintptr_t e = o->base + sh[k].sh_addr + off, s;

				if (!nop_in(o, e, 16, PF_X))
					break; /* not in the text loaded */
				s = nop_plt_slot(o, e);
				for (int h = 0; h < 2; h++)
					if (s && s == slot[h])
						nop_target_add(c, e);
			}
		}
	}
	return true;
}

/* Does x sort before y: by start, the widest first. */
static bool nop_fn_less(const struct nop_fn *x, const struct nop_fn *y)
{
	return x->lo != y->lo ? x->lo < y->lo : x->hi > y->hi;
}

/* Heapsort (qsort may allocate: the preload library would see it). */
static void nop_fn_sort(struct nop_fn *v, size_t n)
{
	for (size_t end = n, start = n / 2;;) {
		size_t root, child;
		struct nop_fn t;

		if (start) {
			start--;
		} else {
			if (end <= 1)
				return;
			end--;
			t = v[0];
			v[0] = v[end];
			v[end] = t;
		}
		for (root = start; (child = 2 * root + 1) < end; root = child) {
			if (child + 1 < end && nop_fn_less(&v[child], &v[child + 1]))
				child++;
			if (!nop_fn_less(&v[root], &v[child]))
				break;
			t = v[root];
			v[root] = v[child];
			v[child] = t;
		}
	}
}

/* o's function symbols into c->fns (sorted, one per start: the widest).  false: none. */
static bool nop_fns(struct nop_ctx *c, const struct nop_obj *o)
{
	const Elf64_Sym *sym;
	const char *str;
	size_t nsym, nstr, n = 0;

	if (!nop_symtab(o, SHT_SYMTAB, &sym, &nsym, &str, &nstr, NULL) &&
	    !nop_symtab(o, SHT_DYNSYM, &sym, &nsym, &str, &nstr, NULL))
		return false;
	c->fns_len = nsym * sizeof(*c->fns) + 1;
	c->fns = nop_map(c->fns_len);
	if (!c->fns)
		return false;
	for (size_t k = 1; k < nsym; k++) {
		uintptr_t lo = o->base + sym[k].st_value;

		if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || sym[k].st_shndx == SHN_UNDEF ||
		    !sym[k].st_size || !nop_in(o, lo, sym[k].st_size, PF_X))
			continue;
		c->fns[n].lo = lo;
		c->fns[n].hi = lo + sym[k].st_size;
		c->fns[n].cold = strstr(nop_name(&sym[k], str, nstr), ".cold") != NULL;
		n++;
	}
	nop_fn_sort(c->fns, n);
	c->nfns = 0;
	for (size_t k = 0; k < n; k++)
		if (!c->nfns || c->fns[c->nfns - 1].lo != c->fns[k].lo)
			c->fns[c->nfns++] = c->fns[k];
	return c->nfns > 0;
}

/* How many of the functions (sorted by start) start at or before a. */
static size_t nop_fns_upto(const struct nop_ctx *c, uintptr_t a)
{
	size_t lo = 0, hi = c->nfns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->fns[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The function around [a, a + 5), NULL if none. */
static const struct nop_fn *nop_fn_at(const struct nop_ctx *c, uintptr_t a)
{
	size_t lo = nop_fns_upto(c, a);

	/* fns[lo - 1] starts at or before a; an earlier, wider one may hold it too */
	for (size_t k = lo; k-- > 0 && lo - k <= 4;)
		if (a + 5 <= c->fns[k].hi)
			return &c->fns[k];
	return NULL;
}

/* ---- a function's sites --------------------------------------------------------------- */

struct nop_at {
	uintptr_t a;
	struct nop_ins in;
};

/*
 * Does x load a constant address into register r (lea or mov of it, or mov
 * of a word of o that holds it: a GOT entry)?  The address in *v.
 */
static bool nop_load(const struct nop_obj *o, const struct nop_at *x, uint32_t r, uintptr_t *v)
{
	const struct nop_ins *i = &x->in;
	const uint8_t *b = (const uint8_t *)x->a;
	uintptr_t next = x->a + i->len;
	int32_t d;

	if (i->vex || i->map)
		return false;
	if (i->has_modrm && i->ripdisp && (i->rex & 0xf8) == 0x48 && nop_reg(i) == r &&
	    (i->op == 0x8d || i->op == 0x8b) && i->imm_len == 0 && i->len == 7) {
		uintptr_t t;

		memcpy(&d, b + i->disp_off, 4);
		t = next + (intptr_t)d;
		if (i->op == 0x8d) {
			*v = t;
			return true;
		}
		if (!nop_in(o, t, 8, PF_R))
			return false;
		*v = *(const uintptr_t *)t;
		return true;
	}
	if (i->op >= 0xb8 && i->op <= 0xbf && ((i->op & 7) | (i->rex & 1 ? 8 : 0)) == r) {
		uint64_t q = 0;
		uint32_t u;

		if (i->imm_len == 8 && (i->rex & 8)) {
			memcpy(&q, b + i->imm_off, 8);
			*v = q;
			return true;
		}
		if (i->imm_len == 4 && !(i->rex & 8)) {
			memcpy(&u, b + i->imm_off, 4);
			*v = u;
			return true;
		}
		return false;
	}
	if (i->op == 0xc7 && i->has_modrm && (i->modrm & 0xf8) == 0xc0 && (i->rex & 8) &&
	    nop_rm(i) == r && i->imm_len == 4) {
		memcpy(&d, b + i->imm_off, 4);
		*v = (uintptr_t)(intptr_t)d;
		return true;
	}
	return false;
}

/* Is v where a function symbol of the object starts? */
static bool nop_is_fn(const struct nop_ctx *c, uintptr_t v)
{
	size_t n = nop_fns_upto(c, v); /* the last one starting at or before v, if any, is it */

	return n && c->fns[n - 1].lo == v;
}

/* Does the instruction never fall through to the next (a jump, a return, a trap)? */
static bool nop_away(const struct nop_ins *i)
{
	if (!nop_flow(i))
		return false;
	if (i->map == 1)
		return !(i->op >= 0x80 && i->op <= 0x8f); /* not a jcc */
	return !((i->op >= 0x70 && i->op <= 0x7f) || (i->op >= 0xe0 && i->op <= 0xe3) ||
		 i->op == 0xe8 || (i->op == 0xff && ((i->modrm >> 3) & 7) < 4));
}

/* Is i `mov %REG, %rdi` (or `mov %r32, %edi`)?  REG in *r. */
static bool nop_mov_to_rdi(const struct nop_ins *i, uint32_t *r)
{
	if (i->vex || i->map || !i->has_modrm || (i->modrm >> 6) != 3)
		return false;
	if (i->op == 0x89 && nop_rm(i) == NOP_RDI) {
		*r = nop_reg(i);
		return true;
	}
	if (i->op == 0x8b && nop_reg(i) == NOP_RDI) {
		*r = nop_rm(i);
		return true;
	}
	return false;
}

/* The direct jump target of i at a, or 0. */
static uintptr_t nop_jump(const struct nop_at *x)
{
	const struct nop_ins *i = &x->in;
	const uint8_t *b = (const uint8_t *)x->a;
	uintptr_t next = x->a + i->len;
	int32_t d;

	if (i->vex)
		return 0;
	if (!i->map &&
	    ((i->op >= 0x70 && i->op <= 0x7f) || i->op == 0xeb || (i->op >= 0xe0 && i->op <= 0xe3)))
		return next + (intptr_t)(int8_t)b[i->len - 1];
	if ((!i->map && (i->op == 0xe9 || i->op == 0xe8)) ||
	    (i->map == 1 && i->op >= 0x80 && i->op <= 0x8f)) {
		memcpy(&d, b + i->len - 4, 4);
		return next + (intptr_t)d;
	}
	return 0;
}

static bool nop_is_target(const struct nop_ctx *c, uintptr_t t)
{
	for (unsigned k = 0; k < c->ntargets; k++)
		if (c->targets[k] == t)
			return true;
	return false;
}

/*
 * The general registers' values, followed through a function (the
 * compilers load a function's address into rdi, or into another register
 * once and move it to rdi at every hook call): NOP_TOP (not reached yet),
 * NOP_ANY (unknown), or the address of a function.
 */
#define NOP_NREGS 16
#define NOP_TOP 0
#define NOP_ANY 1

struct nop_state {
	uintptr_t v[NOP_NREGS];
};

struct nop_flow {
	struct nop_at *ins; /* the function's instructions, in order */
	struct nop_state *in;
	uint32_t *work;
	uint8_t *queued;
	size_t n;
	uint32_t *tab; /* where the function's jump tables lead (instructions) */
	size_t ntab;
	struct nop_state ind; /* what its jumps through a table carry */
};

static uintptr_t nop_meet1(uintptr_t a, uintptr_t b)
{
	return a == NOP_TOP ? b : b == NOP_TOP ? a : a == b ? a : NOP_ANY;
}

/* in[i] met with s; true when it changed. */
static bool nop_meet(struct nop_state *d, const struct nop_state *s)
{
	bool ch = false;

	for (unsigned r = 0; r < NOP_NREGS; r++) {
		uintptr_t m = nop_meet1(d->v[r], s->v[r]);

		ch |= m != d->v[r];
		d->v[r] = m;
	}
	return ch;
}

/* What the registers hold after instruction x, from s. */
static void nop_step(const struct nop_ctx *c, const struct nop_obj *o, const struct nop_at *x,
		     const struct nop_state *s, struct nop_state *out)
{
	uint32_t w = nop_writes(&x->in), from;
	uintptr_t v;

	*out = *s;
	for (unsigned r = 0; r < NOP_NREGS; r++) {
		if (nop_load(o, x, r, &v))
			out->v[r] = nop_is_fn(c, v) ? v : NOP_ANY;
		else if (w & NOP_B(r))
			out->v[r] = NOP_ANY;
	}
	if (nop_mov_to_rdi(&x->in, &from)) {
		v = s->v[from];
		/* mov %r32, %edi: the low half, zero-extended */
		out->v[NOP_RDI] = v == NOP_TOP || (!(x->in.rex & 8) && v > UINT32_MAX) ? NOP_ANY :
											 v;
	}
}

/* Is it a nop (what the assembler pads with)? */
static bool nop_is_nop(const struct nop_ins *i)
{
	return !i->vex &&
	       ((i->map == 1 && i->op == 0x1f) || (i->map == 0 && i->op == 0x90 && !(i->rex & 1)));
}

/* The index of the instruction at a, or SIZE_MAX when none starts there. */
static size_t nop_index(const struct nop_flow *fl, uintptr_t a)
{
	size_t lo = 0, hi = fl->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fl->ins[mid].a == a)
			return mid;
		if (fl->ins[mid].a < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

static void nop_push(struct nop_flow *fl, size_t i, size_t *nw)
{
	if (!fl->queued[i]) {
		fl->queued[i] = 1;
		fl->work[(*nw)++] = (uint32_t)i;
	}
}

/* Into in[i] from s (an edge), queued when it changed. */
static void nop_edge(struct nop_flow *fl, size_t i, const struct nop_state *s, size_t *nw)
{
	if (nop_meet(&fl->in[i], s))
		nop_push(fl, i, nw);
}

/* A jump through a register or memory, but for `jmp *G(%rip)` (a tail call through the GOT)? */
static bool nop_ind(const struct nop_ins *i)
{
	return !i->map && !i->vex && i->op == 0xff && ((i->modrm >> 3) & 7) >= 4 &&
	       ((i->modrm >> 3) & 7) <= 5 && !i->ripdisp;
}

static void nop_tab_add(struct nop_flow *fl, uint8_t *seen, uintptr_t t, const struct nop_fn *f,
			bool *any)
{
	size_t j;

	if (t < f->lo || t >= f->hi || (j = nop_index(fl, t)) == SIZE_MAX)
		return;
	*any = true;
	if (!seen[j]) {
		seen[j] = 1;
		fl->tab[fl->ntab++] = (uint32_t)j;
	}
}

/*
 * Where f's jumps through a table can go: from every address its
 * instructions name (rip-relative, or an absolute disp32: a table's start)
 * in a readable segment, the words that follow it as long as they lead to
 * an instruction of f, read as the compilers write tables (4-byte offsets
 * from the table, or 8-byte addresses).  More targets than there are only
 * make the values less known.  false: f jumps through a register or memory
 * and no table was found (a tail call through a pointer, or a table of
 * another shape: anywhere).
 */
static bool nop_tables(const struct nop_obj *o, const struct nop_fn *f, struct nop_flow *fl,
		       uint8_t *seen)
{
	bool ind = false, found = false;

	for (size_t k = 0; k < fl->n; k++) {
		const struct nop_at *x = &fl->ins[k];
		const struct nop_ins *i = &x->in;
		const uint8_t *b = (const uint8_t *)x->a;
		uintptr_t tab = 0;
		int32_t d;

		ind |= nop_ind(i);
		if (i->has_modrm && i->ripdisp) {
			memcpy(&d, b + i->disp_off, 4);
			tab = x->a + i->len + (intptr_t)d;
		} else if (i->has_modrm && i->sibabs) {
			memcpy(&d, b + i->disp_off, 4);
			tab = (uintptr_t)(intptr_t)d;
		}
		if (!tab)
			continue;
		for (unsigned e = 0; e < 4096 && nop_in(o, tab + 4 * e, 4, PF_R); e++) {
			bool any = false;

			memcpy(&d, (const void *)(tab + 4 * e), 4);
			nop_tab_add(fl, seen, tab + (intptr_t)d, f, &any);
			if (!any)
				break;
		}
		for (unsigned e = 0; e < 4096 && nop_in(o, tab + 8 * e, 8, PF_R); e++) {
			bool any = false;
			uintptr_t t;

			memcpy(&t, (const void *)(tab + 8 * e), 8);
			nop_tab_add(fl, seen, t, f, &any);
			if (!any)
				break;
		}
	}
	found = fl->ntab > 0;
	return !ind || found;
}

/* The values to a fixed point (a worklist over the instructions).  false: give up. */
static bool nop_solve(const struct nop_ctx *c, const struct nop_obj *o, const struct nop_fn *f,
		      struct nop_flow *fl, size_t nw)
{
	uint64_t steps = 0;

	while (nw) {
		size_t i = fl->work[--nw];
		const struct nop_at *x = &fl->ins[i];
		struct nop_state out;
		uintptr_t t;

		fl->queued[i] = 0;
		if (++steps > 64 * (uint64_t)fl->n + 4096)
			return false; /* cannot happen (a lattice of height 3); never loop */
		nop_step(c, o, x, &fl->in[i], &out);
		if (!nop_away(&x->in) && i + 1 < fl->n)
			nop_edge(fl, i + 1, &out, &nw);
		if (x->in.op == 0xe8 && !x->in.map && !x->in.vex)
			continue;
		t = nop_jump(x);
		if (t >= f->lo && t < f->hi) {
			size_t j = nop_index(fl, t);

			if (j == SIZE_MAX)
				return false; /* into the middle of an instruction: not code we know */
			nop_edge(fl, j, &out, &nw);
		}
		if (nop_ind(&x->in) && nop_meet(&fl->ind, &out))
			for (size_t j = 0; j < fl->ntab; j++) /* wherever its tables lead */
				nop_edge(fl, fl->tab[j], &fl->ind, &nw);
	}
	return true;
}

/* The first of c->ext at or above a. */
static size_t nop_ext_from(const struct nop_ctx *c, uintptr_t a)
{
	size_t lo = 0, hi = c->next;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->ext[mid].lo < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The jumps of the object's cold parts out of themselves, into c->ext
 * (entries into the middle of the functions they were split from).  false:
 * a cold part nop_decode does not know (it may jump anywhere).
 */
static bool nop_cold(struct nop_ctx *c)
{
	size_t cap = 0;

	for (size_t k = 0; k < c->nfns; k++)
		if (c->fns[k].cold)
			cap += (c->fns[k].hi - c->fns[k].lo) / 2 + 1;
	if (!cap)
		return true;
	c->ext = nop_map(cap * sizeof(*c->ext));
	if (!c->ext)
		return false;
	c->next_cap = cap;
	for (size_t k = 0; k < c->nfns; k++) {
		const struct nop_fn *f = &c->fns[k];

		if (!f->cold)
			continue;
		for (uintptr_t a = f->lo; a < f->hi;) {
			struct nop_at x = { .a = a };
			unsigned n = nop_decode((const uint8_t *)a, (const uint8_t *)f->hi, &x.in);
			uintptr_t t;

			if (!n)
				return false;
			t = x.in.op == 0xe8 && !x.in.map && !x.in.vex ? 0 : nop_jump(&x);
			if (t && (t < f->lo || t >= f->hi) && c->next < cap)
				c->ext[c->next++] = (struct nop_fn){ .lo = t, .hi = t };
			a += n;
		}
	}
	nop_fn_sort(c->ext, c->next);
	return true;
}

/*
 * The sites of function f that can be patched, into out (at most max);
 * their number.  The function is decoded whole (a byte nop_decode does not
 * know, or a jump into the middle of an instruction: none); the registers'
 * values follow its jumps to a fixed point, from its start and from every
 * jump into it from a cold part (ext), and then from every instruction
 * nothing reached (a landing pad: entered by the unwinder) with nothing
 * known.  A call of a hook is a site when rdi holds a function's address
 * there, whatever the path.
 */
static unsigned nop_fn_sites(struct nop_ctx *c, const struct nop_obj *o, const struct nop_fn *f,
			     uintptr_t *out, unsigned max)
{
	struct nop_flow fl = { 0 };
	struct nop_state any;
	size_t cap = f->hi - f->lo, len, nw = 0;
	unsigned nout = 0;
	uint8_t *seen;
	void *mem;

	for (unsigned r = 0; r < NOP_NREGS; r++)
		any.v[r] = NOP_ANY;
	if (cap > (1u << 20))
		return 0;
	len = cap * (sizeof(*fl.ins) + sizeof(*fl.in) + 2 * sizeof(*fl.work) + 2);
	if (len > c->scratch_len) {
		if (c->scratch)
			syscall(SYS_munmap, c->scratch, c->scratch_len);
		c->scratch_len = 0;
		c->scratch = nop_map(len < (1u << 20) ? 1u << 20 : len);
		if (!c->scratch)
			return 0;
		c->scratch_len = len < (1u << 20) ? 1u << 20 : len;
	}
	mem = c->scratch;
	fl.ins = mem;
	fl.in = (struct nop_state *)(fl.ins + cap);
	fl.work = (uint32_t *)(fl.in + cap);
	fl.tab = fl.work + cap;
	fl.queued = (uint8_t *)(fl.tab + cap);
	seen = fl.queued + cap;
	memset(fl.queued, 0, 2 * cap);
	for (uintptr_t a = f->lo; a < f->hi;) {
		struct nop_at *x = &fl.ins[fl.n];
		unsigned n = nop_decode((const uint8_t *)a, (const uint8_t *)f->hi, &x->in);

		if (!n)
			goto out;
		x->a = a;
		memset(&fl.in[fl.n], 0, sizeof(fl.in[0])); /* NOP_TOP */
		fl.n++;
		a += n;
	}
	if (!nop_tables(o, f, &fl, seen))
		goto out;
	nop_edge(&fl, 0, &any, &nw);
	for (size_t k = nop_ext_from(c, f->lo); k < c->next && c->ext[k].lo < f->hi; k++) {
		size_t j = nop_index(&fl, c->ext[k].lo);

		if (j == SIZE_MAX)
			goto out;
		nop_edge(&fl, j, &any, &nw);
	}
	if (!nop_solve(c, o, f, &fl, nw))
		goto out;
	/* Unreached: a landing pad, or the padding before a loop (nops: they bring nothing) */
	for (size_t j = 0; j < fl.n; j++)
		if (fl.in[j].v[NOP_RDI] == NOP_TOP && !nop_is_nop(&fl.ins[j].in))
			nop_edge(&fl, j, &any, &nw);
	if (!nop_solve(c, o, f, &fl, nw))
		goto out;
	for (size_t j = 0; j < fl.n && nout < max; j++) {
		const struct nop_at *x = &fl.ins[j];
		uintptr_t v = fl.in[j].v[NOP_RDI];

		/* e8 rel32 alone: a call with a prefix is no 5-byte site */
		if (x->in.len == 5 && x->in.op == 0xe8 && !x->in.map && !x->in.vex &&
		    nop_is_target(c, nop_jump(x)) && v != NOP_TOP && v != NOP_ANY)
			out[nout++] = x->a;
	}
out:
	return nout;
}

/* ---- patching ------------------------------------------------------------------------- */

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/* The batch written, in one write.  0, or -1 (and no more patching). */
static int nop_flush(struct nop_ctx *c)
{
	uintptr_t a = c->batch, end = a + c->batch_len;
	long n;

	if (!a)
		return 0;
	c->batch = 0;
	do
		n = syscall(SYS_pwrite64, c->memfd, c->batch_buf, c->batch_len, (off_t)a);
	while (n < 0 && errno == EINTR);
	if (n != (long)c->batch_len) {
		/* a part is written (a page of it failed): those bytes as they were */
		if (n > 0)
			syscall(SYS_pwrite64, c->memfd, c->batch_orig, (size_t)n, (off_t)a);
		return -1;
	}
	for (uintptr_t pg = a & ~(uintptr_t)4095; pg < end; pg += 4096) {
		if (pg != c->last_page)
			__rip_fn_nop_pages++;
		c->last_page = pg;
	}
	return 0;
}

/*
 * The call at a becomes the nop: into the batch of bytes written at once
 * (the sites come in order; the bytes between them as they are), written
 * when the next would not fit.  0, or -1.
 */
static int nop_write(struct nop_ctx *c, uintptr_t a)
{
	if (c->batch && (a < c->batch + c->batch_len || a + 5 - c->batch > sizeof(c->batch_buf)) &&
	    nop_flush(c))
		return -1;
	if (!c->batch) {
		c->batch = a;
		c->batch_len = 0;
	}
	/* the bytes up to the site as they are, then the nop */
	memcpy(c->batch_orig + c->batch_len, (const void *)(c->batch + c->batch_len),
	       a + 5 - c->batch - c->batch_len);
	memcpy(c->batch_buf + c->batch_len, c->batch_orig + c->batch_len,
	       a - c->batch - c->batch_len);
	memcpy(c->batch_buf + (a - c->batch), nop5, 5);
	c->batch_len = a + 5 - c->batch;
	__rip_fn_nop_sites++;
	return 0;
}

/*
 * Are o's segments that are not writable, text and read-only data, the
 * bytes of its file?  Not when the file was replaced by another build
 * after it was mapped (its symbols and relocations are not those of the
 * code in memory, even with the same program headers), nor when the text
 * was written since (text relocations, a debugger's breakpoints).
 */
static bool nop_same_bytes(const struct nop_obj *o)
{
	for (unsigned k = 0; k < o->phnum; k++) {
		const ElfW(Phdr) *ph = &o->phdr[k];

		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
			continue;
		if (ph->p_offset > o->flen || ph->p_filesz > o->flen - ph->p_offset ||
		    memcmp(o->f + ph->p_offset, (const void *)(o->base + ph->p_vaddr),
			   ph->p_filesz))
			return false;
	}
	return true;
}

/* Is o the vDSO (no file)? */
static bool nop_vdso(const struct nop_obj *o)
{
	uintptr_t v = (uintptr_t)getauxval(AT_SYSINFO_EHDR);

	return v && v >= o->lo && v < o->hi;
}

/* The sites of object oi patched.  0, or -1 when a write failed (stop everything). */
static int nop_obj(struct nop_ctx *c, unsigned oi)
{
	const struct nop_obj *o = &c->obj[oi];
	const struct nop_fn *done = NULL;
	int err = 0;

	if (!nop_targets(c, oi) || !c->ntargets || !nop_same_bytes(o) || !nop_fns(c, o) ||
	    !nop_cold(c))
		goto out;
	for (unsigned k = 0; k < o->phnum && !err; k++) {
		const ElfW(Phdr) *ph = &o->phdr[k];
		const uint8_t *p, *lo, *hi;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_filesz < 5)
			continue;
		lo = (const uint8_t *)(o->base + ph->p_vaddr);
		hi = lo + ph->p_filesz - 4;
		for (p = lo; !err && (p = memchr(p, 0xe8, (size_t)(hi - p))); p++) {
			uintptr_t sites[NOP_FN_SITES];
			const struct nop_fn *f;
			unsigned n;
			int32_t rel;

			memcpy(&rel, p + 1, 4);
			if (!nop_is_target(c, (uintptr_t)p + 5 + (intptr_t)rel))
				continue;
			f = nop_fn_at(c, (uintptr_t)p);
			if (!f || f == done)
				continue;
			/* The whole function at once: its sites, then on past it */
			done = f;
			n = nop_fn_sites(c, o, f, sites, NOP_FN_SITES);
			for (unsigned j = 0; j < n && !err; j++)
				err = nop_write(c, sites[j]);
		}
	}
	if (!err)
		err = nop_flush(c);
out:
	if (c->fns)
		syscall(SYS_munmap, c->fns, c->fns_len);
	if (c->ext)
		syscall(SYS_munmap, c->ext, c->next_cap * sizeof(*c->ext));
	c->fns = NULL;
	c->ext = NULL;
	c->nfns = c->next = c->next_cap = 0;
	return err;
}

/* The number of threads of this process (/proc/self/stat's 20th field), 0 if unknown. */
static unsigned nop_threads(void)
{
	char b[1024], *p;
	long fd, n;
	unsigned field = 2, v = 0;

	fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = syscall(SYS_read, fd, b, sizeof(b) - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return 0;
	b[n] = 0;
	p = strrchr(b, ')');
	if (!p)
		return 0;
	for (p++; *p && field < 20; p++)
		if (*p == ' ')
			field++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (unsigned)(*p++ - '0');
	return v;
}

static bool nop_wanted(void)
{
	const char *f = secure_getenv("RIP_FUNCTIONS"), *n = secure_getenv("RIP_FUNCTIONS_NOP");

	return f && !strcmp(f, "0") && !(n && !strcmp(n, "0"));
}

/* Every site of the objects loaded, patched (c: zeroed). */
static void nop_all(struct nop_ctx *c)
{
	uint32_t a, b, cx, d;

	c->self[0] = (uintptr_t)__rip_fn_enter_self;
	c->self[1] = (uintptr_t)__rip_fn_exit_self;
	c->first[0] = c->first[1] = -1;
	__rip_dl_iterate(nop_collect, c);
	for (unsigned k = 0; k < c->nobj; k++) {
		struct nop_obj *o = &c->obj[k];
		bool known = nop_open(o);

		if (known)
			nop_defines(o);
		/*
		 * An object before the first definition whose file is not the one
		 * mapped (gone, another build) may define the hooks: none is known
		 * to be the first (-2).  The vDSO has no file, and no hooks.
		 */
		if (!known)
			known = nop_vdso(o);
		else if ((c->first[0] == -1 || c->first[1] == -1) && !nop_same_bytes(o))
			known = false;
		for (int h = 0; h < 2; h++)
			if (c->first[h] == -1 && (!known || o->defines[h]))
				c->first[h] = known ? (int)k : -2;
	}
	/* The global scope binds another object's hooks: its calls go there. */
	for (int h = 0; h < 2; h++) {
		const struct nop_obj *f = c->first[h] >= 0 ? &c->obj[c->first[h]] : NULL;

		if (f && (c->self[h] < f->lo || c->self[h] >= f->hi))
			c->first[h] = -1;
		else if (f)
			c->ver[h] = nop_version(f, f->dyn, f->def_sym[h], true);
	}
	c->memfd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/mem", O_RDWR | O_CLOEXEC);
	for (unsigned k = 0; k < c->nobj; k++) {
		if (c->memfd >= 0 && c->obj[k].f && nop_obj(c, k))
			break;
	}
	for (unsigned k = 0; k < c->nobj; k++)
		if (c->obj[k].f)
			syscall(SYS_munmap, c->obj[k].f, c->obj[k].flen);
	if (c->memfd >= 0)
		syscall(SYS_close, c->memfd);
	if (c->scratch)
		syscall(SYS_munmap, c->scratch, c->scratch_len);
	/* Serialize: the next instructions fetched are the new ones (written through another mapping). */
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(cx), "=d"(d) : "a"(0), "c"(0) : "memory");
}

__attribute__((constructor)) static void rip_fn_nop_start(void)
{
	int saved = errno; /* the program's: a file that does not open sets it */
	struct nop_ctx *c;

	uint64_t all = ~0ull, old;

	if (!nop_wanted())
		goto out;
	/*
	 * No signal handler runs program code while a batch may be written in
	 * part (a write that fails after a page, or the bytes of a site across
	 * two writes: never, they are whole); blocked before the threads are
	 * counted, so that no handler starts one in between.
	 */
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, sizeof(all)))
		goto out;
	if (nop_threads() == 1 && (c = nop_map(sizeof(*c)))) {
		nop_all(c);
		syscall(SYS_munmap, c, sizeof(*c));
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
out:
	errno = saved;
}

#endif /* __x86_64__ */
