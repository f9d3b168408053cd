/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/report-funcs.h - rip report --functions: calls, total and self
 * time of every function of a trace of function records, for the whole
 * program or each thread and coroutine.  cmd-report.c parses the options
 * into a rpf_opts and hands over.
 */
#ifndef RIP_TOOLS_REPORT_FUNCS_H
#define RIP_TOOLS_REPORT_FUNCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPF_MAX_GLOBS 32

enum rpf_sort {
	RPF_TOTAL,
	RPF_SELF,
	RPF_CALLS,
	RPF_MAX,
	RPF_NAME
};

struct rpf_opts {
	const char *target, *sysroot, *debug_dir;
	bool json, threads;
	uint64_t top;	/* rows of each table, 0: all */
	uint32_t depth; /* 0: all */
	int64_t min_ns; /* 0: all */
	enum rpf_sort sort;
	const char *globs[RPF_MAX_GLOBS];
	size_t nglobs;
};

/* Parse a --sort key: 0, or -1 when it is none of total, self, calls, max, name. */
int rpf_sort_key(const char *s, enum rpf_sort *out);

/* The report: the exit status (EXIT_OK, EXIT_FAIL), the messages printed. */
int rpf_run(const struct rpf_opts *o);

#endif /* RIP_TOOLS_REPORT_FUNCS_H */
