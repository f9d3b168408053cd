/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read/packdec.h - the loop over the events of a coded packet, the heart of
 * read/pack.c's decoder, included there three times: as DEC_EVENTS with
 * DEC_SPLIT true (blocks of version 2 on: every varint's column of high
 * bytes is a column, never NULL) and false (version 1: varints whole), and
 * the first again built for AVX2 (DEC_SIMD, DEC_ATTR its target).  No include
 * guard: it is meant to be included more than once, by read/pack.c only,
 * after all it uses.
 */
/* The events of one coded packet into o[PK_HDR .. len). */
static __attribute__((noinline)) DEC_ATTR int DEC_EVENTS(struct pk_dec *d, uint8_t *o, size_t len,
							 uint64_t ts, uint32_t p)
{
	static const void *const go[D_NOPS] = {
		[D_HEX] = &&hex,     [D_U] = &&u,	  [D_S] = &&s,
		[D_HUG] = &&hug,     [D_HSG] = &&hsg,	  [D_U1] = &&u1,
		[D_S1] = &&s1,	     [D_STR] = &&str,	  [D_ARR] = &&arr,
		[D_END] = &&end,     [D_UG] = &&lone,	  [D_SG] = &&lone,
		[D_HEX_C] = &&hex_c, [D_U_C] = &&u_c,	  [D_S_C] = &&s_c,
		[D_HUG_C] = &&hug_c, [D_HUG_I] = &&hug_i, [D_HUG_CI] = &&hug_ci,
		[D_HSG_C] = &&hsg_c, [D_HSG_I] = &&hsg_i, [D_HSG_CI] = &&hsg_ci,
	}; /* D_UG and D_SG are done by the D_HUG or D_HSG before: alone, a plan gone wrong */
	struct dcol *evid = &d->col[K_EVID], *evh = evid->hi ? evid->hi : &d->nohi;
	struct dmtf *m = d->cur;
	const struct dfield *f;
	struct dpos st;
	uint8_t *q = o + PK_HDR, *const oend =
					 o + len; /* the fields' place (dfield.off), the end */
	uint8_t *seg;				  /* the end of a run of events (DSEG) */
	uint64_t v = 0;
	int ret;

	dpos_load(&st, m);
/* The field done: its low bytes stored at its offset (the block has 8 to spare), on to the next. */
#define NEXT_FIELD()                                                                               \
	do {                                                                                       \
		st64(q + f->off, v);                                                               \
		f++;                                                                               \
		goto * f->go;                                                                      \
	} while (0)

	do { /* runs of DSEG bytes of events, a sweep of the lists before one if it is due */
		seg = (size_t)(oend - q) > DSEG ? q + DSEG : oend;
		if (st.n - st.swept > DSWEEP - DSEG_HEX)
			dmtf_sweep(m, &st);
		while (q < seg) {
			struct dplan **dc, *pl;
			uint64_t code, dt;

			if (dcol_get(evid, evh, &code, DEC_SPLIT, DRUN_ANY))
				return bad(d, "event id column cut", p);
			if (code >= 2 * EV_MAX_TYPES)
				return bad(d, "unknown event id", p);
			dc = &d->bycode[code];
			pl = *dc;
			if (__builtin_expect(!pl, 0)) {
				uint64_t id = code >> 1;
				const struct ev_type *t = &d->types->t[id];

				if ((!(code & 1) && id >= RIP_EVENT_ID_EXTENDED) || !t->valid)
					return bad(d, "unknown event id", p);
				pl = *dc = dec_plan(d, t, go);
			}
			if (DEC_SPLIT && pl->ts_run ?
				    dcol_getf(pl->ts, &pl->ts_hi, &dt, DEC_SPLIT, DRUN_YES) :
				    dcol_get(pl->ts, pl->ts_hi, &dt, DEC_SPLIT, DRUN_NO))
				return bad(d, "time column cut", p);
			if (code & 1) {
				uint32_t id32 = (uint32_t)(code >> 1);

				ts += (uint64_t)unzig(dt);
				q[0] = RIP_EVENT_ID_EXTENDED;
				memcpy(q + 1, &id32, 4);
				memcpy(q + 5, &ts, 8);
				q += 13;
			} else {
				uint32_t low;

				ts += dt;
				low = (uint32_t)(ts & ((1ull << RIP_EVENT_TS_BITS) - 1));
				st32(q, (uint32_t)(code >> 1) | low << 5);
				q += 4;
			}
			f = pl->f;
			goto * f->go;
#define HEX(run)                                                                                   \
	do {                                                                                       \
		struct daux a;                                                                     \
                                                                                                   \
		if ((ret = dec_hex(d, m, &st, f->col, &f->hi, f->last, &v, &a, p, DEC_SPLIT, run,  \
				   DEC_SIMD)))                                                     \
			return ret;                                                                \
		NEXT_FIELD();                                                                      \
	} while (0)
hex:
			HEX(DRUN_NO);
hex_c:
			HEX(DRUN_YES);
#undef HEX
/*
 * A hex field and the integer after it (version 3), which takes its second
 * guess from the hex value's entry and leaves its value there: the entry
 * (a) is a local of the op, not carried from the op of one field to the
 * next's in memory.  crun, irun: whether the hex codes' column and the
 * integer's are read in runs.
 */
#define HEX_GUESS(sign, crun, irun)                                                                \
	do {                                                                                       \
		struct daux a = { NULL, 0 };                                                       \
                                                                                                   \
		if ((ret = dec_hex(d, m, &st, f->col, &f->hi, f->last, &v, &a, p, DEC_SPLIT, crun, \
				   DEC_SIMD)))                                                     \
			return ret;                                                                \
		st64(q + f->off, v);                                                               \
		f++;                                                                               \
		if (dcol_getf(f->col, &f->hi, &v, DEC_SPLIT, irun))                                \
			return bad(d, "field column cut", p);                                      \
		v = pred_value_g(&d->pred, f->last, f->salt, v, a.g);                              \
		*a.slot = aux_of(v);                                                               \
		if (sign)                                                                          \
			v = (uint64_t)unzig(v);                                                    \
		NEXT_FIELD();                                                                      \
	} while (0)
hug:
			HEX_GUESS(0, DRUN_NO, DRUN_NO);
hug_c:
			HEX_GUESS(0, DRUN_YES, DRUN_NO);
hug_i:
			HEX_GUESS(0, DRUN_NO, DRUN_YES);
hug_ci:
			HEX_GUESS(0, DRUN_YES, DRUN_YES);
hsg:
			HEX_GUESS(1, DRUN_NO, DRUN_NO);
hsg_c:
			HEX_GUESS(1, DRUN_YES, DRUN_NO);
hsg_i:
			HEX_GUESS(1, DRUN_NO, DRUN_YES);
hsg_ci:
			HEX_GUESS(1, DRUN_YES, DRUN_YES);
#undef HEX_GUESS
#define INT(sign, run)                                                                             \
	do {                                                                                       \
		if (dcol_getf(f->col, &f->hi, &v, DEC_SPLIT, run))                                 \
			return bad(d, "field column cut", p);                                      \
		v = pred_value(&d->pred, f->last, f->salt, v);                                     \
		if (sign)                                                                          \
			v = (uint64_t)unzig(v);                                                    \
		NEXT_FIELD();                                                                      \
	} while (0)
u:
			INT(0, DRUN_NO);
u_c:
			INT(0, DRUN_YES);
s:
			INT(1, DRUN_NO);
s_c:
			INT(1, DRUN_YES);
#undef INT
u1:
			if (dcol_get(f->col, f->hi, &v, DEC_SPLIT, DRUN_NO))
				return bad(d, "field column cut", p);
			NEXT_FIELD();
s1:
			if (dcol_get(f->col, f->hi, &v, DEC_SPLIT, DRUN_NO))
				return bad(d, "field column cut", p);
			v = (uint64_t)unzig(v);
			NEXT_FIELD();
str:
			q += f->off;
			if (dec_str(f->col, &q, oend))
				return bad(d, "string past its packet or column", p);
			f++;
			goto * f->go;
arr:
			q += f->off;
			if (dec_arr(f->col, &q, oend))
				return bad(d, "array past its packet or column", p);
			f++;
			goto * f->go;
lone:
			return bad(d, "a guessed field without its hex field (a decoder's plan)",
				   p);
end:
			q += f->off;
		}
	} while (q < oend);
#undef NEXT_FIELD
	dpos_keep(&st, m);
	return q == oend ? 0 : bad(d, "events past their packet", p);
}
