// SPDX-License-Identifier: Apache-2.0
/*
 * preload/unwind.c - the stack of a hooked call from the unwind tables
 * (.eh_frame), without frame pointers and without libunwind on the fast
 * path: x86-64 only (elsewhere rip_pl_dwarf_walk always declines).
 *
 * Each return address met on a stack gets a rule, computed once per
 * process and kept in a lock-free table: CFA = rsp or rbp + offset, the
 * caller's return address at CFA - 8, rbp unchanged or saved at CFA +
 * offset; or "last frame" (return address or rbp undefined: the outermost
 * frame); or "unsupported".  A walk is then, per frame, a table lookup and
 * one or two loads from the thread's stack, each checked against its
 * bounds.  No allocation, no lock, no system call; a signal handler can
 * walk too.
 *
 * The rules are exactly those libunwind's fast trace (unw_backtrace on
 * x86-64, "tdep_trace") uses for a standard frame, read from the same
 * tables the same way: the FDE of address - 1 found through .eh_frame_hdr's
 * binary search table, its CIE's and its own CFA program run up to that
 * address, and signal frames as libunwind steps through them.  Anything
 * the walk is not sure to do exactly as libunwind would (an expression,
 * stack realignment, no unwind information, a read outside the stack)
 * makes it decline, and the caller asks libunwind for the whole stack:
 * the stacks are libunwind's either way (tests/integ/unwind-same.sh
 * compares them event by event).
 *
 * A rule is computed from the object that holds the address, found with
 * _dl_find_object (glibc 2.35: no lock, async-signal-safe), which gives its
 * .eh_frame_hdr; every byte of the tables read lies in a readable segment
 * of that object, from its program headers.  dlclose may put another object
 * where one was: the wrapper below moves an epoch that is part of every
 * table key, so the rules of the old one are never used again.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "common.h"
#include "unwind.h"

/* ---- dlclose: rules of unloaded objects are forgotten ---- */

/* Bumped after each dlclose; keys carry it, so older rules no longer match (unwind.h). */
uint32_t rip_pl_unw_epoch;

RIP_PL_EXPORT int dlclose(void *handle)
{
	static int (*real)(void *);
	int ret;

	if (!RIP_PL_REAL(real, "dlclose"))
		return rip_pl_enosys();
	/*
	 * The object into the module map first: dlopen'd since the last rescan,
	 * its frames in the stacks recorded meanwhile named no module once it
	 * was gone ("in no module", a plugin's leaks).
	 */
	__rip_modules_maybe_rescan();
	ret = real(handle);
	/*
	 * Release: pairs with the acquire load in rip_pl_dwarf_walk.  A walk
	 * that started before still uses the old epoch; it cannot be walking
	 * through the object closed (its code would be on a stack while
	 * unloaded).
	 */
	__atomic_fetch_add(&rip_pl_unw_epoch, 1, __ATOMIC_RELEASE);
	return ret;
}

/* ---- patched functions' return addresses (unwind.h) ---- */

uintptr_t rip_pl_pexit = UINTPTR_MAX;

/* ---- the program headers of a loaded object (here and rulecache.c) ---- */

const ElfW(Phdr) * rip_pl_elf_phdrs(uintptr_t base, unsigned *n)
{
	/*
	 * The first page of an object's mapping is its first segment, which
	 * holds the ELF header and the program headers in every object a
	 * linker makes (checked: magic, class, sizes within the page).
	 */
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phoff < sizeof(*eh) ||
	    eh->e_phoff > 4096 || eh->e_phnum > (4096 - eh->e_phoff) / sizeof(ElfW(Phdr)))
		return NULL;
	*n = eh->e_phnum;
	return (const ElfW(Phdr) *)(base + eh->e_phoff);
}

#if defined(__x86_64__)

/* ---- rules ---- */

/*
 * A rule in 64 bits, never 0: bits 0-1 the kind, bit 2 CFA from rsp (else
 * rbp), bit 3 rbp saved, bits 16-31 rbp's offset from the CFA (int16),
 * bits 32-63 the CFA's offset (int32).  Kind 0 is one rule only,
 * RIP_PL_R_SIGRET: the return address is the signal trampoline.
 */
#define RIP_PL_R_STD 1u
#define RIP_PL_R_LAST 2u
#define RIP_PL_R_UNSUP 3u
#define RIP_PL_R_KIND 3u
#define RIP_PL_R_RSP 4u
#define RIP_PL_R_RBP 8u
#define RIP_PL_R_SIGRET RIP_PL_R_RSP

/*
 * A signal handler returns to the trampoline that makes the rt_sigreturn
 * system call (glibc's __restore_rt): "mov $15, %rax; syscall", the bytes
 * libunwind recognises a signal frame by.  The handler's CFA is then the
 * ucontext_t the kernel saved, and the interrupted code's rip, rsp and rbp
 * are in it (x86-64 Linux's layout, as libunwind reads it).
 */
static const uint8_t rip_pl_sigret_code[9] = {
	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05
};
#define RIP_PL_UC_RBP 0x78 /* offsetof(ucontext_t, uc_mcontext.gregs[REG_RBP]) */
#define RIP_PL_UC_RSP 0xa0 /* ... [REG_RSP] */
#define RIP_PL_UC_RIP 0xa8 /* ... [REG_RIP] */
_Static_assert(offsetof(ucontext_t, uc_mcontext.gregs) + REG_RBP * 8 == RIP_PL_UC_RBP &&
		       offsetof(ucontext_t, uc_mcontext.gregs) + REG_RSP * 8 == RIP_PL_UC_RSP &&
		       offsetof(ucontext_t, uc_mcontext.gregs) + REG_RIP * 8 == RIP_PL_UC_RIP,
	       "the ucontext_t layout the walk reads");

static inline uint64_t rip_pl_rule(unsigned kind, bool rsp, bool rbp, int16_t rbp_off,
				   int32_t cfa_off)
{
	return kind | (rsp ? RIP_PL_R_RSP : 0) | (rbp ? RIP_PL_R_RBP : 0) |
	       (uint64_t)(uint16_t)rbp_off << 16 | (uint64_t)(uint32_t)cfa_off << 32;
}

/* ---- bounded reads of an object's tables ---- */

/* Pointer encodings of .eh_frame (the LSB's DW_EH_PE_*) */
#define RIP_PL_PE_ABSPTR 0x00
#define RIP_PL_PE_ULEB128 0x01
#define RIP_PL_PE_UDATA2 0x02
#define RIP_PL_PE_UDATA4 0x03
#define RIP_PL_PE_UDATA8 0x04
#define RIP_PL_PE_SLEB128 0x09
#define RIP_PL_PE_SDATA2 0x0a
#define RIP_PL_PE_SDATA4 0x0b
#define RIP_PL_PE_SDATA8 0x0c
#define RIP_PL_PE_PCREL 0x10
#define RIP_PL_PE_DATAREL 0x30
#define RIP_PL_PE_INDIRECT 0x80
#define RIP_PL_PE_OMIT 0xff

