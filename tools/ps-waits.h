/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/ps-waits.h - rip ps's view of the wait records (what each thread
 * of a program run under librip-preload.so blocks in, and who called it):
 * the grouped table, the line of one thread, and their JSON.  cmd-ps.c
 * owns the slots (the thread slots: it keeps no others) and the symbols;
 * it passes them in a pw_ctx.
 */
#ifndef RIP_TOOLS_PS_WAITS_H
#define RIP_TOOLS_PS_WAITS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "read/ringfile.h"

/* Where an address is, as cmd-ps.c's symbolizer says. */
struct pw_site {
	const char *func, *file;
	int line;
};

struct pw_ctx {
	const struct rr_slots *s;
	const struct rip_file_hdr *hdr;
	bool alive, all, verbose;
	uint64_t now_ticks;
	/* where ip is (an exact address: callers pass a return address - 1); false: no memory */
	bool (*site)(void *arg, uint64_t ip, struct pw_site *out);
	void *arg;
};

/* Does rip ps show slot s in the waits (a live thread in a wrapped call)? */
bool pw_waiting(const struct rr_slot *s);
/* The table of waits, grouped; nothing when no thread waits.  0 or -ENOMEM. */
int pw_print_groups(const struct pw_ctx *c, FILE *out);
/* ,"waits":[...] for the grouped JSON.  0 or -ENOMEM. */
int pw_json_groups(const struct pw_ctx *c, FILE *out);
/* "      waiting in read(fd 3) for 2.1s, called from f (x.c:12)\n" for --threads. */
void pw_print_thread(const struct pw_ctx *c, const struct rr_slot *s, FILE *out);
/* ,"wait":{...} for a slot of the --threads JSON (nothing when it waits in nothing). */
void pw_json_thread(const struct pw_ctx *c, const struct rr_slot *s, FILE *out);

#endif /* RIP_TOOLS_PS_WAITS_H */
