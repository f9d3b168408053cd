// SPDX-License-Identifier: Apache-2.0
/*
 * analysis/dump.c - the dump format: every event of a source as text, one line
 * per event in time order, then a summary line that reports every loss; or
 * the same as JSON Lines.  `rip dump` and `rip export --format=text` both
 * write it (dump.h), so the two never drift apart.
 *
 * A line is built in a buffer with hand-rolled number formatting and
 * written with one fwrite: printf per field would cost more than reading
 * and merging the events.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rip/resource.h>

#include "analysis/escape.h"
#include "analysis/leaks.h"
#include "analysis/roles.h"
#include "analysis/stacks.h"
#include "read/evsource.h"
#include "read/sym.h"
#include "analysis/dump.h"

/* ---- a line buffer ------------------------------------------------------------------ */

#define LB_SIZE 8192

struct lb {
	char *p, *end;
	char buf[LB_SIZE];
};

static void lb_init(struct lb *b)
{
	b->p = b->buf;
	b->end = b->buf + LB_SIZE - 1; /* room for the newline */
}

static void lb_mem(struct lb *b, const char *s, size_t n)
{
	if (n > (size_t)(b->end - b->p))
		n = (size_t)(b->end - b->p);
	memcpy(b->p, s, n);
	b->p += n;
}

static void lb_str(struct lb *b, const char *s)
{
	lb_mem(b, s, strlen(s));
}

static void lb_ch(struct lb *b, char c)
{
	if (b->p < b->end)
		*b->p++ = c;
}

static void lb_u64(struct lb *b, uint64_t v)
{
	char t[24], *q = t + sizeof(t);

	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	lb_mem(b, q, (size_t)(t + sizeof(t) - q));
}

static void lb_i64(struct lb *b, int64_t v)
{
	if (v < 0) {
		lb_ch(b, '-');
		lb_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		lb_u64(b, (uint64_t)v);
	}
}

static void lb_hex(struct lb *b, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char t[16], *q = t + sizeof(t);

	do {
		*--q = digits[v & 15];
		v >>= 4;
	} while (v);
	lb_mem(b, "0x", 2);
	lb_mem(b, q, (size_t)(t + sizeof(t) - q));
}

/* ns as seconds with 9 decimals: -0.000001000 */
static void lb_secs(struct lb *b, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns, frac = a % 1000000000;
	char t[9];

	if (ns < 0)
		lb_ch(b, '-');
	lb_u64(b, a / 1000000000);
	lb_ch(b, '.');
	for (int i = 8; i >= 0; i--, frac /= 10)
		t[i] = (char)('0' + frac % 10);
	lb_mem(b, t, 9);
}

/* A name in a text column: control characters and spaces become '?' / '_'. */
static void lb_name(struct lb *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		lb_ch(b, *p < 0x20 || *p == 0x7f ? '?' : *p == ' ' ? '_' : (char)*p);
}

/* A quoted string, escaped (esc_str); what does not fit is cut as lb_mem cuts. */
static void lb_quoted(struct lb *b, const char *s, enum esc_mode mode)
{
	lb_ch(b, '"');
	b->p += esc_str(b->p, (size_t)(b->end - b->p), &s, mode);
	if (*s) {
		char t[ESC_MAX];
		const char *rest = s;

		/* the line is full but for part of the next escape: that part */
		lb_mem(b, t, esc_str(t, sizeof(t), &rest, mode));
	}
	lb_ch(b, '"');
}

/* A JSON string, as json_str writes it, but bytes >= 0x80 escaped: the source is not UTF-8. */
static void lb_json(struct lb *b, const char *s)
{
	lb_quoted(b, s ? s : "", ESC_JSON_ASCII);
}

/* Wall clock, local time: 2026-11-21 10:04:05.123456789 (localtime once a second). */
struct wall_cache {
	int64_t sec;
	char text[32];
};

static void lb_wall(struct lb *b, struct wall_cache *c, int64_t wall_ns)
{
	int64_t sec = wall_ns / 1000000000, ns = wall_ns % 1000000000;
	char t[9];

	if (ns < 0) {
		ns += 1000000000;
		sec--;
	}
	if (sec != c->sec || !c->text[0]) {
		time_t tt = (time_t)sec;
		struct tm tm;

		if (!localtime_r(&tt, &tm) || !strftime(c->text, sizeof(c->text), "%F %T", &tm))
			snprintf(c->text, sizeof(c->text), "@%" PRId64, sec);
		c->sec = sec;
	}
	lb_str(b, c->text);
	lb_ch(b, '.');
	for (int i = 8; i >= 0; i--, ns /= 10)
		t[i] = (char)('0' + ns % 10);
	lb_mem(b, t, 9);
}

/* ---- events ------------------------------------------------------------------------- */

/* State of one dump beyond the line: the symbolizer, made at the first backtrace. */
struct dump_ctx {
	struct evs *s;
	unsigned flags;
	struct rip_sym *sym;
	bool sym_tried;
};

