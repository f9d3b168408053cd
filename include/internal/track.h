/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal/track.h - the specs of rip run --track, and their one parser:
 *
 *	KIND=ACQUIRE(ID),RELEASE(ID)
 *
 * KIND names the resource (letters, digits, '_', '-', '.'; a letter or '_'
 * first), ACQUIRE and RELEASE are the functions that make and end one (their
 * symbol names), and each ID says where the resource's id is: `ret` (the
 * return value; an acquisition only), `N` (the value of argument N) or `*N`
 * (the pointer-sized word argument N points to: after the call for an
 * acquisition, before it for a release).  N is 1 to RIP_TRACK_ARGS, the
 * arguments passed in registers; the arguments before it must be integers
 * or pointers.  Spaces around the parts are allowed.
 *
 * rip run parses each --track with rip_track_parse (its message names the
 * part that is wrong) and passes them all, joined by ';', in RIP_TRACK to
 * librip-track.so (preload/track.c), which reads them back with
 * rip_track_parse_list.  No allocation and nothing but string functions and
 * snprintf: the audit library parses in the loader's callbacks.  Not
 * installed, like internal/grow.h.
 */
#ifndef RIP_INTERNAL_TRACK_H
#define RIP_INTERNAL_TRACK_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define RIP_TRACK_ENV "RIP_TRACK" /* the specs, joined by ';' */
#define RIP_TRACK_MAX 16u	  /* specs per run */
#define RIP_TRACK_KIND_MAX 32u	  /* a kind's name, NUL included */
#define RIP_TRACK_FUNC_MAX 128u	  /* a function's name, NUL included */
#define RIP_TRACK_ARGS 6u	  /* arguments an id can come from: those in registers */

/* Where a function's resource id is (rip_track_fn.where). */
enum rip_track_where {
	RIP_TRACK_RET = 1, /* the return value */
	RIP_TRACK_ARG,	   /* the value of argument arg */
	RIP_TRACK_DEREF,   /* the word argument arg points to */
};

struct rip_track_fn {
	char name[RIP_TRACK_FUNC_MAX];
	uint8_t where; /* enum rip_track_where */
	uint8_t arg;   /* 1..RIP_TRACK_ARGS for RIP_TRACK_ARG and RIP_TRACK_DEREF */
};

struct rip_track_spec {
	char kind[RIP_TRACK_KIND_MAX];
	struct rip_track_fn acq, rel;
};

