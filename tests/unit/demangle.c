/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Description: the Rust demangler (read/demangle.c).  Known pairs: v0
 * symbols rustc 1.95 wrote (-C symbol-mangling-version=v0: paths, generic
 * arguments, closures, vtable shims, inherent and trait impls, dyn with
 * bound lifetimes and associated types, unsafe extern "C" fn pointers,
 * tuples, arrays, back-references, the instantiating crate, ".llvm."
 * suffixes) and a few written from the specification (const generics,
 * Punycode shown encoded, the "__R" prefix, every basic type), and legacy
 * _ZN...17h<hash>E names shown without the hash; names that are not Rust
 * or not valid are refused; a name one byte too long for the buffer gives
 * -ENOSPC.  Then robustness on hostile input: every truncation and many
 * one-byte changes of each symbol, random splices of their pieces, deep
 * nesting, self-referencing and exponential back-references, each in a
 * buffer of its exact size (tests/integ/sym-rust.sh runs this program under
 * AddressSanitizer too): every call returns, and the output is a string
 * within the buffer, or empty on an error.  gfortran's names of module
 * procedures (__MODULE_MOD_NAME, shown raw before) as "module::name".
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "helpers.h"
#include "read/demangle.h"

static const struct {
	const char *sym, *want;
} pairs[] = {
	/* rustc 1.95, v0 */
	{ "_RNvCs2ndz2m94zur_4demo4main", "demo::main" },
	{ "_RNCNvCs2ndz2m94zur_4demo4mains_0B3_", "demo::main::{closure#1}" },
	{ "_RNvMCs2ndz2m94zur_4demoINtB2_5PointmE3sumB2_", "<demo::Point<u32>>::sum" },
	{ "_RINvCs2ndz2m94zur_4demo7genericRINtNtNtNtCsjrHSEGnQ3l9_3std11collections4hash3map7Hash"
	  "MapNtNtCslNYArtu3iFV_5alloc6string6StringINtNtB1t_3vec3VechEEEB2_",
	  "demo::generic::<&std::collections::hash::map::HashMap<alloc::string::String, "
	  "alloc::vec::Vec<u8>>>" },
	{ "_RINvCs2ndz2m94zur_4demo4gen2ThAtj4_ReEEB2_", "demo::gen2::<(u8, [u16; 4], &str)>" },
	{ "_RNSNvYNCNvCs2ndz2m94zur_4demo4mains_0INtNtNtCsgEmfK2I1SDS_4core3ops8function6FnOnceTh"
	  "EE9call_once6vtableB8_",
	  "<demo::main::{closure#1} as core::ops::function::FnOnce<(u8,)>>::call_once::{shim:"
	  "vtable#0}" },
	{ "_RNCINvNtCsjrHSEGnQ3l9_3std2rt10lang_startuE0Cs2ndz2m94zur_4demo.llvm."
	  "16907814043381348642",
	  "std::rt::lang_start::<()>::{closure#0}" },
	{ "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtCslNYArtu3iFV_5alloc5boxed3BoxDG0_INt"
	  "NtNtB4_3ops8function2FnTRL1_INtNtCsjrHSEGnQ3l9_3std5panic13PanicHookInfoL0_EEEp6Output"
	  "uNtNtB4_6marker4SyncNtB2N_4SendEL_EEB1T_",
	  "core::ptr::drop_in_place::<alloc::boxed::Box<dyn for<'a, 'b> core::ops::function::Fn<(&'a "
	  "std::panic::PanicHookInfo<'b>,), Output = ()> + core::marker::Sync + "
	  "core::marker::Send>>" },
	{ "_RNvMs3_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecTOhFUKCBN_EuENtNtCsjrHSEGnQ3l9_3std5a"
	  "lloc6SystemE8grow_oneB13_",
	  "<alloc::raw_vec::RawVec<(*mut u8, unsafe extern \"C\" fn(*mut u8)), "
	  "std::alloc::System>>::grow_one" },
	{ "_RNvXsq_NtCsgEmfK2I1SDS_4core3fmtONtNtB7_3ffi6c_voidNtB5_5Debug3fmtCsjrHSEGnQ3l9_3std",
	  "<*mut core::ffi::c_void as core::fmt::Debug>::fmt" },
	{ "_RNvXs1h_NtCsgEmfK2I1SDS_4core3fmtQShNtB6_5Debug3fmtCsgY6Mt91CT9J_14rustc_demangle",
	  "<&mut [u8] as core::fmt::Debug>::fmt" },
	{ "_RNvMs3_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecPaE8grow_oneCsjrHSEGnQ3l9_3std",
	  "<alloc::raw_vec::RawVec<*const i8>>::grow_one" },
	{ "_RNvXs0_NtCsgEmfK2I1SDS_4core3anyDNtB5_3AnyNtNtB7_6marker4SendEL_NtNtB7_3fmt5Debug3fmt",
	  "<dyn core::any::Any + core::marker::Send as core::fmt::Debug>::fmt" },
	{ "_RNvNCNKNvNtNtCsjrHSEGnQ3l9_3std2io5stdio14OUTPUT_CAPTURE0023___RUST_STD_INTERNAL_VAL",
	  "std::io::stdio::OUTPUT_CAPTURE::{K#0}::{closure#0}::__RUST_STD_INTERNAL_VAL" },
	{ "_RNCNvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace10__print_fmt0B7_",
	  "std::sys::backtrace::_print_fmt::{closure#0}" },
	{ "_RINvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace28___rust_begin_short_backtraceFEuuECs2ndz2m94z"
	  "ur_4demo",
	  "std::sys::backtrace::__rust_begin_short_backtrace::<fn(), ()>" },
	{ "_RINvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace26___rust_end_short_backtraceNCNvNtB6_5alloc8ru"
	  "st_oom0zEB6_",
	  "std::sys::backtrace::__rust_end_short_backtrace::<std::alloc::rust_oom::{closure#0}, !>" },
	{ "_RINvNtCsgEmfK2I1SDS_4core6escape14escape_unicodeKja_ECsgY6Mt91CT9J_14rustc_demangle",
	  "core::escape::escape_unicode::<10>" },
	/* from the specification */
	{ "_RNvCs1234_7mycrate3foo", "mycrate::foo" },
	{ "__RNvCs1234_7mycrate3foo", "mycrate::foo" },
	{ "_RC7mycrate", "mycrate" },
	{ "_RNvNtCs1234_7mycrate7mod_foou8gdel_5qa", "mycrate::mod_foo::gdel-5qa" },
	{ "_RINvCs2ndz2m94zur_4demo3negKxn5_EB2_", "demo::neg::<-5>" },
	{ "_RINvCs2ndz2m94zur_4demo5boolcKb1_EB2_", "demo::boolc::<true>" },
	{ "_RINvCs2ndz2m94zur_4demo5charcKc78_EB2_", "demo::charc::<'x'>" },
	{ "_RINvCs2ndz2m94zur_4demo5charcKce9_EB2_", "demo::charc::<'\\u{e9}'>" },
	{ "_RINvC4test1fKo123456789abcdef0123456789_EB2_",
	  "test::f::<0x123456789abcdef0123456789>" },
	{ "_RINvC4test1fKpEB2_", "test::f::<_>" },
	{ "_RINvC4test1fFRelEbEB2_", "test::f::<fn(&str, i32) -> bool>" },
	{ "_RINvC4test1fFG_RL0_hEQL0_hEB2_", "test::f::<for<'a> fn(&'a u8) -> &'a mut u8>" },
	{ "_RINvC4test1fFK8sys_callEuEB2_", "test::f::<extern \"sys-call\" fn()>" },
	{ "_RINvC4test1fTnEEB2_", "test::f::<(i128,)>" },
	{ "_RINvC4test1fRL_hEB2_", "test::f::<&u8>" },
	{ "_RINvC4test1fTabcdefhijlmnostuvxyzEEB2_",
	  "test::f::<(i8, bool, char, f64, str, f32, u8, isize, usize, i32, u32, i128, u128, i16, u16, "
	  "(), ..., i64, u64, !)>" },
	{ "_RNvYNtC4test1SNtB4_5Trait4call", "<test::S as test::Trait>::call" },
	/* legacy */
	{ "_ZN4demo4main17hf9621c74b23bdf6eE", "demo::main" },
	{ "_ZN42_$LT$$RF$T$u20$as$u20$core..fmt..Debug$GT$3fmt17h07cecbe1c9d40fe8E",
	  "<&T as core::fmt::Debug>::fmt" },
	{ "_ZN4demo4main28_$u7b$$u7b$closure$u7d$$u7d$17hac699b1619d000c8E",
	  "demo::main::{{closure}}" },
	{ "_ZN4core3ptr138drop_glue$LT$std..thread..lifecycle..spawn_unchecked$LT$demo..main..$u7b"
	  "$$u7b$closure$u7d$$u7d$$C$i32$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17hefa9139157bfc7dbE",
	  "core::ptr::drop_glue<std::thread::lifecycle::spawn_unchecked<demo::main::{{closure}},i32>"
	  "::{{closure}}>" },
	{ "_ZN3std2rt10lang_start17h0123456789abcdefE.llvm.1234", "std::rt::lang_start" },
	{ "_ZN4demo3odd10a$u1$b$SP$17h0123456789abcdefE", "demo::odd::a$u1$b$SP$" },
};

