// SPDX-License-Identifier: Apache-2.0
/*
 * analysis/waits.c - names of the wait kinds of rip/abi.h and the grouping
 * of waiting threads by what they wait in and where it was called from
 * (analysis/waits.h).  The records come from the file: any kind, any
 * address is possible, and an unknown kind is grouped like the others.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <internal/grow.h>

#include "analysis/waits.h"

static const char *const wa_names[RIP_WAIT_KINDS] = {
	[RIP_WAIT_NONE] = "none",     [RIP_WAIT_READ] = "read",	      [RIP_WAIT_WRITE] = "write",
	[RIP_WAIT_RECV] = "recv",     [RIP_WAIT_SEND] = "send",	      [RIP_WAIT_ACCEPT] = "accept",
	[RIP_WAIT_CONNECT] = "connect", [RIP_WAIT_POLL] = "poll",     [RIP_WAIT_SELECT] = "select",
	[RIP_WAIT_EPOLL] = "epoll_wait", [RIP_WAIT_SLEEP] = "sleep",  [RIP_WAIT_MUTEX] = "mutex",
	[RIP_WAIT_COND] = "cond_wait", [RIP_WAIT_JOIN] = "join",      [RIP_WAIT_SEM] = "sem_wait",
	[RIP_WAIT_SIGNAL] = "signal", [RIP_WAIT_CHILD] = "waitpid",   [RIP_WAIT_FUTEX] = "futex",
	[RIP_WAIT_STDIO] = "stdio",   [RIP_WAIT_SYSTEM] = "system",   [RIP_WAIT_RWLOCK] = "rwlock",
	[RIP_WAIT_BARRIER] = "barrier", [RIP_WAIT_SYSCALL] = "syscall", [RIP_WAIT_PAUSE] = "pause",
};

const char *wa_kind_name(uint32_t kind)
{
	return kind < RIP_WAIT_KINDS ? wa_names[kind] : NULL;
}

enum wa_arg wa_arg_kind(uint32_t kind)
{
	switch (kind) {
	case RIP_WAIT_READ:
	case RIP_WAIT_WRITE:
	case RIP_WAIT_RECV:
	case RIP_WAIT_SEND:
	case RIP_WAIT_ACCEPT:
	case RIP_WAIT_CONNECT:
	case RIP_WAIT_EPOLL:
	case RIP_WAIT_STDIO:
		return WA_ARG_FD;
	case RIP_WAIT_POLL:
	case RIP_WAIT_SELECT:
		return WA_ARG_COUNT;
	case RIP_WAIT_MUTEX:
	case RIP_WAIT_COND:
	case RIP_WAIT_JOIN:
	case RIP_WAIT_SEM:
	case RIP_WAIT_FUTEX:
	case RIP_WAIT_RWLOCK:
	case RIP_WAIT_BARRIER:
		return WA_ARG_ADDR;
	case RIP_WAIT_SLEEP:
		return WA_ARG_NS;
	case RIP_WAIT_CHILD:
		return WA_ARG_PID;
	case RIP_WAIT_SIGNAL:
		return WA_ARG_SIGSET;
	case RIP_WAIT_SYSCALL:
		return WA_ARG_SYSCALL;
	default:
		return WA_ARG_NONE;
	}
}

bool wa_waiting(const struct rr_slot *s)
{
	/* An exited slot's record is stale (a forked child's copy of its parent's threads). */
	return s->wait.kind != RIP_WAIT_NONE && s->kind == RIP_KIND_THREAD &&
	       s->state == RIP_SLOT_RUNNING;
}

bool wa_timeout(const struct rr_slot *s, uint64_t *ns)
{
	if (!s->wait_tmo || !s->wait.since)
		return false;
	*ns = rip_wait_tmo_ns(s->wait_tmo);
	return true;
}

static int wa_cmp(const void *pa, const void *pb)
{
	const struct wa_group *a = pa, *b = pb;

	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->ra < b->ra ? -1 : a->ra > b->ra;
}

int wa_group(const struct rr_slots *slots, bool all, struct wa_groups *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < slots->n; i++) {
		const struct rr_slot *s = &slots->v[i];
		struct wa_group *g = NULL;
		uint64_t tmo;

		if (!all && s->state == RIP_SLOT_EXITED)
			continue;
		out->torn += s->wait_torn && s->kind == RIP_KIND_THREAD;
		if (!wa_waiting(s))
			continue;
		out->waiting++;
		/* groups are few (call sites): a linear scan is enough */
		for (size_t k = 0; k < out->n && !g; k++)
			if (out->v[k].kind == s->wait.kind && out->v[k].ra == s->wait.ra)
				g = &out->v[k];
		if (!g) {
			if (RIP_GROW(out->v, out->cap, out->n + 1, 16))
				goto err_nomem;
			g = &out->v[out->n++];
			memset(g, 0, sizeof(*g));
			g->kind = s->wait.kind;
			g->ra = s->wait.ra;
			g->same_arg = true;
			g->arg = s->wait.arg;
		}
		if (RIP_GROW(g->members, g->cap, g->n + 1, 8))
			goto err_nomem;

		g->members[g->n++] = i;
		g->same_arg &= g->arg == s->wait.arg;
		if (wa_timeout(s, &tmo)) {
			if (!g->timed || tmo < g->tmo_min)
				g->tmo_min = tmo;
			if (!g->timed || tmo > g->tmo_max)
				g->tmo_max = tmo;
			g->timed++;
		}
		if (s->wait.since) {
			if (!g->since_min || s->wait.since < g->since_min)
				g->since_min = s->wait.since;
			if (s->wait.since > g->since_max)
				g->since_max = s->wait.since;
		}
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), wa_cmp);
	return 0;

err_nomem:
	wa_groups_free(out);
	return -ENOMEM;
}

void wa_groups_free(struct wa_groups *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i].members);
	free(g->v);
	memset(g, 0, sizeof(*g));
}