#define RIP_PL_SEGS 16

/* The readable, file-backed ranges of one object. */
struct rip_pl_obj {
	uintptr_t lo[RIP_PL_SEGS], hi[RIP_PL_SEGS];
	unsigned n;
};

static bool rip_pl_obj_has(const struct rip_pl_obj *o, uintptr_t a, size_t len)
{
	for (unsigned i = 0; i < o->n; i++)
		if (a >= o->lo[i] && a < o->hi[i] && len <= o->hi[i] - a)
			return true;
	return false;
}

/* A cursor over [p, end): reads past end set bad and return 0. */
struct rip_pl_rd {
	uintptr_t p, end;
	bool bad;
};

static uint64_t rip_pl_rd_n(struct rip_pl_rd *r, unsigned size)
{
	uint64_t v = 0;

	if (r->bad || r->end - r->p < size || r->p > r->end) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, (const void *)r->p, size); /* little-endian: the low bytes */
	r->p += size;
	return v;
}

static uint64_t rip_pl_rd_uleb(struct rip_pl_rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	for (;;) {
		uint8_t b = (uint8_t)rip_pl_rd_n(r, 1);

		if (r->bad)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
		if (shift > 70) {
			r->bad = true;
			return 0;
		}
	}
}

static int64_t rip_pl_rd_sleb(struct rip_pl_rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = (uint8_t)rip_pl_rd_n(r, 1);
		if (r->bad || shift > 63) {
			r->bad = true;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

/*
 * A pointer in encoding enc (RIP_PL_PE_*): absolute or pc-relative, any
 * size; other applications and indirect pointers set bad.  datarel is
 * relative to data (the .eh_frame_hdr, where it is used).
 */
static uint64_t rip_pl_rd_ptr(struct rip_pl_rd *r, uint8_t enc, uintptr_t data)
{
	uintptr_t at = r->p;
	uint64_t v;

	switch (enc & 0x0f) {
	case RIP_PL_PE_ABSPTR:
	case RIP_PL_PE_UDATA8:
	case RIP_PL_PE_SDATA8:
		v = rip_pl_rd_n(r, 8);
		break;
	case RIP_PL_PE_ULEB128:
		v = rip_pl_rd_uleb(r);
		break;
	case RIP_PL_PE_SLEB128:
		v = (uint64_t)rip_pl_rd_sleb(r);
		break;
	case RIP_PL_PE_UDATA2:
		v = rip_pl_rd_n(r, 2);
		break;
	case RIP_PL_PE_SDATA2:
		v = (uint64_t)(int64_t)(int16_t)rip_pl_rd_n(r, 2);
		break;
	case RIP_PL_PE_UDATA4:
		v = rip_pl_rd_n(r, 4);
		break;
	case RIP_PL_PE_SDATA4:
		v = (uint64_t)(int64_t)(int32_t)rip_pl_rd_n(r, 4);
		break;
	default:
		r->bad = true;
		return 0;
	}
	switch (enc & 0x70) {
	case RIP_PL_PE_ABSPTR:
		break;
	case RIP_PL_PE_PCREL:
		v += at;
		break;
	case RIP_PL_PE_DATAREL:
		v += data;
		break;
	default:
		r->bad = true;
	}
	if (enc & RIP_PL_PE_INDIRECT)
		r->bad = true;
	return v;
}

/* An entry of .eh_frame at a (CIE or FDE): its bounds, checked against the object. */
static bool rip_pl_entry(const struct rip_pl_obj *o, uintptr_t a, struct rip_pl_rd *r)
{
	uint32_t len;

	if (!rip_pl_obj_has(o, a, 4))
		return false;
	memcpy(&len, (const void *)a, 4);
	/* 0: a terminator; 0xffffffff: 64-bit DWARF, which no x86-64 linker writes */
	if (len == 0 || len == 0xffffffffu || !rip_pl_obj_has(o, a + 4, len))
		return false;
	r->p = a + 4;
	r->end = a + 4 + len;
	r->bad = false;
	return true;
}

/* ---- the CFA program ---- */

enum {
	RIP_PL_W_SAME,
	RIP_PL_W_UNDEF,
	RIP_PL_W_CFAREL,
	RIP_PL_W_OTHER
};

/* DWARF register numbers on x86-64 */
#define RIP_PL_RBP 6
#define RIP_PL_RSP 7
#define RIP_PL_RA 16
#define RIP_PL_NREGS 17 /* libunwind's DWARF_NUM_PRESERVED_REGS: more is an error there */

/* The rules that matter: CFA, rbp, rsp, the return address. */
struct rip_pl_cfa {
	uint8_t cfa_reg; /* a register number, or 0xff: an expression */
	uint8_t where[3];
	int64_t cfa_off;
	int64_t off[3];
};

static int rip_pl_col(uint64_t reg)
{
	return reg == RIP_PL_RBP ? 0 : reg == RIP_PL_RSP ? 1 : reg == RIP_PL_RA ? 2 : -1;
}

struct rip_pl_cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	bool aug_z;
	uintptr_t instr, instr_end;
};

#define RIP_PL_REMEMBER 8

/*
 * The rule of a frame in state s (after the CIE's program and the FDE's up
 * to its address): the kinds of frame libunwind's fast trace handles, and
 * the ends of the stack.
 */
static uint64_t rip_pl_rule_of(const struct rip_pl_cfa *s)
{
	const uint64_t unsup = RIP_PL_R_UNSUP;

	if (s->cfa_reg != RIP_PL_RSP && s->cfa_reg != RIP_PL_RBP)
		return unsup;
	/* the return address or rbp undefined: the outermost frame (unw_step returns 0) */
	if (s->where[2] == RIP_PL_W_UNDEF)
		return rip_pl_rule(RIP_PL_R_LAST, false, false, 0, 0);
	if (s->where[2] != RIP_PL_W_CFAREL)
		return unsup;
	if (s->where[0] == RIP_PL_W_UNDEF)
		return rip_pl_rule(RIP_PL_R_LAST, false, false, 0, 0);
	if (s->cfa_off <= -(1 << 28) || s->cfa_off >= (1 << 28) || s->off[2] != -8)
		return unsup;
	if (s->where[1] == RIP_PL_W_OTHER ||
	    (s->where[1] == RIP_PL_W_CFAREL &&
	     (s->off[1] <= -(1 << 14) || s->off[1] >= (1 << 14) || s->off[1] == -1)))
		return unsup;
	if (s->where[0] == RIP_PL_W_OTHER ||
	    (s->where[0] == RIP_PL_W_CFAREL &&
	     (s->off[0] <= -(1 << 14) || s->off[0] >= (1 << 14) || s->off[0] == -1)))
		return unsup;
	return rip_pl_rule(RIP_PL_R_STD, s->cfa_reg == RIP_PL_RSP, s->where[0] == RIP_PL_W_CFAREL,
			   (int16_t)s->off[0], (int32_t)s->cfa_off);
}

/*
 * The rows of an FDE's whole program (see "rows" below): from each
 * location on, the rule there, until the next row.  v NULL: only count.
 */
struct rip_pl_row {
	uint64_t loc, rule;
};

struct rip_pl_rows {
	struct rip_pl_row *v;
	uint32_t n, max;
	uint64_t last; /* the last row's rule */
	bool bad;      /* the locations wrapped: no rows for this FDE */
};

/* The rule from loc on is rule (the last row goes on if it has the same). */
static void rip_pl_rows_add(struct rip_pl_rows *rows, uint64_t loc, uint64_t rule)
{
	if (!rows || (rows->n && rows->last == rule))
		return;
	if (rows->v && rows->n < rows->max)
		rows->v[rows->n] = (struct rip_pl_row){ loc, rule };
	rows->last = rule;
	rows->n++;
}

/*
 * The location moves on by delta.  With rows: the state so far holds from
 * the old location to the new one.  False: it wrapped (rows are then
 * dropped for this FDE; the direct run does the same as before).
 */
static inline bool rip_pl_advance(struct rip_pl_rows *rows, const struct rip_pl_cfa *s,
				  uint64_t *loc, uint64_t delta)
{
	if (rows) {
		if (*loc + delta < *loc) {
			rows->bad = true;
			return false;
		}
		rip_pl_rows_add(rows, *loc, rip_pl_rule_of(s));
	}
	*loc += delta;
	return true;
}

/* DW_CFA_offset and its extended forms: reg saved at CFA + v * data_align.  False: no such reg. */
static bool rip_pl_cfa_offset(struct rip_pl_cfa *s, const struct rip_pl_cie *ci, uint64_t reg,
			      uint64_t v)
{
	int c;

	if (reg >= RIP_PL_NREGS)
		return false;
	c = rip_pl_col(reg);
	if (c >= 0) {
		s->where[c] = RIP_PL_W_CFAREL;
		s->off[c] = (int64_t)v * ci->data_align;
	}
	return true;
}

/*
 * Run the program in r from location loc while loc <= target (as
 * libunwind's run_cfi_program), over s; init is the state after the CIE's
 * program (for DW_CFA_restore).  False when it uses anything this walk
 * does not do exactly as libunwind: the frame is then "unsupported".
 */
static bool rip_pl_cfa_run(struct rip_pl_rd *r, const struct rip_pl_cie *ci, struct rip_pl_cfa *s,
			   const struct rip_pl_cfa *init, uint64_t loc, uint64_t target,
			   struct rip_pl_rows *rows)
{
	struct rip_pl_cfa stack[RIP_PL_REMEMBER];
	unsigned depth = 0;

	while (loc <= target && r->p < r->end && !r->bad) {
		uint8_t op = (uint8_t)rip_pl_rd_n(r, 1);
		uint64_t reg, v;
		int c;

		switch (op & 0xc0) {
		case 0x40: /* DW_CFA_advance_loc */
			if (!rip_pl_advance(rows, s, &loc, (op & 0x3f) * ci->code_align))
				goto fail;
			continue;
		case 0x80: /* DW_CFA_offset */
			reg = op & 0x3f;
			v = rip_pl_rd_uleb(r);
			if (!rip_pl_cfa_offset(s, ci, reg, v))
				goto fail;
			continue;
		case 0xc0: /* DW_CFA_restore */
			reg = op & 0x3f;
			if (reg >= RIP_PL_NREGS)
				goto fail;
			c = rip_pl_col(reg);
			if (c >= 0) {
				s->where[c] = init->where[c];
				s->off[c] = init->off[c];
			}
			continue;
		}
		switch (op) {
		case 0x00: /* DW_CFA_nop */
			break;
		case 0x02: /* DW_CFA_advance_loc1 */
		case 0x03: /* DW_CFA_advance_loc2 */
		case 0x04: /* DW_CFA_advance_loc4 */
			v = rip_pl_rd_n(r, op == 0x02 ? 1 : op == 0x03 ? 2 : 4);
			if (!rip_pl_advance(rows, s, &loc, v * ci->code_align))
				goto fail;
			break;
		case 0x05: /* DW_CFA_offset_extended */
		case 0x11: /* DW_CFA_offset_extended_sf */
			reg = rip_pl_rd_uleb(r);
			v = op == 0x05 ? rip_pl_rd_uleb(r) : (uint64_t)rip_pl_rd_sleb(r);
			if (!rip_pl_cfa_offset(s, ci, reg, v))
				goto fail;
			break;
		case 0x06: /* DW_CFA_restore_extended */
		case 0x07: /* DW_CFA_undefined */
		case 0x08: /* DW_CFA_same_value */
			reg = rip_pl_rd_uleb(r);
			if (reg >= RIP_PL_NREGS)
				goto fail;
			c = rip_pl_col(reg);
			if (c < 0)
				break;
			if (op == 0x06) {
				s->where[c] = init->where[c];
				s->off[c] = init->off[c];
			} else {
				s->where[c] = op == 0x07 ? RIP_PL_W_UNDEF : RIP_PL_W_SAME;
				s->off[c] = 0;
			}
			break;
		case 0x09: /* DW_CFA_register */
			reg = rip_pl_rd_uleb(r);
			v = rip_pl_rd_uleb(r);
			if (reg >= RIP_PL_NREGS || v >= RIP_PL_NREGS)
				goto fail;
			c = rip_pl_col(reg);
			if (c >= 0)
				s->where[c] = RIP_PL_W_OTHER;
			break;
		case 0x0a: /* DW_CFA_remember_state */
			if (depth == RIP_PL_REMEMBER)
				goto fail;
			stack[depth++] = *s;
			break;
		case 0x0b: /* DW_CFA_restore_state */
			if (!depth)
				goto fail;
			*s = stack[--depth];
			break;
		case 0x0c: /* DW_CFA_def_cfa */
			reg = rip_pl_rd_uleb(r);
			v = rip_pl_rd_uleb(r);
			if (reg >= RIP_PL_NREGS)
				goto fail;
			s->cfa_reg = (uint8_t)reg;
			s->cfa_off = (int64_t)v;
			break;
		case 0x12: /* DW_CFA_def_cfa_sf */
			reg = rip_pl_rd_uleb(r);
			v = (uint64_t)rip_pl_rd_sleb(r);
			if (reg >= RIP_PL_NREGS)
				goto fail;
			s->cfa_reg = (uint8_t)reg;
			s->cfa_off = (int64_t)v * ci->data_align;
			break;
		case 0x0d: /* DW_CFA_def_cfa_register */
			reg = rip_pl_rd_uleb(r);
			if (reg >= RIP_PL_NREGS)
				goto fail;
			s->cfa_reg = (uint8_t)reg;
			break;
		case 0x0e: /* DW_CFA_def_cfa_offset */
			s->cfa_off = (int64_t)rip_pl_rd_uleb(r);
			break;
		case 0x13: /* DW_CFA_def_cfa_offset_sf */
			s->cfa_off = rip_pl_rd_sleb(r) * ci->data_align;
			break;
		case 0x2e: /* DW_CFA_GNU_args_size: only for resuming, not for a walk */
			rip_pl_rd_uleb(r);
			break;
		default:
			/*
			 * Expressions (def_cfa_expression, expression,
			 * val_expression: stack realignment, signal frames),
			 * set_loc, val_offset and the rest: libunwind's own.
			 */
			goto fail;
		}
	}
	if (r->bad)
		goto fail;
	if (rows)
		rip_pl_rows_add(rows, loc, rip_pl_rule_of(s)); /* from the last location on */
	return true;

fail:
	rip_pl_rows_add(rows, loc, RIP_PL_R_UNSUP); /* the op at loc is not done */
	return false;
}

/* ---- finding the FDE ---- */

/* The readable segments of the object that holds pc, and its .eh_frame_hdr. */
static bool rip_pl_obj_find(uintptr_t pc, struct rip_pl_obj *o, uintptr_t *hdr)
{
	struct dl_find_object fo;
	const ElfW(Phdr) * ph;
	uintptr_t base, bias, end;
	unsigned nph;

	if (_dl_find_object((void *)pc, &fo) != 0 || !fo.dlfo_eh_frame || !fo.dlfo_link_map)
		return false;
	base = (uintptr_t)fo.dlfo_map_start;
	end = (uintptr_t)fo.dlfo_map_end;
	bias = fo.dlfo_link_map->l_addr;
	ph = rip_pl_elf_phdrs(base, &nph);
	if (!ph)
		return false;
	o->n = 0;
	for (unsigned i = 0; i < nph && o->n < RIP_PL_SEGS; i++) {
		uintptr_t lo = bias + ph[i].p_vaddr, hi = lo + ph[i].p_filesz;

		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_R) || hi <= lo || lo < base ||
		    hi > end)
			continue;
		o->lo[o->n] = lo;
		o->hi[o->n] = hi;
		o->n++;
	}
	*hdr = (uintptr_t)fo.dlfo_eh_frame;
	return o->n > 0;
}