/* Not Rust, or not valid: refused, out left empty. */
static const char *const refused[] = {
	"main",
	"_ZN3foo3barE",			    /* C++ (no hash) */
	"_ZN3foo3bar17h0123456789abcdeE",   /* 15 hex digits */
	"_ZN3foo3bar17h0123456789abcdefEx", /* trailing bytes */
	"_R",
	"_RNv",
	"_RC",
	"_RC3fo",			     /* identifier past the end */
	"_RC03foo",			     /* a leading zero */
	"_R1C3foo",			     /* an encoding version not known */
	"_RC3foo!",			     /* a character no symbol has */
	"_RNvC3foo3barX",		     /* bytes after the instantiating crate */
	"_RB_",				     /* a back-reference to itself */
	"_RNvB_3foo",			     /* ... through a path: loops until the depth limit */
	"_RINvC4test1fKjEEB2_",		     /* constant data without its "_" */
	"_RINvC4test1fKbn1_EB2_",	     /* a negative bool */
	"_RINvC4test1fKcd800_EB2_",	     /* a surrogate char */
	"_RINvC4test1fKe616263_EB2_",	     /* a str constant: not read here */
	"_RINvC4test1fRL0_hEB2_",	     /* a bound lifetime with no binder */
	"_RINvC4test1fFGzzzzzzzzzz_uEuEB2_", /* a binder of too many lifetimes */
};

