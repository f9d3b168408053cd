// SPDX-License-Identifier: Apache-2.0
/*
 * read/demangle.c - Rust symbol names, v0 and legacy (read/demangle.h), for
 * the symbolizer.  Written from the v0 specification (the rustc book,
 * "v0 Symbol Format"); the output follows rustc-demangle's alternate form.
 *
 * v0 is a prefix grammar read by recursive descent over the symbol (after
 * "_R"), printing as it goes.  Some parts are read but not printed (an
 * impl's own path, the instantiating crate): a skip flag turns printing
 * off, and back-references are then not followed at all.  A back-reference
 * names an earlier byte offset; following it re-reads that part, so a
 * hostile symbol can ask for exponential work or loop (a part that holds a
 * back-reference to itself): the depth and step limits end both, the
 * output limit ends the rest.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "read/demangle.h"

#define DM_MAX_DEPTH 128	/* nesting of paths, types and back-references */
#define DM_MAX_STEPS (1u << 20) /* parse steps for one symbol */
#define DM_MAX_BINDER 64	/* lifetimes one for<...> may bind */

struct dm {
	const char *s;	 /* the symbol after "_R" */
	size_t len, pos; /* [0, len): its identifier characters */
	char *out;
	size_t cap, n; /* out[0, n) written; cap: room without the NUL */
	int err;       /* 0, -EINVAL or -ENOSPC: the first failure */
	unsigned depth;
	uint32_t steps;
	bool skip;	/* parse without printing */
	uint64_t bound; /* lifetimes bound by the binders around */
};

static bool dm_fail(struct dm *d, int err)
{
	if (!d->err)
		d->err = err;
	return false;
}

static char dm_peek(const struct dm *d)
{
	return d->pos < d->len ? d->s[d->pos] : 0;
}

static bool dm_eat(struct dm *d, char c)
{
	if (dm_peek(d) != c || !c)
		return false;
	d->pos++;
	return true;
}

/* The next character; 0 (and a failure) at the end. */
static char dm_next(struct dm *d)
{
	if (d->pos >= d->len)
		return dm_fail(d, -EINVAL), 0;
	return d->s[d->pos++];
}

static bool dm_put(struct dm *d, const char *p, size_t n)
{
	if (d->skip || d->err)
		return !d->err;
	if (n > d->cap - d->n)
		return dm_fail(d, -ENOSPC);
	memcpy(d->out + d->n, p, n);
	d->n += n;
	return true;
}

static bool dm_puts(struct dm *d, const char *p)
{
	return dm_put(d, p, strlen(p));
}

static bool dm_putu(struct dm *d, uint64_t v)
{
	char b[24];
	size_t i = sizeof(b);

	do
		b[--i] = (char)('0' + v % 10);
	while (v /= 10);
	return dm_put(d, b + i, sizeof(b) - i);
}

/* Into a nested production: false when too deep or too much work. */
static bool dm_enter(struct dm *d)
{
	if (d->err)
		return false;
	if (d->depth >= DM_MAX_DEPTH || ++d->steps > DM_MAX_STEPS)
		return dm_fail(d, -EINVAL);
	d->depth++;
	return true;
}

static bool dm_leave(struct dm *d, bool ok)
{
	d->depth--;
	return ok && !d->err;
}

/* ---- numbers and identifiers ---- */

/* base-62-number: "_" is 0, digits then "_" their value + 1. */
static bool dm_b62(struct dm *d, uint64_t *v)
{
	uint64_t x = 0;
	char c;

	if (dm_eat(d, '_')) {
		*v = 0;
		return true;
	}
	while ((c = dm_next(d)) != '_') {
		unsigned k;

		if (c >= '0' && c <= '9')
			k = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'z')
			k = 10 + (unsigned)(c - 'a');
		else if (c >= 'A' && c <= 'Z')
			k = 36 + (unsigned)(c - 'A');
		else
			return dm_fail(d, -EINVAL);
		if (__builtin_mul_overflow(x, 62, &x) || __builtin_add_overflow(x, k, &x))
			return dm_fail(d, -EINVAL);
	}
	if (x == UINT64_MAX)
		return dm_fail(d, -EINVAL);
	*v = x + 1;
	return true;
}