static struct rip_sym *dump_sym(struct dump_ctx *c)
{
	char err[RR_ERR_MAX];

	if (c->sym_tried)
		return c->sym;
	c->sym_tried = true;
	/* no symbols (only addresses) when the module map cannot be had */
	if (stk_sym_open(c->s, NULL, NULL, &c->sym, err, sizeof(err)))
		c->sym = NULL;
	return c->sym;
}

/* A return address as function+offset (of the address itself), or module+offset. */
static void lb_symbol(struct lb *b, struct dump_ctx *c, uint64_t a)
{
	struct rip_sym *sym = a ? dump_sym(c) : NULL;
	struct rip_frame fr[8];
	int n = sym ? rip_sym_lookup(sym, a - 1, fr, 8) : 0;
	const struct rip_frame *f = n > 0 ? &fr[n - 1] : NULL;

	if (f && f->sigframe) {
		lb_name(b, "signal handler"); /* the dump's own <> around it */
	} else if (f && f->func) {
		lb_name(b, f->func);
		lb_ch(b, '+');
		lb_hex(b, f->offset + 1);
	} else if (f && f->module) {
		const char *base = strrchr(f->module, '/');

		lb_name(b, base ? base + 1 : f->module);
		lb_ch(b, '+');
		lb_hex(b, f->offset + 1);
	} else {
		lb_ch(b, '?');
	}
}

/*
 * The kind field of a resource event, by name: kind=malloc; of a module's
 * res:* event, the kind the trace names (kind=gobject).
 */
static const char *dump_kind(const struct dump_ctx *c, const struct ev_type *t, uint32_t i,
			     uint64_t v)
{
	if (strcmp(t->fields[i].name, "kind"))
		return NULL;
	if (t->category == RIP_CAT_RES && !strncmp(t->name, "res:", 4))
		return role_kind_name(evs_types(c->s), v);
	if (t->category != RIP_CAT_MEM && t->category != RIP_CAT_FD && t->category != RIP_CAT_SHM)
		return NULL;
	return lk_kind_name(t->category, v);
}

static void text_value(struct lb *b, uint32_t type, uint64_t v)
{
	switch (type) {
	case RIP_FT_S8:
	case RIP_FT_S16:
	case RIP_FT_S32:
	case RIP_FT_S64:
		lb_i64(b, (int64_t)v);
		break;
	case RIP_FT_HEX64:
		lb_hex(b, v);
		break;
	default:
		lb_u64(b, v);
	}
}

static void dump_text(struct lb *b, struct dump_ctx *c, const struct evs_event *e, int64_t first,
		      unsigned flags, struct wall_cache *wc)
{
	struct evs *s = c->s;
	const char *kind;
	const struct ev_type *t = e->type;

	lb_secs(b, e->ns - first);
	lb_ch(b, ' ');
	if (flags & DUMP_WALL) {
		lb_wall(b, wc, e->wall_ns);
		lb_ch(b, ' ');
	}
	if (e->thread[0]) {
		lb_name(b, e->thread);
		lb_ch(b, '/');
	}
	lb_i64(b, e->tid);
	if (e->coro_name) {
		lb_mem(b, " [", 2);
		lb_name(b, e->coro_name);
		lb_ch(b, ']');
	}
	lb_ch(b, ' ');
	lb_name(b, t->name);
	for (uint32_t i = 0; i < t->nfields; i++) {
		const struct rip_evfield *f = &t->fields[i];

		lb_ch(b, ' ');
		lb_name(b, f->name);
		lb_ch(b, '=');
		if (f->type == RIP_FT_STRING) {
			lb_quoted(b, e->str ? e->str : "", ESC_C);
		} else if (f->type == RIP_FT_HEX64_ARRAY) {
			lb_ch(b, '[');
			for (uint32_t k = 0; k < e->narr; k++) {
				if (k)
					lb_ch(b, ',');
				lb_hex(b, evs_arr(e, k));
				if (flags & DUMP_SYM) {
					lb_ch(b, '<');
					lb_symbol(b, c, evs_arr(e, k));
					lb_ch(b, '>');
				}
			}
			lb_ch(b, ']');
		} else if ((kind = dump_kind(c, t, i, e->v[i]))) {
			lb_str(b, kind);
		} else {
			text_value(b, f->type, e->v[i]);
		}
	}
	if (e->is_switch) {
		for (int i = 0; i < 2; i++) {
			if (!e->v[i])
				continue;
			lb_ch(b, ' ');
			lb_str(b, i ? "from_name=" : "to_name=");
			lb_quoted(b, evs_coro_name(s, (uint32_t)e->v[i]), ESC_C);
		}
	}
}

