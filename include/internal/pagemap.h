/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal/pagemap.h - the signal RIP_PAGEMAP_SIGNAL names, which asks
 * librip-preload.so for a pagemap snapshot: parsed by the preload library
 * when it starts (preload/pagemap.c) and checked by rip run's
 * --pagemap-signal before the program runs (tools/cmd-run.c), with one
 * parser so that the two agree on every name.  Not installed, like
 * internal/clock.h.
 */
#ifndef RIP_INTERNAL_PAGEMAP_H
#define RIP_INTERNAL_PAGEMAP_H

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/*
 * The signal s names: USR1, USR2, HUP, URG, PWR, WINCH, TTIN or TTOU (with
 * or without SIG), RTMIN or RTMIN+N (N in digits, up to SIGRTMAX), or a
 * number other than those of KILL and STOP; 0 for anything else.
 */
static inline int rip_pagemap_signal(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = {
		{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP },
		{ "URG", SIGURG },   { "PWR", SIGPWR },	  { "WINCH", SIGWINCH },
		{ "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
	};
	char *end;
	long v;

	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name))
			return names[i].sig;
	if (!strncmp(s, "RTMIN", 5)) {
		if (!s[5])
			return SIGRTMIN;
		if (s[5] != '+' || s[6] < '0' || s[6] > '9')
			return 0;
		v = strtol(s + 6, &end, 10);
		return !*end && v <= SIGRTMAX - SIGRTMIN ? SIGRTMIN + (int)v : 0;
	}
	v = strtol(s, &end, 10);
	if (end == s || *end || v <= 0 || v >= NSIG || v == SIGKILL || v == SIGSTOP)
		return 0;
	return (int)v;
}

#endif /* RIP_INTERNAL_PAGEMAP_H */