/* The CIE at a: its factors, FDE encoding and initial program.  False: unsupported. */
static bool rip_pl_cie_parse(const struct rip_pl_obj *o, uintptr_t a, struct rip_pl_cie *ci)
{
	struct rip_pl_rd r;
	char aug[8];
	unsigned n = 0;
	uint8_t version;
	uint64_t ra;

	if (!rip_pl_entry(o, a, &r) || rip_pl_rd_n(&r, 4) != 0) /* CIE id 0 in .eh_frame */
		return false;
	version = (uint8_t)rip_pl_rd_n(&r, 1);
	if (version != 1 && version != 3)
		return false;
	for (;;) {
		char ch = (char)rip_pl_rd_n(&r, 1);

		if (r.bad || n == sizeof(aug))
			return false;
		aug[n++] = ch;
		if (!ch)
			break;
	}
	ci->code_align = rip_pl_rd_uleb(&r);
	ci->data_align = rip_pl_rd_sleb(&r);
	ra = version == 1 ? rip_pl_rd_n(&r, 1) : rip_pl_rd_uleb(&r);
	if (ra != RIP_PL_RA)
		return false;
	ci->fde_enc = RIP_PL_PE_ABSPTR;
	ci->aug_z = aug[0] == 'z';
	if (ci->aug_z) {
		uint64_t len = rip_pl_rd_uleb(&r);
		uintptr_t data = r.p;

		if (r.bad || len > r.end - r.p)
			return false;
		for (unsigned i = 1; aug[i]; i++) {
			switch (aug[i]) {
			case 'R':
				ci->fde_enc = (uint8_t)rip_pl_rd_n(&r, 1);
				break;
			case 'L':
				rip_pl_rd_n(&r, 1);
				break;
			case 'P': {
				uint8_t enc = (uint8_t)rip_pl_rd_n(&r, 1);

				/* skipped: only its size matters, whatever it points to */
				rip_pl_rd_ptr(&r, enc & 0x0f, 0);
				break;
			}
			default: /* 'S', a signal frame; anything else */
				return false;
			}
		}
		r.p = data + len;
	} else if (aug[0]) {
		return false;
	}
	/* FDE addresses absolute or pc-relative (what linkers write), never indirect */
	if ((ci->fde_enc & 0x70) > RIP_PL_PE_PCREL || (ci->fde_enc & RIP_PL_PE_INDIRECT))
		return false;
	ci->instr = r.p;
	ci->instr_end = r.end;
	return !r.bad;
}