/* The message of a refusal, into err (errlen bytes). */
static inline __attribute__((format(printf, 3, 4))) void rip_track_err(char *err, size_t errlen,
								       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static inline bool rip_track_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool rip_track_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline const char *rip_track_skip(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/*
 * The text of [p, end) for a message: at most 40 bytes of it ("..." after),
 * "" for none.  Written into buf (64 bytes).
 */
static inline const char *rip_track_quote(const char *p, const char *end, char *buf)
{
	size_t n = (size_t)(end - p);

	if (n > 40)
		snprintf(buf, 64, "%.40s...", p);
	else
		snprintf(buf, 64, "%.*s", (int)n, p);
	return buf;
}

/*
 * One function and its id at *pp, up to end: "NAME(ID)".  what says which
 * ("acquiring", "releasing") for the messages.  0 with *pp past it, or
 * -EINVAL with a message in err.
 */
static inline int rip_track_parse_fn(const char **pp, const char *end, struct rip_track_fn *fn,
				     const char *what, char *err, size_t errlen)
{
	const char *p = rip_track_skip(*pp, end), *name = p, *id, *close;
	char q[64];
	size_t n;

	while (p < end && (rip_track_alpha(*p) || rip_track_digit(*p) || *p == '.' || *p == '$'))
		p++;
	n = (size_t)(p - name);
	if (!n || rip_track_digit(*name)) {
		close = name;
		while (close < end && *close != '(' && *close != ',')
			close++;
		if (close == name)
			rip_track_err(err, errlen, "the %s function's name is missing", what);
		else
			rip_track_err(err, errlen,
				      "'%s' is not a function's name (the %s function)",
				      rip_track_quote(name, close, q), what);
		return -EINVAL;
	}
	if (n >= RIP_TRACK_FUNC_MAX) {
		rip_track_err(err, errlen, "function '%s': a name is at most %u bytes",
			      rip_track_quote(name, p, q), RIP_TRACK_FUNC_MAX - 1);
		return -EINVAL;
	}
	memcpy(fn->name, name, n);
	fn->name[n] = '\0';
	p = rip_track_skip(p, end);
	if (p >= end || *p != '(') {
		rip_track_err(err, errlen, "%s: expected '(ID)' after the name, found '%s'",
			      fn->name, rip_track_quote(p, end, q));
		return -EINVAL;
	}
	id = rip_track_skip(p + 1, end);
	for (close = id; close < end && *close != ')'; close++)
		;
	if (close >= end) {
		rip_track_err(err, errlen, "%s(%s: no ')' after the id", fn->name,
			      rip_track_quote(p + 1, end, q));
		return -EINVAL;
	}
	p = close;
	while (p > id && (p[-1] == ' ' || p[-1] == '\t'))
		p--;
	n = (size_t)(p - id);
	if (n == 3 && !memcmp(id, "ret", 3)) {
		fn->where = RIP_TRACK_RET;
		fn->arg = 0;
	} else {
		const char *d = id;
		unsigned v = 0;

		fn->where = RIP_TRACK_ARG;
		if (d < p && *d == '*') {
			fn->where = RIP_TRACK_DEREF;
			d++;
		}
		if (d == p || d + 2 < p)
			goto bad_id;
		for (; d < p; d++) {
			if (!rip_track_digit(*d))
				goto bad_id;
			v = v * 10 + (unsigned)(*d - '0');
		}
		if (v < 1 || v > RIP_TRACK_ARGS) {
			rip_track_err(
				err, errlen,
				"%s(%s): argument %u: an id is one of arguments 1 to %u (those "
				"passed in registers)",
				fn->name, rip_track_quote(id, p, q), v, RIP_TRACK_ARGS);
			return -EINVAL;
		}
		fn->arg = (uint8_t)v;
	}
	*pp = close + 1;
	return 0;
bad_id:
	rip_track_err(
		err, errlen,
		"%s(%s): the id is ret (the return value), N (argument N) or *N (what argument "
		"N points to), N from 1 to %u",
		fn->name, rip_track_quote(id, p, q), RIP_TRACK_ARGS);
	return -EINVAL;
}

/*
 * rip_track_parse - one spec, the len bytes at s, into *out.  0, or -EINVAL
 * with a one-line message in err that names the part that is wrong.
 */
static inline int rip_track_parse(const char *s, size_t len, struct rip_track_spec *out, char *err,
				  size_t errlen)
{
	const char *end = s + len, *p = rip_track_skip(s, end), *kind = p, *eq;
	char q[64];
	size_t n;
	int ret;

	memset(out, 0, sizeof(*out));
	for (eq = p; eq < end && *eq != '='; eq++)
		;
	if (eq >= end) {
		rip_track_err(err, errlen, "expected KIND=ACQUIRE(ID),RELEASE(ID) (no '=')");
		return -EINVAL;
	}
	while (p < eq && (rip_track_alpha(*p) || rip_track_digit(*p) || *p == '-' || *p == '.'))
		p++;
	n = (size_t)(p - kind);
	p = rip_track_skip(p, eq);
	if (!n || p != eq || rip_track_digit(*kind) || *kind == '-' || *kind == '.') {
		if (!n && p == eq)
			rip_track_err(err, errlen, "the kind's name before '=' is missing");
		else
			rip_track_err(
				err, errlen,
				"kind '%s': a kind's name is letters, digits, '_', '-' and '.', "
				"starting with a letter or '_'",
				rip_track_quote(kind, eq, q));
		return -EINVAL;
	}
	if (n >= RIP_TRACK_KIND_MAX) {
		rip_track_err(err, errlen, "kind '%s': a name is at most %u bytes",
			      rip_track_quote(kind, kind + n, q), RIP_TRACK_KIND_MAX - 1);
		return -EINVAL;
	}
	memcpy(out->kind, kind, n);
	p = eq + 1;
	ret = rip_track_parse_fn(&p, end, &out->acq, "acquiring", err, errlen);
	if (ret)
		return ret;
	p = rip_track_skip(p, end);
	if (p >= end || *p != ',') {
		rip_track_err(err, errlen,
			      "after %s(...): expected ',' and the releasing function%s%s%s",
			      out->acq.name, p < end ? ", found '" : "",
			      p < end ? rip_track_quote(p, end, q) : "", p < end ? "'" : "");
		return -EINVAL;
	}
	p++;
	ret = rip_track_parse_fn(&p, end, &out->rel, "releasing", err, errlen);
	if (ret)
		return ret;
	p = rip_track_skip(p, end);
	if (p < end) {
		rip_track_err(err, errlen,
			      "after %s(...): '%s' is left over (one pair per --track)",
			      out->rel.name, rip_track_quote(p, end, q));
		return -EINVAL;
	}
	if (out->rel.where == RIP_TRACK_RET) {
		rip_track_err(
			err, errlen,
			"%s(ret): a release's id is one of its arguments (N or *N, read before "
			"the call)",
			out->rel.name);
		return -EINVAL;
	}
	if (!strcmp(out->acq.name, out->rel.name)) {
		rip_track_err(err, errlen, "%s both acquires and releases %s", out->acq.name,
			      out->kind);
		return -EINVAL;
	}
	return 0;
}

/*
 * rip_track_add - parse the len bytes at s and add the spec to specs[*n]
 * (max at most), after checking it against those already there: a kind
 * named twice, a function tracked twice.  0, or -EINVAL with the message in
 * err.
 */
static inline int rip_track_add(const char *s, size_t len, struct rip_track_spec *specs,
				unsigned *n, unsigned max, char *err, size_t errlen)
{
	struct rip_track_spec *t = &specs[*n];
	int ret;

	if (*n >= max) {
		rip_track_err(err, errlen, "at most %u --track specs", max);
		return -EINVAL;
	}
	ret = rip_track_parse(s, len, t, err, errlen);
	if (ret)
		return ret;
	for (unsigned i = 0; i < *n; i++) {
		const struct rip_track_spec *o = &specs[i];
		const char *f = NULL;

		if (!strcmp(o->kind, t->kind)) {
			rip_track_err(err, errlen, "kind %s is given twice", t->kind);
			return -EINVAL;
		}
		if (!strcmp(o->acq.name, t->acq.name) || !strcmp(o->rel.name, t->acq.name))
			f = t->acq.name;
		else if (!strcmp(o->acq.name, t->rel.name) || !strcmp(o->rel.name, t->rel.name))
			f = t->rel.name;
		if (f) {
			rip_track_err(err, errlen, "%s is tracked twice (kinds %s and %s)", f,
				      o->kind, t->kind);
			return -EINVAL;
		}
	}
	(*n)++;
	return 0;
}

/*
 * rip_track_parse_list - the specs of s, joined by ';' (RIP_TRACK), into
 * specs (max at most); *n says how many.  0, or -EINVAL with the message in
 * err (and *n the specs before the wrong one).
 */
static inline int rip_track_parse_list(const char *s, struct rip_track_spec *specs, unsigned max,
				       unsigned *n, char *err, size_t errlen)
{
	*n = 0;
	while (*s) {
		const char *e = strchr(s, ';');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		int ret = rip_track_add(s, len, specs, n, max, err, errlen);

		if (ret)
			return ret;
		s += len + (e != NULL);
	}
	return 0;
}

#endif /* RIP_INTERNAL_TRACK_H */