/* [tag base-62-number]: 0 when absent, else the number + 1. */
static bool dm_opt_b62(struct dm *d, char tag, uint64_t *v)
{
	if (!dm_eat(d, tag)) {
		*v = 0;
		return true;
	}
	if (!dm_b62(d, v))
		return false;
	if (*v == UINT64_MAX)
		return dm_fail(d, -EINVAL);
	(*v)++;
	return true;
}

/* decimal-number: "0", or digits without a leading zero. */
static bool dm_decimal(struct dm *d, uint64_t *v)
{
	uint64_t x;
	char c = dm_peek(d);

	if (c < '0' || c > '9')
		return dm_fail(d, -EINVAL);
	d->pos++;
	x = (uint64_t)(c - '0');
	if (!x) {
		*v = 0;
		return true;
	}
	while ((c = dm_peek(d)) >= '0' && c <= '9') {
		d->pos++;
		if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, c - '0', &x))
			return dm_fail(d, -EINVAL);
	}
	*v = x;
	return true;
}

struct dm_id {
	const char *p;
	size_t n;
	bool puny; /* Punycode: shown encoded */
};

/* undisambiguated-identifier = ["u"] decimal-number ["_"] bytes */
static bool dm_ident(struct dm *d, struct dm_id *id)
{
	uint64_t n;

	id->puny = dm_eat(d, 'u');
	if (!dm_decimal(d, &n))
		return false;
	dm_eat(d, '_');
	if (n > d->len - d->pos)
		return dm_fail(d, -EINVAL);
	id->p = d->s + d->pos;
	id->n = (size_t)n;
	d->pos += (size_t)n;
	return true;
}

/* An identifier; Punycode encoded as usual (its delimiter, the last "_", is "-"). */
static bool dm_put_ident(struct dm *d, const struct dm_id *id)
{
	size_t delim = id->n;

	if (!id->puny)
		return dm_put(d, id->p, id->n);
	for (size_t i = id->n; i-- > 0;)
		if (id->p[i] == '_') {
			delim = i;
			break;
		}
	if (delim == id->n)
		return dm_put(d, id->p, id->n);
	return dm_put(d, id->p, delim) && dm_put(d, "-", 1) &&
	       dm_put(d, id->p + delim + 1, id->n - delim - 1);
}

/*
 * backref = "B" base-62-number, the "B" already read: the offset it names,
 * which must lie before the "B".
 */
static bool dm_backref(struct dm *d, size_t *to)
{
	size_t at = d->pos - 1;
	uint64_t v;

	if (!dm_b62(d, &v))
		return false;
	if (v >= at)
		return dm_fail(d, -EINVAL);
	*to = (size_t)v;
	return true;
}

/* ---- paths, types, constants ---- */

static bool dm_path(struct dm *d, bool in_value);
static bool dm_type(struct dm *d);

/* A lifetime by its index: 0 is erased ('_), i the i-th innermost bound one. */
static bool dm_lifetime(struct dm *d, uint64_t i)
{
	uint64_t depth;
	char b[3] = "'a";

	if (!i)
		return dm_puts(d, "'_");
	if (i > d->bound)
		return dm_fail(d, -EINVAL);
	depth = d->bound - i;
	if (depth < 26) {
		b[1] = (char)('a' + depth);
		return dm_put(d, b, 2);
	}
	return dm_puts(d, "'_") && dm_putu(d, depth);
}

/* binder = "G" base-62-number: "for<'a, 'b> "; *added: the lifetimes it bound. */
static bool dm_binder(struct dm *d, uint64_t *added)
{
	uint64_t n;

	*added = 0;
	if (!dm_opt_b62(d, 'G', &n))
		return false;
	if (!n)
		return true;
	if (n > DM_MAX_BINDER)
		return dm_fail(d, -EINVAL);
	dm_puts(d, "for<");
	for (uint64_t i = 0; i < n; i++) {
		if (i)
			dm_puts(d, ", ");
		d->bound++;
		dm_lifetime(d, 1);
	}
	*added = n;
	return dm_puts(d, "> ");
}

/* generic-arg = lifetime | type | "K" const */
static bool dm_const(struct dm *d);

static bool dm_generic_arg(struct dm *d)
{
	uint64_t lt;

	if (dm_eat(d, 'L'))
		return dm_b62(d, &lt) && dm_lifetime(d, lt);
	if (dm_eat(d, 'K'))
		return dm_const(d);
	return dm_type(d);
}