static int dm(const char *sym, char *out, size_t len)
{
	int r = dm_rust(sym, out, len);

	if (len && (memchr(out, 0, len) == NULL || (r && out[0])))
		T_CHECK(!"output not a string within the buffer, or not empty on an error");
	return r;
}

/* The pieces hostile names are spliced from. */
static const char *const pieces[] = {
	"_R",	"N",	 "v",	"C",   "s_",  "3foo",	    "I",       "E", "B",   "_",	  "0_",
	"M",	"X",	 "Y",	"K",   "L",   "G",	    "F",       "U", "D",   "p",	  "A",
	"S",	"T",	 "R",	"Q",   "P",   "O",	    "u",       "1", "9",   "z",	  "h",
	"Kj3_", "Kc78_", "B2_", "B0_", "L0_", "u8gdel_5qa", ".llvm.1", "$", "_ZN", "17h", "E.x",
};

static uint64_t rnd_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* s in a buffer of its exact size, so that a read past it is a sanitizer error. */
static void hostile(const char *s, size_t n)
{
	static const size_t lens[] = { 1, 2, 7, 64, 4096 };
	char *copy = malloc(n + 1), out[4096];

	if (!copy)
		abort();
	memcpy(copy, s, n);
	copy[n] = 0;
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		char *o = lens[k] == sizeof(out) ? out : malloc(lens[k]);

		if (!o)
			abort();
		dm(copy, o, lens[k]);
		if (o != out)
			free(o);
	}
	free(copy);
}

