/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/data/headers-api.c - a program that uses every macro and inline
 * function of the public headers of rip.h's API (rip.h, rip/abi.h,
 * rip/snap.h, rip/resource.h, rip/proc.h), as a program would, for
 * tests/integ/headers.sh: it compiles this as C11 and as C++11, C++17 and
 * C++20, -pedantic with warnings as errors, with gcc and clang, links it
 * with librip and runs it.  A header that only compiles when nothing
 * expands its macros fails there.  (userspace-rcu's tests/unit/test_build.c
 * is the model.)  headers-legacy.c does the same for librip.h.
 *
 * It opens no ring (the snaps go to a scratch slot, the events'
 * categories are off), unless RIP_RING says to.  Exit 0, or 1 when a
 * value is not what the headers say.
 */
#include <stdio.h>
#include <string.h>

#include <rip.h>
#include <rip/abi.h>
#include <rip/proc.h>
#include <rip/resource.h>
#include <rip/snap.h>

#define CAT_API (RIP_CAT_USER + 1)

RIP_EVENT_TYPE(api_none, "api:none", CAT_API);
RIP_EVENT_TYPE(api_one, "api:one", CAT_API, RIP_FIELD(U64, "a"));
RIP_EVENT_TYPE(api_four, "api:four", CAT_API, RIP_FIELD(U8, "a"), RIP_FIELD(S16, "b"),
	       RIP_FIELD(U32, "c"), RIP_FIELD(HEX64, "d"));
RIP_EVENT_TYPE(api_max, "api:max", CAT_API, RIP_FIELD(U8, "a"), RIP_FIELD(U16, "b"),
	       RIP_FIELD(U32, "c"), RIP_FIELD(U64, "d"), RIP_FIELD(S8, "e"), RIP_FIELD(S16, "f"),
	       RIP_FIELD(S32, "g"), RIP_FIELD(S64, "h"));
RIP_EVENT_TYPE(api_str, "api:str", RIP_CAT_USER, RIP_FIELD(U32, "n"), RIP_FIELD(STRING, "s"));
RIP_EVENT_TYPE(api_arr, "api:arr", RIP_CAT_USER, RIP_FIELD(HEX64_ARRAY, "a"));

RIP_STATIC_ASSERT(RIP_FT_IS_TAIL(RIP_FT_STRING) && !RIP_FT_IS_TAIL(RIP_FT_U64), "tail");
RIP_STATIC_ASSERT(RIP_SAMPLE_IS(RIP_SAMPLE_ENTRY(3, 0x1234)), "sample entry");
RIP_STATIC_ASSERT(RIP_SAMPLE_DEPTH_OF(RIP_SAMPLE_ENTRY(3, 0x1234)) == 3, "sample depth");
RIP_STATIC_ASSERT(RIP_CAT_MEM < RIP_CAT_USER && RIP_CAT_SAMPLE < RIP_CAT_USER, "categories");

static int failed;

static void check(int ok, const char *what)
{
	if (!ok) {
		failed = 1;
		fprintf(stderr, "headers-api: %s\n", what);
	}
}

/* The inline helpers of rip/abi.h, on a header and a ring of our own. */
static void abi_helpers(void)
{
	static struct rip_file_hdr h;
	static struct rip_evring r;

	h.ev_rings = 4;
	h.ev_big = 2;
	h.ev_off = 1 << 20;
	h.ev_ring_size = 1 << 16;
	h.ev_packet_size = 1 << 12;
	h.ev_small_off = 1 << 24;
	h.ev_small_ring_size = 1 << 14;
	h.ev_small_packet_size = 1 << 10;
	check(rip_evring_is_big(&h, 1) && !rip_evring_is_big(&h, 2), "rip_evring_is_big");
	check(rip_evring_data_off(&h, 3) == (1 << 24) + (1 << 14), "rip_evring_data_off");
	check(rip_evring_bytes(&h, 0) == 1 << 16, "rip_evring_bytes");
	check(rip_evring_packet_bytes(&h, 2) == 1 << 10, "rip_evring_packet_bytes");
	rip_file_set_consumer(&h, 42);
	check(rip_file_consumer(&h) == 42, "rip_file_consumer");
	rip_evring_publish(&r, 7);
	rip_evring_consume(&r, 5);
	check(rip_evring_written(&r) == 7 && rip_evring_consumed(&r) == 5, "rip_evring_written");
	rip_evring_wait_arm(&r);
	check(rip_evring_waiter(&r) == 1 && rip_evring_waiter(&r) == 0, "rip_evring_waiter");
}

int main(void)
{
	RIP_OPTS(rip_ring_opts, none);
	RIP_OPTS(rip_ring_opts, opts, .slots = 64, .ev_mode = RIP_MODE_DISCARD + 1);
	const uint64_t vals[2] = { 1, 2 }, arr[3] = { 3, 4, 5 };
	struct rip_coro *co = NULL;
	char state, buf[64];
	int err;

	check(none.sz == sizeof(struct rip_ring_opts) && !none.slots, "RIP_OPTS without fields");
	check(opts.sz == sizeof(opts) && opts.slots == 64 && !opts.path, "RIP_OPTS");
	check(api_none.nfields == 0 && api_one.nfields == 1 && api_four.nfields == 4 &&
		      api_max.nfields == RIP_EVENT_MAX_FIELDS,
	      "RIP_EVENT_TYPE: nfields");
	check(api_four.fields[1].type == RIP_FT_S16 && !strcmp(api_four.fields[3].name, "d") &&
		      api_four.category == CAT_API && !strcmp(api_four.name, "api:four"),
	      "RIP_EVENT_TYPE: fields");

	rip_snap();
	rip_snap();
	check(rip_clock_ticks() != 0 || rip_clock_ticks() != 0, "rip_clock_ticks");
	check(rip_category_enabled(CAT_API) == 0 || rip_category_enabled(CAT_API) == 1,
	      "rip_category_enabled");
	rip_event0(&api_none);
	rip_event1(&api_one, 1);
	rip_event2(&api_four, 1, 2);
	rip_event3(&api_four, 1, 2, 3);
	rip_event4(&api_four, 1, 2, 3, 4);
	rip_event_str(&api_str, vals, "text");
	rip_event_array(&api_arr, vals, arr, 3);
	check(rip_category_name(CAT_API, "api") == 0, "rip_category_name");
	check(rip_event_register(&api_none) == 0, "rip_event_register");
	check(*api_none.id != UINT32_MAX, "RIP_EVENT_TYPE: registered");

	err = rip_coro_create("api-coro", &co);
	if (!err) {
		rip_coro_switch_in(co);
		rip_snap();
		rip_coro_switch_out();
		check(rip_coro_set_name(co, "api-coro2") == 0, "rip_coro_set_name");
		check(rip_coro_destroy(co) == 0, "rip_coro_destroy");
	}
	/* with or without a ring (RIP_RING): what they return is not the headers' business */
	(void)rip_thread_attach();
	(void)rip_thread_set_name("api");
	(void)rip_ring_path(buf, sizeof(buf));
	(void)rip_thread_detach();
	(void)rip_ring_close();

	check(rip_proc_stat_start("1 (a) b) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 1",
				  &state) == 4242 &&
		      state == 'S',
	      "rip_proc_stat_start");
	check(rip_proc_start(0, &state) != 0, "rip_proc_start");
	abi_helpers();
	(void)opts;
	return failed;
}