/* ---- rows of long programs ---- */

/*
 * A rule is the state of its FDE's program run up to its address, and each
 * call site of a function needs its own run.  Compilers' big functions
 * have long programs: cc1's 3,720 rules ran 1.2 MB of program, 332 bytes a
 * rule, a quarter of what tracing it added.  So a program of
 * RIP_PL_ROWS_MIN bytes or more is run once, whole, into rows (from each
 * location on, the rule there, as rip_pl_cfa_run's own advances say),
 * kept in an arena with a table keyed like the rules (the FDE's address
 * and the dlclose epoch); a rule of that FDE is then a binary search.  The
 * rows give exactly what running the program up to the address gives: a
 * row starts where the state the run would stop in holds.  Lock-free like
 * the rules: a writer fills its rows in its own part of the arena, then
 * publishes them with the table entry; two threads making the same rows
 * keep one.  A full arena or table, or a program that wraps its locations,
 * and the program is run as before.  A fork child keeps them (the same
 * objects at the same addresses).
 */
#define RIP_PL_ROWS_MIN 128u	       /* program bytes from which rows are made */
#define RIP_PL_ROWS_MAX 0xffffu	       /* rows of one FDE at most */
#define RIP_PL_FTAB_CAP 4096u	       /* FDEs with rows */
#define RIP_PL_FTAB_PROBES 16u
#define RIP_PL_ARENA_ROWS (1u << 19) /* rows in all: 8 MiB, backed as used */
#define RIP_PL_PC_MASK ((1ull << 48) - 1)

struct rip_pl_fent {
	uint64_t key;  /* FDE address | (epoch + 1) << 48; 0: empty; written once */
	uint64_t meta; /* first row << 16 | rows; 0: being written */
};

struct rip_pl_rowmem {
	struct rip_pl_fent f[RIP_PL_FTAB_CAP];
	struct rip_pl_row r[RIP_PL_ARENA_ROWS];
};

static struct rip_pl_rowmem *rip_pl_rowmem; /* NULL: no rows (it could not be mapped) */
static uint32_t rip_pl_rows_used;	    /* rows of the arena handed out */

/* The rule at ip in rows v[0 .. n) (v[0].loc <= ip: the FDE's start). */
static uint64_t rip_pl_rows_find(const struct rip_pl_row *v, uint32_t n, uint64_t ip)
{
	uint32_t lo = 0, hi = n;

	/* the last row whose location is <= ip */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ip < v[mid].loc)
			hi = mid;
		else
			lo = mid + 1;
	}
	return hi ? v[hi - 1].rule : RIP_PL_R_UNSUP;
}