int main(void)
{
	static const char subst[] = "_0aAzZBEINCMXYKLpuGs$.\x80\xff";
	char out[4096], big[12000];
	struct timespec t0, t1;
	size_t n;

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		size_t w = strlen(pairs[i].want);
		int r = dm(pairs[i].sym, out, sizeof(out));

		if (r)
			fprintf(stderr, "%s: %d\n", pairs[i].sym, r);
		T_EQ(r, 0);
		T_STREQ(out, pairs[i].want);
		/* exactly big enough, one byte short */
		T_EQ(dm(pairs[i].sym, out, w + 1), 0);
		T_EQ(dm(pairs[i].sym, out, w), -ENOSPC);
		T_STREQ(out, "");
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		int r = dm(refused[i], out, sizeof(out));

		if (r != -EINVAL)
			fprintf(stderr, "%s: %d \"%s\"\n", refused[i], r, out);
		T_EQ(r, -EINVAL);
	}
	T_EQ(dm_rust("_RC3foo", out, 0), -ENOSPC);
	T_EQ(dm_rust(NULL, out, sizeof(out)), -EINVAL);

	/* gfortran's module procedures: module::name, as gdb shows them */
	T_EQ(dm_fortran("__pools_MOD_grab", out, sizeof(out)), 0);
	T_STREQ(out, "pools::grab");
	T_EQ(dm_fortran("__my_mod_MOD_do_it2", out, sizeof(out)), 0);
	T_STREQ(out, "my_mod::do_it2");
	T_EQ(dm_fortran("__pools_MOD_grab", out, strlen("pools::grab") + 1), 0);
	T_EQ(dm_fortran("__pools_MOD_grab", out, strlen("pools::grab")), -ENOSPC);
	T_EQ(dm_fortran("__libc_start_main", out, sizeof(out)), -EINVAL);
	T_EQ(dm_fortran("__MOD_x", out, sizeof(out)), -EINVAL);
	T_EQ(dm_fortran("__m_MOD_", out, sizeof(out)), -EINVAL);
	T_EQ(dm_fortran("__m_MOD_a.b", out, sizeof(out)), -EINVAL);
	T_EQ(dm_fortran("_ZN3fooE", out, sizeof(out)), -EINVAL);
	T_EQ(dm_fortran(NULL, out, sizeof(out)), -EINVAL);

	/* every truncation, and one byte changed everywhere */
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const char *s = pairs[i].sym;
		char m[512];

		n = strlen(s);
		for (size_t k = 0; k <= n; k++)
			hostile(s, k);
		if (n >= sizeof(m))
			continue;
		for (size_t k = 0; k < n; k++)
			for (size_t c = 0; c < sizeof(subst) - 1; c++) {
				memcpy(m, s, n);
				m[k] = subst[c];
				hostile(m, n);
			}
	}
	/* random splices */
	for (int it = 0; it < 20000; it++) {
		char s[256];
		size_t len = 0, parts = 1 + rnd() % 24;

		for (size_t k = 0; k < parts; k++) {
			const char *p = k ? pieces[rnd() % (sizeof(pieces) / sizeof(pieces[0]))] :
					    (rnd() & 1 ? "_R" : "_ZN");
			size_t pl = strlen(p);

			if (len + pl >= sizeof(s))
				break;
			memcpy(s + len, p, pl);
			len += pl;
		}
		hostile(s, len);
	}
	/* deep nesting: refused at the depth limit, not a stack overflow */
	n = 0;
	memcpy(big, "_R", 2), n = 2;
	while (n + 8 < sizeof(big))
		memcpy(big + n, "INvC1a1f", 8), n += 8;
	big[n] = 0;
	T_EQ(dm(big, out, sizeof(out)), -EINVAL);
	n = 2;
	while (n + 4 < sizeof(big))
		memcpy(big + n, "RRRR", 4), n += 4;
	big[n] = 0;
	T_EQ(dm(big, out, sizeof(out)), -EINVAL);
	/*
	 * Back-references that double: each tuple holds the previous one twice,
	 * 40 levels, 2^40 leaves if followed to the end.  The output limit or
	 * the step limit ends it, fast.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	{
		size_t at[41];

		n = (size_t)snprintf(big, sizeof(big), "_RINvC1a1f");
		at[0] = n - 2; /* offsets count from after "_R" */
		n += (size_t)snprintf(big + n, sizeof(big) - n, "Thh");
		for (int l = 1; l <= 40; l++) {
			char ref[16];
			int rl;

			big[n++] = 'E'; /* closes the level below */
			at[l] = n - 2;
			big[n++] = 'T';
			/* B<offset of the level below> twice, base 62 */
			for (int twice = 0; twice < 2; twice++) {
				uint64_t v = at[l - 1];
				const char *d62 =
					"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
					"VWXYZ";

				rl = 0;
				if (v == 0) {
					ref[rl++] = '_';
				} else {
					char tmp[16];
					int tl = 0;

					v -= 1;
					do
						tmp[tl++] = d62[v % 62];
					while (v /= 62);
					while (tl)
						ref[rl++] = tmp[--tl];
					ref[rl++] = '_';
				}
				big[n++] = 'B';
				memcpy(big + n, ref, (size_t)rl);
				n += (size_t)rl;
			}
		}
		memcpy(big + n, "EE", 2);
		n += 2;
		big[n] = 0;
	}
	T_CHECK(dm(big, out, sizeof(out)) != 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	T_CHECK(t1.tv_sec - t0.tv_sec < 5);
	return t_result();
}