/* {generic-arg} "E", printed "a, b" */
static bool dm_generic_args(struct dm *d)
{
	for (unsigned i = 0; !dm_eat(d, 'E'); i++) {
		if (d->err || (i && !dm_puts(d, ", ")) || !dm_generic_arg(d))
			return dm_fail(d, -EINVAL);
	}
	return !d->err;
}

/* Parse what lies at offset to (a back-reference) with fn, then come back. */
static bool dm_follow(struct dm *d, size_t to, bool (*fn)(struct dm *, bool), bool arg)
{
	size_t back = d->pos;
	bool ok;

	if (d->skip)
		return true; /* nothing to print: no need to read it again */
	d->pos = to;
	ok = fn(d, arg);
	d->pos = back;
	return ok;
}

static bool dm_type_arg(struct dm *d, bool unused)
{
	(void)unused;
	return dm_type(d);
}

static bool dm_const_arg(struct dm *d, bool unused)
{
	(void)unused;
	return dm_const(d);
}

/* impl-path = [disambiguator] path: read, never printed. */
static bool dm_impl_path(struct dm *d)
{
	bool skip = d->skip, ok;
	uint64_t dis;

	if (!dm_opt_b62(d, 's', &dis))
		return false;
	d->skip = true;
	ok = dm_path(d, false);
	d->skip = skip;
	return ok;
}

static bool dm_path(struct dm *d, bool in_value)
{
	struct dm_id id;
	uint64_t dis;
	size_t to;
	char tag, ns;
	bool ok = false;

	if (!dm_enter(d))
		return false;
	tag = dm_next(d);
	switch (tag) {
	case 'C': /* crate root: its disambiguator is not shown */
		ok = dm_opt_b62(d, 's', &dis) && dm_ident(d, &id) && dm_put_ident(d, &id);
		break;
	case 'N': /* nested: path::name, or path::{closure#N} */
		ns = dm_next(d);
		if (!((ns >= 'a' && ns <= 'z') || (ns >= 'A' && ns <= 'Z'))) {
			dm_fail(d, -EINVAL);
			break;
		}
		if (!dm_path(d, in_value) || !dm_opt_b62(d, 's', &dis) || !dm_ident(d, &id))
			break;
		if (ns >= 'A' && ns <= 'Z') {
			dm_puts(d, "::{");
			dm_puts(d, ns == 'C' ? "closure" : ns == 'S' ? "shim" : (char[]){ ns, 0 });
			if (id.n) {
				dm_puts(d, ":");
				dm_put_ident(d, &id);
			}
			dm_puts(d, "#");
			dm_putu(d, dis);
			ok = dm_puts(d, "}");
		} else {
			ok = !id.n || (dm_puts(d, "::") && dm_put_ident(d, &id));
		}
		break;
	case 'M': /* inherent impl: <T> */
		ok = dm_impl_path(d) && dm_puts(d, "<") && dm_type(d) && dm_puts(d, ">");
		break;
	case 'X': /* trait impl: <T as Trait> */
		ok = dm_impl_path(d) && dm_puts(d, "<") && dm_type(d) && dm_puts(d, " as ") &&
		     dm_path(d, false) && dm_puts(d, ">");
		break;
	case 'Y': /* trait definition: <T as Trait> */
		ok = dm_puts(d, "<") && dm_type(d) && dm_puts(d, " as ") && dm_path(d, false) &&
		     dm_puts(d, ">");
		break;
	case 'I': /* generic arguments: path::<A, B> in a value, path<A, B> in a type */
		ok = dm_path(d, in_value) && (!in_value || dm_puts(d, "::")) && dm_puts(d, "<") &&
		     dm_generic_args(d) && dm_puts(d, ">");
		break;
	case 'B':
		ok = dm_backref(d, &to) && dm_follow(d, to, dm_path, in_value);
		break;
	default:
		dm_fail(d, -EINVAL);
	}
	return dm_leave(d, ok);
}

/*
 * A path that may end in generic arguments left open ("Trait<A"), so that
 * a dyn trait's associated types can follow; *open says whether it is.
 */