/*
 * The rule at ip of the FDE key (address and epoch) whose program r holds
 * (from its start, at location start, after the CIE's program left init),
 * from its rows, made now if need be.  0: no rows (run the program).
 */
static uint64_t rip_pl_rows_rule(uint64_t key, const struct rip_pl_rd *r,
				 const struct rip_pl_cie *ci, const struct rip_pl_cfa *init,
				 uint64_t start, uint64_t ip)
{
	struct rip_pl_rowmem *m = rip_pl_rowmem;
	struct rip_pl_rows rows = { 0 };
	struct rip_pl_rd rd;
	struct rip_pl_cfa s;
	uint32_t i, p, first;
	uint64_t meta;

	if (!m)
		return 0;
	i = (uint32_t)((key >> 3) ^ (key >> 17)) & (RIP_PL_FTAB_CAP - 1);
	for (p = 0; p < RIP_PL_FTAB_PROBES; p++, i = (i + 1) & (RIP_PL_FTAB_CAP - 1)) {
		/* Relaxed: a key is written once; its meta is read with acquire. */
		uint64_t k = __atomic_load_n(&m->f[i].key, __ATOMIC_RELAXED);

		if (k == key) {
			/* Pairs with the release store of meta below (another thread's). */
			meta = __atomic_load_n(&m->f[i].meta, __ATOMIC_ACQUIRE);
			return meta ? rip_pl_rows_find(&m->r[meta >> 16], (uint32_t)(meta & 0xffff), ip)
				    : 0;
		}
		if (!k)
			break;
	}
	if (p == RIP_PL_FTAB_PROBES)
		return 0; /* the table is full around here */
	/* count, then fill the rows handed out */
	rd = *r;
	s = *init;
	rip_pl_cfa_run(&rd, ci, &s, init, start, ~0ull, &rows);
	/* Relaxed, here and below: a bump allocator; the entry's release publishes the rows. */
	if (rows.bad || !rows.n || rows.n > RIP_PL_ROWS_MAX ||
	    __atomic_load_n(&rip_pl_rows_used, __ATOMIC_RELAXED) >= RIP_PL_ARENA_ROWS)
		return 0; /* (so the count never wraps: it passes the end by a few FDEs at most) */
	first = __atomic_fetch_add(&rip_pl_rows_used, rows.n, __ATOMIC_RELAXED);
	if (first > RIP_PL_ARENA_ROWS - rows.n) /* rows.n <= RIP_PL_ROWS_MAX: no wrap */
		return 0;
	rows = (struct rip_pl_rows){ .v = &m->r[first], .max = rows.n };
	rd = *r;
	s = *init;
	rip_pl_cfa_run(&rd, ci, &s, init, start, ~0ull, &rows);
	if (rows.bad || rows.n != rows.max)
		return 0; /* cannot be: the same program twice */
	meta = (uint64_t)first << 16 | rows.n;
	for (; p < RIP_PL_FTAB_PROBES; p++, i = (i + 1) & (RIP_PL_FTAB_CAP - 1)) {
		uint64_t k = 0;

		/* Relaxed: the entry is published by the release store of its meta. */
		if (__atomic_compare_exchange_n(&m->f[i].key, &k, key, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			/* Pairs with the acquire load of meta above (another thread's). */
			__atomic_store_n(&m->f[i].meta, meta, __ATOMIC_RELEASE);
			break;
		}
		if (k == key)
			break; /* another thread made them: the same rows */
	}
	return rip_pl_rows_find(rows.v, rows.n, ip);
}

/* The rule for return address pc (its state at pc - 1, as libunwind's), from the tables. */
static uint64_t rip_pl_rule_tables(uintptr_t pc, uint64_t ekey)
{
	const uint64_t unsup = RIP_PL_R_UNSUP;
	uintptr_t ip = pc - 1, hdr, tab, fde, cie;
	struct rip_pl_obj o;
	struct rip_pl_rd r;
	struct rip_pl_cie ci;
	struct rip_pl_cfa s, init;
	uint8_t eptr_enc, count_enc, tab_enc;
	uint64_t count, lo, hi, start, range;
	int64_t rel;
	int32_t e[2];

	if (!rip_pl_obj_find(ip, &o, &hdr))
		return unsup;
	/* the signal trampoline (its own unwind information is an expression) */
	if (rip_pl_obj_has(&o, pc, sizeof(rip_pl_sigret_code)) &&
	    !memcmp((const void *)pc, rip_pl_sigret_code, sizeof(rip_pl_sigret_code)))
		return RIP_PL_R_SIGRET;
	if (!rip_pl_obj_has(&o, hdr, 4))
		return unsup;
	/* .eh_frame_hdr: version, three encodings, eh_frame_ptr, fde_count, the table */
	r.p = hdr;
	r.end = hdr + 4;
	r.bad = false;
	if (rip_pl_rd_n(&r, 1) != 1)
		return unsup;
	eptr_enc = (uint8_t)rip_pl_rd_n(&r, 1);
	count_enc = (uint8_t)rip_pl_rd_n(&r, 1);
	tab_enc = (uint8_t)rip_pl_rd_n(&r, 1);
	/* libunwind searches linearly without this table: leave those to it */
	if (tab_enc != (RIP_PL_PE_DATAREL | RIP_PL_PE_SDATA4) || eptr_enc == RIP_PL_PE_OMIT ||
	    count_enc == RIP_PL_PE_OMIT)
		return unsup;
	r.end = hdr + 4 + 8 + 8 + 8; /* two pointers, at most 8 bytes each (no leb here) */
	if ((eptr_enc & 0x0f) == RIP_PL_PE_ULEB128 || (eptr_enc & 0x0f) == RIP_PL_PE_SLEB128 ||
	    (count_enc & 0x0f) == RIP_PL_PE_ULEB128 || (count_enc & 0x0f) == RIP_PL_PE_SLEB128 ||
	    !rip_pl_obj_has(&o, hdr, r.end - hdr))
		r.end = hdr + 4; /* refuse, rather than read what may not be there */
	rip_pl_rd_ptr(&r, eptr_enc, hdr);
	count = rip_pl_rd_ptr(&r, count_enc, hdr);
	tab = r.p;
	if (r.bad || !count || count > (1ull << 28) || !rip_pl_obj_has(&o, tab, count * 8))
		return unsup;
	/* the last entry whose start is <= ip */
	rel = (int64_t)(ip - hdr);
	if (rel != (int32_t)rel)
		return unsup;
	lo = 0;
	hi = count;
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		memcpy(e, (const void *)(tab + mid * 8), 8);
		if ((int32_t)rel < e[0])
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!hi)
		return unsup;
	memcpy(e, (const void *)(tab + (hi - 1) * 8), 8);
	fde = hdr + (intptr_t)e[1];

	/* the FDE and its CIE */
	if (!rip_pl_entry(&o, fde, &r))
		return unsup;
	{
		uintptr_t at = r.p;
		uint32_t off = (uint32_t)rip_pl_rd_n(&r, 4);

		if (!off)
			return unsup; /* a CIE, not an FDE */
		cie = at - off;
	}
	if (!rip_pl_cie_parse(&o, cie, &ci))
		return unsup;
	start = rip_pl_rd_ptr(&r, ci.fde_enc, hdr);
	range = rip_pl_rd_ptr(&r, ci.fde_enc & 0x0f, hdr);
	if (r.bad || ip < start || ip - start >= range)
		return unsup; /* no unwind information for ip: libunwind guesses */
	if (ci.aug_z) {
		uint64_t len = rip_pl_rd_uleb(&r);

		if (r.bad || len > r.end - r.p)
			return unsup;
		r.p += len;
	}

	/* the CIE's program, then the FDE's up to ip */
	memset(&init, 0, sizeof(init)); /* every register: same value */
	init.cfa_reg = 0xff;		/* no CFA rule yet */
	{
		struct rip_pl_rd cr = { ci.instr, ci.instr_end, false };

		if (!rip_pl_cfa_run(&cr, &ci, &init, &init, 0, ~0ull, NULL))
			return unsup;
	}
	/* a long program: its rows, made once */
	if (ekey && r.end - r.p >= RIP_PL_ROWS_MIN) {
		uint64_t rule = rip_pl_rows_rule(fde | ekey, &r, &ci, &init, start, ip);

		if (rule)
			return rule;
	}
	s = init;
	if (!rip_pl_cfa_run(&r, &ci, &s, &init, start, ip, NULL))
		return unsup;
	return rip_pl_rule_of(&s);
}