static void dump_json(struct lb *b, struct dump_ctx *c, const struct evs_event *e, int64_t first)
{
	const struct ev_type *t = e->type;
	struct evs *s = c->s;
	const char *kind;

	lb_str(b, "{\"time\":");
	lb_secs(b, e->ns - first);
	lb_str(b, ",\"ns\":");
	lb_i64(b, e->ns);
	lb_str(b, ",\"wall_ns\":");
	lb_i64(b, e->wall_ns);
	lb_str(b, ",\"tid\":");
	lb_i64(b, e->tid);
	lb_str(b, ",\"thread\":");
	lb_json(b, e->thread);
	lb_str(b, ",\"coro\":");
	if (e->coro_name)
		lb_json(b, e->coro_name);
	else
		lb_str(b, "null");
	lb_str(b, ",\"coro_id\":");
	lb_u64(b, e->coro);
	lb_str(b, ",\"stream\":");
	lb_u64(b, e->stream);
	lb_str(b, ",\"event\":");
	lb_json(b, t->name);
	lb_str(b, ",\"fields\":{");
	for (uint32_t i = 0; i < t->nfields; i++) {
		const struct rip_evfield *f = &t->fields[i];

		if (i)
			lb_ch(b, ',');
		lb_json(b, f->name);
		lb_ch(b, ':');
		if (f->type == RIP_FT_STRING) {
			lb_json(b, e->str ? e->str : "");
		} else if (f->type == RIP_FT_HEX64_ARRAY) {
			lb_ch(b, '[');
			for (uint32_t k = 0; k < e->narr; k++) {
				if (k)
					lb_ch(b, ',');
				lb_ch(b, '"');
				lb_hex(b, evs_arr(e, k));
				lb_ch(b, '"');
			}
			lb_ch(b, ']');
			if (c->flags & DUMP_SYM) {
				lb_str(b, ",\"");
				lb_name(b, f->name);
				lb_str(b, "_sym\":[");
				for (uint32_t k = 0; k < e->narr; k++) {
					struct lb tmp;

					if (k)
						lb_ch(b, ',');
					lb_init(&tmp);
					lb_symbol(&tmp, c, evs_arr(e, k));
					*tmp.p = 0;
					lb_json(b, tmp.buf);
				}
				lb_ch(b, ']');
			}
		} else if (f->type == RIP_FT_HEX64) {
			lb_ch(b, '"');
			lb_hex(b, e->v[i]);
			lb_ch(b, '"');
		} else {
			text_value(b, f->type, e->v[i]);
			if ((kind = dump_kind(c, t, i, e->v[i]))) {
				lb_str(b, ",\"kind_name\":");
				lb_json(b, kind);
			}
		}
	}
	if (e->is_switch) {
		for (int i = 0; i < 2; i++) {
			if (!e->v[i])
				continue;
			lb_str(b, i ? ",\"from_name\":" : ",\"to_name\":");
			lb_json(b, evs_coro_name(s, (uint32_t)e->v[i]));
		}
	}
	lb_str(b, "}}");
}

int dump_write(struct evs *s, FILE *out, unsigned flags, char *err, size_t errlen)
{
	struct wall_cache wc = { 0 };
	struct dump_ctx c = { .s = s, .flags = flags };
	struct evs_totals tot;
	struct evs_event e;
	int64_t first = 0;
	bool any = false;
	struct lb *b;
	int ret;

	b = malloc(sizeof(*b));
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	while ((ret = evs_next(s, &e, err, errlen)) > 0) {
		if (!any) {
			first = e.ns;
			any = true;
		}
		lb_init(b);
		if (flags & DUMP_JSON)
			dump_json(b, &c, &e, first);
		else
			dump_text(b, &c, &e, first, flags, &wc);
		*b->p++ = '\n';
		if (fwrite(b->buf, 1, (size_t)(b->p - b->buf), out) != (size_t)(b->p - b->buf)) {
			ret = -EIO;
			break;
		}
	}
	free(b);
	if (c.sym)
		rip_sym_free(c.sym);
	if (ret < 0) {
		if (ret == -EIO)
			snprintf(err, errlen, "write error: %s", strerror(errno));
		return ret;
	}
	evs_totals(s, &tot);
	if (flags & DUMP_JSON)
		fprintf(out,
			"{\"summary\":{\"events\":%" PRIu64 ",\"packets\":%" PRIu64
			",\"streams\":%" PRIu64 ",\"discarded\":%" PRIu64
			",\"lost_packets\":%" PRIu64 "}}\n",
			tot.events, tot.packets, tot.streams, tot.discarded + tot.samples_lost,
			tot.lost_packets + tot.torn);
	else
		fprintf(out,
			"%" PRIu64 " events, %" PRIu64 " streams, %" PRIu64
			" discarded/overwritten, %" PRIu64 " packets lost%s%.0u%s\n",
			tot.events, tot.streams, tot.discarded + tot.samples_lost,
			tot.lost_packets + tot.torn, /* torn: reused while read, or damaged */
			tot.gone_chunks ? " (in them: " : "", tot.gone_chunks,
			tot.gone_chunks ? " chunks of the trace gone)" : "");
	if (fflush(out) || ferror(out)) {
		snprintf(err, errlen, "write error: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}