static bool dm_path_open(struct dm *d, bool *open)
{
	size_t to, back;
	bool ok;

	*open = false;
	if (!dm_enter(d))
		return false;
	if (dm_eat(d, 'B')) {
		ok = dm_backref(d, &to);
		if (ok && !d->skip) {
			back = d->pos;
			d->pos = to;
			ok = dm_path_open(d, open);
			d->pos = back;
		}
	} else if (dm_eat(d, 'I')) {
		ok = dm_path(d, false) && dm_puts(d, "<") && dm_generic_args(d);
		*open = true;
	} else {
		ok = dm_path(d, false);
	}
	return dm_leave(d, ok);
}

/* dyn-trait = path {"p" undisambiguated-identifier type}: Trait<A, Item = T> */
static bool dm_dyn_trait(struct dm *d)
{
	struct dm_id id;
	bool open;

	if (!dm_path_open(d, &open))
		return false;
	while (dm_eat(d, 'p')) {
		if (!dm_puts(d, open ? ", " : "<") || !dm_ident(d, &id) || !dm_put_ident(d, &id) ||
		    !dm_puts(d, " = ") || !dm_type(d))
			return false;
		open = true;
	}
	return !open || dm_puts(d, ">");
}

/* fn-sig = [binder] ["U"] ["K" abi] {type} "E" type */
static bool dm_fn_sig(struct dm *d)
{
	struct dm_id abi;
	uint64_t added;
	bool ok;

	if (!dm_binder(d, &added))
		return false;
	if (dm_eat(d, 'U'))
		dm_puts(d, "unsafe ");
	if (dm_eat(d, 'K')) {
		if (dm_eat(d, 'C')) {
			dm_puts(d, "extern \"C\" ");
		} else {
			if (!dm_ident(d, &abi) || abi.puny)
				return dm_fail(d, -EINVAL);
			dm_puts(d, "extern \"");
			for (size_t i = 0; i < abi.n; i++) /* the abi's "-" is mangled "_" */
				dm_put(d, abi.p[i] == '_' ? "-" : &abi.p[i], 1);
			dm_puts(d, "\" ");
		}
	}
	dm_puts(d, "fn(");
	for (unsigned i = 0; !dm_eat(d, 'E'); i++) {
		if (d->err || (i && !dm_puts(d, ", ")) || !dm_type(d))
			return dm_fail(d, -EINVAL);
	}
	ok = dm_puts(d, ")");
	if (ok && !dm_eat(d, 'u')) /* a unit return is not shown */
		ok = dm_puts(d, " -> ") && dm_type(d);
	d->bound -= added;
	return ok;
}

/* dyn-bounds = [binder] {dyn-trait} "E", then its lifetime */
static bool dm_dyn(struct dm *d)
{
	uint64_t added, lt;

	if (!dm_puts(d, "dyn ") || !dm_binder(d, &added))
		return false;
	for (unsigned i = 0; !dm_eat(d, 'E'); i++) {
		if (d->err || (i && !dm_puts(d, " + ")) || !dm_dyn_trait(d))
			return dm_fail(d, -EINVAL);
	}
	d->bound -= added;
	if (!dm_eat(d, 'L') || !dm_b62(d, &lt))
		return dm_fail(d, -EINVAL);
	return !lt || (dm_puts(d, " + ") && dm_lifetime(d, lt));
}

static const char *dm_basic(char c)
{
	switch (c) {
	case 'a':
		return "i8";
	case 'b':
		return "bool";
	case 'c':
		return "char";
	case 'd':
		return "f64";
	case 'e':
		return "str";
	case 'f':
		return "f32";
	case 'h':
		return "u8";
	case 'i':
		return "isize";
	case 'j':
		return "usize";
	case 'l':
		return "i32";
	case 'm':
		return "u32";
	case 'n':
		return "i128";
	case 'o':
		return "u128";
	case 's':
		return "i16";
	case 't':
		return "u16";
	case 'u':
		return "()";
	case 'v':
		return "...";
	case 'x':
		return "i64";
	case 'y':
		return "u64";
	case 'z':
		return "!";
	case 'p':
		return "_";
	default:
		return NULL;
	}
}