/* The rule for return address pc: kept by an earlier process (rulecache.c), or computed. */
static uint64_t rip_pl_rule_compute(uintptr_t pc, uint64_t ekey)
{
	void *slot;
	uint64_t rule = rip_pl_rc_get(pc, &slot);

	if (rule)
		return rule;
	rule = rip_pl_rule_tables(pc, ekey);
	rip_pl_rc_put(slot, pc, rule);
	return rule;
}

/* ---- the table of rules ---- */

/*
 * Two tables, as for stacks (backtrace.c): every page a program writes costs
 * it a page fault or two, and cc1's 3,700 rules wrote all 512 pages of one
 * 2 MiB table.  Rules go to a small table (256 KiB) first, and to the big
 * one only where the small one's run of slots is full.
 */
#define RIP_PL_RULE_CAP0 (1u << 14) /* slots of the small table */
#define RIP_PL_RULE_CAP (1u << 17)  /* slots of the big one */
#define RIP_PL_RULE_PROBES 32u
#define RIP_PL_EPOCH_MAX 0xffffu /* keys hold 16 bits of it; past that, nothing is kept */

struct rip_pl_rent {
	uint64_t key;  /* pc | (epoch + 1) << 48; 0: empty; written once */
	uint64_t rule; /* 0: being written */
};

static struct rip_pl_rent *rip_pl_rtab;  /* the small table: the walk looks here first */
static struct rip_pl_rent *rip_pl_rtab1; /* the big one (memory only where written), or NULL */

/*
 * Nearby code, nearby entries: a slot per 16 bytes of code, so that the
 * return addresses of a hot loop share a few lines and pages of the table
 * (a scrambling hash spread them over a page each, and the walk waited on
 * the TLB); the bits above 128 KiB fold in, so that objects do not all
 * start at slot 0.  Two shifts, a xor and a mask: the walk's critical path
 * goes through here once a frame.
 */
static inline uint32_t rip_pl_rslot(uint64_t key, uint32_t cap)
{
	return (uint32_t)(((key >> 4) ^ (key >> 17)) & (cap - 1));
}

/*
 * The rule of pc (key: its key) in table tab of cap slots, found or
 * computed and kept there: true and *rule.  False: its run of slots is full
 * (nothing computed).
 */
