/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/demangle.h - Rust symbol names made readable, for the symbolizer
 * (read/sym.c; C++ names go to libstdc++'s __cxa_demangle there), and
 * gfortran's names of module procedures (__MODULE_MOD_NAME).
 *
 * Both of rustc's manglings:
 *  - v0 (_R..., rustc -C symbol-mangling-version=v0, the default of
 *    recent toolchains for some crates): paths, generic arguments, closures
 *    and shims ({closure#0}, {shim:vtable#0}), impls (<T>, <T as Trait>),
 *    every type (references, pointers, arrays, slices, tuples, fn pointers,
 *    dyn with associated types, bound lifetimes), integer, bool and char
 *    constants, and back-references, printed as rustc-demangle's alternate
 *    form does: no crate disambiguators, no instantiating crate, no vendor
 *    suffix (".llvm.123").  Not decoded: Punycode identifiers (shown
 *    encoded, e.g. "gdel-5qa"), constants of other types (str, references,
 *    arrays, structs: the symbol is then not demangled), pattern types.
 *  - legacy (_ZN...17h<16 hex digits>E): the path with its $-escapes
 *    decoded ($LT$ <, $u7e$ ~, .. ::), without the hash.
 *
 * The input is treated as hostile: every read is bounded by the string's
 * length, recursion by a depth limit, the work of back-references by a step
 * limit, the output by the caller's buffer.
 */
#ifndef RIP_READ_DEMANGLE_H
#define RIP_READ_DEMANGLE_H

#include <stddef.h>

/*
 * Demangle the Rust symbol sym into out (len bytes, NUL-terminated).
 * 0; -EINVAL: not a Rust symbol, or one this demangler cannot read (out is
 * then ""); -ENOSPC: the name does not fit in len bytes.
 */
int dm_rust(const char *sym, char *out, size_t len);

/*
 * gfortran's name of a module procedure, __MODULE_MOD_NAME, as
 * "module::name" (gdb's form), into out as dm_rust does.  0; -EINVAL: not
 * such a name; -ENOSPC: it does not fit in len bytes.
 */
int dm_fortran(const char *sym, char *out, size_t len);

#endif /* RIP_READ_DEMANGLE_H */