static bool dm_type(struct dm *d)
{
	const char *basic = dm_basic(dm_peek(d));
	uint64_t lt;
	unsigned i;
	size_t to;
	char tag;
	bool ok = false;

	if (!dm_enter(d))
		return false;
	if (basic) {
		d->pos++;
		return dm_leave(d, dm_puts(d, basic));
	}
	tag = dm_next(d);
	switch (tag) {
	case 'A': /* [T; N] */
		ok = dm_puts(d, "[") && dm_type(d) && dm_puts(d, "; ") && dm_const(d) &&
		     dm_puts(d, "]");
		break;
	case 'S': /* [T] */
		ok = dm_puts(d, "[") && dm_type(d) && dm_puts(d, "]");
		break;
	case 'T': /* (A, B), (A,) */
		dm_puts(d, "(");
		for (i = 0; !dm_eat(d, 'E'); i++)
			if (d->err || (i && !dm_puts(d, ", ")) || !dm_type(d))
				break;
		ok = !d->err && (i != 1 || dm_puts(d, ",")) && dm_puts(d, ")");
		break;
	case 'R': /* &'a T */
	case 'Q': /* &'a mut T */
		dm_puts(d, "&");
		if (dm_eat(d, 'L') && dm_b62(d, &lt) && lt && dm_lifetime(d, lt))
			dm_puts(d, " ");
		ok = (tag == 'R' || dm_puts(d, "mut ")) && dm_type(d);
		break;
	case 'P':
		ok = dm_puts(d, "*const ") && dm_type(d);
		break;
	case 'O':
		ok = dm_puts(d, "*mut ") && dm_type(d);
		break;
	case 'F':
		ok = dm_fn_sig(d);
		break;
	case 'D':
		ok = dm_dyn(d);
		break;
	case 'B':
		ok = dm_backref(d, &to) && dm_follow(d, to, dm_type_arg, false);
		break;
	case 'C':
	case 'M':
	case 'X':
	case 'Y':
	case 'N':
	case 'I': /* a named type */
		d->pos--;
		ok = dm_path(d, false);
		break;
	default:
		dm_fail(d, -EINVAL);
	}
	return dm_leave(d, ok);
}

/* const-data = ["n"] {hex-digit} "_": the digits (at most 32) and the sign. */
static bool dm_const_data(struct dm *d, const char **hex, size_t *n, bool *neg)
{
	char c;

	*neg = dm_eat(d, 'n');
	*hex = d->s + d->pos;
	*n = 0;
	while ((c = dm_next(d)) != '_') {
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) || ++*n > 32)
			return dm_fail(d, -EINVAL);
	}
	return !d->err;
}

/* The value of up to 16 hex digits; false for more (that do not fit after leading zeros). */
static bool dm_hex_u64(const char *hex, size_t n, uint64_t *v)
{
	uint64_t x = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned k = hex[i] <= '9' ? (unsigned)(hex[i] - '0') :
					     10u + (unsigned)(hex[i] - 'a');

		if (x >> 60)
			return false;
		x = x << 4 | k;
	}
	*v = x;
	return true;
}

/* A char constant: 'x', or '\u{1f600}' for what is not printable ASCII. */
static bool dm_put_char(struct dm *d, uint64_t c)
{
	static const char hexd[] = "0123456789abcdef";
	char b[16];
	int i = (int)sizeof(b);

	if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return dm_fail(d, -EINVAL);
	if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
		b[0] = '\'';
		b[1] = (char)c;
		b[2] = '\'';
		return dm_put(d, b, 3);
	}
	b[--i] = '\'';
	b[--i] = '}';
	do
		b[--i] = hexd[c & 15];
	while (c >>= 4);
	memcpy(b + i - 4, "'\\u{", 4);
	i -= 4;
	return dm_put(d, b + i, sizeof(b) - (size_t)i);
}