static bool rip_pl_rule_in(struct rip_pl_rent *tab, uint32_t cap, uintptr_t pc, uint64_t key,
			   uint64_t *rule)
{
	uint32_t i = rip_pl_rslot(key, cap), p;

	for (p = 0; p < RIP_PL_RULE_PROBES; p++, i = (i + 1) & (cap - 1)) {
		/* Relaxed: a key is written once; its rule is read with acquire. */
		uint64_t k = __atomic_load_n(&tab[i].key, __ATOMIC_RELAXED);

		if (k == key) {
			/* Pairs with the release store below (another thread's). */
			*rule = __atomic_load_n(&tab[i].rule, __ATOMIC_ACQUIRE);
			if (!*rule)
				*rule = rip_pl_rule_compute(pc, key & ~RIP_PL_PC_MASK);
			return true;
		}
		if (!k)
			break;
	}
	if (p == RIP_PL_RULE_PROBES)
		return false;
	*rule = rip_pl_rule_compute(pc, key & ~RIP_PL_PC_MASK);
	for (; p < RIP_PL_RULE_PROBES; p++, i = (i + 1) & (cap - 1)) {
		uint64_t k = 0;

		/* Relaxed: the entry's rule is published by the release store below. */
		if (__atomic_compare_exchange_n(&tab[i].key, &k, key, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			/* Pairs with the acquire loads of the rule here and in the walk. */
			__atomic_store_n(&tab[i].rule, *rule, __ATOMIC_RELEASE);
			break;
		}
		if (k == key)
			break; /* another thread is writing it: the same rule */
	}
	return true;
}

/* The rule of pc (key: its key), from the tables past the first slot or computed and kept. */
static __attribute__((noinline)) uint64_t rip_pl_rule_slow(uintptr_t pc, uint64_t key)
{
	uint64_t rule;

	if (rip_pl_rule_in(rip_pl_rtab, RIP_PL_RULE_CAP0, pc, key, &rule) ||
	    (rip_pl_rtab1 && rip_pl_rule_in(rip_pl_rtab1, RIP_PL_RULE_CAP, pc, key, &rule)))
		return rule;
	return rip_pl_rule_compute(pc, key & ~RIP_PL_PC_MASK); /* both runs full: not kept */
}

/* ---- the walk ---- */

/*
 * A step is a rule lookup and one or two loads, each address checked
 * against this walk's bounds first.  Repeated stacks do not come here
 * again: backtrace.c keeps the id of each stack walked with the loads its
 * walk depended on, which the log collects.
 */

/* The rule of pc from the table (first slot), or from the slow path. */
static inline uint64_t rip_pl_rule_get(const struct rip_pl_rent *tab, uintptr_t pc, uint64_t ekey)
{
	const uint64_t key = pc | ekey;
	const struct rip_pl_rent *e = &tab[rip_pl_rslot(key, RIP_PL_RULE_CAP0)];
	uint64_t rule = 0;

	/* Relaxed key, acquire rule: pairs with the release store in rip_pl_rule_slow. */
	if (RIP_LIKELY(__atomic_load_n(&e->key, __ATOMIC_RELAXED) == key))
		rule = __atomic_load_n(&e->rule, __ATOMIC_ACQUIRE);
	if (RIP_UNLIKELY(!rule))
		rule = rip_pl_rule_slow(pc, key);
	return rule;
}

/* Log the load at off that found val (log NULL: none); past RIP_PL_WLOG loads, only count. */
static inline __attribute__((always_inline)) void rip_pl_wlog_add(struct rip_pl_wlog *log,
								  uint32_t *ln, uint32_t off,
								  uint64_t val)
{
	if (!log)
		return;
	if (RIP_LIKELY(*ln < RIP_PL_WLOG)) {
		log->off[*ln] = off;
		log->val[*ln] = val;
	}
	(*ln)++;
}

/* The walk's end: its count of loads (past RIP_PL_WLOG: too many) and epoch into log. */
static inline void rip_pl_wlog_end(struct rip_pl_wlog *log, uint32_t ln, uint32_t epoch)
{
	if (log) {
		log->n = ln > RIP_PL_WLOG ? RIP_PL_WLOG + 1 : ln;
		log->epoch = epoch;
	}
}

/* Where a walk is: what goes on from one part of it to the next, across a signal frame. */
struct rip_pl_wpos {
	uintptr_t sp0;	/* the first part's sp: bounds and log offsets are from it */
	uintptr_t sp;	/* at a signal frame: the CFA there (its ucontext_t) */
	uint32_t n;	/* frames so far */
	uint32_t ln;	/* loads logged so far (see rip_pl_wlog_add) */
	uint32_t fpo;	/* where fp was loaded from, until a step uses it; UINT32_MAX: not loaded */
	uint32_t epoch; /* the dlclose epoch of the rules */
	bool patched;	/* a return address taken from librip's return stack (unwind.h) */
};

#define RIP_PL_W_SIGFRAME (-3) /* the walk stopped at a signal frame (pos->sp) */

/*
 * A part of the walk, with a log or (log NULL) without: each is a copy of
 * its own.  It stops at a signal frame, which rip_pl_dwarf_walk steps
 * through, out of the loop: the loop's registers stay the common step's.
 */
static inline __attribute__((always_inline)) int rip_pl_walk(uintptr_t pc, uintptr_t sp,
							     uintptr_t fp, uint64_t *out,
							     uint32_t max,
							     struct rip_pl_wlog *log,
							     struct rip_pl_wpos *pos)
{
	struct rip_pl_thread *t = &rip_pl_self;
	const struct rip_pl_rent *tab = rip_pl_rtab;
	const uint32_t epoch = pos->epoch;
	const uint64_t ekey = (uint64_t)(epoch + 1) << 48;
	/* an address a is readable when a - lo <= span: [sp0 + 8, hi], above our frame */
	const uintptr_t sp0 = pos->sp0, lo = sp0 + 8, span = t->stack_hi - lo;
	const uintptr_t pexit = rip_pl_pexit;
	uint32_t ln = pos->ln, fpo = pos->fpo, n = pos->n;

	/* Past RIP_PL_EPOCH_MAX dlcloses, libunwind does every stack. */
	if (!tab || t->stack_ok != 1 || sp < t->stack_lo || sp + 16 > t->stack_hi ||
	    epoch >= RIP_PL_EPOCH_MAX || (pc >> 48))
		return -1;
	while (n < max) {
		uint64_t rule = rip_pl_rule_get(tab, pc, ekey);
		uintptr_t cfa;

		if (RIP_UNLIKELY((rule & RIP_PL_R_KIND) != RIP_PL_R_STD)) {
			if ((rule & RIP_PL_R_KIND) == RIP_PL_R_LAST)
				break;
			if (rule != RIP_PL_R_SIGRET)
				goto fail;
			pos->sp = sp;
			pos->n = n;
			pos->ln = ln;
			pos->fpo = fpo;
			return RIP_PL_W_SIGFRAME;
		}
		if (rule & RIP_PL_R_RSP) {
			cfa = sp;
		} else {
			/*
			 * A CFA from rbp: the walk depends on the rbp value
			 * loaded, which goes to the log now.  A loaded value
			 * no step uses (rbp as a general register in code
			 * without frame pointers) is not logged: it changes
			 * from call to call.
			 */
			cfa = fp;
			if (log && fpo != UINT32_MAX) {
				rip_pl_wlog_add(log, &ln, fpo | RIP_PL_WLOG_REL, fp);
				fpo = UINT32_MAX;
			}
		}
		cfa += (uintptr_t)((int64_t)rule >> 32);
		/* the return address at cfa - 8, and rbp's slot, inside the stack above us */
		if (RIP_UNLIKELY(cfa - lo > span))
			goto fail;
		if (rule & RIP_PL_R_RBP) {
			uintptr_t slot = cfa + (uintptr_t)(int64_t)(int16_t)(rule >> 16);

			if (RIP_UNLIKELY(slot + 8 - lo > span))
				goto fail;
			fp = *(const uintptr_t *)slot;
			if (log)
				fpo = (uint32_t)(slot - sp0);
		}
		pc = ((const uintptr_t *)cfa)[-1];
		rip_pl_wlog_add(log, &ln, (uint32_t)(cfa - 8 - sp0), pc);
		sp = cfa;
		if (RIP_UNLIKELY(pc == pexit)) {
			/* a patched function's: the real one, as unpatched (none known: libunwind) */
			pc = __rip_fn_ret_at(cfa);
			if (!pc)
				goto fail;
			pos->patched = true;
		}
		if (RIP_UNLIKELY(pc - 0x4000 >= (1ull << 48) - 0x4000)) {
			if (pc < 0x4000)
				break; /* libunwind stops there too, without the frame */
			goto fail;     /* past 48 bits: no key for it; libunwind */
		}
		out[n++] = pc;
	}
	rip_pl_wlog_end(log, ln, epoch);
	return (int)n;
fail:
	pos->n = n; /* the frames so far, for a partial walk */
	return -1;
}

/*
 * rip_pl_dwarf_walk; partial: after a signal frame, a failure keeps the
 * frames so far.  Inlined into both: each is a copy of its own, as before.
 */
static inline __attribute__((always_inline)) int rip_pl_dwarf_walk2(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint64_t *out,
			      uint32_t max, struct rip_pl_wlog *log, bool partial)
{
	/* Acquire: pairs with the release in dlclose (the rules of a closed object are stale). */
	struct rip_pl_wpos pos = { .sp0 = sp,
				   .fpo = UINT32_MAX,
				   .epoch = __atomic_load_n(&rip_pl_unw_epoch, __ATOMIC_ACQUIRE) };
	const uintptr_t lo = sp + 8, span = rip_pl_self.stack_hi - lo;
	bool sig = false;
	int m;

	/* loads logged; a stack taller than offsets can say (below RIP_PL_WLOG_REL) logs none */
	pos.ln = span >= RIP_PL_WLOG_REL - 16 ? RIP_PL_WLOG + 1 : 0;
	for (;;) {
		uintptr_t uc;

		m = log ? rip_pl_walk(pc, sp, fp, out, max, log, &pos)
			: rip_pl_walk(pc, sp, fp, out, max, NULL, &pos);
		if (RIP_LIKELY(m != RIP_PL_W_SIGFRAME)) {
			if (log) {
				log->sig = sig;
				log->patched = pos.patched;
			}
			break;
		}
		/*
		 * A signal frame: the ucontext_t at its CFA holds the
		 * interrupted code's registers.  Its rip is a frame as it is
		 * (not a return address: the next rule is that of the state
		 * at rip, which is the rule of rip + 1 as a return address),
		 * as libunwind does.
		 */
		sig = true;
		uc = pos.sp;
		if (uc + RIP_PL_UC_RIP + 8 - lo > span)
			return -2;
		fp = *(const uintptr_t *)(uc + RIP_PL_UC_RBP);
		if (log)
			pos.fpo = (uint32_t)(uc + RIP_PL_UC_RBP - pos.sp0);
		pc = *(const uintptr_t *)(uc + RIP_PL_UC_RIP);
		rip_pl_wlog_add(log, &pos.ln, (uint32_t)(uc + RIP_PL_UC_RIP - pos.sp0), pc);
		sp = *(const uintptr_t *)(uc + RIP_PL_UC_RSP);
		rip_pl_wlog_add(log, &pos.ln, (uint32_t)(uc + RIP_PL_UC_RSP - pos.sp0), sp);
		if (pc >= (1ull << 48) - 1)
			return -2; /* past 48 bits (pc + 1 too): no key for it */
		/* below 0x4000 libunwind stops, without the frame */
		if (pc >= 0x4000)
			out[pos.n++] = pc++;
		if (pc < 0x4000 || pos.n == max) {
			rip_pl_wlog_end(log, pos.ln, pos.epoch);
			if (log) {
				log->sig = true;
				log->patched = pos.patched;
			}
			m = (int)pos.n;
			break;
		}
	}
	if (m == -1 && partial)
		return (int)pos.n;
	return m == -1 && sig ? -2 : m;
}

int rip_pl_dwarf_walk(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint64_t *out, uint32_t max,
		      struct rip_pl_wlog *log)
{
	return rip_pl_dwarf_walk2(pc, sp, fp, out, max, log, false);
}

int rip_pl_dwarf_walk_partial(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint64_t *out,
			      uint32_t max)
{
	return rip_pl_dwarf_walk2(pc, sp, fp, out, max, NULL, true);
}

/*
 * The first frames only, for the stack cache's key: the same steps as
 * rip_pl_walk's without a log, and none of its rarer cases (a signal
 * frame, a rule it declines, a read outside the stack): those give -1 and
 * the caller asks rip_pl_dwarf_walk, which knows them.  Where it gives
 * frames, they are rip_pl_dwarf_walk's.  Its own function, not the walk
 * with max small: that one's set-up (the position kept across signal
 * frames, the log's offsets) cost as much as its four steps.
 */
int rip_pl_dwarf_prefix(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint64_t *out, uint32_t max,
			uint32_t epoch)
{
	const struct rip_pl_thread *t = &rip_pl_self;
	const struct rip_pl_rent *tab = rip_pl_rtab;
	const uint64_t ekey = (uint64_t)(epoch + 1) << 48;
	/* an address a is readable when a - lo <= span: [sp + 8, hi], above our frame */
	const uintptr_t lo = sp + 8, hi = t->stack_hi, span = hi - lo;
	uint32_t n = 0;

	if (!tab || t->stack_ok != 1 || sp < t->stack_lo || sp + 16 > hi ||
	    epoch >= RIP_PL_EPOCH_MAX || (pc >> 48))
		return -1;
	while (n < max) {
		uint64_t rule = rip_pl_rule_get(tab, pc, ekey);
		uintptr_t cfa;

		if (RIP_UNLIKELY((rule & RIP_PL_R_KIND) != RIP_PL_R_STD)) {
			if ((rule & RIP_PL_R_KIND) == RIP_PL_R_LAST)
				break;
			return -1; /* unsupported, or a signal frame */
		}
		cfa = ((rule & RIP_PL_R_RSP) ? sp : fp) + (uintptr_t)((int64_t)rule >> 32);
		if (RIP_UNLIKELY(cfa - lo > span))
			return -1;
		if (rule & RIP_PL_R_RBP) {
			uintptr_t slot = cfa + (uintptr_t)(int64_t)(int16_t)(rule >> 16);

			if (RIP_UNLIKELY(slot + 8 - lo > span))
				return -1;
			fp = *(const uintptr_t *)slot;
		}
		pc = ((const uintptr_t *)cfa)[-1];
		sp = cfa;
		if (RIP_UNLIKELY(pc - 0x4000 >= (1ull << 48) - 0x4000)) {
			if (pc < 0x4000)
				break;
			return -1;
		}
		out[n++] = pc;
	}
	return (int)n;
}

bool rip_pl_sigret_at(uintptr_t a)
{
	struct rip_pl_obj o;
	uintptr_t hdr;

	return rip_pl_obj_find(a, &o, &hdr) && rip_pl_obj_has(&o, a, sizeof(rip_pl_sigret_code)) &&
	       !memcmp((const void *)a, rip_pl_sigret_code, sizeof(rip_pl_sigret_code));
}

int rip_pl_unwind_init(void)
{
	/* A fork child that finds it wiped learns the rules again; one that does not keeps them. */
	bool wiped;
	long m;

	rip_pl_rtab = rip_pl_table_map((size_t)RIP_PL_RULE_CAP0 * sizeof(struct rip_pl_rent), &wiped);
	rip_pl_rtab1 = rip_pl_table_map((size_t)RIP_PL_RULE_CAP * sizeof(struct rip_pl_rent), &wiped);
	/*
	 * The rows: memory only where written, and kept by a fork child (the
	 * same objects at the same addresses).  Without them, programs are run.
	 * The system call, so that our mmap hook does not see the tracer's own mapping.
	 */
	m = syscall(SYS_mmap, NULL, sizeof(*rip_pl_rowmem), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	rip_pl_rowmem = m == -1 ? NULL : (struct rip_pl_rowmem *)m;
	if (rip_pl_rowmem)
		rip_pl_own_map_add(rip_pl_rowmem, sizeof(*rip_pl_rowmem));
	return rip_pl_rtab ? 0 : -ENOMEM;
}

#else /* !__x86_64__ */

int rip_pl_dwarf_walk(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint64_t *out, uint32_t max,
		      struct rip_pl_wlog *log)
{
	return -1; /* libunwind, or frame pointers, do it */
}

int rip_pl_dwarf_walk_partial(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint64_t *out,
			      uint32_t max)
{
	return -1;
}

int rip_pl_dwarf_prefix(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint64_t *out, uint32_t max,
			uint32_t epoch)
{
	return -1;
}

bool rip_pl_sigret_at(uintptr_t a)
{
	return false;
}

int rip_pl_unwind_init(void)
{
	return 0;
}

#endif
