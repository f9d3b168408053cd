/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools/enable-funcs.c - the functions rip enable func patches
 * (enable-funcs.h).  The sites come from the binaries' sections, their
 * names from the binaries' symbols (in rip, never in the process); the
 * request goes to the process's watcher thread, which patches them and
 * answers (record/patchreq.c).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <internal/patchwhy.h>

#include "read/patchable.h"
#include "record/patchreq.h"
#include "read/sym.h"
#include "tools/enable-funcs.h"
#include "tools/tool.h"

#define ENF_TIMEOUT_MS 30000

/* Is the function at addr picked by the globs (funcs.c's rule: any plain glob, no !glob)? */
static bool enf_pick(struct rip_sym *sym, uint64_t addr, const char *const *globs, size_t n)
{
	struct rip_frame fr[8];
	const char *name = NULL;
	bool any = false, hit = false;
	int k;

	if (!n)
		return true;
	k = sym ? rip_sym_lookup(sym, addr, fr, 8) : 0;
	if (k > 0)
		name = fr[k - 1].func;
	if (!name)
		return false; /* no name: only "all" picks it */
	for (size_t i = 0; i < n; i++) {
		if (globs[i][0] == '!') {
			if (!fnmatch(globs[i] + 1, name, 0))
				return false;
			continue;
		}
		any = true;
		hit = hit || !fnmatch(globs[i], name, 0);
	}
	return !any || hit;
}

int enf_run(struct rr_file *f, bool on, const char *const *globs, size_t nglobs, bool quiet)
{
	struct rip_module *mods = NULL;
	struct rip_sym *sym = NULL;
	struct rpt_sites sites;
	struct prq_answer ans;
	char err[RR_ERR_MAX], why[256];
	size_t nmods = 0, n = 0;
	int ret, status = EXIT_FAIL;

	if (rr_read_modules(f, &mods, &nmods, err, sizeof(err))) {
		tool_err("%s", err);
		return EXIT_FAIL;
	}
	ret = rpt_read_sites(mods, nmods, NULL, &sites, err, sizeof(err));
	if (ret) {
		tool_err("%s", err);
		goto out;
	}
	if (!sites.n) {
		/* Nothing built with -fpatchable-function-entry: the bit was all there was to do. */
		if (nglobs)
			tool_err("warning: %s (pid %d) has no function built with "
				 "-fpatchable-function-entry for --functions to pick",
				 f->hdr.comm, f->hdr.pid);
		status = EXIT_OK;
		goto out;
	}
	if (nglobs) {
		if (rip_sym_new(NULL, &sym)) {
			tool_err("cannot start the symbolizer");
			goto out;
		}
		rip_sym_add_modules(sym, mods, nmods);
	}
	for (size_t i = 0; i < sites.n; i++)
		if (enf_pick(sym, sites.addr[i], globs, nglobs))
			sites.addr[n++] = sites.addr[i];
	if (!n) {
		tool_err("--functions picks none of the %zu patchable functions of %s (pid %d)",
			 sites.n, f->hdr.comm, f->hdr.pid);
		status = EXIT_USAGE;
		goto out;
	}
	/* Unpatching all: the process knows what it patched (some may be of modules gone). */
	ret = prq_request(f, on, sites.addr, !on && !nglobs ? 0 : n, ENF_TIMEOUT_MS, &ans, err,
			  sizeof(err));
	if (ret) {
		tool_err("%s", err);
		goto out;
	}
	if (ans.gone) {
		tool_err("%s (pid %d): the process ended before the watcher answered", f->hdr.comm,
			 f->hdr.pid);
		goto out;
	}
	if (!ans.done) {
		tool_err("%s (pid %d): the watcher did not answer in %d s", f->hdr.comm, f->hdr.pid,
			 ENF_TIMEOUT_MS / 1000);
		goto out;
	}
	if (ans.err && !ans.ok)
		tool_err("%s (pid %d): %s functions: %s", f->hdr.comm, f->hdr.pid,
			 on ? "patching" : "unpatching", rip_patch_why(ans.err, why, sizeof(why)));
	else
		status = EXIT_OK;
	if (!quiet && status == EXIT_OK)
		printf("%s (pid %d): %s %u function%s%s; %u patched now\n", f->hdr.comm, f->hdr.pid,
		       on ? "patched" : "unpatched", ans.ok, ans.ok == 1 ? "" : "s",
		       ans.failed ? " (some left as they were: unknown bytes or no room)" : "",
		       ans.on);
	if (ans.failed && !quiet)
		printf("%s (pid %d): %u function%s left as they were\n", f->hdr.comm, f->hdr.pid,
		       ans.failed, ans.failed == 1 ? "" : "s");
out:
	if (sym)
		rip_sym_free(sym);
	rpt_sites_free(&sites);
	free(mods);
	return status;
}