/* const = type const-data | "p" | backref (integers, bool and char only) */
static bool dm_const(struct dm *d)
{
	const char *hex;
	uint64_t v;
	size_t n, to;
	bool neg, ok = false;
	char t;

	if (!dm_enter(d))
		return false;
	t = dm_next(d);
	switch (t) {
	case 'p': /* a placeholder */
		ok = dm_puts(d, "_");
		break;
	case 'B':
		ok = dm_backref(d, &to) && dm_follow(d, to, dm_const_arg, false);
		break;
	case 'a':
	case 's':
	case 'l':
	case 'x':
	case 'n':
	case 'i': /* signed */
	case 'h':
	case 't':
	case 'm':
	case 'y':
	case 'o':
	case 'j': /* unsigned */
		if (!dm_const_data(d, &hex, &n, &neg))
			break;
		if (neg &&
		    !(t == 'a' || t == 's' || t == 'l' || t == 'x' || t == 'n' || t == 'i')) {
			dm_fail(d, -EINVAL);
			break;
		}
		if (neg)
			dm_puts(d, "-");
		if (dm_hex_u64(hex, n, &v))
			ok = dm_putu(d, v);
		else /* 128-bit: hex */
			ok = dm_puts(d, "0x") && dm_put(d, hex, n);
		break;
	case 'b':
		if (!dm_const_data(d, &hex, &n, &neg) || neg || !dm_hex_u64(hex, n, &v) || v > 1) {
			dm_fail(d, -EINVAL);
			break;
		}
		ok = dm_puts(d, v ? "true" : "false");
		break;
	case 'c':
		if (!dm_const_data(d, &hex, &n, &neg) || neg || !dm_hex_u64(hex, n, &v)) {
			dm_fail(d, -EINVAL);
			break;
		}
		ok = dm_put_char(d, v);
		break;
	default: /* str, references, arrays, tuples, structs: not read here */
		dm_fail(d, -EINVAL);
	}
	return dm_leave(d, ok);
}

/* symbol-name = "_R" [decimal-number] path [instantiating-crate] [vendor-specific-suffix] */
static int dm_v0(const char *s, char *out, size_t len)
{
	struct dm d = { .s = s, .out = out, .cap = len - 1 };
	uint64_t version;
	char c;

	while ((c = s[d.len]) && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
				  (c >= 'A' && c <= 'Z') || c == '_'))
		d.len++;
	if (c && c != '.' && c != '$') /* a vendor-specific suffix, not shown */
		return -EINVAL;
	if (dm_peek(&d) >= '0' && dm_peek(&d) <= '9' && (!dm_decimal(&d, &version) || version))
		return -EINVAL; /* an encoding version this reader does not know */
	if (dm_path(&d, true) && d.pos < d.len) {
		/* the instantiating crate: read, not shown */
		d.skip = true;
		dm_path(&d, false);
	}
	if (!d.err && d.pos != d.len)
		d.err = -EINVAL;
	out[d.err ? 0 : d.n] = 0;
	return d.err;
}

/* ---- legacy: _ZN {decimal-length bytes} E ---- */

/* Length and bytes of the next element at *p (before end); false at 'E' or on an error. */
static bool dm_legacy_elem(const char **p, const char *end, const char **el, size_t *n)
{
	size_t x = 0;

	if (*p >= end || **p < '0' || **p > '9')
		return false;
	while (*p < end && **p >= '0' && **p <= '9') {
		x = x * 10 + (size_t)(**p - '0');
		(*p)++;
		if (x > (size_t)(end - *p))
			return false;
	}
	if (!x)
		return false;
	*el = *p;
	*n = x;
	*p += x;
	return true;
}

static bool dm_is_hash(const char *el, size_t n)
{
	if (n != 17 || el[0] != 'h')
		return false;
	for (size_t i = 1; i < n; i++)
		if (!((el[i] >= '0' && el[i] <= '9') || (el[i] >= 'a' && el[i] <= 'f')))
			return false;
	return true;
}

/* One element, its escapes decoded ($LT$ <, $u7e$ ~, .. ::); unknown ones stay as they are. */
static bool dm_legacy_put(struct dm *d, const char *p, size_t n)
{
	static const struct {
		const char *esc;
		char c;
	} esc[] = { { "SP", '@' }, { "BP", '*' }, { "RF", '&' }, { "LT", '<' },
		    { "GT", '>' }, { "LP", '(' }, { "RP", ')' }, { "C", ',' } };
	const char *end = p + n;

	if (n >= 2 && p[0] == '_' && p[1] == '$')
		p++;
	while (p < end && !d->err) {
		const char *q = p;

		if (*p == '.') {
			bool two = end - p >= 2 && p[1] == '.';

			dm_puts(d, two ? "::" : ".");
			p += two ? 2 : 1;
			continue;
		}
		if (*p == '$') {
			const char *close = memchr(p + 1, '$', (size_t)(end - p - 1));
			size_t el = close ? (size_t)(close - p - 1) : 0;
			bool done = false;

			for (size_t i = 0; close && i < sizeof(esc) / sizeof(esc[0]) && !done; i++)
				if (strlen(esc[i].esc) == el && !memcmp(p + 1, esc[i].esc, el)) {
					dm_put(d, &esc[i].c, 1);
					done = true;
				}
			if (!done && close && el >= 2 && el <= 7 && p[1] == 'u') {
				uint64_t c;
				char u[4];
				int k;

				done = dm_hex_u64(p + 2, el - 1, &c) && c >= 0x20 && c != 0x7f &&
				       c <= 0x10ffff && !(c >= 0xd800 && c <= 0xdfff);
				for (size_t i = 2; done && i < el + 1; i++)
					done = (p[i] >= '0' && p[i] <= '9') ||
					       (p[i] >= 'a' && p[i] <= 'f');
				if (done) { /* UTF-8 */
					if (c < 0x80) {
						u[0] = (char)c, k = 1;
					} else if (c < 0x800) {
						u[0] = (char)(0xc0 | c >> 6), k = 2;
					} else if (c < 0x10000) {
						u[0] = (char)(0xe0 | c >> 12), k = 3;
					} else {
						u[0] = (char)(0xf0 | c >> 18), k = 4;
					}
					for (int i = 1; i < k; i++)
						u[i] = (char)(0x80 |
							      ((c >> (6 * (k - 1 - i))) & 0x3f));
					dm_put(d, u, (size_t)k);
				}
			}
			if (done) {
				p = close + 1;
				continue;
			}
			return dm_put(d, p,
				      (size_t)(end - p)); /* not an escape: the rest as it is */
		}
		while (q < end && *q != '$' && *q != '.')
			q++;
		dm_put(d, p, (size_t)(q - p));
		p = q;
	}
	return !d->err;
}

static int dm_legacy(const char *s, char *out, size_t len)
{
	struct dm d = { .out = out, .cap = len - 1 };
	const char *end = s + strlen(s), *p = s, *el, *last = NULL;
	size_t n, lastn = 0, count = 0;

	/* the elements, the last one a hash, then "E" and nothing, or a ".suffix" */
	while (dm_legacy_elem(&p, end, &el, &n)) {
		last = el;
		lastn = n;
		count++;
	}
	if (p >= end || *p != 'E' || (p + 1 < end && p[1] != '.') || count < 2 ||
	    !dm_is_hash(last, lastn))
		return -EINVAL;
	p = s;
	for (size_t i = 0; i + 1 < count; i++) {
		dm_legacy_elem(&p, end, &el, &n);
		if ((i && !dm_puts(&d, "::")) || !dm_legacy_put(&d, el, n))
			break;
	}
	out[d.err ? 0 : d.n] = 0;
	return d.err;
}

int dm_rust(const char *sym, char *out, size_t len)
{
	if (!len)
		return -ENOSPC;
	out[0] = 0;
	if (!sym)
		return -EINVAL;
	if (!strncmp(sym, "_R", 2))
		return dm_v0(sym + 2, out, len);
	if (!strncmp(sym, "__R", 3)) /* where C symbols take a leading underscore */
		return dm_v0(sym + 3, out, len);
	if (!strncmp(sym, "_ZN", 3))
		return dm_legacy(sym + 3, out, len);
	return -EINVAL;
}

/* Is [s, s + n) a Fortran name as gfortran writes it (lower case, digits, _; a letter first)? */
static bool dm_fortran_name(const char *s, size_t n)
{
	if (!n || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

int dm_fortran(const char *sym, char *out, size_t len)
{
	const char *mod, *sep;
	size_t mn, pn;

	if (!len)
		return -ENOSPC;
	out[0] = 0;
	if (!sym || strncmp(sym, "__", 2))
		return -EINVAL;
	/* __MODULE_MOD_PROCEDURE: the first "_MOD_" after a letter ends the module's name */
	mod = sym + 2;
	sep = strstr(mod + 1, "_MOD_");
	if (!sep)
		return -EINVAL;
	mn = (size_t)(sep - mod);
	pn = strlen(sep + 5);
	if (!dm_fortran_name(mod, mn) || !dm_fortran_name(sep + 5, pn))
		return -EINVAL;
	if (mn + 2 + pn + 1 > len)
		return -ENOSPC;
	memcpy(out, mod, mn);
	memcpy(out + mn, "::", 2);
	memcpy(out + mn + 2, sep + 5, pn + 1);
	return 0;
}
